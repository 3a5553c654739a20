// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One-layer LSTM with a hand-written backward: per step one [B, H] x [H, 4H] product and one
// fused pass, and the weight gradients as one product over all steps, where LibTorch's CPU LSTM
// runs about ten operators per step forward and twenty backward.

#include <torch/torch.h>

#include <tuple>

namespace foxhunt::models::tft {

/// Output and final state of fused_lstm().
struct FusedLstmOutput {
    /// [B, T, H]
    torch::Tensor output;
    /// [B, H]
    torch::Tensor h_n;
    /// [B, H]
    torch::Tensor c_n;
};

// x: [B, T, I], h0/c0: [B, H], w_ih: [4H, I], w_hh: [4H, H], b_ih/b_hh: [4H] -> output [B, T, H], h_n, c_n [B, H]
/// torch::nn::LSTM's maths (gates i, f, g, o; c' = f c + i g; h' = o tanh(c')) for one batch-first
/// layer, float32 on the CPU; differentiable in every argument.
FusedLstmOutput fused_lstm(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& c0,
                           const torch::Tensor& w_ih, const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                           const torch::Tensor& b_hh);

// gates_x: [B, T, 4H] = x W_ih^T + b_ih + b_hh, w_hh: [4H, H], h0/c0: [B, H] -> output [B, T, H], h_n, c_n [B, H]
/// One layer's recurrence for inference (no autograd) from its input projections, in one kernel
/// call (lstm_recurrence() in inference_kernels.h: float32 on the CPU, hidden 16, 32 or 64).
FusedLstmOutput lstm_from_projections(const torch::Tensor& gates_x, const torch::Tensor& w_hh, const torch::Tensor& h0,
                                      const torch::Tensor& c0);

} // namespace foxhunt::models::tft
