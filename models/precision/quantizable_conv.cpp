// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/quantizable_conv.h"

namespace foxhunt::models::precision {

QuantizableDepthwiseConv1dImpl::QuantizableDepthwiseConv1dImpl(const DepthwiseConv1dOptions& options_)
    : options(options_)
{
    TORCH_CHECK(options.channels() > 0 && options.kernel_size() > 0 && options.padding() >= 0,
                "QuantizableDepthwiseConv1d: sizes must be positive");
    // Borrow torch::nn::Conv1d's initialisation so models draw the same numbers as before.
    torch::nn::Conv1d reference(torch::nn::Conv1dOptions(options.channels(), options.channels(), options.kernel_size())
                                    .groups(options.channels())
                                    .padding(options.padding())
                                    .bias(true));
    weight = register_parameter("weight", reference->weight);
    bias = register_parameter("bias", reference->bias);
}

torch::Tensor QuantizableDepthwiseConv1dImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() == 3 && x.size(1) == options.channels(), "QuantizableDepthwiseConv1d: input must be [B, ",
                options.channels(), ", L], got ", x.sizes());
    if (!converted_to_int8())
        return torch::conv1d(x, weight, bias, /*stride=*/1, /*padding=*/options.padding(), /*dilation=*/1,
                             /*groups=*/options.channels());
    return torch::conv1d(x, taps().unsqueeze(1).to(x.scalar_type()), bias_values().to(x.scalar_type()),
                         /*stride=*/1, /*padding=*/options.padding(), /*dilation=*/1, /*groups=*/options.channels());
}

torch::Tensor QuantizableDepthwiseConv1dImpl::taps() const
{
    if (!converted_to_int8()) return weight.squeeze(1);
    return m_taps_cache.get({weight_q.q, weight_q.scale_code, weight_q.scale_max},
                            [this] { return dequantize_per_row(weight_q); });
}

torch::Tensor QuantizableDepthwiseConv1dImpl::bias_values() const
{
    return converted_to_int8() ? cached_dequantized(bias_q, m_bias_cache) : bias;
}

void QuantizableDepthwiseConv1dImpl::convert_to_int8()
{
    TORCH_CHECK(!converted_to_int8(), "QuantizableDepthwiseConv1d: already converted");
    torch::NoGradGuard ng;
    weight_q = register_per_row(*this, "weight", quantize_per_row(weight.squeeze(1)));
    bias_q = register_per_tensor(*this, "bias", quantize_per_tensor(bias));
    // The inference copy keeps no float taps: drop their storage (the names stay registered).
    weight.set_data(torch::empty({0}, weight.options()));
    bias.set_data(torch::empty({0}, bias.options()));
}

} // namespace foxhunt::models::precision
