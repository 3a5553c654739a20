#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fetches, on a Debian 12 amd64 machine with apt, the packages that the engine and foxhunt-cli need
# to build and run, and unpacks them (dpkg -x, no install) into one prefix, .gpu-deps/ at the repo
# root. The GPU machine has a PyTorch wheel, CUDA, CMake and ninja but none of these libraries;
# tests/gpu/run.sh builds the engine against this prefix when .gpu-deps travels there (the device
# tool's carry list: [".gpu-deps"]).
#
# libgloo-dev: the wheel ships no gloo headers, and c10d's ProcessGroupGloo.hpp (which the
# communicator needs for multi-process runs, and under which the NCCL group is built) includes them.
# Debian's are from 2022, older than the gloo inside a PyTorch 2.x wheel; the communicator only
# passes gloo's types through, and run.sh builds it without Gloo (and NCCL) if they do not compile.
# libboost1.74-dev: Boost.Math's normal and Student-t distributions for engine/stats (headers only).
# The package holds 160 MB of headers; only those engine/stats includes are kept (the closure of
# `c++ -M` over engine/stats/*.cpp on this machine), plus the whole of the small trees whose
# headers are picked by compiler and standard library (config, predef, detail, core,
# type_traits), about 7 MB, and Boost's CMake config files.
# Not fetched: Qt (foxhunt-cli is Qt-free; the GUI is not built there).
# tzdata is fetched because the engine's market clock reads America/New_York through date-tz, which
# only looks in /usr/share/zoneinfo, and container images often lack it.
#
# Idempotent: when .gpu-deps/PACKAGES already lists the same package versions, nothing is fetched.
# Environment: FOXHUNT_GPU_DEPS (default <repo>/.gpu-deps).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deps=${FOXHUNT_GPU_DEPS:-$root/.gpu-deps}

packages=(
    libsqlite3-dev libsqlite3-0
    libzstd-dev libzstd1
    libhowardhinnant-date-dev libdate-tz3
    nlohmann-json3-dev
    libssl-dev libssl3
    libcli11-dev
    libbenchmark-dev libbenchmark1debian
    tzdata
    libgloo-dev
    libboost1.74-dev
)

for tool in apt-get apt-cache dpkg "${CXX:-c++}"; do
    command -v "$tool" >/dev/null || { echo "fetch-deps.sh: needs $tool (a Debian 12 machine)" >&2; exit 1; }
done
# The GPU machine is x86-64; apt here must fetch amd64 packages.
[ "$(dpkg --print-architecture)" = amd64 ] ||
    { echo "fetch-deps.sh: this machine's packages are $(dpkg --print-architecture), not amd64" >&2; exit 1; }

# The exact versions apt would fetch now; one "name=version" line each, in a fixed order.
wanted=""
for p in "${packages[@]}"; do
    v=$(apt-cache policy "$p" | awk '/Candidate:/ {print $2; exit}')
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
        echo "fetch-deps.sh: apt knows no candidate for $p (run apt-get update?)" >&2
        exit 1
    fi
    wanted+="$p=$v"$'\n'
done

if [ -f "$deps/PACKAGES" ] && [ "$(cat "$deps/PACKAGES")" = "${wanted%$'\n'}" ]; then
    echo "fetch-deps.sh: $deps is up to date:" >&2
    sed 's/^/  /' "$deps/PACKAGES" >&2
    echo "fetch-deps.sh: size $(du -sh "$deps" | cut -f1)" >&2
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root) # _apt cannot write into our mktemp folder
# shellcheck disable=SC2046 # one word per package on purpose
(cd "$tmp" && apt-get "${sandbox[@]}" download $(printf '%s' "$wanted" | tr '\n' ' ') >&2)

stage=$tmp/prefix
mkdir -p "$stage"
for deb in "$tmp"/*.deb; do
    echo "fetch-deps.sh: unpacking $(basename "$deb")" >&2
    dpkg -x "$deb" "$stage"
done
# Not needed to build or run, and most of the size: the static OpenSSL and SQLite libraries (no
# CMake config file names them, unlike zstd's and benchmark's, whose configs check theirs),
# documentation, OpenSSL's engines and provider modules, the leap-second zone variants.
lib="${stage:?}/usr/lib/x86_64-linux-gnu"
rm -rf "${stage:?}/usr/share/doc" "${stage:?}/usr/share/doc-base" "${stage:?}/usr/share/man" \
    "${stage:?}/usr/share/lintian" "${stage:?}/usr/share/debconf" "${stage:?}/etc" \
    "${stage:?}/usr/bin" "${stage:?}/usr/sbin" "${stage:?}/usr/share/zoneinfo/right" \
    "${stage:?}/usr/share/zoneinfo/posix" "$lib/engines-3" "$lib/ossl-modules"
rm -f "$lib/libcrypto.a" "$lib/libssl.a" "$lib/libsqlite3.a"
# Boost: keep what engine/stats reaches (see the top of this file).
boost=$stage/usr/include/boost
if [ -d "$boost" ]; then
    keep=$tmp/boost-keep
    mkdir -p "$keep/boost"
    for src in "$root"/engine/stats/*.cpp; do
        "${CXX:-c++}" -std=c++20 -I"$root" -isystem "$stage/usr/include" -M "$src"
    done | tr ' \\' '\n\n' | grep "^$boost/" | sort -u | while read -r h; do
        mkdir -p "$keep/boost/$(dirname "${h#"$boost"/}")"
        cp "$h" "$keep/boost/${h#"$boost"/}"
    done
    for tree in config predef detail core type_traits; do
        cp -r "$boost/$tree" "$keep/boost/"
    done
    [ -f "$keep/boost/math/distributions/students_t.hpp" ] ||
        { echo "fetch-deps.sh: could not find Boost.Math's headers in $boost" >&2; exit 1; }
    rm -rf "$boost"
    mv "$keep/boost" "$boost"
fi
printf '%s\n' "${wanted%$'\n'}" >"${stage:?}/PACKAGES"
rm -rf "${deps:?}"
mv "$stage" "$deps"

echo "fetch-deps.sh: fetched into $deps:" >&2
sed 's/^/  /' "$deps/PACKAGES" >&2
echo "fetch-deps.sh: size $(du -sh "$deps" | cut -f1)" >&2
