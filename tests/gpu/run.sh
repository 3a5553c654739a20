#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The GPU machine's one prepared script. Prints one JSON document on stdout (build logs and the
# programs' own messages go to stderr):
#   {"device": ..., "modelcheck": {...}, "engine": {"sessions": {"fp32": {...}, "amp_bf16_int8": {...}, "auto": {...},
#                                                                "dist2_fp32": {...}}}}
#
# 1. modelcheck: builds only foxhunt-modelcheck (models + precision layer, no Qt, no engine) against
#    the LibTorch inside the PyTorch wheel and runs it on CUDA. Without python3 torch it falls back to
#    the system LibTorch (Debian's 1.13) on the CPU; without a CUDA device it runs on the CPU.
# 2. engine (only when .gpu-deps/ is there, made by tests/gpu/fetch-deps.sh and carried along): the
#    same build tree configured a second time, with the engine and foxhunt-cli, against the libraries
#    in .gpu-deps (the models library is not compiled twice: its flags do not change), then short
#    training sessions of all four models on the synthetic default series, in temporary stores: FP32,
#    BF16 autocast with INT8 copies, and FP32 in two processes sharing the device (while the time
#    budget lasts). Per model: step and update time, loss, latency, memory (CUDA allocator figures).
# Part 1 has run and its output is kept before part 2 starts; a failure in part 2 never loses it:
# each section carries {"error": "..."} instead. Part 1 always configures with the engine off, so a
# tree left behind by a failed part 2 builds modelcheck as before.
#
# On the device tool: run tests/gpu/fetch-deps.sh here first (in the checkout the tool sends), then
#   run(command="tests/gpu/run.sh >$OUT/gpu.json 2>$OUT/gpu.log; tail -c 9000 $OUT/gpu.json",
#       carry=[".gpu-deps"], timeout_s=560)
# Arguments: --skip-engine skips part 2; the others go to foxhunt-modelcheck (e.g. --quick).
# Environment: FOXHUNT_GPU_BUILD_DIR (default build-gpu),
# FOXHUNT_GPU_DEPS (default .gpu-deps), JOBS (parallel compile jobs, default nproc),
# FOXHUNT_GPU_BUDGET_S (seconds for the whole script, default 470), FOXHUNT_GPU_STEPS (steps per
# model and session, default 300), FOXHUNT_GPU_SESSION_S (limit per session, default 120).
# The wheel's CMake config needs the CUDA toolkit (nvcc) on the machine for a CUDA build; the JSON
# is assembled with python3 (the image's, or the system one here).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${FOXHUNT_GPU_BUILD_DIR:-$root/build-gpu}
deps=${FOXHUNT_GPU_DEPS:-$root/.gpu-deps}
jobs=${JOBS:-$(nproc)}
budget=${FOXHUNT_GPU_BUDGET_S:-470}
steps=${FOXHUNT_GPU_STEPS:-300}
session_limit=${FOXHUNT_GPU_SESSION_S:-120}
threads=$((jobs < 8 ? jobs : 8))

skip_engine=0
modelcheck_args=()
for arg in "$@"; do
    if [ "$arg" = --skip-engine ]; then skip_engine=1; else modelcheck_args+=("$arg"); fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SECONDS=0
# Seconds left, at least 1 (timeout 0 would mean no limit at all).
left() { local t=$((budget - SECONDS)); echo $((t > 0 ? t : 1)); }
# note NAME TEXT: one line of the result, read by the assembler at the end.
note() { printf '%s' "$2" >"$work/$1"; }
# ... | logged NAME: a build's output to stderr and to a log whose errors go into the JSON on failure.
logged() { tee -a "$work/$1" >&2; }
# failure WHAT STATUS: why a step under timeout ended.
failure() {
    if [ "$2" = 124 ] || [ "$2" = 137 ]; then echo "$1 stopped: the time budget ran out (${SECONDS}s of ${budget}s)"
    else echo "$1 failed (exit status $2)"; fi
}

