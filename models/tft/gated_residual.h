// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// TFT building blocks: gated linear unit, add & norm, and the gated residual network.

#include "models/precision/kernel_plan.h"
#include "models/precision/quantizable.h"
#include "models/tft/inference_kernels.h"

#include <torch/torch.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace foxhunt::models::tft {

/// A layer's weight and bias in float: its own, or an int8 copy's dequantized ones.
torch::Tensor float_weight_of(precision::QuantizableLinear& layer);
torch::Tensor float_bias_of(precision::QuantizableLinear& layer);

/// The bookkeeping of a module that can run at inference as one fused kernel ("fused-fp32":
/// fused_grn() with a float model's own weights or an int8 copy's dequantized ones; "fused-int8":
/// an int8 copy's int8 weights, on AVX512-VNNI) or layer by layer ("layers"). A float model fuses
/// wherever the input allows; an int8 copy goes layer by layer until plan_int8_kernels() has timed
/// the kernels at the rows it serves.
class FusedFloatBlock : public precision::FusedInt8Block {
public:
    void set_block_recording(bool on) override;
    std::vector<int64_t> block_recorded_rows() const override { return m_rows; }
    void set_block_plan(std::vector<std::pair<int64_t, std::string>> plan) override;
    /// The kernel for an input of `rows` rows now: "fused-fp32", "fused-int8" or "layers".
    std::string block_kernel_for(int64_t rows) const;

protected:
    /// The block's linear layers (unset ones allowed).
    virtual std::vector<const precision::QuantizableLinear*> block_layers() const = 0;
    /// Its widths for fused_grn() (hidden 0: a gate).
    virtual std::array<int64_t, 3> block_widths() const = 0;
    /// Whether "fused-int8" can serve: every layer int8, the widths and this CPU allow it.
    bool int8_fusable() const;
    /// Records `rows` while plan_int8_kernels() records.
    void note_block_rows(int64_t rows);
    /// "layers", "fused-fp32" and (int8_fusable()) "fused-int8" timed through `run` (the block's
    /// forward on a fixed input).
    std::vector<precision::BlockTiming> time_layers_and_fused(const std::function<torch::Tensor()>& run);
    /// The fused weights for `kernel`, packed by `make` again whenever one of `sources` changed.
    const FusedDenseGrn& packed(const std::string& kernel, const std::vector<torch::Tensor>& sources,
                                const std::function<FusedDenseGrn()>& make);

private:
    bool m_recording = false;
    std::vector<int64_t> m_rows;
    std::vector<std::pair<int64_t, std::string>> m_plan;
    std::optional<std::string> m_forced;
    struct Pack {
        FusedDenseGrn grn;
        precision::SourceStamp stamp;
        bool made = false;
    };
    Pack m_float_pack, m_int8_pack;
};

/// The tensors a value derived from `layers` depends on (for a precision::SourceStamp): each layer's
/// float weight and bias, or its int8 buffers. Listed directly: Module::parameters() builds every
/// dotted name on each call, which at one row costs more than a fused kernel.
std::vector<torch::Tensor> layer_sources(const std::vector<const precision::QuantizableLinearImpl*>& layers);

/// A layer's weights as fused_grn()'s int8 rows (an int8 copy's own).
FusedDenseGrn::Int8Rows int8_rows_of(precision::QuantizableLinear& layer);

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
    /// At inference, run as one fused kernel where it can (see FusedFloatBlock); false inside a
    /// module that fuses it itself.
    TORCH_ARG(bool, fused_inference) = true;
};

/// LayerNorm(GLU(x) + skip).
class GateAddNormImpl : public torch::nn::Module, public FusedFloatBlock {
public:
    /// Builds gate and norm.
    explicit GateAddNormImpl(const GateAddNormOptions& options);
    // x: [..., I], skip: [..., O] -> [..., O]
    /// Gates x, adds the skip and normalises.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& skip);
    std::vector<precision::BlockTiming> time_block_kernels(int64_t rows) override;

    /// The options it was built with.
    GateAddNormOptions options;
    /// The gate.
    GatedLinearUnit glu{nullptr};
    /// The norm after the addition.
    torch::nn::LayerNorm norm{nullptr};

protected:
    std::vector<const precision::QuantizableLinear*> block_layers() const override { return {&glu->fc}; }
    std::array<int64_t, 3> block_widths() const override { return {options.input_size(), 0, options.output_size()}; }
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
    /// At inference, run as one fused kernel where it can (see FusedFloatBlock); false inside a
    /// module that fuses it itself (a selection network's GRNs).
    TORCH_ARG(bool, fused_inference) = true;
};

/// GRN(x, c) = LayerNorm(skip(x) + GLU(W2 ELU(W1 x + Wc c + b1) + b2)); skip is linear when widths differ.
class GatedResidualNetworkImpl : public torch::nn::Module, public FusedFloatBlock {
public:
    /// Builds the network.
    explicit GatedResidualNetworkImpl(const GatedResidualNetworkOptions& options);
    // x: [..., I], context: undefined or [B, C] (broadcast over middle dims) -> [..., O]
    /// Applies the network, conditioned on the context when given.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context = {});
    std::vector<precision::BlockTiming> time_block_kernels(int64_t rows) override;

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

protected:
    std::vector<const precision::QuantizableLinear*> block_layers() const override
    {
        return {&skip, &fc1, &context_proj, &fc2, &gate_norm->glu->fc};
    }
    std::array<int64_t, 3> block_widths() const override
    {
        return {options.input_size(), options.hidden_size(), options.output_size()};
    }
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
