#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turns Google Benchmark JSON (from `foxhunt-cli bench --json --repetitions N`)
into the README's performance table: the median of each benchmark, with its
items/s when it reports them. With dqn_reference.json, the DQN update against
PyTorch (and, when it was run with --amp bf16, BF16 autocast against FP32 on
both sides); with int8_reference.json, BM_Int8Linear against quantize_dynamic.
Usage: perf_table.py bench.json [dqn_reference.json [int8_reference.json]]"""
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
    cpp_amp = {}
    cpp_int8 = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") not in (None, "median"):
            continue
        name = b.get("run_name", b["name"])
        unit = b.get("time_unit", "ns")
        t = f'{b["real_time"]:.3g} {unit}'
        rate = fmt_rate(b["items_per_second"]) if "items_per_second" in b else ""
        # With int8_reference.json they get a table of their own, beside PyTorch's figures.
        if not (name.startswith("BM_Int8Linear/") and len(sys.argv) > 3):
            rows.append((name, t, rate))
        if name.startswith("BM_DqnUpdate") and "items_per_second" in b:
            cpp_dqn[name] = b["items_per_second"]
        parts = name.split("/")
        if parts[0] == "BM_DqnUpdateAmp" and "items_per_second" in b:
            cpp_amp[(int(parts[1]), int(parts[2]))] = b["items_per_second"]
        if parts[0] == "BM_Int8Linear":
            args = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
            key = (int(args["in"]), int(args["out"]), int(args["batch"]), int(args["backend"]))
            cpp_int8[key] = (b["real_time"], b.get("rel_err"))
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
        if "batch32_bf16_updates_per_s_median" in ref and cpp_amp:
            print("\n| DQN update, BF16 autocast | C++ FP32 /s | C++ BF16 /s | C++ BF16/FP32 "
                  "| PyTorch FP32 /s | PyTorch BF16 /s | PyTorch BF16/FP32 |")
            print("|---|---|---|---|---|---|---|")
            for batch in (32, 256):
                c32, c16 = cpp_amp.get((batch, 0)), cpp_amp.get((batch, 1))
                p32 = ref.get(f"batch{batch}_updates_per_s_median")
                p16 = ref.get(f"batch{batch}_bf16_updates_per_s_median")
                if c32 and c16 and p32 and p16:
                    print(f"| batch {batch} | {c32:.0f} | {c16:.0f} | {c16 / c32:.3f} | {p32:.0f} | {p16:.0f} "
                          f"| {p16 / p32:.3f} |")
    if len(sys.argv) > 3 and cpp_int8:
        int8_table(cpp_int8, json.load(open(sys.argv[3])))


def int8_table(cpp, ref):
    """Ours (BM_Int8Linear) against quantize_dynamic's default (per-tensor) on each engine, op calls."""
    engines = ref.get("engines", ["onednn"])
    head = "| layer | in x out | batch | ours FP32 µs | ours INT8 dequantize µs (÷FP32) | ours INT8 oneDNN µs (÷FP32) " \
           "| PyTorch FP32 µs |"
    head += "".join(f" PyTorch INT8 {e} µs (÷FP32) |" for e in engines)
    if "onednn" in engines:
        head += " rel. error ours oneDNN / PyTorch oneDNN |"
    print("\n" + head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in ref["rows"]:
        key = (r["in"], r["out"], r["batch"])
        fp32 = cpp.get(key + (0,))
        deq = cpp.get(key + (1,))
        dnn = cpp.get(key + (2,))
        if not (fp32 and deq and dnn):
            continue
        line = (f"| {r['layer']} | {r['in']}x{r['out']} | {r['batch']} | {fp32[0]:.1f} "
                f"| {deq[0]:.1f} ({deq[0] / fp32[0]:.2f}) | {dnn[0]:.1f} ({dnn[0] / fp32[0]:.2f}) "
                f"| {r['fp32_op_us']:.1f} |")
        for e in engines:
            line += f" {r[f'int8_{e}_per_tensor_op_us']:.1f} ({r[f'int8_{e}_per_tensor_op_ratio']:.2f}) |"
        if "onednn" in engines:
            line += f" {dnn[1]:.3f} / {r['int8_onednn_per_tensor_rel_err']:.3f} |"
        print(line)


if __name__ == "__main__":
    main()
