#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Configures and builds Foxhunt in ./build (used by run-app.sh and run-tests.sh).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# ccache keyed on paths relative to the checkout, so a fresh clone reuses the cache.
# The models library uses a precompiled <torch/torch.h>; ccache only caches such
# compiles with the PCH sloppiness set.
export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
jobs=${FOXHUNT_JOBS:-$(nproc)}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=${FOXHUNT_BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build build -j "$jobs"