# --- Part 1: foxhunt-modelcheck ------------------------------------------------------------------
device=cuda
prefix=""
if prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
    if [ "$(python3 -c 'import torch; print(int(torch.cuda.is_available()))')" != 1 ]; then
        echo "run.sh: PyTorch sees no CUDA device; running on the CPU" >&2
        device=cpu
    fi
else
    echo "run.sh: python3 has no torch; using the system LibTorch on the CPU" >&2
    prefix=""
    device=cpu
fi
note device "$device"
note torch_prefix "$prefix"

# nccl.h for c10d's NCCL group: PyTorch's CUDA wheels depend on the nvidia-nccl package, which has
# it; a CUDA install may have it too (then CMake finds it alone). Without it, or when the NCCL build
# fails (the group's header changes between PyTorch releases), CUDA tensors go through Gloo.
nccl=()
if [ -n "$prefix" ] && nccl_include=$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2>/dev/null) &&
    [ -f "$nccl_include/nccl.h" ]; then
    nccl=("-DFOXHUNT_NCCL_INCLUDE_DIR=$nccl_include")
    note nccl_include "$nccl_include"
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

modelcheck() {
    local flags=("${nccl[@]}" -DFOXHUNT_WITH_NCCL=ON -DFOXHUNT_WITH_GLOO=ON) stage status
    # The wheel has no gloo headers: Debian's, carried in .gpu-deps, let c10d's Gloo group compile.
    [ -f "$deps/usr/include/gloo/config.h" ] && flags+=("-DFOXHUNT_GLOO_INCLUDE_DIR=$deps/usr/include")
    cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${prefix:+"-DCMAKE_PREFIX_PATH=$prefix"} \
        "${flags[@]}" -DFOXHUNT_BUILD_ENGINE=OFF -DFOXHUNT_BUILD_GUI=OFF -DFOXHUNT_BUILD_TESTS=OFF 2>&1 |
        logged modelcheck.log || { note modelcheck.error "configure failed"; return; }
    grep -q 'c10d NCCL process group found' "$work/modelcheck.log" && note nccl_found 1
    grep -q 'c10d Gloo process group found' "$work/modelcheck.log" && note gloo_found 1
    # The c10d headers change between PyTorch releases and gloo's come from Debian: a compile error
    # in the communicator must not cost the rest, so it steps down, NCCL off first, then Gloo.
    for stage in full without_nccl without_gloo; do
        case $stage in
        without_nccl) [ -e "$work/nccl_found" ] || continue
            cmake -S "$root" -B "$build" -DFOXHUNT_WITH_NCCL=OFF 2>&1 | logged modelcheck.log ;;
        without_gloo) [ -e "$work/gloo_found" ] || break
            cmake -S "$root" -B "$build" -DFOXHUNT_WITH_GLOO=OFF 2>&1 | logged modelcheck.log ;;
        esac
        timeout "$(left)" cmake --build "$build" --target foxhunt-modelcheck -j "$jobs" 2>&1 |
            tee "$work/attempt.log" | logged modelcheck.log
        status=${PIPESTATUS[0]}
        if [ "$status" = 0 ]; then note communicator_build "$stage"; break; fi
        if [ "$status" = 124 ] || [ "$status" = 137 ] || ! grep -q 'communicator.cpp' "$work/attempt.log"; then
            note modelcheck.error "$(failure "build ($stage)" "$status")"
            return
        fi
        note "communicator_error_$stage" "$(grep -E 'error' "$work/attempt.log" | grep -v '^ninja' | head -12)"
    done
    [ "$status" = 0 ] || { note modelcheck.error "the communicator compiled in no configuration"; return; }
    timeout --kill-after=10 "$(left)" "$build/models/check/foxhunt-modelcheck" --device "$device" \
        "${modelcheck_args[@]}" >"$work/modelcheck.json" 2> >(tee -a "$work/modelcheck.log" >&2)
    note modelcheck.rc "$?"
}
modelcheck
note modelcheck.seconds "$SECONDS"

# --- Part 2: engine, foxhunt-cli and two training sessions ----------------------------------------
cli=$build/app/foxhunt-cli
lib_path=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Only our binaries see the carried Debian libraries (libssl3 and others): python3 and torch keep
# the image's own.
run_cli() { LD_LIBRARY_PATH=$lib_path XDG_DATA_HOME=$work/data "$cli" "$@"; }

