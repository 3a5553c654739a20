#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every source file (C++, CMake, shell, Python) names its licence in an SPDX line near its top,
# and that licence is the one LICENSE and packaging/copyright give: GPL-3.0-or-later.
set -euo pipefail
root=${1:?usage: spdx_headers.sh SOURCE_DIR}
cd "$root"
id='SPDX-License-Identifier: GPL-3.0-or-later'

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h' '*.cmake' '*CMakeLists.txt' '*.sh' '*.py' .ci/run)
else # a source tarball: every such file outside build folders
  mapfile -t files < <(find . -path ./build -prune -o -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cmake' \
    -o -name CMakeLists.txt -o -name '*.sh' -o -name '*.py' \) -print | sed 's|^\./||')
fi
[ "${#files[@]}" -gt 100 ] || { echo "spdx: found only ${#files[@]} source files in $root"; exit 1; }

missing=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue # deleted in the work tree, not yet committed
  head -n 3 "$f" | grep -qF "$id" || missing+=("$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'spdx: no "%s" in the first 3 lines of:\n' "$id"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi
other=$(git grep -l 'SPDX-License-Identifier:' -- "${files[@]}" 2>/dev/null | xargs -r grep -L "$id" || true)
[ -z "$other" ] || { echo "spdx: another licence named in: $other"; exit 1; }

grep -q 'GNU GENERAL PUBLIC LICENSE' LICENSE && grep -q 'Version 3, 29 June 2007' LICENSE \
  || { echo "spdx: LICENSE is not the GPL version 3"; exit 1; }
grep -qx 'License: GPL-3+' packaging/copyright || { echo "spdx: packaging/copyright does not license the files GPL-3+"; exit 1; }
echo "spdx: ${#files[@]} source files, each names $id"
