#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One command: install dependencies, build, and run the whole test suite.
# Exits non-zero when any test fails.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$repo/packaging/setup-deps.sh"
bash "$repo/packaging/build.sh"
cd "$repo"
export OPENBLAS_NUM_THREADS=1
ctest --test-dir build --output-on-failure -j "${FOXHUNT_TEST_JOBS:-2}" --timeout 600
