// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The TFT's inference kernels, plain C++ on raw arrays (no LibTorch), each compiled for AVX512, AVX2
// and plain x86-64 and dispatched by the CPU:
// - the variable GRNs of a variable selection network in one pass per block of 16 rows: each
//   variable's embedding, GRN and weighted sum stay in registers and the L1 cache instead of going
//   through [V, rows, hidden] tensors op by op (variable_selection.cpp packs the parameters);
// - an int8 copy's variable GRNs as tables: each variable's GRN output at evenly spaced knots of
//   its calibrated input range, interpolated (table_selection());
// - one attention head over a batch of small sequences (bmm of many small matrices goes batch entry
//   by batch entry on the CPU), or every head at once with the key projections folded into the
//   queries (no keys or values projected);
// - an LSTM layer's recurrence, one batch row at a time with the gates in vector lanes, instead of
//   about eight LibTorch operators per step (fused_lstm.cpp calls it without autograd).

#include "models/kernel_isa.h"

#include <cstdint>
#include <vector>

namespace foxhunt::models::tft {

/// The parameters of V variable GRNs (E -> hidden -> hidden -> GLU(2 hidden) + skip, LayerNorm),
/// packed for fused_selection(). The embedding x * w_e + b_e is folded into the first layer and the
/// skip (both affine in the scalar input): first = x * a1 + c1, residual = x * a_s + c_s.
struct FusedGrnPack {
    /// Variables V.
    int64_t variables = 0;
    /// Hidden width H (16, 32 or 64: fused_selection_supports()).
    int64_t hidden = 0;
    /// LayerNorm epsilon.
    float eps = 1e-5f;
    /// [V][4][H]: a1, c1, a_s, c_s.
    std::vector<float> affine;
    /// [V][H]: the second layer's bias, the LayerNorm's gamma and beta.
    std::vector<float> b2, gamma, beta;
    /// [V][2H]: the GLU layer's bias.
    std::vector<float> bg;
    /// Float weights (empty in an int8 pack): [V][H][H] second layer, [V][2H][H] GLU layer.
    std::vector<float> w2, wg;
    /// Int8 weights (empty in a float pack), row-major like the float ones, with their row scales
    /// and 128 x each row's sum (the zero-point correction of unsigned activations).
    std::vector<std::int8_t> w2q, wgq;
    std::vector<float> s2, sg;
    std::vector<std::int32_t> z2, zg;

    /// Whether the weights are int8.
    bool int8() const { return !w2q.empty(); }
};

/// Whether fused_selection() handles this hidden width.
bool fused_selection_supports(int64_t hidden);
/// Whether this CPU runs the int8 pack (AVX512-VNNI int8 dot products); false elsewhere.
bool fused_selection_int8_available();

/// out[n, :] = GRN_v(x[n]) for n < rows: one variable's GRN output (LayerNorm's affine applied) on
/// `rows` scalar inputs, x [rows], out [rows, H] (tabulating it). A float pack only.
void fused_grn_outputs(const FusedGrnPack& pack, int64_t variable, const float* x, float* out, int64_t rows);

/// Every variable's GRN tabulated over its input range: values[v][k][:] = GRN_v(low[v] + k step[v])
/// for k < knots, step[v] = (high[v] - low[v]) / (knots - 1), as IEEE half floats. Plain arrays
/// owned by the caller.
struct SelectionTableView {
    /// Variables V.
    int64_t variables = 0;
    /// Hidden width H (16, 32 or 64).
    int64_t hidden = 0;
    /// Knots K per variable (at least 2).
    int64_t knots = 0;
    /// [V][K][H] half floats (binary16 bit patterns).
    const std::uint16_t* values = nullptr;
    /// [V]: the first knot's input and 1 / step (0 where the range is empty).
    const float* low = nullptr;
    const float* inv_step = nullptr;
};

/// out[n, :] = sum_v weights[n, v] * T_v(x[n, v]): each variable's GRN interpolated linearly
/// between its two nearest knots, the input clamped to the tabulated range. x and weights are
/// [rows, V] row-major, out [rows, H].
void table_selection(const SelectionTableView& table, const float* x, const float* weights, float* out, int64_t rows);

/// One GRN of any small widths, packed for fused_grn(): first = x W1^T + b1 (+ the row's context),
/// ELU, W2, GLU over 2 out, residual (x Ws^T + bs, or x itself when ws is empty and in == out, or
/// one given), LayerNorm with its affine, and optionally a softmax over the out values. Hidden 0:
/// a GateAddNorm, the GLU straight on x (no w1, w2) and the residual given.
struct FusedDenseGrn {
    /// Widths: in <= 128, hidden <= 64, out <= 64 (fused_grn_supports()).
    int64_t in = 0, hidden = 0, out = 0;
    /// LayerNorm epsilon.
    float eps = 1e-5f;
    /// Softmax over the outputs after the LayerNorm (a selection network's weights).
    bool softmax = false;
    /// Row-major weights: w1 [hidden][in], w2 [hidden][hidden], wg [2 out][hidden], ws [out][in] (or empty).
    std::vector<float> w1, b1, w2, b2, wg, bg, ws, bs;
    /// [out] each.
    std::vector<float> gamma, beta;
    /// One layer's int8 rows, their scales and 128 x each row's sum.
    struct Int8Rows {
        std::vector<std::int8_t> q;
        std::vector<float> scale;
        std::vector<std::int32_t> zero;
    };
    /// An int8 pack (fused_grn_int8_supports()): the layers w1, w2, wg, ws as int8 rows (the float
    /// weights then empty, the biases float), each row's activations quantized per row as in
    /// fused_selection().
    Int8Rows q1, q2, qg, qs;

