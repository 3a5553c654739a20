#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every C++ source is named in a CMakeLists.txt (the build lists its sources by name, no globs):
# a file is listed when the CMakeLists.txt of its folder, or of a folder above it, names its path
# relative to that folder. Prints each file that is not, and fails. The fuzz targets are built by
# tests/fuzz/run.sh with clang and are left out.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$root"
missing=0
while IFS= read -r f; do
    dir=$(dirname "$f")
    found=0
    while :; do
        rel=${f#"$dir"/}
        [[ "$dir" == "." ]] && rel=$f
        if [[ -f "$dir/CMakeLists.txt" ]] && grep -Eq "(^|[[:space:]/(])${rel//./\\.}([[:space:])]|\$)" "$dir/CMakeLists.txt"; then
            found=1
            break
        fi
        [[ "$dir" == "." ]] && break
        dir=$(dirname "$dir")
    done
    if ((found == 0)); then
        echo "not in any CMakeLists.txt: $f"
        missing=1
    fi
done < <(find engine models ui app tests -name '*.cpp' -not -path 'tests/fuzz/*' | sort)
if grep -rn --include=CMakeLists.txt -E 'file\(GLOB' engine models ui app tests; then
    echo "a CMakeLists.txt globs its sources; name them instead"
    missing=1
fi
exit "$missing"
