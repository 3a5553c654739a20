// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The TFT's inference kernels, plain C++ on raw arrays (no LibTorch), each compiled for AVX512, AVX2
// and plain x86-64 and dispatched by the CPU:
// - the variable GRNs of a variable selection network in one pass per block of 16 rows: each
//   variable's embedding, GRN and weighted sum stay in registers and the L1 cache instead of going
//   through [V, rows, hidden] tensors op by op (variable_selection.cpp packs the parameters);
// - an LSTM layer's recurrence, one batch row at a time with the gates in vector lanes, instead of
//   about eight LibTorch operators per step (fused_lstm.cpp calls it without autograd).

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

/// Whether lstm_recurrence() handles this hidden width (16, 32 or 64).
bool lstm_recurrence_supports(int64_t hidden);

// gates_x: [B, T, 4H] = x W_ih^T + b_ih + b_hh; w_hh_t: [H, 4H] = W_hh^T; h0, c0: [B, H] ->
// out [B, T, H], h_n, c_n [B, H]. All row-major float32.
/// One LSTM layer's recurrence (gates i, f, g, o as torch::nn::LSTM: c' = f c + i g, h' = o tanh(c'))
/// given the input projections of every step.
void lstm_recurrence(const float* gates_x, const float* w_hh_t, const float* h0, const float* c0, float* out,
                     float* h_n, float* c_n, int64_t batch, int64_t steps, int64_t hidden);

/// The instruction sets the kernels are compiled for, in the order dispatch prefers them.
enum class FusedIsa { Generic, Avx2, Avx512Vnni };
/// The one fused_selection() and lstm_recurrence() dispatch to: the best this CPU has, at most the cap below.
FusedIsa fused_selection_isa();
/// Caps the instruction set dispatch may use (tests run every compiled kernel on one machine, and
/// see what a CPU without VNNI would do). Returns the previous cap.
FusedIsa cap_fused_selection_isa(FusedIsa cap);

/// out[n, :] = sum_v weights[n, v] * GRN_v(x[n, v]) for n < rows. x and weights are [rows, V]
/// row-major, out [rows, H]. An int8 pack quantizes each row's activations before the two inner
/// products (symmetric, one scale per row and layer) and needs fused_selection_int8_available().
void fused_selection(const FusedGrnPack& pack, const float* x, const float* weights, float* out, int64_t rows);

} // namespace foxhunt::models::tft
