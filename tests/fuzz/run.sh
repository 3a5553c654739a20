#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Bounded libFuzzer runs of the three readers (CSV, DBN, zstd framing). Benchmark-like: CI does
# not run it. From the repo root:
#
#   nice -n 19 tests/fuzz/run.sh            # 300 s per target
#   FUZZ_SECONDS=30 tests/fuzz/run.sh       # or: tests/fuzz/run.sh 30
#
# Builds with clang++-14 -fsanitize=fuzzer,address,undefined -O1 -g into build-fuzz/, seeds each
# corpus from small slices of ../shared/data/real in a temporary folder (never the repo), runs
# the targets one after another and prints one JSON object with each target's executions,
# exec/s, corpus, coverage and findings. Findings (crash-*, timeout-*, oom-*, leak-* inputs) are
# kept in build-fuzz/findings/<target>/. Exit status: 0 with no findings, 1 with findings, 2 when
# the toolchain or a library is missing.
#
# Environment: FUZZ_SECONDS (per target, default 300), CXX (default clang++-14),
# FOXHUNT_REAL_DATA (default ../shared/data/real), FUZZ_BUILD_DIR (default build-fuzz),
# FUZZ_TARGETS (default "csv dbn zstd"), FUZZ_CORPUS_DIR (keep each corpus in DIR/corpus_<target> and
# grow it on the next run; default: a temporary folder, removed at the end).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
seconds="${1:-${FUZZ_SECONDS:-300}}"
cxx="${CXX:-clang++-14}"
data="${FOXHUNT_REAL_DATA:-$root/../shared/data/real}"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=(${FUZZ_TARGETS:-csv dbn zstd})

missing() { echo "tests/fuzz/run.sh: $1" >&2; exit 2; }

command -v "$cxx" >/dev/null || missing "$cxx not found: install the Debian package clang-14"
command -v pkg-config >/dev/null || missing "pkg-config not found: install pkg-config"
pkg-config --exists libzstd || missing "libzstd not found by pkg-config: install libzstd-dev"
# Howard Hinnant's date/tz ships no .pc file; look for what engine/CMakeLists.txt links (date::date-tz).
echo '#include <date/tz.h>' | "$cxx" -std=c++20 -fsyntax-only -x c++ - 2>/dev/null \
    || missing "date/tz.h not found: install libhowardhinnant-date-dev"
command -v zstd >/dev/null || missing "zstd not found (it decompresses the DBN seed): install zstd"
[ -r "$data/test_data.ohlcv-1m.dbn.zst" ] || missing "no seed data in $data (set FOXHUNT_REAL_DATA)"

mkdir -p "$build/obj"
probe="$build/probe"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe.cpp"
"$cxx" -fsanitize=fuzzer "$probe.cpp" -o "$probe" 2>/dev/null \
    || missing "$cxx cannot link libFuzzer's runtime: install the Debian package libfuzzer-14-dev"

# The engine/data sources the readers need, as engine/CMakeLists.txt compiles them (with date's
# interface definitions); -fsanitize=fuzzer-no-link instruments them without a second main().
common=(-std=c++20 -O1 -g -Wall -Wextra -fno-omit-frame-pointer -fno-sanitize-recover=undefined
        -I"$root" $(pkg-config --cflags libzstd) -DONLY_C_LOCALE=1 -DHAS_STRING_VIEW=1 -DUSE_OS_TZDB=1)
sources=(csv_reader dbn_reader reader input_file market_time parsed_file)
objects=()
for s in "${sources[@]}"; do
    o="$build/obj/$s.o"
    if [ ! -e "$o" ] || [ "engine/data/$s.cpp" -nt "$o" ] || [ -n "$(find engine/data -name '*.h' -newer "$o")" ]; then
        echo "compiling engine/data/$s.cpp" >&2
        "$cxx" "${common[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "engine/data/$s.cpp" -o "$o"
    fi
    objects+=("$o")
done
libs=(-ldate-tz $(pkg-config --libs libzstd) -lpthread)
for t in "${targets[@]}"; do
    echo "linking fuzz_$t" >&2
    "$cxx" "${common[@]}" -fsanitize=fuzzer,address,undefined "tests/fuzz/fuzz_$t.cpp" "${objects[@]}" "${libs[@]}" \
        -o "$build/fuzz_$t"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/foxhunt-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Seeds: slices of the real files, made here at run time; nothing of them lands in the repo.