    /// Whether the weights are int8.
    bool int8() const { return !qg.q.empty(); }
};

/// Whether fused_grn() handles these widths (hidden 0: a GateAddNorm).
bool fused_grn_supports(int64_t in, int64_t hidden, int64_t out);
/// Whether it handles them with int8 weights on this CPU: AVX512-VNNI, in and hidden multiples of 4.
bool fused_grn_int8_supports(int64_t in, int64_t hidden, int64_t out);

/// out[n, :] = GRN(x[n, :]) for n < rows, 16 rows at a time in vector lanes. x [rows, in], out
/// [rows, out]; context null or [rows / group, hidden] (row n adds context[n / group], the
/// projected static context of its sample); residual null or [rows, out] (in place of the skip).
void fused_grn(const FusedDenseGrn& grn, const float* x, const float* context, int64_t group, const float* residual,
               float* out, int64_t rows);

/// One attention head for every sample: attn[b, t, :] = softmax over s of q[b, t] . k[b, s] x scale
/// (masked keys left out), out[b, t, :] = sum_s attn[b, t, s] v[b, s, :]. q [B, Tq, D], k and v
/// [B, Tk, D], mask null or [Tq, Tk] (nonzero: hidden), attn [B, Tq, Tk], out [B, Tq, D], all
/// row-major. A query that sees no key spreads its weight evenly, as softmax over equal scores.
void attention_head(const float* q, const float* k, const float* v, const std::uint8_t* mask, float scale, float* attn,
                    float* out, int64_t batch, int64_t queries, int64_t keys, int64_t depth);

/// Interpretable attention with each head's key projection folded into its query: for every
/// sample, head h and query t, attn[b, h, t, :] = softmax over s of qk[b, t, h] . x[b, s] x scale
/// (masked keys left out), and y[b, t] = sum_s (mean over h of attn[b, h, t, s]) x[b, s]. With
/// qk[b, t, h] = W_k,h^T q_h(b, t), the scores are q_h . k_h(s) less a per-query constant (which the
/// softmax drops), and the heads' mean output is the value layer applied to y. qk [B, Tq, heads, W],
/// x [B, Tk, W], mask null or [Tq, Tk] (nonzero: hidden), attn [B, heads, Tq, Tk], y [B, Tq, W],
/// all row-major. A query that sees no key spreads its weight evenly.
void folded_attention(const float* qk, const float* x, const std::uint8_t* mask, float scale, float* attn, float* y,
                      int64_t batch, int64_t heads, int64_t queries, int64_t keys, int64_t width);

/// Whether lstm_recurrence() handles this hidden width (16, 32 or 64).
bool lstm_recurrence_supports(int64_t hidden);

// gates_x: [B, T, 4H] = x W_ih^T + b_ih + b_hh; w_hh_t: [H, 4H] = W_hh^T; h0, c0: [B, H] ->
// out [B, T, H], h_n, c_n [B, H]. All row-major float32.
/// One LSTM layer's recurrence (gates i, f, g, o as torch::nn::LSTM: c' = f c + i g, h' = o tanh(c'))
/// given the input projections of every step.
void lstm_recurrence(const float* gates_x, const float* w_hh_t, const float* h0, const float* c0, float* out,
                     float* h_n, float* c_n, int64_t batch, int64_t steps, int64_t hidden);

/// The instruction sets the kernels are compiled for, in the order dispatch prefers them.
using FusedIsa = KernelIsa;
/// The one fused_selection() and lstm_recurrence() dispatch to: the best this CPU has, at most the cap below.
FusedIsa fused_selection_isa();
/// Caps the instruction set dispatch may use (cap_kernel_isa(): the Mamba-2 scan follows the same
/// cap). Returns the previous cap.
FusedIsa cap_fused_selection_isa(FusedIsa cap);

/// out[n, :] = sum_v weights[n, v] * GRN_v(x[n, v]) for n < rows. x and weights are [rows, V]
/// row-major, out [rows, H]. An int8 pack quantizes each row's activations before the two inner
/// products (symmetric, one scale per row and layer) and needs fused_selection_int8_available().
void fused_selection(const FusedGrnPack& pack, const float* x, const float* weights, float* out, int64_t rows);

} // namespace foxhunt::models::tft
