// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Causal depthwise convolution over time on a [B, L, C] tensor, the layout in_proj produces, so
// that neither direction transposes to [B, C, L] and back.

#include <torch/torch.h>

namespace foxhunt::models::mamba2 {

/// y[b, t, c] = bias[c] + sum_k weight[c, k] x[b, t - K + 1 + k, c], with x = 0 before t = 0: what
/// torch::conv1d with groups = C and padding K - 1 gives on x^T, cut to the first L steps.
/// float and double CPU tensors use a direct loop with its own backward, in their own type also
/// under CPU autocast; anything else (CUDA, half types) runs torch::conv1d.
/// x: [B, L, C], weight: [C, K], bias: [C] -> [B, L, C]
torch::Tensor causal_depthwise_conv1d(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

/// silu(causal_depthwise_conv1d(x, weight, bias)). Float32 CPU tensors without a graph to keep
/// (inference) take one fused pass (inference_kernels.h); anything else the two operators.
torch::Tensor causal_conv1d_silu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

} // namespace foxhunt::models::mamba2