engine_build() {
    # No pkg-config hints: every library must come from .gpu-deps, never from a -dev package that
    # happens to be installed (this matters where the script is tried on a Debian machine). The -U
    # forget where an earlier configure found them, so a moved or missing .gpu-deps is noticed.
    PKG_CONFIG_LIBDIR=/nonexistent cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -U 'SQLite3_*' -U 'OPENSSL_*' -U zstd_DIR -U date_DIR -U nlohmann_json_DIR -U CLI11_DIR -U benchmark_DIR -U Boost_DIR -U boost_headers_DIR \
        "-DCMAKE_PREFIX_PATH=$deps/usr${prefix:+;$prefix}" "-DOPENSSL_ROOT_DIR=$deps/usr" \
        -DFOXHUNT_BUILD_ENGINE=ON -DFOXHUNT_BUILD_GUI=OFF -DFOXHUNT_BUILD_TESTS=OFF 2>&1 | logged engine.log ||
        { note engine.error "configure with .gpu-deps failed"; return 1; }
    # Where each dependency was found, so a run can show it came from .gpu-deps.
    grep -E '^(SQLite3_LIBRARY|OPENSSL_CRYPTO_LIBRARY|zstd_DIR|date_DIR|nlohmann_json_DIR|CLI11_DIR|benchmark_DIR|Boost_DIR|boost_headers_DIR|Torch_DIR)[:=]' \
        "$build/CMakeCache.txt" >"$work/engine.resolved" 2>/dev/null
    local t
    t=$(left)
    [ "$t" -gt 60 ] || { note engine.error "time budget used up before the engine build (${SECONDS}s of ${budget}s)"; return 1; }
    timeout "$t" cmake --build "$build" --target foxhunt-cli -j "$jobs" 2>&1 | logged engine.log ||
        { note engine.error "$(failure "build of foxhunt-cli" "${PIPESTATUS[0]}")"; return 1; }
    note engine.build_seconds "$SECONDS"
}

# The zone database: date-tz reads only /usr/share/zoneinfo, which slim images lack; the market
# clock needs America/New_York. Linked from .gpu-deps only where it is missing entirely.
ensure_zoneinfo() {
    if [ -e /usr/share/zoneinfo/America/New_York ]; then note tzdata "system"; return; fi
    if [ ! -e /usr/share/zoneinfo ] && [ -d "$deps/usr/share/zoneinfo" ] &&
        ln -s "$deps/usr/share/zoneinfo" /usr/share/zoneinfo 2>/dev/null; then
        note tzdata "linked /usr/share/zoneinfo to .gpu-deps (the image had none)"
    else
        note tzdata "missing: /usr/share/zoneinfo/America/New_York is absent and could not be linked"
    fi
}

