// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/int8_linear.h"

#include "models/compat.h"
#include "models/hardware/machine_probe.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>

namespace foxhunt::models::precision {

namespace {

// Scale codes step by 2^(1/16) (4.4 %) over 2^(-255/16) ~ 1.6e-5 of the largest scale.
constexpr double kCodeSteps = 16.0;

torch::Tensor decode_scales(const torch::Tensor& code, const torch::Tensor& scale_max)
{
    return scale_max.to(torch::kFloat) * torch::exp2(code.to(torch::kFloat) / -kCodeSteps);
}

} // namespace

torch::Tensor PerRowInt8::scale() const
{
    return decode_scales(scale_code, scale_max);
}

PerRowInt8 quantize_per_row(const torch::Tensor& w)
{
    TORCH_CHECK(w.dim() == 2 && w.is_floating_point(), "quantize_per_row: weight must be a 2-D float tensor, got ",
                w.sizes(), " ", w.scalar_type());
    torch::NoGradGuard ng;
    auto wf = w.detach().to(torch::kFloat);
    auto needed = wf.abs().amax(/*dim=*/1).to(torch::kDouble) / 127.0; // the smallest scale that does not clip
    const double largest = needed.numel() > 0 ? needed.max().item<double>() : 0.0;
    // An all-zero tensor gets scale 1 so that it stays exactly zero without dividing by zero.
    auto scale_max = torch::full({1}, largest > 0.0 ? largest : 1.0, torch::kFloat);
    // The largest code whose scale still covers the row; rows of zeros take the smallest scale.
    auto ratio = scale_max.to(torch::kDouble) / needed.clamp_min(1e-300);
    auto code = torch::floor(torch::log2(ratio) * kCodeSteps).clamp(0, 255);
    code = torch::where(needed > 0, code, torch::full_like(code, 255)).to(torch::kByte);
    // Decoded exactly as forward() will decode it, so q * scale is the weight the model computes with.
    auto scale = decode_scales(code, scale_max).to(wf.device());
    auto q = torch::round(wf / scale.unsqueeze(1)).clamp(-127, 127).to(torch::kChar);
    return {q, code.to(wf.device()), scale_max.to(wf.device())};
}

torch::Tensor dequantize_per_row(const PerRowInt8& w)
{
    return dequantize_per_row(w.q, w.scale());
}

torch::Tensor dequantize_per_row(const torch::Tensor& q, const torch::Tensor& scale)
{
    return q.to(torch::kFloat) * scale.unsqueeze(1);
}

PerTensorInt8 quantize_per_tensor(const torch::Tensor& v)
{
    TORCH_CHECK(v.dim() == 1 && v.is_floating_point(), "quantize_per_tensor: expected a 1-D float tensor, got ",
                v.sizes(), " ", v.scalar_type());
    torch::NoGradGuard ng;
    auto vf = v.detach().to(torch::kFloat);
    const double absmax = vf.numel() > 0 ? vf.abs().max().item<double>() : 0.0;
    auto scale = torch::full({1}, absmax > 0.0 ? absmax / 127.0 : 1.0, vf.options());
    auto q = torch::round(vf / scale).clamp(-127, 127).to(torch::kChar);
    return {q, scale};
}

torch::Tensor dequantize_per_tensor(const PerTensorInt8& v)
{
    return v.q.to(torch::kFloat) * v.scale;
}

PerRowInt8 register_per_row(torch::nn::Module& module, const std::string& name, const PerRowInt8& w)
{
    return {module.register_buffer(name + "_int8", w.q), module.register_buffer(name + "_scale_code", w.scale_code),
            module.register_buffer(name + "_scale_max", w.scale_max)};
}

PerTensorInt8 register_per_tensor(torch::nn::Module& module, const std::string& name, const PerTensorInt8& v)
{
    return {module.register_buffer(name + "_int8", v.q), module.register_buffer(name + "_scale", v.scale)};
}

bool SourceStamp::matches(c10::ArrayRef<torch::Tensor> sources) const
{
    if (sources.size() != m_sources.size()) return false;
    auto s = m_sources.begin();
    for (const torch::Tensor& t : sources) {
        if (!t.defined() || !s->tensor.defined()) {
            if (t.defined() != s->tensor.defined()) return false;
            ++s;
            continue;
        }
        if (t.is_inference() || !t.has_storage()) return false;
        if (t.unsafeGetTensorImpl() != s->tensor.unsafeGetTensorImpl() ||
            t.storage().unsafeGetStorageImpl() != s->storage.unsafeGetStorageImpl() || t.data_ptr() != s->data ||
            t._version() != s->version)
            return false;
        ++s;
    }
    return true;
}

bool SourceStamp::remember(c10::ArrayRef<torch::Tensor> sources)
{
    m_sources.clear();
    for (const torch::Tensor& t : sources) {
        if (!t.defined()) {
            m_sources.push_back({}); // an absent tensor (no bias) stays absent
            continue;
        }
        if (t.is_inference() || !t.has_storage()) {
            m_sources.clear();
            return false;
        }
        m_sources.push_back({t, t.storage(), t.data_ptr(), t._version()});
    }
    return true;
}

bool onednn_quantized_available()
{
    const auto engines = at::globalContext().supportedQEngines();
    return std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) != engines.end();
}

