#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference INT8 inference per layer through PyTorch's own dynamic quantization,
matching engine/bench/bench_int8_layers.cpp (BM_Int8Linear): the same (in, out)
shapes, batch 1 and 32 (rows of one call; for a forecaster's layers 60 and 1920
rows, 1 and 32 windows of 60 bars), one intra-op thread, no autograd. Each
layer is an nn.Linear in FP32 and the same layer after torch.ao.quantization.quantize_dynamic
(qint8 weights, dynamically quantized quint8 activations), per quantized engine
and weight qconfig. Prints JSON: per shape, batch and variant the median time
per call of several runs, the ratio int8 / fp32 and the relative output error.

Two timings per variant: "module" calls the nn.Module (what a PyTorch user
writes; includes Python's module-call overhead), "op" calls the operator
directly (torch.nn.functional.linear, torch.ops.quantized.linear_dynamic), which
is closest to one C++ call. Ratios use the matching fp32 timing.

Usage: /usr/bin/python3 tests/bench/int8_reference.py [--runs 5] [--seconds 0.05]
       [--engines onednn,qnnpack]
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic  # noqa: E402

# (layer, in, out, per bar): keep in step with kShapes in engine/bench/bench_int8_layers.cpp.
# A forecaster's layer (per bar) runs on every bar of a 60-bar window: batch 1 and 32 are
# 60 and 1920 rows there.
SHAPES = [
    ("dqn fc1 (session)", 11, 64, False),
    ("dqn fc2 (session)", 64, 64, False),
    ("dqn q_head (session)", 64, 3, False),
    ("dqn fc1 (bench)", 32, 256, False),
    ("dqn fc2 (bench)", 256, 256, False),
    ("tft grn fc1/fc2 (session)", 16, 16, True),
    ("tft grn glu fc (session)", 16, 32, True),
    ("mamba2 in_proj (session)", 32, 164, True),
    ("mamba2 out_proj (session)", 64, 32, True),
    ("mamba2 in_proj (bench)", 128, 552, True),
    ("mamba2 out_proj (bench)", 256, 128, True),
    ("square 512", 512, 512, False),
    ("square 1024", 1024, 1024, False),
]
BATCHES = (1, 32)
WINDOW_BARS = 60
QCONFIGS = {"per_tensor": default_dynamic_qconfig, "per_channel": per_channel_dynamic_qconfig}


def time_per_call_us(fn, x, runs, seconds):
    """Median over `runs` of the mean time per call, each run about `seconds` long."""
    for _ in range(20):
        fn(x)
    # Calls per run from a short calibration, so every run is timed over the same count.
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds / 5:
        fn(x)
        n += 1
    calls = max(10, int(n * 5))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            fn(x)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples), samples


def relative_error(y, reference):
    norm = reference.norm().item()
    return (y - reference).norm().item() / norm if norm > 0 else 0.0


def measure(layer, n_in, n_out, batch, engines, args):
    torch.manual_seed(7)
    fp32 = nn.Linear(n_in, n_out).eval()
    x = torch.randn(batch, n_in)
    reference = fp32(x)
    w, b = fp32.weight, fp32.bias
    row = {"layer": layer, "in": n_in, "out": n_out, "batch": batch}
    row["fp32_module_us"], _ = time_per_call_us(fp32, x, args.runs, args.seconds)
    row["fp32_op_us"], _ = time_per_call_us(lambda v: F.linear(v, w, b), x, args.runs, args.seconds)
    for engine in engines:
        torch.backends.quantized.engine = engine
        for qname, qconfig in QCONFIGS.items():
            # quantize_dynamic replaces the top-level module's children: wrap the layer.
            int8 = quantize_dynamic(nn.Sequential(fp32), {nn.Linear: qconfig}, dtype=torch.qint8)[0]
            packed = int8._packed_params._packed_params
            # nn.quantized.dynamic.Linear (version 4) passes reduce_range=True: 7-bit activations.
            # QNNPACK ignores it and logs a warning through glog on every call, which neither
            # GLOG_minloglevel nor TORCH_CPP_LOG_LEVEL silence in this build (and which would be
            # timed): there, call without it, as the module's own version-3 path does. Same result.
            reduce_range = engine != "qnnpack"
            if not reduce_range:
                int8.version = 3
            key = f"int8_{engine}_{qname}"
            row[f"{key}_module_us"], _ = time_per_call_us(int8, x, args.runs, args.seconds)
            row[f"{key}_op_us"], _ = time_per_call_us(
                lambda v: torch.ops.quantized.linear_dynamic(v, packed, reduce_range), x, args.runs, args.seconds)
            row[f"{key}_module_ratio"] = row[f"{key}_module_us"] / row["fp32_module_us"]
            row[f"{key}_op_ratio"] = row[f"{key}_op_us"] / row["fp32_op_us"]
            row[f"{key}_rel_err"] = relative_error(int8(x), reference)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.05, help="approximate length of one run")
    parser.add_argument("--engines", default="onednn", help="comma-separated quantized engines (onednn, qnnpack)")
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    supported = torch.backends.quantized.supported_engines
    missing = [e for e in engines if e not in supported]
    if missing:
        parser.error(f"quantized engine(s) {missing} not in this torch ({supported})")
    torch.set_num_threads(1)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "runs": args.runs,
           "engines": engines, "supported_engines": supported, "rows": []}
    with torch.no_grad():
        for layer, n_in, n_out, per_bar in SHAPES:
            for batch in (b * WINDOW_BARS if per_bar else b for b in BATCHES):
                out["rows"].append(measure(layer, n_in, n_out, batch, engines, args))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
