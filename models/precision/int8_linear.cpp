#include "models/precision/int8_linear.h"

#include "models/compat.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>

namespace foxhunt::models::precision {

std::string to_string(Int8Backend backend)
{
    switch (backend) {
    case Int8Backend::Auto: return "auto";
    case Int8Backend::OneDnn: return "onednn";
    case Int8Backend::CudaIntMm: return "cuda-int-mm";
    case Int8Backend::Dequantize: return "dequantize";
    }
    return "unknown";
}

PerRowInt8 quantize_per_row(const torch::Tensor& w)
{
    TORCH_CHECK(w.dim() == 2 && w.is_floating_point(), "quantize_per_row: weight must be a 2-D float tensor, got ",
                w.sizes(), " ", w.scalar_type());
    torch::NoGradGuard ng;
    auto wf = w.detach().to(torch::kFloat);
    auto absmax = wf.abs().amax(/*dim=*/1);
    // A row of zeros gets scale 1 so that it stays exactly zero without dividing by zero.
    auto scale = torch::where(absmax > 0, absmax / 127.0, torch::ones_like(absmax));
    auto q = torch::round(wf / scale.unsqueeze(1)).clamp(-127, 127).to(torch::kChar);
    return {q, scale};
}

torch::Tensor dequantize_per_row(const PerRowInt8& w) { return w.q.to(torch::kFloat) * w.scale.unsqueeze(1); }

bool onednn_quantized_available()
{
    const auto engines = at::globalContext().supportedQEngines();
    return std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) != engines.end();
}

Int8LinearImpl::Int8LinearImpl(const torch::Tensor& weight, const torch::Tensor& bias_, const Int8LinearOptions& options_)
    : options(options_)
{
    TORCH_CHECK(weight.dim() == 2, "Int8Linear: weight must be [out, in], got ", weight.sizes());
    TORCH_CHECK(!bias_.defined() || (bias_.dim() == 1 && bias_.size(0) == weight.size(0)),
                "Int8Linear: bias must be [", weight.size(0), "]");
    TORCH_CHECK(!options.activation_absmax() || *options.activation_absmax() > 0.0,
                "Int8Linear: calibrated activation range must be positive");
    auto q = quantize_per_row(weight);
    weight_int8 = register_buffer("weight_int8", q.q);
    weight_scale = register_buffer("weight_scale", q.scale);
    if (bias_.defined()) bias = register_buffer("bias", bias_.detach().to(torch::kFloat).clone());
}

Int8Backend Int8LinearImpl::resolved_backend(c10::DeviceType device) const
{
    if (options.backend() != Int8Backend::Auto) return options.backend();
    if (device == c10::DeviceType::CUDA) return compat::kHasIntMm ? Int8Backend::CudaIntMm : Int8Backend::Dequantize;
    // Not OneDnn on the CPU: with Debian's 1.13 on a CPU without VNNI its u8 x s8 products
    // saturate (28% relative error measured on a 64 -> 48 layer), so it must be asked for explicitly.
    return Int8Backend::Dequantize;
}

int64_t Int8LinearImpl::weight_bytes() const
{
    int64_t n = weight_int8.numel() * weight_int8.element_size() + weight_scale.numel() * weight_scale.element_size();
    if (bias.defined()) n += bias.numel() * bias.element_size();
    return n;
}

torch::Tensor Int8LinearImpl::dequantized_weight() const { return dequantize_per_row({weight_int8, weight_scale}); }

torch::Tensor Int8LinearImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() >= 1 && x.size(-1) == in_features(), "Int8Linear: last dim must be ", in_features(), ", got ",
                x.sizes());
    TORCH_CHECK(x.is_floating_point(), "Int8Linear: input must be floating point");
    auto sizes = x.sizes().vec();
    sizes.back() = out_features();
    auto x2d = x.reshape({-1, in_features()});
    torch::Tensor y;
    if (options.activation_absmax()) {
        y = forward_static(x2d);
    } else {
        switch (resolved_backend(x.device().type())) {
        case Int8Backend::OneDnn: y = forward_onednn(x2d); break;
        case Int8Backend::CudaIntMm: y = forward_int_mm(x2d); break;
        default: y = forward_dequantize(x2d); break;
        }
    }
    return y.to(x.scalar_type()).reshape(sizes);
}

