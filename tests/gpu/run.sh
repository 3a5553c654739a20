#!/usr/bin/env bash
# Builds only foxhunt-modelcheck (models + precision layer, no Qt, no engine) against the LibTorch
# inside the PyTorch wheel and runs it on CUDA; prints its JSON on stdout (build logs on stderr).
# Without python3 torch it falls back to the system LibTorch (Debian's 1.13) on the CPU; without a
# CUDA device it runs on the CPU. Extra arguments go to foxhunt-modelcheck (e.g. --quick).
# Environment: FOXHUNT_GPU_BUILD_DIR (default build-gpu), JOBS (parallel compile jobs, default nproc).
# The wheel's CMake config needs the CUDA toolkit (nvcc) on the machine for a CUDA build.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${FOXHUNT_GPU_BUILD_DIR:-$root/build-gpu}
jobs=${JOBS:-$(nproc)}
device=cuda
prefix_args=()
if prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
    prefix_args=("-DCMAKE_PREFIX_PATH=$prefix")
    if [ "$(python3 -c 'import torch; print(int(torch.cuda.is_available()))')" != 1 ]; then
        echo "run.sh: PyTorch sees no CUDA device; running on the CPU" >&2
        device=cpu
    fi
else
    echo "run.sh: python3 has no torch; using the system LibTorch on the CPU" >&2
    device=cpu
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${prefix_args[@]}" \
    -DFOXHUNT_BUILD_ENGINE=OFF -DFOXHUNT_BUILD_GUI=OFF -DFOXHUNT_BUILD_TESTS=OFF >&2
cmake --build "$build" --target foxhunt-modelcheck -j "$jobs" >&2
exec "$build/models/check/foxhunt-modelcheck" --device "$device" "$@"
