// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// TFT building blocks: gated linear unit, add & norm, and the gated residual network.

#include "models/precision/quantizable.h"

#include <torch/torch.h>

namespace foxhunt::models::tft {

/// Options for GatedLinearUnit.
struct GatedLinearUnitOptions {
    GatedLinearUnitOptions(int64_t input_size, int64_t output_size) : input_size_(input_size), output_size_(output_size)
    {
    }
    /// Input width.
    TORCH_ARG(int64_t, input_size);
    /// Output width.
    TORCH_ARG(int64_t, output_size);
    /// Dropout applied to the input.
    TORCH_ARG(double, dropout) = 0.0;
};

/// GLU(x) = (W1 x + b1) * sigmoid(W2 x + b2), lets the network switch a path off.
class GatedLinearUnitImpl : public torch::nn::Module {
public:
    /// Builds the unit.
    explicit GatedLinearUnitImpl(const GatedLinearUnitOptions& options);
    // x: [..., I] -> [..., O]
    /// Applies dropout, the linear map and the gate.
    torch::Tensor forward(const torch::Tensor& x);

    /// The options it was built with.
    GatedLinearUnitOptions options;
    /// Input dropout (its options and train flag; applied by hashed_dropout).
    torch::nn::Dropout dropout{nullptr};
    /// Both halves (value, gate) in one linear map.
    precision::QuantizableLinear fc{nullptr};
};
TORCH_MODULE(GatedLinearUnit);

/// Options for GateAddNorm.
struct GateAddNormOptions {
    GateAddNormOptions(int64_t input_size, int64_t output_size) : input_size_(input_size), output_size_(output_size) { }
    /// Width of the gated input.
    TORCH_ARG(int64_t, input_size);
    /// Width of the output and of the skip.
    TORCH_ARG(int64_t, output_size);
    /// Dropout before the gate.
    TORCH_ARG(double, dropout) = 0.0;
};

/// LayerNorm(GLU(x) + skip).
class GateAddNormImpl : public torch::nn::Module {
public:
    /// Builds gate and norm.
    explicit GateAddNormImpl(const GateAddNormOptions& options);
    // x: [..., I], skip: [..., O] -> [..., O]
    /// Gates x, adds the skip and normalises.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& skip);

    /// The options it was built with.
    GateAddNormOptions options;
    /// The gate.
    GatedLinearUnit glu{nullptr};
    /// The norm after the addition.
    torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(GateAddNorm);

/// Options for GatedResidualNetwork.
struct GatedResidualNetworkOptions {
    GatedResidualNetworkOptions(int64_t input_size, int64_t hidden_size, int64_t output_size)
        : input_size_(input_size), hidden_size_(hidden_size), output_size_(output_size)
    {
    }
    /// Input width.
    TORCH_ARG(int64_t, input_size);
    /// Width of the two inner layers.
    TORCH_ARG(int64_t, hidden_size);
    /// Output width.
    TORCH_ARG(int64_t, output_size);
    /// Width of the optional static context (0: none).
    TORCH_ARG(int64_t, context_size) = 0;
    /// Dropout before the output gate.
    TORCH_ARG(double, dropout) = 0.0;
};

/// GRN(x, c) = LayerNorm(skip(x) + GLU(W2 ELU(W1 x + Wc c + b1) + b2)); skip is linear when widths differ.
class GatedResidualNetworkImpl : public torch::nn::Module {
public:
    /// Builds the network.
    explicit GatedResidualNetworkImpl(const GatedResidualNetworkOptions& options);
    // x: [..., I], context: undefined or [B, C] (broadcast over middle dims) -> [..., O]
    /// Applies the network, conditioned on the context when given.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context = {});

    /// The options it was built with.
    GatedResidualNetworkOptions options;
    /// Skip projection when input and output widths differ.
    precision::QuantizableLinear skip{nullptr};
    /// First inner layer.
    precision::QuantizableLinear fc1{nullptr};
    /// Context projection (no bias).
    precision::QuantizableLinear context_proj{nullptr};
    /// Second inner layer.
    precision::QuantizableLinear fc2{nullptr};
    /// Output gate, residual add and norm.
    GateAddNorm gate_norm{nullptr};
};
TORCH_MODULE(GatedResidualNetwork);

/// Whether grouped_forward() can stand in for calling each of `grns` in turn: at least two, the same
/// options, no context, float weights (none quantized or observing for calibration), and no autocast.
bool groupable(const std::vector<GatedResidualNetworkImpl*>& grns);

// x: [V, ..., I] -> [V, ..., O]
/// grns[v]->forward(x[v]) for every v, each layer as one batched product over v (stacked weights,
/// so the gradients reach each GRN's own parameters). Requires groupable(grns).
torch::Tensor grouped_forward(const std::vector<GatedResidualNetworkImpl*>& grns, const torch::Tensor& x);

} // namespace foxhunt::models::tft
