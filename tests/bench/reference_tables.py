#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The INT8 and AMP comparison tables against PyTorch, as per-cell medians over
several back-to-back runs. Each run is a folder holding
  cpp.json       foxhunt-bench --benchmark_filter='BM_Int8Linear|BM_Int8Forecaster|BM_DqnUpdateAmp|BM_DqnUpdateBackprop'
                 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json
  int8_ref.json  tests/bench/int8_reference.py --engines onednn,qnnpack
  dqn_ref.json   tests/bench/dqn_reference.py --runs 3 --amp bf16
Ratios are taken between the medians. Usage: reference_tables.py RUN_DIR [RUN_DIR ...]"""
import json
import statistics
import sys

med = statistics.median


def args_of(run_name):
    return dict(p.split(":", 1) for p in run_name.split("/")[1:] if ":" in p)


def collect(runs):
    layer, forecaster, dqn, py_layer, py_dqn, names = {}, {}, {}, {}, {}, {}
    for run in runs:
        for b in json.load(open(f"{run}/cpp.json"))["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            name = b["run_name"]
            parts = name.split("/")
            if parts[0] == "BM_Int8Linear":
                a = args_of(name)
                key = (int(a["in"]), int(a["out"]), int(a["batch"]), int(a["backend"]))
                layer.setdefault(key, []).append((b["real_time"], b["rel_err"]))
            elif parts[0] == "BM_Int8Forecaster":
                a = args_of(name)
                key = (int(a["model"]), int(a["size"]), int(a["batch"]), int(a["backend"]))
                forecaster.setdefault(key, []).append((b["real_time"], b["rel_err"]))
            elif parts[0] in ("BM_DqnUpdateAmp", "BM_DqnUpdateBackprop"):
                dqn.setdefault((parts[0], int(parts[1]), int(parts[2])), []).append(b["items_per_second"])
        for row in json.load(open(f"{run}/int8_ref.json"))["rows"]:
            key = (row["in"], row["out"], row["batch"])
            names[key] = row["layer"]
            for field, value in row.items():
                if isinstance(value, float):
                    py_layer.setdefault(key + (field,), []).append(value)
        ref = json.load(open(f"{run}/dqn_ref.json"))
        for field, value in ref.items():
            if isinstance(value, float):
                py_dqn.setdefault(field, []).append(value)
    return layer, forecaster, dqn, py_layer, py_dqn, names


def main():
    runs = sys.argv[1:]
    if not runs:
        sys.exit(__doc__)
    layer, forecaster, dqn, py_layer, py_dqn, names = collect(runs)
    print(f"Per-cell medians of {len(runs)} runs.\n")
    print("| layer | in x out | rows | ours FP32 µs | ours INT8 dequantize µs (÷FP32) | ours INT8 oneDNN µs (÷FP32) "
          "| PyTorch FP32 µs | PyTorch quantize_dynamic oneDNN µs (÷FP32) | PyTorch quantize_dynamic QNNPACK µs (÷FP32) "
          "| rel. error: ours oneDNN / ours dequantize / PyTorch oneDNN |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, name in names.items():
        cells = [layer.get(key + (backend,)) for backend in (0, 1, 2)]
        if not all(cells):
            continue
        (f32, _), (deq, deq_err), (dnn, dnn_err) = [(med(t for t, _ in c), med(e for _, e in c)) for c in cells]
        pf = med(py_layer[key + ("fp32_op_us",)])
        line = (f"| {name} | {key[0]}x{key[1]} | {key[2]} | {f32:.1f} | {deq:.1f} ({deq / f32:.2f}) "
                f"| {dnn:.1f} ({dnn / f32:.2f}) | {pf:.1f} |")
        for engine in ("onednn", "qnnpack"):
            t = py_layer.get(key + (f"int8_{engine}_per_tensor_op_us",))
            line += f" {med(t):.1f} ({med(t) / pf:.2f}) |" if t else " |"
        py_err = py_layer.get(key + ("int8_onednn_per_tensor_rel_err",))
        line += f" {dnn_err:.3f} / {deq_err:.3f} / {med(py_err):.3f} |" if py_err else f" {dnn_err:.3f} / {deq_err:.3f} / |"
        print(line)

    if forecaster:
        print("\n| forecaster | windows | FP32 ms | INT8 dequantize ms (÷FP32; rel. error) "
              "| INT8 oneDNN ms (÷FP32; rel. error) |")
        print("|---|---|---|---|---|")
        models = {(0, 0): "Mamba-2, session (d_model 32)", (0, 1): "Mamba-2, bench (d_model 128)",
                  (1, 0): "TFT, session (hidden 16)", (1, 1): "TFT, bench (hidden 32)"}
        for (model, size), name in models.items():
            for batch in (1, 32):
                cells = [forecaster.get((model, size, batch, backend)) for backend in (0, 1, 2)]
                if not all(cells):
                    continue
                (f32, _), (deq, deq_err), (dnn, dnn_err) = [(med(t for t, _ in c), med(e for _, e in c)) for c in cells]
                print(f"| {name} | {batch} | {f32 / 1000:.2f} | {deq / 1000:.2f} ({deq / f32:.2f}; {deq_err:.3f}) "
                      f"| {dnn / 1000:.2f} ({dnn / f32:.2f}; {dnn_err:.3f}) |")

    if dqn and "batch32_bf16_updates_per_s_median" in py_dqn:
        print("\n| DQN update, batch | ours FP32 /s (hand-written backward, the default) | ours FP32 /s (autograd) "
              "| ours BF16 autocast /s | ours BF16 ÷ FP32 (÷ autograd FP32) | PyTorch FP32 /s | PyTorch BF16 autocast /s "
              "| PyTorch BF16 ÷ FP32 |")
        print("|---|---|---|---|---|---|---|---|")
        for batch in (32, 256):
            try:
                f32 = med(dqn[("BM_DqnUpdateAmp", batch, 0)])
                bf16 = med(dqn[("BM_DqnUpdateAmp", batch, 1)])
                autograd = med(dqn[("BM_DqnUpdateBackprop", batch, 0)])
            except KeyError:
                continue
            pf = med(py_dqn[f"batch{batch}_updates_per_s_median"])
            ph = med(py_dqn[f"batch{batch}_bf16_updates_per_s_median"])
            print(f"| {batch} | {f32:.0f} | {autograd:.0f} | {bf16:.1f} | {bf16 / f32:.3f} ({bf16 / autograd:.3f}) "
                  f"| {pf:.0f} | {ph:.1f} | {ph / pf:.3f} |")


if __name__ == "__main__":
    main()
