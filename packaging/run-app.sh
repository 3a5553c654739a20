#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One command: install dependencies, build, and run the main job.
# With a display: the Foxhunt window. Without one: a headless run on the
# bundled default data that writes a report (foxhunt-report.html/.json).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$repo/packaging/setup-deps.sh"
bash "$repo/packaging/build.sh"
cd "$repo"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/app/foxhunt "$@"
fi
echo "No display: training all four models headless on the bundled default data."
db="${FOXHUNT_DB:-$repo/build/foxhunt-demo.db}"
./build/app/foxhunt-cli train --db "$db" --models dqn,ppo,mamba2,tft --steps "${FOXHUNT_STEPS:-2000}" \
  --report "$repo/foxhunt-report.html"
run=$(./build/app/foxhunt-cli runs --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
./build/app/foxhunt-cli report "$run" --db "$db" --out "$repo/foxhunt-report.json" >/dev/null
./build/app/foxhunt-cli replay --db "$db" --report "$repo/foxhunt-data-report.html" >/dev/null
echo "Reports written: $repo/foxhunt-report.html, $repo/foxhunt-report.json, $repo/foxhunt-data-report.html"
