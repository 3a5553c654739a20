// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Mamba-2's inference kernels on the CPU, for float32 without autograd (training keeps the LibTorch
// operators and their gradients). Plain C++: no LibTorch; compiled once per instruction set and
// dispatched by kernel_isa().
// - The SSD scan as its recurrence: one pass over the sequence per head, the state held in vector
//   registers (16 channels of a head in the lanes, one register per state entry).
// - The causal depthwise convolution with its SiLU, in one pass over the rows.
// - The RMS norm, of x silu(z) (gated) or of x, per group and scaled, in one pass over each row.

#include <cstdint>

namespace foxhunt::models::mamba2 {

/// Pointers and element strides of the scan's operands (float32). The last axis of x, B and C
/// (channels, state entries) is contiguous; y, h0 and h_last are contiguous.
struct ScanOperands {
    const float* x = nullptr; ///< [batch, length, heads, head_dim]
    int64_t x_batch = 0, x_step = 0, x_head = 0;
    const float* dt = nullptr; ///< [batch, length, heads], already positive
    int64_t dt_batch = 0, dt_step = 0, dt_head = 0;
    const float* A = nullptr; ///< [heads], negative
    const float* B = nullptr; ///< [batch, length, groups, state]
    int64_t b_batch = 0, b_step = 0, b_group = 0;
    const float* C = nullptr; ///< as B; unused when y is null
    int64_t c_batch = 0, c_step = 0, c_group = 0;
    const float* D = nullptr;  ///< [heads] or null: y gains D x
    const float* h0 = nullptr; ///< [batch, heads, head_dim, state] or null (zeros)
    float* y = nullptr;        ///< [batch, length, heads, head_dim] or null (final state only)
    float* h_last = nullptr;   ///< [batch, heads, head_dim, state]
    int64_t batch = 0, length = 0, heads = 0, head_dim = 0, groups = 1, state = 0;
};

/// h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t (+ D x_t), for the (batch row, head)
/// pairs first .. last - 1 (pair i is row i / heads, head i % heads): disjoint ranges may run on
/// different threads.
void ssd_scan_range(const ScanOperands& s, int64_t first, int64_t last);

/// The causal convolution's operands: x rows at (b * x_batch + t * x_step), channels contiguous;
/// y [batch, length, channels] contiguous.
struct ConvOperands {
    const float* x = nullptr;
    int64_t x_batch = 0, x_step = 0;
    const float* wt = nullptr;   ///< [taps, channels]: tap k multiplies x[t - taps + 1 + k]
    const float* bias = nullptr; ///< [channels]
    float* y = nullptr;
    int64_t batch = 0, length = 0, channels = 0, taps = 0;
};

/// y[b, t, c] = silu(bias[c] + sum_k wt[k, c] x[b, t - taps + 1 + k, c]) (steps before 0 are zero)
/// for the rows first .. last - 1 (row i is batch row i / length, step i % length).
void causal_conv_silu_rows(const ConvOperands& s, int64_t first, int64_t last);

/// The RMS norm's operands: x and z rows at row * x_row / z_row, channels contiguous; out
/// [rows, dim] contiguous. Without z (null) the norm is not gated.
struct GatedNormOperands {
    const float* x = nullptr;
    int64_t x_row = 0;
    const float* z = nullptr; ///< null: h = x
    int64_t z_row = 0;
    const float* weight = nullptr; ///< [dim]
    float* out = nullptr;
    int64_t dim = 0, group = 0; ///< group divides dim
    float eps = 0;
};

/// h = x silu(z) (x without z); out = h / sqrt(mean of h^2 over each group + eps) * weight, for rows
/// first .. last - 1.
void gated_rms_norm_rows(const GatedNormOperands& s, int64_t first, int64_t last);

} // namespace foxhunt::models::mamba2