# session NAME PRECISION_JSON [EXTRA_CONFIG_LINES]: one training session of all four models.
session() {
    local name=$1 precision=$2 extra=${3:-} t
    t=$(left)
    [ "$t" -gt $((session_limit < 60 ? session_limit : 60)) ] ||
        { note "session.$name.error" "time budget used up before this session (${SECONDS}s of ${budget}s)"; return; }
    [ "$t" -lt "$session_limit" ] || t=$session_limit
    local session_device=cpu
    [ "$device" = cuda ] && session_device=cuda:0
    cat >"$work/$name.config.json" <<EOF
{
  "name": "gpu-check-$name",
  "models": ["dqn", "ppo", "mamba2", "tft"],
  "steps": $steps,
  "device": "$session_device",
  "threads": $threads,
  "checkpoint_every": 0,
  "dqn": {"learning_starts": 64, "target_update_interval": 100},
  "ppo": {"n_steps": 128},
  $extra
  "precision": $precision
}
EOF
    local start=$SECONDS
    # Ten synthetic trading days: seven to train on, the rest keep the evaluation short.
    timeout --kill-after=20 "$t" env LD_LIBRARY_PATH="$lib_path" XDG_DATA_HOME="$work/data" "$cli" train \
        --db "$work/$name.db" --config "$work/$name.config.json" --models dqn,ppo,mamba2,tft \
        --from 2024-01-08 --to 2024-01-19 --json >"$work/$name.result.json" 2> >(tee "$work/$name.log" >&2)
    note "session.$name.rc" "$?"
    note "session.$name.seconds" "$((SECONDS - start))"
    local run_id
    run_id=$(run_cli runs --db "$work/$name.db" --json 2>>"$work/$name.log" |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"]; print(r[-1]["id"] if r else "")' 2>/dev/null)
    if [ -n "$run_id" ]; then
        run_cli report "$run_id" --db "$work/$name.db" --out "$work/$name.report.json" >&2 2>>"$work/$name.log"
    fi
}

if [ "$skip_engine" = 1 ]; then
    note engine.skipped "--skip-engine"
elif [ ! -d "$deps/usr" ]; then
    note engine.skipped "no $deps (run tests/gpu/fetch-deps.sh on a Debian 12 machine and carry .gpu-deps)"
elif engine_build; then
    ensure_zoneinfo
    session fp32 '{"amp": false, "int8": false}'
    session amp_bf16_int8 '{"amp": true, "amp_dtype": "bf16", "loss_scale": 1, "dynamic_loss_scale": false, "int8": true}'
    # What a user gets by default choice: AMP timed per model on the GPU, INT8 kernels timed per layer
    # (including _int_mm), the gate deciding; each model's validation "amp.choice" and "int8" say why.
    session auto '{"amp": "auto", "int8": true, "int8_backend": "auto"}'
    run_cli machine --json >"$work/machine.json" 2>>"$work/engine.log"
    # Two processes on the one device: NCCL refuses two ranks on one GPU, so the ranks agree on Gloo
    # through host copies (modelcheck's collectives_one_rank runs the NCCL group itself).
    session dist2_fp32 '{"amp": false, "int8": false}' '"workers": 2, "distributed_timeout_s": 60,'
fi
note seconds "$SECONDS"

# --- The one JSON document -------------------------------------------------------------------------
python3 - "$work" "$budget" "$deps" <<'PY'
import json, os, statistics, sys

work, budget, deps = sys.argv[1], int(sys.argv[2]), os.path.realpath(sys.argv[3])

def text(name, default=None):
    try:
        with open(os.path.join(work, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default

def tail(name, lines=15):
    t = text(name, "")
    return "\n".join(t.strip().splitlines()[-lines:])

# The lines of a build log that say what went wrong (compiler and CMake errors), then its end.
def problems(name, lines=25):
    t = text(name, "").splitlines()
    hits = [l for l in t if "error" in l.lower() or l.startswith("FAILED") or "CMake Error" in l]
    return "\n".join((hits[:lines] + ["..."] + t[-5:]) if hits else t[-lines:])

def load(name):
    t = text(name)
    if t is None or not t.strip():
        return None, "no output"
    try:
        return json.loads(t), None
    except ValueError as e:
        return None, f"not JSON ({e}): {t[:300]}"

def number(name):
    t = text(name)
    try:
        return int(t) if t is not None else None
    except ValueError:
        return None

out = {"device": text("device"), "torch_prefix": text("torch_prefix") or "system LibTorch",
       "budget_s": budget}
# How the communicator was built: gloo/nccl found at configure time, the configuration that
# compiled (full, without_nccl, without_gloo) and the errors of those that did not.
out["communicator"] = {"gloo_found": bool(text("gloo_found")), "nccl_found": bool(text("nccl_found")),
                       "nccl_include": text("nccl_include"), "built": text("communicator_build"),
                       **{k: text(f"communicator_error_{k}") for k in ("full", "without_nccl", "without_gloo")
                          if text(f"communicator_error_{k}")}}

# modelcheck
if text("modelcheck.error"):
    out["modelcheck"] = {"error": text("modelcheck.error") + ":\n" + problems("modelcheck.log")}
else:
    doc, err = load("modelcheck.json")
    rc = number("modelcheck.rc")
    if doc is None:
        out["modelcheck"] = {"error": f"foxhunt-modelcheck exited {rc}: {err}; stderr: {tail('modelcheck.log')}"}
    else:
        if rc not in (0, None):
            doc = {"exit_status": rc, **doc} if isinstance(doc, dict) else {"exit_status": rc, "output": doc}
        out["modelcheck"] = doc
out["modelcheck_s"] = number("modelcheck.seconds")

# Summary statistics of one stored metric series.
def stats(values):
    v = [x for x in values if isinstance(x, (int, float))]
    if not v:
        return None
    return {"n": len(v), "median": statistics.median(v), "last": v[-1], "max": max(v)}

KEY_METRICS = ("loss", "grad_norm", "step_ms", "update_ms", "latency_ms", "param_bytes", "grad_bytes",
               "optimizer_bytes", "activation_bytes", "loss_scale", "skipped_steps", "int8_degradation")

def wanted(metric):
    return metric in KEY_METRICS or "cuda" in metric or "bytes" in metric or metric.endswith("_ms")

def session(name):
    if text(f"session.{name}.error"):
        return {"error": text(f"session.{name}.error")}
    cfg, _ = load(f"{name}.config.json")
    s = {"exit_status": number(f"session.{name}.rc"), "wall_s": number(f"session.{name}.seconds"),
         "config": {k: cfg[k] for k in ("device", "steps", "threads", "precision")} if cfg else None}
    doc, err = load(f"{name}.result.json")
    if doc is None:
        s["error"] = f"foxhunt-cli train printed no result ({err}); stderr: {tail(name + '.log')}"
    else:
        for k in ("run_id", "status", "error", "ticks", "split", "ranks", "collectives"):
            if k in doc:
                s[k] = doc[k]
        if doc.get("status") == "failed" or s["exit_status"] not in (0, None):
            s["stderr_tail"] = tail(name + ".log", 6)
    report, rerr = load(f"{name}.report.json")
    run = (report or {}).get("runs", [{}])[0] if report else {}
    metrics = run.get("metrics", {})
    if "versions" in run:
        s["versions"] = run["versions"]
    models = {}
    for model, m in ((doc or {}).get("models") or {}).items():
        tr = m.get("training", {})
        val = m.get("validation", {})
        entry = {"steps": tr.get("steps"), "param_bytes": tr.get("param_bytes"), "latency_ms": tr.get("latency"),
                 "final": tr.get("final"), "amp": val.get("amp")}
        if "int8" in val:
            entry["int8"] = val["int8"]
        test = m.get("test", {})
        if "policy" in test:
            entry["test_pnl_usd"] = test["policy"].get("pnl_usd")
        if "model" in test:
            entry["test_quantile_loss"] = test["model"].get("quantile_loss")
        models[model] = entry
    for model, series in metrics.items():
        picked = {k: stats(v.get("value", [])) for k, v in series.items() if wanted(k)}
        models.setdefault(model, {})["metrics"] = {k: v for k, v in picked.items() if v is not None}
    if models:
        s["models"] = models
    if report is None and doc is not None:
        s["report_error"] = rerr
    return s

engine = {}
if text("engine.skipped"):
    engine["skipped"] = text("engine.skipped")
elif text("engine.error"):
    engine["error"] = text("engine.error") + ":\n" + problems("engine.log")
else:
    engine["build_done_at_s"] = number("engine.build_seconds")
    engine["tzdata"] = text("tzdata")
    engine["sessions"] = {name: session(name) for name in ("fp32", "amp_bf16_int8", "auto", "dist2_fp32")}
    engine["machine"], _ = load("machine.json")
resolved = text("engine.resolved")
if resolved:
    engine["resolved"] = dict(line.split("=", 1) for line in resolved.splitlines() if "=" in line)
    # Where a library came from anywhere but .gpu-deps (a -dev package installed on the machine).
    engine["resolved_outside_gpu_deps"] = sorted(
        k.split(":")[0] for k, v in engine["resolved"].items()
        if not k.startswith("Torch_DIR") and not os.path.realpath(v).startswith(deps + os.sep))
out["engine"] = engine
out["seconds"] = number("seconds")
print(json.dumps(out, indent=1, default=str))
PY
