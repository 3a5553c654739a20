#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Compiles (syntax only) every models/ and engine/ source with the CUDA paths switched on, on a
# Debian 12 machine without a GPU: the code behind FOXHUNT_TORCH_CUDA (and, with NCCL_INCLUDE_DIR,
# the communicator's NCCL group) is otherwise only compiled on the rare GPU machine.
#
# It uses Debian's own LibTorch 1.13 headers (which include c10/cuda and ATen/cuda) and the CUDA
# 11.8 headers of Debian's nvidia-cuda-dev (non-free; 774 MB, fetched with a private apt list and
# unpacked headers only, nothing installed). LibTorch 2.x differences stay unchecked: they are
# what tests/gpu/run.sh meets. Prints one line per file with an error or warning; exit 1 if any.
#
# Usage: tests/gpu/cuda-syntax.sh [BUILD_DIR]   (default build; needs its compile_commands.json)
# Environment: NCCL_INCLUDE_DIR (a folder with nccl.h: also checks the NCCL group),
# FOXHUNT_CUDA_HEADERS (default /tmp/foxhunt-cuda-headers: kept between runs), JOBS (default nproc).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
cache=${FOXHUNT_CUDA_HEADERS:-/tmp/foxhunt-cuda-headers}
jobs=${JOBS:-$(nproc)}
[ -f "$build/compile_commands.json" ] || { echo "cuda-syntax.sh: no $build/compile_commands.json" >&2; exit 2; }

if [ ! -f "$cache/usr/include/cuda_runtime_api.h" ]; then
    apt_dir=$(mktemp -d)
    trap 'rm -rf "$apt_dir"' EXIT
    mkdir -p "$apt_dir/lists/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free" \
        >"$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
        -o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" update >&2
    (cd "$apt_dir" && apt-get "${apt_opts[@]}" download nvidia-cuda-dev >&2)
    mkdir -p "$cache"
    dpkg-deb --fsys-tarfile "$apt_dir"/nvidia-cuda-dev_*.deb | tar -x -C "$cache" --wildcards './usr/include/*'
fi
# The one generated c10 header a CPU-only LibTorch package lacks.
mkdir -p "$cache/stub/c10/cuda/impl"
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' >"$cache/stub/c10/cuda/impl/cuda_cmake_macros.h"

python3 - "$build/compile_commands.json" "$root" "$cache" "${NCCL_INCLUDE_DIR:-}" >"$cache/commands" <<'PY'
import json, shlex, sys
commands, root, cache, nccl = sys.argv[1:]
for entry in json.load(open(commands)):
    source = entry["file"]
    if not (source.startswith(root + "/models/") or source.startswith(root + "/engine/")):
        continue
    args, keep, skip = shlex.split(entry["command"]), [], False
    for a in args[:-1]:  # the source is last
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c" and not a.startswith("-include") and "cmake_pch" not in a:
            keep.append(a)
    extra = ["-DFOXHUNT_TORCH_CUDA", f"-I{cache}/usr/include", f"-I{cache}/stub"]
    if nccl and source.endswith("/distributed/communicator.cpp"):
        extra += ["-DFOXHUNT_HAVE_C10D_NCCL", f"-I{nccl}"]
    line = " ".join(shlex.quote(a) for a in keep + ["-fsyntax-only"] + extra + [source])
    print(f"cd {shlex.quote(entry['directory'])} && {line}")
PY

echo "cuda-syntax.sh: $(wc -l <"$cache/commands") sources, $jobs at a time" >&2
failed=0
# shellcheck disable=SC2016
xargs -d '\n' -P "$jobs" -I{} bash -c '{} 2>&1 | grep -E "error|warning" | head -5' <"$cache/commands" >"$cache/problems" || true
if [ -s "$cache/problems" ]; then
    cat "$cache/problems"
    failed=1
fi
echo "cuda-syntax.sh: $( [ "$failed" = 0 ] && echo "no error or warning" || echo "problems above")" >&2
exit "$failed"