Int8LinearImpl::Int8LinearImpl(const torch::Tensor& weight_, const torch::Tensor& bias_,
                               const Int8LinearOptions& options_)
    : options(options_)
{
    TORCH_CHECK(weight_.dim() == 2, "Int8Linear: weight must be [out, in], got ", weight_.sizes());
    TORCH_CHECK(!bias_.defined() || (bias_.dim() == 1 && bias_.size(0) == weight_.size(0)),
                "Int8Linear: bias must be [", weight_.size(0), "]");
    TORCH_CHECK(!options.activation_absmax() || *options.activation_absmax() > 0.0,
                "Int8Linear: calibrated activation range must be positive");
    weight = register_per_row(*this, "weight", quantize_per_row(weight_));
    if (bias_.defined()) bias = register_per_tensor(*this, "bias", quantize_per_tensor(bias_));
}

Int8Backend Int8LinearImpl::resolved_backend(c10::DeviceType device) const
{
    // A calibrated range means static activations unless a kernel plan says otherwise (set_plan()).
    if (options.activation_absmax()) return Int8Backend::Static;
    if (options.backend() != Int8Backend::Auto) return options.backend();
    if (device == c10::DeviceType::CUDA) return compat::kHasIntMm ? Int8Backend::CudaIntMm : Int8Backend::Dequantize;
    // Without a measured plan, not OneDnn on the CPU: each call costs a fixed ~30-65 us, which
    // loses to FP32 on small layers on every CPU measured; on large ones it wins, by 2-6x where
    // the CPU has VNNI. plan_int8_kernels() measures which applies to each layer here.
    return Int8Backend::Dequantize;
}

Int8Backend Int8LinearImpl::backend_for(int64_t rows, c10::DeviceType device) const
{
    if (m_plan.empty()) return resolved_backend(device);
    return nearest_by_rows(m_plan, rows, [](const RowsBackend& e) { return e.rows; }).backend;
}

void Int8LinearImpl::set_plan(std::vector<RowsBackend> plan)
{
    for (const RowsBackend& e : plan) {
        TORCH_CHECK(e.backend != Int8Backend::Auto, "Int8Linear: a kernel plan names concrete backends");
        TORCH_CHECK(e.backend != Int8Backend::Static || options.activation_absmax(),
                    "Int8Linear: the static backend needs a calibrated activation range");
    }
    m_plan = std::move(plan);
}

void Int8LinearImpl::set_recording(bool on)
{
    if (on) m_recorded_rows.clear();
    m_recording = on;
}

void Int8LinearImpl::note_rows(int64_t rows)
{
    if (m_recording && std::find(m_recorded_rows.begin(), m_recorded_rows.end(), rows) == m_recorded_rows.end())
        m_recorded_rows.push_back(rows);
}

