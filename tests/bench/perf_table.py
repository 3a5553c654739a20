#!/usr/bin/env python3
"""Turns Google Benchmark JSON (from `foxhunt-cli bench --json --repetitions N`)
into the README's performance table: the median of each benchmark, with its
items/s when it reports them. Usage: perf_table.py bench.json [dqn_reference.json]"""
import json
import sys


def fmt_rate(v):
    if v >= 1e6:
        return f"{v / 1e6:.2f} M/s"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k/s"
    return f"{v:.1f} /s"


def main():
    data = json.load(open(sys.argv[1]))
    ctx = data["context"]
    rows = []
    cpp_dqn = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") not in (None, "median"):
            continue
        name = b.get("run_name", b["name"])
        unit = b.get("time_unit", "ns")
        t = f'{b["real_time"]:.3g} {unit}'
        rate = fmt_rate(b["items_per_second"]) if "items_per_second" in b else ""
        rows.append((name, t, rate))
        if name.startswith("BM_DqnUpdate") and "items_per_second" in b:
            cpp_dqn[name] = b["items_per_second"]
    print(f'Machine: {ctx.get("num_cpus")} CPUs at {ctx.get("mhz_per_cpu")} MHz, LibTorch {ctx.get("torch_version")}, '
          f'{ctx.get("intra_op_threads")} intra-op thread(s); medians of repetitions.\n')
    print("| benchmark | median wall time | rate |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    if len(sys.argv) > 2:
        ref = json.load(open(sys.argv[2]))
        print("\n| DQN update | C++ updates/s | PyTorch (Python) updates/s | ratio |")
        print("|---|---|---|---|")
        for batch in (32, 256):
            py = ref.get(f"batch{batch}_updates_per_s_median")
            cpp = next((v for k, v in cpp_dqn.items() if k.split("/")[1:2] == [str(batch)]), None)
            if cpp and py:
                print(f"| batch {batch} | {cpp:.0f} | {py:.0f} | {cpp / py:.2f}x |")


if __name__ == "__main__":
    main()
