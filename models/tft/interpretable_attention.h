// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Interpretable multi-head attention (TFT): per-head queries and keys, one value
// projection shared by all heads, heads averaged so one attention pattern explains the output.

#include "models/precision/quantizable.h"

#include <torch/torch.h>

namespace foxhunt::models::tft {

/// Options for InterpretableMultiHeadAttention.
struct InterpretableMultiHeadAttentionOptions {
    InterpretableMultiHeadAttentionOptions(int64_t d_model, int64_t n_heads) : d_model_(d_model), n_heads_(n_heads) { }
    /// Model width (divisible by n_heads).
    TORCH_ARG(int64_t, d_model);
    /// Number of heads.
    TORCH_ARG(int64_t, n_heads);
    /// Dropout on the attention weights.
    TORCH_ARG(double, dropout) = 0.0;
};

/// Attention result and the per-head attention weights.
struct AttentionOutput {
    /// [B, Tq, d_model]
    torch::Tensor output;
    /// [B, heads, Tq, Tk], rows sum to 1, masked entries exactly 0.
    torch::Tensor attention;
};

/// The lowest finite value of a floating dtype: a mask fill that stays finite in FP16/BF16.
double lowest_finite(torch::ScalarType dtype);

/// Causal mask for queries that are the last Tq of Tk positions: true where key j lies after query i.
/// -> [Tq, Tk] bool
torch::Tensor causal_mask(int64_t queries, int64_t keys, const torch::Device& device);

/// Interpretable multi-head attention of Lim et al. (2021), eq. 13-16.
class InterpretableMultiHeadAttentionImpl : public torch::nn::Module {
public:
    /// Builds the projections.
    explicit InterpretableMultiHeadAttentionImpl(const InterpretableMultiHeadAttentionOptions& options);
    // q: [B, Tq, D], k/v: [B, Tk, D], mask: undefined or [Tq, Tk] bool (true = hidden) -> [B, Tq, D]
    /// Attends from q to k, v.
    AttentionOutput forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            const torch::Tensor& mask = {});

    /// The options it was built with.
    InterpretableMultiHeadAttentionOptions options;
    /// Query projection per head, D -> D/heads.
    torch::nn::ModuleList q_layers{nullptr};
    /// Key projection per head.
    torch::nn::ModuleList k_layers{nullptr};
    /// The value projection all heads share.
    precision::QuantizableLinear v_layer{nullptr};
    /// Output projection of the averaged heads.
    precision::QuantizableLinear w_h{nullptr};
    /// Dropout on attention weights (its options and train flag; applied by hashed_dropout).
    torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(InterpretableMultiHeadAttention);

} // namespace foxhunt::models::tft
