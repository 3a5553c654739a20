// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Variable selection network: embeds each continuous variable, transforms it with
// its own GRN and mixes them with softmax weights that are the model's importances.

#include "models/tft/gated_residual.h"

#include "models/precision/int8_linear.h"

#include <torch/torch.h>

namespace foxhunt::models::tft {

/// Options for VariableSelectionNetwork.
struct VariableSelectionNetworkOptions {
    VariableSelectionNetworkOptions(int64_t n_variables, int64_t hidden_size)
        : n_variables_(n_variables), hidden_size_(hidden_size)
    {
    }
    /// Number of continuous input variables (0 allowed: the output is zero).
    TORCH_ARG(int64_t, n_variables);
    /// Output width.
    TORCH_ARG(int64_t, hidden_size);
    /// Width of each variable's linear embedding.
    TORCH_ARG(int64_t, embedding_size) = 8;
    /// Width of the static context (0: none).
    TORCH_ARG(int64_t, context_size) = 0;
    /// Dropout inside the GRNs.
    TORCH_ARG(double, dropout) = 0.0;
};

/// Selected representation and the weights that selected it.
struct VariableSelectionOutput {
    /// [..., hidden]
    torch::Tensor output;
    /// [..., n_variables], non-negative, summing to 1.
    torch::Tensor weights;
};

/// Variable selection network of the TFT paper (Lim et al. 2021, eq. 6-8).
class VariableSelectionNetworkImpl : public torch::nn::Module, public precision::Int8Convertible {
public:
    /// Builds embeddings, per-variable GRNs and the weight GRN.
    explicit VariableSelectionNetworkImpl(const VariableSelectionNetworkOptions& options);
    // x: [B, V] or [B, T, V], context: undefined or [B, C] -> output [..., hidden], weights [..., V]
    /// Selects among the variables.
    VariableSelectionOutput forward(const torch::Tensor& x, const torch::Tensor& context = {});

    /// Stores both embedding tables per variable row as PerRowInt8 (the GRNs are quantized on their own).
    void convert_to_int8() override;
    bool converted_to_int8() const override { return embedding_weight_q.q.defined(); }

    /// The options it was built with.
    VariableSelectionNetworkOptions options;
    /// Per-variable linear embedding weights, [V, E].
    torch::Tensor embedding_weight;
    /// Per-variable linear embedding biases, [V, E].
    torch::Tensor embedding_bias;
    /// embedding_weight after convert_to_int8() (buffers embedding_weight_int8, _scale_code, _scale_max).
    precision::PerRowInt8 embedding_weight_q;
    /// embedding_bias after convert_to_int8().
    precision::PerRowInt8 embedding_bias_q;
    /// One GRN per variable, E -> hidden.
    torch::nn::ModuleList variable_grns{nullptr};
    /// GRN over all embeddings giving the selection logits (absent for V <= 1).
    GatedResidualNetwork flattened_grn{nullptr};

private:
    // forward()'s decoded row scales of the int8 tables, derived once per change of their buffers.
    precision::DerivedTensorCache m_weight_scale_cache;
    precision::DerivedTensorCache m_bias_scale_cache;
};
TORCH_MODULE(VariableSelectionNetwork);

} // namespace foxhunt::models::tft
