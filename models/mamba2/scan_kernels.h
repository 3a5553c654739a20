// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The SSD scan as its recurrence, for inference on the CPU: one pass over the sequence per head,
// the state held in vector registers (16 channels of a head in the lanes, one register per state
// entry). No autograd: training keeps ssd_chunked()'s matmul form. Plain C++: no LibTorch.

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

} // namespace foxhunt::models::mamba2
