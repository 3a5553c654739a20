#include "models/tft/gated_residual.h"

namespace foxhunt::models::tft {

GatedLinearUnitImpl::GatedLinearUnitImpl(const GatedLinearUnitOptions& options_) : options(options_)
{
    TORCH_CHECK(options.input_size() > 0 && options.output_size() > 0, "GatedLinearUnit: sizes must be positive");
    dropout = register_module("dropout", torch::nn::Dropout(options.dropout()));
    fc = register_module("fc", precision::QuantizableLinear(options.input_size(), 2 * options.output_size()));
}

torch::Tensor GatedLinearUnitImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.size(-1) == options.input_size(), "GatedLinearUnit: last dim must be ", options.input_size(),
                ", got ", x.sizes());
    return torch::glu(fc(dropout(x)), /*dim=*/-1);
}

GateAddNormImpl::GateAddNormImpl(const GateAddNormOptions& options_) : options(options_)
{
    glu = register_module("glu", GatedLinearUnit(GatedLinearUnitOptions(options.input_size(), options.output_size())
                                                     .dropout(options.dropout())));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.output_size()})));
}

torch::Tensor GateAddNormImpl::forward(const torch::Tensor& x, const torch::Tensor& skip)
{
    TORCH_CHECK(skip.size(-1) == options.output_size(), "GateAddNorm: skip must end in ", options.output_size(),
                ", got ", skip.sizes());
    // LayerNorm in the weights' type: under CPU autocast (1.13) glu(x) is BF16, and layer_norm
    // neither autocasts nor accepts mixed types there; norms belong in FP32 anyway.
    return norm((glu(x) + skip).to(norm->weight.scalar_type()));
}

GatedResidualNetworkImpl::GatedResidualNetworkImpl(const GatedResidualNetworkOptions& options_) : options(options_)
{
    TORCH_CHECK(options.input_size() > 0 && options.hidden_size() > 0 && options.output_size() > 0 &&
                    options.context_size() >= 0,
                "GatedResidualNetwork: sizes must be positive");
    if (options.input_size() != options.output_size())
        skip = register_module("skip", precision::QuantizableLinear(options.input_size(), options.output_size()));
    fc1 = register_module("fc1", precision::QuantizableLinear(options.input_size(), options.hidden_size()));
    if (options.context_size() > 0)
        context_proj = register_module(
            "context_proj",
            precision::QuantizableLinear(torch::nn::LinearOptions(options.context_size(), options.hidden_size()).bias(false)));
    fc2 = register_module("fc2", precision::QuantizableLinear(options.hidden_size(), options.hidden_size()));
    gate_norm = register_module(
        "gate_norm",
        GateAddNorm(GateAddNormOptions(options.hidden_size(), options.output_size()).dropout(options.dropout())));
}

torch::Tensor GatedResidualNetworkImpl::forward(const torch::Tensor& x, const torch::Tensor& context)
{
    TORCH_CHECK(x.size(-1) == options.input_size(), "GatedResidualNetwork: last dim must be ", options.input_size(),
                ", got ", x.sizes());
    auto residual = skip ? skip(x) : x;
    auto h = fc1(x);
    if (context.defined()) {
        TORCH_CHECK(context_proj, "GatedResidualNetwork: built without a context but one was given");
        TORCH_CHECK(context.dim() == 2 && context.size(0) == x.size(0) && context.size(1) == options.context_size(),
                    "GatedResidualNetwork: context must be [B, ", options.context_size(), "], got ", context.sizes());
        auto c = context_proj(context);
        while (c.dim() < h.dim()) c = c.unsqueeze(-2);
        h = h + c;
    }
    h = fc2(torch::elu(h));
    return gate_norm(h, residual);
}

} // namespace foxhunt::models::tft
