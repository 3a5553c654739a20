# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the reference train steps (mamba2_reference.py, tft_reference.py):
time a train-step closure the way foxhunt-bench times its C++ counterpart, and
print the medians of several runs per size as JSON."""
import argparse
import json
import statistics
import time

import torch


def time_steps(step, steps):
    """One untimed warm-up step (allocations, lazy optimizer state), then the mean
    wall and process-CPU milliseconds of `steps` timed ones."""
    step()
    wall, cpu = [], []
    for _ in range(steps):
        w0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append((time.perf_counter() - w0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return statistics.mean(wall), statistics.mean(cpu)


def main(run, params=None):
    """Command line: --runs, --steps, --sizes. `run(size, steps)` returns (wall, cpu) means;
    `params(size)`, when given, the model's parameter count, printed beside them."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5, help="runs per size; each reports the mean of --steps steps")
    ap.add_argument("--steps", type=int, default=5, help="timed train steps per run (as the benchmark's iterations)")
    ap.add_argument("--sizes", default="seed,default")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "runs": args.runs, "steps": args.steps}
    for size in args.sizes.split(","):
        if params:
            out[f"{size}_params"] = params(size)
        runs = [run(size, args.steps) for _ in range(args.runs)]
        out[f"{size}_train_step_ms_median"] = statistics.median(r[0] for r in runs)
        out[f"{size}_train_step_cpu_ms_median"] = statistics.median(r[1] for r in runs)
        out[f"{size}_train_step_ms_runs"] = [round(r[0], 2) for r in runs]
    print(json.dumps(out, indent=2))
