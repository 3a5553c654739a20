#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Times a walk-forward run group on the real 1-minute file and prints JSON: the group's wall
# time, the sum of its members' run durations (created to finished, from the store) and the
# launcher's overhead ratio (wall time x parallel jobs / sum of member durations; 1 = none).
#
#   tests/bench/group_bench.sh [--cli PATH] [--data FILE] [--models dqn] [--seeds 1-5] [--folds 3]
#                              [--jobs N] [--steps N]     (no --steps: the default sizes)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cli="$here/../../build/app/foxhunt-cli"
data="$here/../../../shared/data/real/ES_1min_sample.csv"
models=dqn
seeds=1-5
folds=3
jobs=$(nproc)
steps=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cli) cli=$2; shift 2 ;;
        --data) data=$2; shift 2 ;;
        --models) models=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --folds) folds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        *) echo "group_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$cli" ] || { echo "group_bench.sh: no foxhunt-cli at $cli (build it, or pass --cli)" >&2; exit 2; }
[ -r "$data" ] || { echo "group_bench.sh: cannot read $data" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/bench.db"
"$cli" import "$data" --db "$db" --no-progress >/dev/null

set -- train --db "$db" --models "$models" --seeds "$seeds" --folds "$folds" --jobs "$jobs" --no-progress --json
[ -n "$steps" ] && set -- "$@" --steps "$steps"
start=$(date +%s.%N)
"$cli" "$@" >"$tmp/group.json"
end=$(date +%s.%N)

python3 - "$db" "$tmp/group.json" "$start" "$end" "$jobs" "$steps" "$models" "$seeds" "$folds" <<'EOF'
import json, sqlite3, sys
db, summary, start, end, jobs, steps, models, seeds, folds = sys.argv[1:]
group = json.load(open(summary))
wall = float(end) - float(start)
con = sqlite3.connect(db)
rows = con.execute("SELECT created, finished FROM runs WHERE group_id = ?", (group["group_id"],)).fetchall()
durations = [(f - c) / 1e9 for c, f in rows if f]
total = sum(durations)
jobs = int(jobs)
print(json.dumps({
    "command": f"foxhunt-cli train --models {models} --seeds {seeds} --folds {folds} --jobs {jobs}"
               + (f" --steps {steps}" if steps else ""),
    "group_id": group["group_id"],
    "status": group["status"],
    "members": len(group["members"]),
    "members_finished": len(durations),
    "jobs": jobs,
    "wall_s": round(wall, 3),
    "sum_member_run_s": round(total, 3),
    "mean_member_run_s": round(total / len(durations), 3) if durations else None,
    "overhead_ratio": round(wall * min(jobs, len(rows)) / total, 3) if total > 0 else None,
}, indent=2))
EOF