bool Int8LinearImpl::onednn_reduce_range() const
{
    if (options.reduce_range()) return *options.reduce_range();
    return !hardware::this_machine().cpu.int8_dot_product();
}

int64_t Int8LinearImpl::weight_bytes() const
{
    int64_t n = 0;
    for (const auto& b : buffers()) n += b.numel() * b.element_size();
    return n;
}

torch::Tensor Int8LinearImpl::dequantized_weight() const
{
    return dequantize_per_row(weight);
}

torch::Tensor Int8LinearImpl::dequantized_bias() const
{
    return has_bias() ? dequantize_per_tensor(bias) : torch::Tensor();
}

torch::Tensor cached_scale(const PerRowInt8& w, DerivedTensorCache& cache)
{
    return cache.get({w.scale_code, w.scale_max}, [&w] { return w.scale(); });
}

torch::Tensor cached_dequantized(const PerTensorInt8& v, DerivedTensorCache& cache)
{
    return cache.get({v.q, v.scale}, [&v] { return dequantize_per_tensor(v); });
}

torch::Tensor Int8LinearImpl::cached_scale()
{
    return precision::cached_scale(weight, m_scale_cache);
}

torch::Tensor Int8LinearImpl::cached_bias()
{
    return has_bias() ? cached_dequantized(bias, m_bias_cache) : torch::Tensor();
}

torch::Tensor Int8LinearImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() >= 1 && x.size(-1) == in_features(), "Int8Linear: last dim must be ", in_features(), ", got ",
                x.sizes());
    TORCH_CHECK(x.is_floating_point(), "Int8Linear: input must be floating point");
    auto sizes = x.sizes().vec();
    sizes.back() = out_features();
    auto x2d = x.reshape({-1, in_features()});
    const int64_t rows = x2d.size(0);
    note_rows(rows);
    torch::Tensor y;
    switch (backend_for(rows, x.device().type())) {
    case Int8Backend::OneDnn: y = forward_onednn(x2d); break;
    case Int8Backend::CudaIntMm: y = forward_int_mm(x2d); break;
    case Int8Backend::Float: y = forward_float(x2d); break;
    case Int8Backend::Static: y = forward_static(x2d); break;
    default: y = forward_dequantize(x2d); break;
    }
    return y.to(x.scalar_type()).reshape(sizes);
}

std::function<torch::Tensor(const torch::Tensor&)> Int8LinearImpl::repeated_forward(c10::ScalarType dtype,
                                                                                    c10::DeviceType device,
                                                                                    int64_t rows)
{
    const Int8Backend backend = backend_for(rows, device);
    if (backend != Int8Backend::Dequantize && backend != Int8Backend::Float)
        return [this](const torch::Tensor& x) { return forward(x); };
    auto w = (backend == Int8Backend::Float ? float_weight() : dequantize_per_row(weight.q, cached_scale())).to(dtype);
    auto b = has_bias() ? cached_bias().to(dtype) : torch::Tensor();
    return [this, w, b](const torch::Tensor& x) {
        TORCH_CHECK(x.dim() >= 1 && x.size(-1) == in_features() && x.scalar_type() == w.scalar_type(),
                    "Int8Linear: repeated input must be [..., ", in_features(), "] of the prepared type");
        note_rows(x.numel() / in_features());
        return torch::nn::functional::linear(x, w, b);
    };
}

torch::Tensor Int8LinearImpl::float_weight()
{
    return m_float_cache.get({weight.q, weight.scale_code, weight.scale_max}, [this] { return dequantized_weight(); });
}

torch::Tensor Int8LinearImpl::forward_float(const torch::Tensor& x2d)
{
    auto w = float_weight();
    return torch::nn::functional::linear(x2d, w.to(x2d.scalar_type()),
                                         has_bias() ? cached_bias().to(x2d.scalar_type()) : torch::Tensor());
}