torch::Tensor Int8LinearImpl::forward_dequantize(const torch::Tensor& x2d)
{
    auto w = dequantized_weight().to(x2d.scalar_type());
    return torch::nn::functional::linear(x2d, w, bias.defined() ? bias.to(x2d.scalar_type()) : torch::Tensor());
}

torch::Tensor Int8LinearImpl::forward_onednn(const torch::Tensor& x2d)
{
    TORCH_CHECK(x2d.device().is_cpu(), "Int8Linear: the oneDNN backend runs on the CPU, input is on ", x2d.device());
    TORCH_CHECK(onednn_quantized_available(), "Int8Linear: this LibTorch has no oneDNN quantized engine");
    if (m_packed.isNone()) {
        // The prepacked form belongs to whichever quantized engine is current; select oneDNN for
        // the prepack only, so the rest of the process keeps its engine.
        auto& ctx = at::globalContext();
        const auto previous = ctx.qEngine();
        ctx.setQEngine(at::QEngine::ONEDNN);
        try {
            auto qw = at::_make_per_channel_quantized_tensor(weight_int8, weight_scale.to(torch::kDouble),
                                                             torch::zeros({out_features()}, torch::kLong), /*axis=*/0);
            static const auto prepack = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
            torch::jit::Stack stack{qw, bias.defined() ? c10::IValue(bias) : c10::IValue()};
            prepack.callBoxed(&stack);
            m_packed = stack.at(0);
        } catch (...) {
            ctx.setQEngine(previous);
            throw;
        }
        ctx.setQEngine(previous);
    }
    static const auto linear = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
    // reduce_range: 7-bit activations, so the pairwise u8 x s8 sums cannot saturate int16 on
    // CPUs without VNNI.
    torch::jit::Stack stack{x2d.to(torch::kFloat).contiguous(), m_packed, /*reduce_range=*/true};
    linear.callBoxed(&stack);
    return stack.at(0).toTensor();
}

torch::Tensor Int8LinearImpl::forward_int_mm(const torch::Tensor& x2d)
{
    auto xf = x2d.to(torch::kFloat);
    // Per-row dynamic activation scales: each sample's row uses its own range.
    auto sx = xf.abs().amax(/*dim=*/1).clamp_min(1e-12) / 127.0;
    auto xq = torch::round(xf / sx.unsqueeze(1)).clamp(-127, 127).to(torch::kChar);
    const int64_t m = xq.size(0);
    // _int_mm wants more than 16 rows and K, N multiples of 8; pad rows, fall back otherwise.
    if (in_features() % 8 != 0 || out_features() % 8 != 0) return forward_dequantize(x2d);
    const int64_t padded = std::max<int64_t>(m, 17);
    const int64_t rows = (padded + 7) / 8 * 8;
    if (rows != m) xq = torch::cat({xq, torch::zeros({rows - m, in_features()}, xq.options())});
    auto acc = compat::int_mm(xq, weight_int8.t());
    if (!acc) return forward_dequantize(x2d);
    auto y = acc->narrow(0, 0, m).to(torch::kFloat) * sx.unsqueeze(1) * weight_scale.unsqueeze(0);
    if (bias.defined()) y = y + bias;
    return y;
}

torch::Tensor Int8LinearImpl::forward_static(const torch::Tensor& x2d)
{
    const double sx = *options.activation_absmax() / 127.0;
    auto xq = torch::round(x2d.to(torch::kFloat) / sx).clamp(-127, 127);
    if (x2d.is_cuda() && compat::kHasIntMm && in_features() % 8 == 0 && out_features() % 8 == 0) {
        const int64_t m = xq.size(0);
        const int64_t rows = (std::max<int64_t>(m, 17) + 7) / 8 * 8;
        auto xi = xq.to(torch::kChar);
        if (rows != m) xi = torch::cat({xi, torch::zeros({rows - m, in_features()}, xi.options())});
        if (auto acc = compat::int_mm(xi, weight_int8.t())) {
            auto y = acc->narrow(0, 0, m).to(torch::kFloat) * sx * weight_scale.unsqueeze(0);
            return bias.defined() ? y + bias : y;
        }
    }
    // Integer products of |x|,|w| <= 127 summed in float32 are exact while in_features * 127^2 < 2^24
    // (about 1000 inputs), so this reproduces an int8 GEMM with int32 accumulation at these sizes.
    auto y = torch::matmul(xq, weight_int8.to(torch::kFloat).t()) * sx * weight_scale.unsqueeze(0);
    return bias.defined() ? y + bias : y;
}

} // namespace foxhunt::models::precision
