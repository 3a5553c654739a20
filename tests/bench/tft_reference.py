#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference Temporal Fusion Transformer train step through PyTorch's Python API,
matching engine/bench/bench_forecast.cpp (BM_TftTrainStep, BM_TftTrainStepDefault):
the architecture of models/tft/ written plainly in PyTorch, as a user would write
it from the TFT paper (Lim et al. 2021) in the style of pytorch-forecasting:
gated residual networks (GLU + add & norm), variable selection networks with a
linear embedding and a GRN per variable and softmax weights from a GRN over all
embeddings, four static context GRNs, an LSTM encoder over the past and decoder
over the known future started from the static state, a shared post-LSTM gate,
static enrichment, causal interpretable multi-head attention (per-head queries
and keys, one shared value projection, heads averaged), a position-wise GRN, a
pre-output gate and a linear quantile head; dropout 0.1 in training mode, as
the C++ model; quantile (pinball) loss over 3 quantiles, AdamW (lr 1e-3), one
intra-op thread. Prints JSON with the parameter count and the median
train-step milliseconds of several runs, by wall clock (as the benchmark's
real_time) and by process CPU time (as its cpu_time), for the seed sizes
(batch 32, 100 bars, hidden 32, 4 heads) and the session defaults (batch 32,
60 bars, hidden 16, 4 heads); both with 18 past inputs, 2 known-future inputs,
2 static covariates, embedding 8, horizon 5.

Usage: /usr/bin/python3 tests/bench/tft_reference.py [--runs 5] [--steps 5] [--sizes seed,default]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from step_timing import main, time_steps  # noqa: E402

FEATURES, KNOWN, STATIC, HORIZON, EMBEDDING = 16, 2, 2, 5, 8
QUANTILES = [0.1, 0.5, 0.9]
SIZES = {
    "seed": dict(batch=32, length=100, hidden=32, heads=4),
    "default": dict(batch=32, length=60, hidden=16, heads=4),
}