seed_csv() {
    local dir="$1" f name
    for f in "$data/ES_1min_sample.csv" "$data/es_5min_1yr.csv"; do
        [ -r "$f" ] || continue
        name="$(basename "$f" .csv)"
        head -n 20 "$f" > "$dir/$name.head"
        { head -n 1 "$f"; sed -n '5000,5030p' "$f"; } > "$dir/$name.middle"
        { head -n 1 "$f"; tail -n 10 "$f"; } > "$dir/$name.tail"
    done
}
seed_dbn() {
    zstd -dc "$data/test_data.ohlcv-1m.dbn.zst" > "$1/test_data.ohlcv-1m.dbn"
    head -c 200 "$1/test_data.ohlcv-1m.dbn" > "$1/test_data.cut"
}
seed_zstd() {
    local dir="$1"
    cp "$data/test_data.ohlcv-1m.dbn.zst" "$dir/"
    cat "$data/test_data.ohlcv-1m.dbn.zst" "$data/test_data.ohlcv-1m.dbn.zst" > "$dir/two-frames.zst"
    zstd -dc "$data/test_data.ohlcv-1m.dbn.zst" | zstd -q -19 --no-check -c > "$dir/no-check.zst"
    zstd -dc "$data/test_data.ohlcv-1m.dbn.zst" | zstd -q -1 -c --no-content-size - > "$dir/streamed.zst"
    if [ -r "$data/ES_1min_sample.csv" ]; then
        head -n 200 "$data/ES_1min_sample.csv" | zstd -q -3 -c > "$dir/csv-slice.zst"
    fi
}
# Words of the formats, so the fuzzer needs not guess them byte by byte.
cat > "$work/csv.dict" <<'DICT'
"timestamp"
"ts_event"
"ts_recv"
"instrument_id"
"rtype"
"publisher_id"
"symbol"
"open"
"high"
"low"
"close"
"volume"
"Date/Time"
"date"
"time"
"1700000000000000000"
"2026-01-25T18:00:00.123456789Z"
"+05:30"
"20160909  09:30:00"
"01/25/2026 18:00"
"\x0d\x0a"
DICT
cat > "$work/dbn.dict" <<'DICT'
"DBN\x01"
"DBN\x02"
"DBN\x03"
"GLBX.MDP3"
"\x0e\x21"
"\x0e\x11"
"\xff\xff\xff\xff\xff\xff\xff\xff"
DICT

declare -A max_len=([csv]=16384 [dbn]=8192 [zstd]=4096)
declare -A dict=([csv]="$work/csv.dict" [dbn]="$work/dbn.dict" [zstd]="")
results="$work/results.jsonl"
: > "$results"
total_findings=0
for t in "${targets[@]}"; do
    corpus="${FUZZ_CORPUS_DIR:-$work}/corpus_$t"
    artifacts="$work/artifacts_$t"
    mkdir -p "$corpus" "$artifacts"
    "seed_$t" "$corpus"
    seeds=$(find "$corpus" -type f | wc -l)
    log="$build/fuzz_$t.log"
    echo "fuzzing $t for ${seconds}s ($seeds seeds), log in $log" >&2
    args=(-max_total_time="$seconds" -max_len="${max_len[$t]}" -rss_limit_mb=2048 -malloc_limit_mb=1024
          -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/")
    [ -n "${dict[$t]}" ] && args+=(-dict="${dict[$t]}")
    set +e
    "$build/fuzz_$t" "${args[@]}" "$corpus" > "$log" 2>&1
    rc=$?
    set -e
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
    findings=()
    while IFS= read -r f; do findings+=("$(basename "$f")"); done < <(find "$artifacts" -type f | sort)
    if [ ${#findings[@]} -gt 0 ]; then
        mkdir -p "$build/findings/$t"
        cp "$artifacts"/* "$build/findings/$t/"
        total_findings=$((total_findings + ${#findings[@]}))
    fi
    jq -n --arg target "$t" --argjson rc "$rc" --argjson seeds "$seeds" \
        --arg execs "$(stat number_of_executed_units)" --arg eps "$(stat average_exec_per_sec)" \
        --arg rss "$(stat peak_rss_mb)" --arg cov "$cov" --arg ft "$ft" \
        --argjson units "$(find "$corpus" -type f | wc -l)" \
        --argjson bytes "$(find "$corpus" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')" \
        --arg log "$log" --arg kept "$build/findings/$t" \
        --args '{target: $target, exit_code: $rc, executions: ($execs | tonumber? // null),
                 exec_per_s: ($eps | tonumber? // null), seeds: $seeds, corpus_units: $units,
                 corpus_bytes: $bytes, cov: ($cov | tonumber? // null), ft: ($ft | tonumber? // null),
                 peak_rss_mb: ($rss | tonumber? // null), log: $log,
                 findings: $ARGS.positional, findings_kept_in: (if ($ARGS.positional | length) > 0 then $kept else null end)}' \
        "${findings[@]}" >> "$results"
done

jq -s --arg cpu "$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)" \
      --arg compiler "$("$cxx" --version | head -n 1)" --argjson seconds "$seconds" \
      '{cpu: $cpu, compiler: $compiler, seconds_per_target: $seconds, targets: .}' "$results"
[ "$total_findings" -eq 0 ]