torch::Tensor Int8LinearImpl::forward_dequantize(const torch::Tensor& x2d)
{
    auto w = dequantize_per_row(weight.q, cached_scale()).to(x2d.scalar_type());
    return torch::nn::functional::linear(x2d, w, has_bias() ? cached_bias().to(x2d.scalar_type()) : torch::Tensor());
}

torch::Tensor Int8LinearImpl::forward_onednn(const torch::Tensor& x2d)
{
    TORCH_CHECK(x2d.device().is_cpu(), "Int8Linear: the oneDNN backend runs on the CPU, input is on ", x2d.device());
    TORCH_CHECK(onednn_quantized_available(), "Int8Linear: this LibTorch has no oneDNN quantized engine");
    // Prepacked anew when the buffers changed (a load, an in-place refresh, a move).
    if (m_packed.isNone() ||
        !m_packed_stamp.matches({weight.q, weight.scale_code, weight.scale_max, bias.q, bias.scale})) {
        // The prepacked form belongs to whichever quantized engine is current; select oneDNN for
        // the prepack only, so the rest of the process keeps its engine.
        auto& ctx = at::globalContext();
        const auto previous = ctx.qEngine();
        ctx.setQEngine(at::QEngine::ONEDNN);
        try {
            auto qw = at::_make_per_channel_quantized_tensor(weight.q, cached_scale().to(torch::kDouble),
                                                             torch::zeros({out_features()}, torch::kLong), /*axis=*/0);
            static const auto prepack = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
            torch::jit::Stack stack{qw, has_bias() ? c10::IValue(cached_bias()) : c10::IValue()};
            prepack.callBoxed(&stack);
            m_packed = stack.at(0);
            if (!m_packed_stamp.remember({weight.q, weight.scale_code, weight.scale_max, bias.q, bias.scale}))
                m_packed_stamp.clear();
        } catch (...) {
            ctx.setQEngine(previous);
            throw;
        }
        ctx.setQEngine(previous);
    }
    static const auto linear = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
    // reduce_range: 7-bit activations, so the pairwise u8 x s8 sums cannot saturate int16 on
    // CPUs without int8 dot products; with VNNI the full 8 bits halve the error.
    torch::jit::Stack stack{x2d.to(torch::kFloat).contiguous(), m_packed, onednn_reduce_range()};
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
    auto acc = compat::int_mm(xq, weight.q.t());
    if (!acc) return forward_dequantize(x2d);
    auto y = acc->narrow(0, 0, m).to(torch::kFloat) * sx.unsqueeze(1) * cached_scale().unsqueeze(0);
    return has_bias() ? y + cached_bias() : y;
}

torch::Tensor Int8LinearImpl::forward_static(const torch::Tensor& x2d)
{
    TORCH_CHECK(options.activation_absmax(), "Int8Linear: the static backend needs a calibrated activation range");
    const double sx = *options.activation_absmax() / 127.0;
    auto xq = torch::round(x2d.to(torch::kFloat) / sx).clamp(-127, 127);
    if (x2d.is_cuda() && compat::kHasIntMm && in_features() % 8 == 0 && out_features() % 8 == 0) {
        const int64_t m = xq.size(0);
        const int64_t rows = (std::max<int64_t>(m, 17) + 7) / 8 * 8;
        auto xi = xq.to(torch::kChar);
        if (rows != m) xi = torch::cat({xi, torch::zeros({rows - m, in_features()}, xi.options())});
        if (auto acc = compat::int_mm(xi, weight.q.t())) {
            auto y = acc->narrow(0, 0, m).to(torch::kFloat) * sx * cached_scale().unsqueeze(0);
            return has_bias() ? y + cached_bias() : y;
        }
    }
    // Integer products of |x|,|w| <= 127 summed in float32 are exact while in_features * 127^2 < 2^24
    // (about 1000 inputs), so this reproduces an int8 GEMM with int32 accumulation at these sizes.
    auto y = torch::matmul(xq, weight.q.to(torch::kFloat).t()) * sx * cached_scale().unsqueeze(0);
    return has_bias() ? y + cached_bias() : y;
}

} // namespace foxhunt::models::precision
