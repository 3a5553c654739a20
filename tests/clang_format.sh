#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every C++ source follows .clang-format: lists the files clang-format would change and fails if any.
set -euo pipefail
root=${1:?usage: clang_format.sh SOURCE_DIR}
cd "$root"
command -v clang-format > /dev/null || { echo "clang-format: not installed (packaging/setup-deps.sh installs it)"; exit 1; }
[ -f .clang-format ] || { echo "clang-format: no .clang-format in $root"; exit 1; }
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o -type f \( -name '*.cpp' -o -name '*.h' \) -print | sed 's|^\./||')
fi
[ "${#files[@]}" -gt 100 ] || { echo "clang-format: found only ${#files[@]} sources in $root"; exit 1; }
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "clang-format: ${#bad[@]} file(s) differ from .clang-format (fix with: clang-format -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "clang-format: ${#files[@]} files follow .clang-format"
