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

} // namespace foxhunt::models::tft
