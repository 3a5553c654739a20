// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Interpretable multi-head attention (TFT): per-head queries and keys, one value
// projection shared by all heads, heads averaged so one attention pattern explains the output.

#include "models/precision/kernel_plan.h"
#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
///
/// At inference (float32 CPU input, keys and values the same tensor, as in the TFT's
/// self-attention) it can run "folded": each head's key projection folded into its query
/// (q_h . (W_k,h x + b_k,h) = (W_k,h^T q_h) . x + a per-query constant the softmax drops), and the
/// shared value projection applied once to the heads' mean weights over x (the weights sum to 1),
/// so no key or value is projected: folded_attention() in inference_kernels.h. A float model folds
/// wherever the input allows; an int8 copy ("layers": each head through its int8 layers) folds
/// where plan_int8_kernels() measured it faster, with the folded query weights derived from the
/// int8 ones.
class InterpretableMultiHeadAttentionImpl : public torch::nn::Module, public precision::FusedInt8Block {
public:
    /// Builds the projections.
    explicit InterpretableMultiHeadAttentionImpl(const InterpretableMultiHeadAttentionOptions& options);
    // q: [B, Tq, D], k/v: [B, Tk, D], mask: undefined or [Tq, Tk] bool (true = hidden) -> [B, Tq, D]
    /// Attends from q to k, v.
    AttentionOutput forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            const torch::Tensor& mask = {});

    void set_block_recording(bool on) override;
    std::vector<int64_t> block_recorded_rows() const override;
    /// "layers" and "folded" on a random self-attention input of the recorded shape with `rows`
    /// key rows (batch x keys).
    std::vector<precision::BlockTiming> time_block_kernels(int64_t rows) override;
    void set_block_plan(std::vector<std::pair<int64_t, std::string>> plan) override;
    /// The kernel for an input of `rows` key rows now: "folded" or "layers".
    std::string block_kernel_for(int64_t rows) const;

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

private:
    // The shape of a self-attention call the plan saw: batch, queries, keys, masked.
    struct CallShape {
        int64_t batch = 0, queries = 0, keys = 0;
        bool masked = false;
    };
    // {M [heads * D, D], c [heads * D]}: row block h is W_k,h^T W_q,h and W_k,h^T b_q,h, from the
    // layers' float weights (an int8 copy's dequantized ones), made again when one changed.
    std::pair<torch::Tensor, torch::Tensor> folded_queries();
    AttentionOutput folded_forward(const torch::Tensor& q, const torch::Tensor& x, const torch::Tensor& mask);

    bool m_recording = false;
    std::map<int64_t, CallShape> m_shapes; // by key rows
    std::vector<int64_t> m_rows;           // in the order first seen
    std::vector<std::pair<int64_t, std::string>> m_plan;
    std::optional<std::string> m_forced;
    precision::SourceStamp m_fold_stamp;
    std::pair<torch::Tensor, torch::Tensor> m_fold;
};
TORCH_MODULE(InterpretableMultiHeadAttention);

} // namespace foxhunt::models::tft
