#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fix-dbgsym.sh FILE.ddeb: rewrites the package's md5sums relative to its root and adds
# usr/share/doc/<package> as a link to the main package's doc folder (copyright, changelog),
# as Debian's automatic -dbgsym packages have it; then packs it again in place.
set -euo pipefail
ddeb=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -R "$ddeb" "$work/root"
package=$(sed -n 's/^Package: //p' "$work/root/DEBIAN/control")
main=${package%-dbgsym}
mkdir -p "$work/root/usr/share/doc"
ln -sfn "$main" "$work/root/usr/share/doc/$package"
(cd "$work/root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$work/root/DEBIAN/md5sums"
dpkg-deb --root-owner-group -Zgzip -z6 -b "$work/root" "$ddeb" > /dev/null
