// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A depthwise 1-D convolution that trains in float and converts, in an inference copy, to int8 taps.

#include "models/precision/int8_linear.h"

#include <torch/torch.h>

namespace foxhunt::models::precision {

/// Sizes of a QuantizableDepthwiseConv1d.
struct DepthwiseConv1dOptions {
    DepthwiseConv1dOptions(int64_t channels, int64_t kernel_size) : channels_(channels), kernel_size_(kernel_size) { }
    /// Channels C (one filter each: groups = C).
    TORCH_ARG(int64_t, channels);
    /// Taps K per filter.
    TORCH_ARG(int64_t, kernel_size);
    /// Zeros added on both ends of the sequence.
    TORCH_ARG(int64_t, padding) = 0;
};

/// torch::nn::Conv1d(C, C, K).groups(C).bias(true) with the same parameter names ("weight" [C, 1, K],
/// "bias" [C]) and initialisation; convert_to_int8() stores the taps per channel as PerRowInt8 and
/// the bias as PerTensorInt8.
class QuantizableDepthwiseConv1dImpl : public torch::nn::Module, public Int8Convertible {
public:
    /// Builds and initialises the filters as torch::nn::Conv1d does.
    explicit QuantizableDepthwiseConv1dImpl(const DepthwiseConv1dOptions& options);

    // x: [B, C, L] -> [B, C, L + 2 * padding - K + 1]
    /// The convolution with the float or the int8 taps.
    torch::Tensor forward(const torch::Tensor& x);

    // -> [C, K]
    /// The taps in use: the float parameter, or once converted the dequantized int8 taps (float32,
    /// derived again only when the int8 buffers change).
    torch::Tensor taps() const;
    // -> [C]
    /// The bias in use (dequantized once converted, as the taps).
    torch::Tensor bias_values() const;

    void convert_to_int8() override;
    bool converted_to_int8() const override { return weight_q.q.defined(); }

    /// The options it was built with.
    DepthwiseConv1dOptions options;
    /// [C, 1, K] float (empty once converted).
    torch::Tensor weight;
    /// [C] float (empty once converted).
    torch::Tensor bias;
    /// The int8 taps after conversion (buffers weight_int8, weight_scale_code, weight_scale_max).
    PerRowInt8 weight_q;
    /// The int8 bias after conversion (buffers bias_int8, bias_scale).
    PerTensorInt8 bias_q;

private:
    // The dequantized taps and bias, derived once per change of the int8 buffers (not on every call).
    mutable DerivedTensorCache m_taps_cache;
    mutable DerivedTensorCache m_bias_cache;
};
TORCH_MODULE(QuantizableDepthwiseConv1d);

} // namespace foxhunt::models::precision
