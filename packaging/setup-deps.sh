#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs everything Foxhunt needs to build, test and package, from Debian 12
# packages. Idempotent: run it as often as you like (as root, or with sudo).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  exec sudo -E bash "$0" "$@"
fi

packages=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git file
  # the layout check (tests/clang_format.sh) against the committed .clang-format
  clang-format
  # lld: links the ~60 test executables about 5x faster than GNU ld (README, Build time)
  lld
  # Qt 6: widgets, charts, SQL (SQLite driver), svg, platform plugins
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev
  libqt6opengl6-dev libqt6sql6-sqlite qt6-qpa-plugins libgl-dev libxkbcommon-dev
  # LibTorch 1.13 (CPU) and a fast BLAS: without OpenBLAS LibTorch falls back
  # to reference BLAS and runs about 30x slower (see shared/DESIGN.md).
  libtorch-dev libopenblas0-pthread libopenblas-dev
  # gloo's headers: LibTorch's c10d ProcessGroupGloo (multi-process training) includes them
  libgloo-dev
  # engine libraries
  libsqlite3-dev sqlite3 libzstd-dev libhowardhinnant-date-dev tzdata
  nlohmann-json3-dev libcli11-dev libbenchmark-dev libssl-dev
  # Boost.Math headers: normal and Student-t distributions for engine/stats (headers only)
  libboost-dev
  # GUI tests and screenshots
  xvfb xauth
  # the .deb: dependency scan, icon sizes, man pages, metadata checks
  dpkg-dev librsvg2-bin help2man appstream desktop-file-utils lintian
  # report tests: PDF page count and text
  poppler-utils
  # reference measurements (PyTorch's Python API at the same version)
  python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages already installed"
else
  echo "setup-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Make sure the OpenBLAS alternative is the active libblas.so.3.
if [ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ]; then
  update-alternatives --set libblas.so.3-x86_64-linux-gnu \
    /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1 || true
  update-alternatives --set liblapack.so.3-x86_64-linux-gnu \
    /usr/lib/x86_64-linux-gnu/openblas-pthread/liblapack.so.3 >/dev/null 2>&1 || true
fi
