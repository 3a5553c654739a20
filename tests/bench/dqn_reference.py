#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference Double-DQN update through PyTorch's Python API, matching
engine/bench/bench_agents.cpp (BM_DqnUpdate): MLP 32 -> 256 -> 256 -> 3 (ReLU),
Adam (lr 1e-4), Huber loss (delta 1), target network, global-norm clipping at
10, replay of 10,000 random transitions sampled uniformly each update, one
intra-op thread. Prints JSON with the median updates/s of several runs, by wall
clock (as BM_DqnUpdate's items_per_second) and by process CPU time (comparable
with BM_DqnUpdate's cpu_time when the machine is shared with other work).

With --amp bf16 it also runs the update as the C++ AMP path does (BM_DqnUpdateAmp,
engine/agents/dqn.cpp with MixedPrecisionConfig::for_ampere()): both forwards under
torch.autocast("cpu", dtype=torch.bfloat16), the targets in float32, the Huber loss
on the half-precision Q values cast to float64, FP32 master weights and Adam, and
no loss scaling (BF16). FP32 and BF16 runs alternate; the FP32 keys are the same as
without the option, the BF16 ones carry "_bf16" (batch32_bf16_updates_per_s_median...)
and bf16_over_fp32_batch32 / _batch256 are the ratios of the wall-clock medians.

Usage: /usr/bin/python3 tests/bench/dqn_reference.py [--runs 5] [--seconds 2] [--amp bf16]
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

OBS, ACTIONS, CAPACITY = 32, 3, 10_000


def make_net():
    return nn.Sequential(nn.Linear(OBS, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, ACTIONS))


def run(batch, seconds, rng, amp=False):
    online = make_net()
    target = make_net()
    target.load_state_dict(online.state_dict())
    for p in target.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(online.parameters(), lr=1e-4)
    obs = torch.from_numpy(rng.uniform(-1, 1, (CAPACITY, OBS)).astype(np.float32))
    nxt = torch.from_numpy(rng.uniform(-1, 1, (CAPACITY, OBS)).astype(np.float32))
    act = torch.from_numpy(rng.integers(0, ACTIONS, CAPACITY)).long()
    rew = torch.from_numpy(rng.integers(-1, 2, CAPACITY).astype(np.float32))
    done = torch.from_numpy((rng.integers(0, 50, CAPACITY) == 0).astype(np.float32))
    gamma = 0.99
    params = list(online.parameters())

    def update():
        idx = torch.from_numpy(rng.integers(0, CAPACITY, batch))
        o, n, a, r, d = obs[idx], nxt[idx], act[idx], rew[idx], done[idx]
        with torch.no_grad():
            next_a = online(n).argmax(1, keepdim=True)
            next_q = target(n).gather(1, next_a).squeeze(1)
            y = r + gamma * (1.0 - d) * next_q
        q = online(o).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0)
        opt.step()
        return loss.item()

    def update_bf16():
        idx = torch.from_numpy(rng.integers(0, CAPACITY, batch))
        o, n, a, r, d = obs[idx], nxt[idx], act[idx], rew[idx], done[idx]
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            next_a = online(n).argmax(1, keepdim=True)
            next_q = target(n).gather(1, next_a).squeeze(1)
            y = r + gamma * (1.0 - d) * next_q.float()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            q = online(o).gather(1, a.unsqueeze(1)).squeeze(1)
        # Outside autocast, in float64 like the C++ path: the mean must not round in bf16.
        loss = F.smooth_l1_loss(q.double(), y.double())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 10.0)
        opt.step()
        return loss.item()

    step = update_bf16 if amp else update
    for _ in range(20):
        step()
    count = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while time.perf_counter() - start < seconds:
        step()
        count += 1
    return count / (time.perf_counter() - start), count / max(time.process_time() - cpu_start, 1e-9)


def record(out, prefix, samples):
    """Stores the (wall, cpu) rates of several runs under `prefix` and returns the wall ones."""
    wall = [w for w, _ in samples]
    cpu = [c for _, c in samples]
    out[f"{prefix}_updates_per_s_median"] = statistics.median(wall)
    out[f"{prefix}_updates_per_s_runs"] = wall
    out[f"{prefix}_updates_per_cpu_s_median"] = statistics.median(cpu)
    out[f"{prefix}_updates_per_cpu_s_runs"] = cpu
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--amp", choices=["none", "bf16"], default="none",
                        help="bf16: also time the BF16 autocast update (extra keys)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "runs": args.runs}
    for batch in (32, 256):
        if args.amp == "none":
            samples = [run(batch, args.seconds, rng) for _ in range(args.runs)]
        else:
            # Alternating, so that load from other work on the machine falls on both alike.
            pairs = [(run(batch, args.seconds, rng), run(batch, args.seconds, rng, amp=True))
                     for _ in range(args.runs)]
            samples = [fp32 for fp32, _ in pairs]
            bf16 = [half for _, half in pairs]
        wall = record(out, f"batch{batch}", samples)
        if args.amp == "bf16":
            wall16 = record(out, f"batch{batch}_bf16", bf16)
            out[f"bf16_over_fp32_batch{batch}"] = statistics.median(wall16) / statistics.median(wall)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
