#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference Mamba-2 forecaster train step through PyTorch's Python API, matching
engine/bench/bench_forecast.cpp (BM_Mamba2TrainStep, BM_Mamba2TrainStepDefault):
the architecture of models/mamba2/ written plainly in PyTorch, as a user would
write it from the paper's minimal SSD listing (einsums over heads, B and C
repeated per head, segsum by masked cumsum): input projection, a pre-norm
residual stack of Mamba-2 mixers (in_proj -> causal depthwise conv -> SiLU ->
chunked SSD -> + D x -> RMSNorm gated by silu(z) -> out_proj), a final RMSNorm
on the last bar and a linear quantile head over it and the known future
covariates; quantile (pinball) loss over 3 quantiles, AdamW (lr 1e-3), one
intra-op thread. Prints JSON with the median train-step milliseconds of
several runs, by wall clock (as the benchmark's real_time) and by process CPU
time (as its cpu_time), for the seed sizes (batch 8, 60 bars, d_model 512,
head_dim 64) and the session defaults (batch 32, 60 bars, d_model 32,
head_dim 16).

Usage: /usr/bin/python3 tests/bench/mamba2_reference.py [--runs 5] [--steps 5] [--sizes seed,default]
"""
import math
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from step_timing import main, time_steps  # noqa: E402

FEATURES, KNOWN, HORIZON = 16, 2, 5
QUANTILES = [0.1, 0.5, 0.9]
SIZES = {
    "seed": dict(batch=8, length=60, d_model=512, head_dim=64),
    "default": dict(batch=32, length=60, d_model=32, head_dim=16),
}


def segsum(a):
    t = a.size(-1)
    rep = a.unsqueeze(-1).expand(*a.shape, t)
    strict = torch.tril(torch.ones(t, t, dtype=torch.bool), diagonal=-1)
    out = torch.cumsum(rep.masked_fill(~strict, 0), dim=-2)
    lower = torch.tril(torch.ones(t, t, dtype=torch.bool), diagonal=0)
    return out.masked_fill(~lower, -math.inf)


def ssd_chunked(x, dt, A, B, C, chunk):
    b, length, h, p = x.shape
    g, n = B.shape[2], B.shape[3]
    pad = (chunk - length % chunk) % chunk
    c = (length + pad) // chunk
    xdt = x * dt.unsqueeze(-1)
    adt = dt * A.view(1, 1, h)
    Bh = B.repeat_interleave(h // g, dim=2)
    Ch = C.repeat_interleave(h // g, dim=2)
    if pad:
        xdt = F.pad(xdt, (0, 0, 0, 0, 0, pad))
        adt = F.pad(adt, (0, 0, 0, pad))
        Bh = F.pad(Bh, (0, 0, 0, 0, 0, pad))
        Ch = F.pad(Ch, (0, 0, 0, 0, 0, pad))
    X = xdt.reshape(b, c, chunk, h, p)
    Bc = Bh.reshape(b, c, chunk, h, n)
    Cc = Ch.reshape(b, c, chunk, h, n)
    Ac = adt.reshape(b, c, chunk, h).permute(0, 3, 1, 2)
    A_cumsum = torch.cumsum(Ac, dim=-1)

    L = torch.exp(segsum(Ac))
    y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", Cc, Bc, L, X)
    decay_states = torch.exp(A_cumsum[..., -1:] - A_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", Bc, decay_states, X)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    decay_chunk = torch.exp(segsum(F.pad(A_cumsum[..., -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    carried = new_states[:, :-1]
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", Cc, carried, torch.exp(A_cumsum))
    y = (y_diag + y_off).reshape(b, c * chunk, h, p)
    return y[:, :length]


class RMSNormGated(nn.Module):
    def __init__(self, dim, group_size=0, eps=1e-5):
        super().__init__()
        self.group = group_size or dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, z=None):
        if z is not None:
            x = x * F.silu(z)
        g = x.reshape(*x.shape[:-1], x.shape[-1] // self.group, self.group)
        g = g * torch.rsqrt(g.pow(2).mean(-1, keepdim=True) + self.eps)
        return g.reshape(x.shape) * self.weight


class Mamba2Block(nn.Module):
    def __init__(self, d_model, d_state=16, d_conv=4, expand=2, head_dim=16, ngroups=1, chunk=32):
        super().__init__()
        self.d_inner = expand * d_model
        self.heads = self.d_inner // head_dim
        self.head_dim, self.d_state, self.ngroups, self.chunk = head_dim, d_state, ngroups, chunk
        self.conv_dim = self.d_inner + 2 * ngroups * d_state
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner + 2 * ngroups * d_state + self.heads, bias=False)
        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, d_conv, groups=self.conv_dim, padding=d_conv - 1)
        dt = torch.exp(torch.rand(self.heads) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3)).clamp_min(1e-4)
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.heads).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(self.heads))
        self.norm = RMSNormGated(self.d_inner, group_size=self.d_inner // ngroups)
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, u):
        b, length, _ = u.shape
        gn = self.ngroups * self.d_state
        z, xbc, dt = torch.split(self.in_proj(u), [self.d_inner, self.conv_dim, self.heads], dim=-1)
        dt = F.softplus(dt + self.dt_bias)
        xbc = F.silu(self.conv1d(xbc.transpose(1, 2))[..., :length]).transpose(1, 2)
        x, Bm, Cm = torch.split(xbc, [self.d_inner, gn, gn], dim=-1)
        x = x.reshape(b, length, self.heads, self.head_dim)
        Bm = Bm.reshape(b, length, self.ngroups, self.d_state)
        Cm = Cm.reshape(b, length, self.ngroups, self.d_state)
        y = ssd_chunked(x, dt, -torch.exp(self.A_log), Bm, Cm, self.chunk)
        y = (y + x * self.D.view(1, 1, -1, 1)).reshape(b, length, self.d_inner)
        return self.out_proj(self.norm(y, z))


class Mamba2Forecaster(nn.Module):
    def __init__(self, n_features, horizon, n_quantiles, known, d_model, head_dim, n_layers=2, d_state=16,
                 expand=2, chunk=32):
        super().__init__()
        self.horizon, self.n_quantiles = horizon, n_quantiles
        self.input_proj = nn.Linear(n_features, d_model)
        self.norms = nn.ModuleList([RMSNormGated(d_model) for _ in range(n_layers)])
        self.blocks = nn.ModuleList([Mamba2Block(d_model, d_state=d_state, expand=expand, head_dim=head_dim,
                                                 chunk=chunk) for _ in range(n_layers)])
        self.norm_f = RMSNormGated(d_model)
        self.head = nn.Linear(d_model + horizon * known, horizon * n_quantiles)

    def forward(self, x, known_future):
        h = self.input_proj(x)
        for norm, block in zip(self.norms, self.blocks):
            h = h + block(norm(h))
        last = self.norm_f(h[:, -1])
        features = torch.cat([last, known_future.reshape(x.size(0), -1)], dim=-1)
        return self.head(features).view(-1, self.horizon, self.n_quantiles)


def quantile_loss(pred, target, quantiles):
    taus = torch.tensor(quantiles, dtype=pred.dtype)
    diff = target.unsqueeze(-1) - pred
    return torch.max(taus * diff, (taus - 1.0) * diff).mean()


def run(size, steps):
    torch.manual_seed(0)
    s = SIZES[size]
    model = Mamba2Forecaster(FEATURES + KNOWN, HORIZON, len(QUANTILES), KNOWN, s["d_model"], s["head_dim"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(s["batch"], s["length"], FEATURES + KNOWN)
    known = torch.randn(s["batch"], HORIZON, KNOWN)
    y = torch.randn(s["batch"], HORIZON)

    def step():
        opt.zero_grad()
        loss = quantile_loss(model(x, known), y, QUANTILES)
        loss.backward()
        opt.step()
        return loss.item()

    return time_steps(step, steps)


if __name__ == "__main__":
    main(run)