class GatedLinearUnit(nn.Module):
    def __init__(self, input_size, output_size, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(input_size, 2 * output_size)

    def forward(self, x):
        return F.glu(self.fc(self.dropout(x)), dim=-1)


class GateAddNorm(nn.Module):
    def __init__(self, input_size, output_size, dropout=0.0):
        super().__init__()
        self.glu = GatedLinearUnit(input_size, output_size, dropout)
        self.norm = nn.LayerNorm(output_size)

    def forward(self, x, skip):
        return self.norm(self.glu(x) + skip)


class GatedResidualNetwork(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, context_size=0, dropout=0.0):
        super().__init__()
        self.skip = nn.Linear(input_size, output_size) if input_size != output_size else None
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.context_proj = nn.Linear(context_size, hidden_size, bias=False) if context_size > 0 else None
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.gate_norm = GateAddNorm(hidden_size, output_size, dropout)

    def forward(self, x, context=None):
        residual = self.skip(x) if self.skip is not None else x
        h = self.fc1(x)
        if context is not None:
            c = self.context_proj(context)
            while c.dim() < h.dim():
                c = c.unsqueeze(-2)
            h = h + c
        h = self.fc2(F.elu(h))
        return self.gate_norm(h, residual)


class VariableSelectionNetwork(nn.Module):
    def __init__(self, n_variables, hidden_size, embedding_size, context_size=0, dropout=0.0):
        super().__init__()
        self.n_variables, self.hidden_size = n_variables, hidden_size
        v = max(n_variables, 1)
        # One Linear(1, E) per variable, kept as two [V, E] tables (U(-1, 1): fan-in 1).
        self.embedding_weight = nn.Parameter(torch.empty(v, embedding_size).uniform_(-1, 1))
        self.embedding_bias = nn.Parameter(torch.empty(v, embedding_size).uniform_(-1, 1))
        self.variable_grns = nn.ModuleList(
            [GatedResidualNetwork(embedding_size, hidden_size, hidden_size, dropout=dropout)
             for _ in range(n_variables)])
        self.flattened_grn = None
        if n_variables > 1:
            self.flattened_grn = GatedResidualNetwork(n_variables * embedding_size, min(hidden_size, n_variables),
                                                      n_variables, context_size, dropout)
        self.context_size = context_size

    def forward(self, x, context=None):
        lead = x.shape[:-1]
        if self.n_variables == 0:
            return x.new_zeros(*lead, self.hidden_size), x
        embedded = x.unsqueeze(-1) * self.embedding_weight + self.embedding_bias   # [..., V, E]
        stacked = torch.stack([grn(embedded[..., i, :]) for i, grn in enumerate(self.variable_grns)], dim=-1)
        if self.flattened_grn is not None:
            logits = self.flattened_grn(embedded.reshape(*lead, -1), context if self.context_size > 0 else None)
            weights = torch.softmax(logits, dim=-1)
        else:
            weights = x.new_ones(*lead, 1)
        return (stacked * weights.unsqueeze(-2)).sum(-1), weights


class InterpretableMultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.d_k = d_model // n_heads
        self.q_layers = nn.ModuleList([nn.Linear(d_model, self.d_k) for _ in range(n_heads)])
        self.k_layers = nn.ModuleList([nn.Linear(d_model, self.d_k) for _ in range(n_heads)])
        self.v_layer = nn.Linear(d_model, self.d_k)
        self.w_h = nn.Linear(self.d_k, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        values = self.v_layer(v)
        heads, attentions = [], []
        for q_layer, k_layer in zip(self.q_layers, self.k_layers):
            scores = torch.matmul(q_layer(q), k_layer(k).transpose(1, 2)) / self.d_k ** 0.5
            if mask is not None:
                scores = scores.masked_fill(mask, -1e9)
            attn = self.dropout(torch.softmax(scores, dim=-1))
            attentions.append(attn)
            heads.append(torch.matmul(attn, values))
        return self.w_h(torch.stack(heads, dim=0).mean(0)), torch.stack(attentions, dim=1)


class TemporalFusionTransformer(nn.Module):
    def __init__(self, n_past, n_future, horizon, n_quantiles, n_static, hidden, heads, embedding=8, dropout=0.1):
        super().__init__()
        self.horizon = horizon
        h, p = hidden, dropout

        def grn(context=0):
            return GatedResidualNetwork(h, h, h, context, p)

        self.static_vsn = VariableSelectionNetwork(n_static, h, embedding, 0, p)
        self.static_context_variable_selection = grn()
        self.static_context_initial_hidden = grn()
        self.static_context_initial_cell = grn()
        self.static_context_enrichment = grn()
        self.encoder_vsn = VariableSelectionNetwork(n_past, h, embedding, h, p)
        self.decoder_vsn = VariableSelectionNetwork(n_future, h, embedding, h, p)
        self.lstm_encoder = nn.LSTM(h, h, num_layers=1, batch_first=True)
        self.lstm_decoder = nn.LSTM(h, h, num_layers=1, batch_first=True)
        self.post_lstm_gate = GateAddNorm(h, h, p)
        self.static_enrichment = grn(h)
        self.attention = InterpretableMultiHeadAttention(h, heads, p)
        self.post_attention_gate = GateAddNorm(h, h, p)
        self.position_wise_grn = grn()
        self.pre_output_gate = GateAddNorm(h, h)
        self.output_layer = nn.Linear(h, n_quantiles)

    def forward(self, past, future, statics):
        t_enc = past.size(1)
        static_embedding, _ = self.static_vsn(statics)
        c_selection = self.static_context_variable_selection(static_embedding)
        c_hidden = self.static_context_initial_hidden(static_embedding).unsqueeze(0).contiguous()
        c_cell = self.static_context_initial_cell(static_embedding).unsqueeze(0).contiguous()
        c_enrichment = self.static_context_enrichment(static_embedding)

        enc_in, _ = self.encoder_vsn(past, c_selection)
        dec_in, _ = self.decoder_vsn(future, c_selection)
        enc_out, state = self.lstm_encoder(enc_in, (c_hidden, c_cell))
        dec_out, _ = self.lstm_decoder(dec_in, state)

        lstm_out = torch.cat([enc_out, dec_out], dim=1)
        temporal = self.post_lstm_gate(lstm_out, torch.cat([enc_in, dec_in], dim=1))
        enriched = self.static_enrichment(temporal, c_enrichment)
        queries = enriched[:, t_enc:]
        total = t_enc + self.horizon
        mask = torch.triu(torch.ones(self.horizon, total, dtype=torch.bool), diagonal=total - self.horizon + 1)
        attended, _ = self.attention(queries, enriched, enriched, mask)
        x = self.post_attention_gate(attended, queries)
        x = self.position_wise_grn(x)
        x = self.pre_output_gate(x, temporal[:, t_enc:])
        return self.output_layer(x)


def quantile_loss(pred, target, quantiles):
    taus = torch.tensor(quantiles, dtype=pred.dtype)
    diff = target.unsqueeze(-1) - pred
    return torch.max(taus * diff, (taus - 1.0) * diff).mean()


def build(size):
    s = SIZES[size]
    torch.manual_seed(0)
    model = TemporalFusionTransformer(FEATURES + KNOWN, KNOWN, HORIZON, len(QUANTILES), STATIC, s["hidden"], s["heads"],
                                      EMBEDDING)
    return model, s


def run(size, steps):
    model, s = build(size)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    b = s["batch"]
    past = torch.randn(b, s["length"], FEATURES + KNOWN)
    future = torch.randn(b, HORIZON, KNOWN)
    statics = torch.randn(b, STATIC)
    y = torch.randn(b, HORIZON)

    def step():
        opt.zero_grad()
        loss = quantile_loss(model(past, future, statics), y, QUANTILES)
        loss.backward()
        opt.step()
        return loss.item()

    return time_steps(step, steps)


if __name__ == "__main__":
    main(run, lambda size: sum(p.numel() for p in build(size)[0].parameters()))
