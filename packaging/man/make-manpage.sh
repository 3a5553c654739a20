#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# make-manpage.sh HELP2MAN PROGRAM INCLUDE.h2m OUT.1
# Writes OUT.1.gz: help2man over PROGRAM --help/--version, the hand-written
# sections of INCLUDE.h2m, and, for a program with subcommands (CLI11's
# "Subcommands:" list), a COMMANDS section with each subcommand's own --help
# (and that of each subcommand's own subcommands), so a new subcommand is
# documented without touching this script.
set -euo pipefail
help2man=$1 program=$2 include=$3 out=$4
name=$(basename "$program")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The desktop app needs a Qt platform even to print its help.
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$work/runtime
mkdir -m 700 "$XDG_RUNTIME_DIR"

# Backslashes print as such; a leading . or ' would be a request, and a
# leading [ a new section to help2man's include parser.
troff_escape() { sed -e 's/\\/\\e/g' -e "s/^\\([.'[]\\)/\\\\\\&\\1/"; }

cp "$include" "$work/include.h2m"
# The names in the "Subcommands:" list of `PROGRAM ARGS... --help`.
subcommands_of() { "$program" "$@" --help | awk '
  /^[A-Za-z ]*[Ss]ubcommands:/ { in_list = 1; next }
  in_list && /^[[:space:]]*$/ { in_list = 0 }
  in_list && /^[[:space:]]+[a-z]/ { print $1 }'; }
# One subsection per command and per command of a command (`runs label`).
describe() {
  echo ".SS \"$name $*\""
  echo ".nf"
  "$program" "$@" --help | troff_escape
  echo ".fi"
}
subcommands=$(subcommands_of)
if [ -n "$subcommands" ]; then
  {
    echo "[COMMANDS]"
    for sub in $subcommands; do
      describe "$sub"
      for nested in $(subcommands_of "$sub"); do describe "$sub" "$nested"; done
    done
  } >> "$work/include.h2m"
fi

"$help2man" --no-info --section=1 --include="$work/include.h2m" --output="$work/page.1" "$program"
gzip -9n < "$work/page.1" > "$out.gz.tmp"
mv "$out.gz.tmp" "$out.gz"
