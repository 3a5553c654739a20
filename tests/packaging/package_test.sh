#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# package_test.sh BUILD_DIR REAL_DATA_DIR WITH_GUI(0|1) PROJECT_VERSION
# Builds the .deb from an already built tree, unpacks it into a temporary root
# (dpkg -x: no root needed) and runs the installed binaries from there, with
# nothing from the build tree on their library path.
set -euo pipefail
build=$(cd "$1" && pwd) real=$2 gui=$3 version=$4
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== cpack"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log"; fail "cpack"; }
debs=("$work"/out/foxhunt_*.deb)
[ -f "${debs[0]}" ] || fail "no foxhunt_*.deb in cpack's output"
deb=${debs[0]}
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"

echo "== metadata"
info=$(dpkg-deb -I "$deb")
echo "$info" | grep -E '^ (Package|Version|Depends|Recommends):'
depends=$(echo "$info" | sed -n 's/^ Depends: //p')
required=(libtorch libsqlite3 libzstd libopenblas0-pthread tzdata)
[ "$gui" = 1 ] && required+=(libqt6widgets6 libqt6charts6 qt6-qpa-plugins libqt6svg6)
for dep in "${required[@]}"; do
  [[ ",$depends" == *[\ ,]"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
grep -q "^ Version: $version-" <<< "$info" || fail "package version is not the project version $version"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
expected=(./usr/bin/foxhunt-cli ./usr/share/man/man1/foxhunt-cli.1.gz ./usr/share/doc/foxhunt/copyright)
if [ "$gui" = 1 ]; then
  expected+=(./usr/bin/foxhunt ./usr/share/man/man1/foxhunt.1.gz)
  app_id=$(echo "$contents" | sed -n 's#^\./usr/share/applications/\(.*\)\.desktop$#\1#p')
  [ -n "$app_id" ] || fail "no desktop entry"
  expected+=("./usr/share/metainfo/$app_id.metainfo.xml"
             "./usr/share/icons/hicolor/scalable/apps/$app_id.svg")
  for size in 16 32 48 64 128 256; do
    expected+=("./usr/share/icons/hicolor/${size}x$size/apps/$app_id.png")
  done
fi
for path in "${expected[@]}"; do
  grep -qxF "$path" <<< "$contents" || fail "package lacks $path"
done
grep -q '^\./home\|^\./root\|\.db$' <<< "$contents" && fail "package ships user data"
grep -qxF ./usr/share/doc/foxhunt/changelog.Debian.gz <<< "$contents" || fail "package lacks changelog.Debian.gz"
grep -q '^License: GPL-3+' <(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/foxhunt/copyright) \
  || fail "copyright does not license the package GPL-3+"
if [ "$gui" = 1 ]; then
  grep -q '^\./usr/share/mime/packages/.*\.xml$' <<< "$contents" || fail "no shared-mime-info entry for .dbn"
fi

echo "== debug symbols"
ddebs=("$work"/out/foxhunt-dbgsym_*.ddeb)
[ -f "${ddebs[0]}" ] || fail "no foxhunt-dbgsym_*.ddeb beside the package"
ddeb=${ddebs[0]}
ddeb_contents=$(dpkg-deb -c "$ddeb")
ddeb_info=$(dpkg-deb -I "$ddeb")
grep -q '\./usr/lib/debug/\.build-id/../.*\.debug$' <<< "$ddeb_contents" || fail "the dbgsym package has no build-id debug files"
grep -q "^ Depends: foxhunt (= $version-" <<< "$ddeb_info" || fail "the dbgsym package does not depend on this version"

echo "== lintian"
# No errors; each warning the README lists (Packaging) with its reason.
allowed_warnings=(initial-upload-closes-no-bugs)
if command -v lintian > /dev/null; then
  tags=$(lintian --tag-display-limit 0 "$deb" "$ddeb" 2>&1 | grep -E '^[EW]: ' || true)
  echo "${tags:-no errors or warnings}"
  if grep -q '^E: ' <<< "$tags"; then fail "lintian errors"; fi
  while read -r line; do
    [ -z "$line" ] && continue
    tag=$(echo "$line" | awk '{print $3}')
    [[ " ${allowed_warnings[*]} " == *" $tag "* ]] || fail "lintian warning not listed in the README: $line"
  done <<< "$(echo "$tags" | grep '^W: ' || true)"
else
  fail "lintian is not installed (packaging/setup-deps.sh installs it)"
fi

echo "== unpack"
root=$work/root
dpkg -x "$deb" "$root"
bins=("$root/usr/bin/foxhunt-cli")
[ "$gui" = 1 ] && bins+=("$root/usr/bin/foxhunt")
for bin in "${bins[@]}"; do
  if readelf -d "$bin" | grep -E 'RPATH|RUNPATH'; then fail "$(basename "$bin") keeps an RPATH"; fi
  # dpkg-buildflags' hardening: full RELRO, immediate binding, the stack protector, fortified calls
  # (grep -q reads from a variable: in a pipe it may exit first, and pipefail would count the writer's SIGPIPE)
  grep -q GNU_RELRO <<< "$(readelf -lW "$bin")" || fail "$(basename "$bin") has no RELRO segment"
  grep -qE 'BIND_NOW|FLAGS_1.*NOW' <<< "$(readelf -dW "$bin")" || fail "$(basename "$bin") is not linked with -z now"
  undefined=$(nm -D --undefined-only "$bin")
  grep -q '__stack_chk_fail' <<< "$undefined" || fail "$(basename "$bin") has no stack protector"
  grep -qE '__[a-z_]+_chk(@|$)' <<< "$undefined" || fail "$(basename "$bin") calls no fortified libc function"
  libs=$(env -u LD_LIBRARY_PATH ldd "$bin")
  if echo "$libs" | grep 'not found'; then fail "$(basename "$bin"): missing libraries"; fi
  if echo "$libs" | grep -F -e "$build" -e "$source_dir"; then fail "$(basename "$bin") links into the build tree"; fi
done
if [ "$gui" = 1 ]; then
  if command -v appstreamcli > /dev/null; then
    appstreamcli validate --no-net "$root/usr/share/metainfo/$app_id.metainfo.xml"
  fi
  if command -v desktop-file-validate > /dev/null; then
    desktop-file-validate "$root/usr/share/applications/$app_id.desktop" || fail "desktop entry"
  fi
  grep -qx "Icon=$app_id" "$root/usr/share/applications/$app_id.desktop" || fail "desktop entry names another icon"
fi
grep -q '^\.SS "foxhunt-cli replay"' <<< "$(zcat "$root/usr/share/man/man1/foxhunt-cli.1.gz")" \
  || fail "the man page does not document the subcommands"

echo "== run the installed binaries"
# A fresh user: nothing from the developer's home, data or settings.
export HOME=$work/home XDG_DATA_HOME=$work/home/data XDG_CONFIG_HOME=$work/home/config
export XDG_RUNTIME_DIR=$work/runtime QT_QPA_PLATFORM=offscreen
unset LD_LIBRARY_PATH
mkdir -p "$HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
db=$work/store.db

# step "what" 'python condition on out (text) and j (parsed JSON or None)' program args...
step() {
  local what=$1 check=$2 program=$3
  shift 3
  echo "-- $what: $program $*"
  local out
  out=$("$root/usr/bin/$program" "$@") || fail "$what: exit status $?"
  CHECK=$check python3 -c '
import json, os, sys
out = sys.stdin.read()
try:
    j = json.loads(out)
except ValueError:
    j = None
if not eval(os.environ["CHECK"]):
    sys.exit("condition false: " + os.environ["CHECK"] + "\n" + out[:2000])
' <<< "$out" || fail "$what"
}

step "version" "out.strip() == 'foxhunt-cli $version'" \
  foxhunt-cli --version
step "replay the bundled synthetic default" 'j["synthetic"] and j["bars_replayed"] > 1000 and len(j["features"]) >= 8' \
  foxhunt-cli replay --db "$db" --json
step "train briefly on it" 'j["status"] == "finished" and j["models"]["dqn"]["training"]["steps"] == 300' \
  foxhunt-cli train --db "$db" --models dqn --steps 300 --json
step "import the real DBN fixture" 'j["files"][0]["format"] == "dbn" and j["files"][0]["imported"] == 4' \
  foxhunt-cli import "$real/test_data.ohlcv-1m.dbn.zst" --db "$db" --json
step "list both series" 'sorted(s["synthetic"] for s in j["series"]) == [False, True]' \
  foxhunt-cli bars --db "$db" --json
if [ "$gui" = 1 ]; then
  step "desktop app version" "out.strip() == 'foxhunt $version'" \
    foxhunt --version
  step "desktop app help" 'all(o in out for o in ("--db", "--reset-settings", "--version"))' foxhunt --help
fi
[ ! -e "$XDG_DATA_HOME/foxhunt/foxhunt.db" ] || fail "--db was ignored: the default store was written"
echo "PASS"
