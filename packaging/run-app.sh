#!/usr/bin/env bash
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
echo "No display: running headless on the bundled default data."
db="${FOXHUNT_DB:-$repo/build/foxhunt-demo.db}"
./build/app/foxhunt-cli replay --db "$db" --speed max --report "$repo/foxhunt-report.html"
./build/app/foxhunt-cli replay --db "$db" --speed max --report "$repo/foxhunt-report.json" >/dev/null
echo "Report written: $repo/foxhunt-report.html and $repo/foxhunt-report.json"
