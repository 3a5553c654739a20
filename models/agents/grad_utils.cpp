// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/agents/grad_utils.h"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace foxhunt::models {

double grad_norm_f64(const std::vector<torch::Tensor>& parameters)
{
    double sum = 0.0;
    std::vector<torch::Tensor> deviceSquares; // summed where they are, then one transfer
    for (const torch::Tensor& p : parameters) {
        const torch::Tensor& g = p.grad();
        if (!g.defined()) continue;
        if (g.device().is_cpu() && g.scalar_type() == torch::kFloat32 && g.is_contiguous()) {
            // Direct loop: no temporaries on the hot path of small-network updates.
            // Eight partial sums: independent chains instead of one add latency per element.
            const float* d = g.data_ptr<float>();
            const int64_t n = g.numel();
            double part[8] = {};
            int64_t i = 0;
            for (; i + 8 <= n; i += 8) {
                for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(d[i + k]) * static_cast<double>(d[i + k]);
            }
            for (; i < n; ++i) part[0] += static_cast<double>(d[i]) * static_cast<double>(d[i]);
            sum += ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
        } else if (!g.device().is_cpu()) {
            deviceSquares.push_back(g.to(torch::kFloat64).pow(2).sum());
        } else {
            sum += g.to(torch::kFloat64).pow(2).sum().item<double>();
        }
    }
    if (!deviceSquares.empty()) sum += torch::stack(deviceSquares).sum().item<double>();
    return std::sqrt(sum);
}

double clip_grad_norm_f64(const std::vector<torch::Tensor>& parameters, double max_norm, bool* clipped)
{
    const double norm = grad_norm_f64(parameters);
    if (clipped) *clipped = false;
    if (max_norm > 0.0 && std::isfinite(norm)) {
        const double coef = max_norm / (norm + 1e-6);
        if (coef < 1.0) {
            if (clipped) *clipped = true;
            torch::NoGradGuard guard;
            for (const torch::Tensor& p : parameters) {
                if (p.grad().defined()) p.grad().mul_(coef);
            }
        }
    }
    return norm;
}

void zero_grad_set_to_none(torch::optim::Optimizer& optimizer)
{
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) p.mutable_grad().reset();
    }
}

void zero_grad_in_place(torch::optim::Optimizer& optimizer)
{
    torch::NoGradGuard guard;
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params()) {
            if (p.grad().defined()) p.mutable_grad().zero_();
        }
    }
}

bool all_grads_defined(const torch::optim::Optimizer& optimizer)
{
    for (const auto& group : optimizer.param_groups()) {
        for (const auto& p : group.params()) {
            if (!p.grad().defined()) return false;
        }
    }
    return true;
}

void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau)
{
    torch::NoGradGuard guard;
    const auto src = source.parameters();
    auto dst = target.parameters();
    TORCH_CHECK(src.size() == dst.size(), "polyak_update: parameter count differs");
    for (size_t i = 0; i < src.size(); ++i) {
        if (tau >= 1.0) dst[i].copy_(src[i]);
        else dst[i].mul_(1.0 - tau).add_(src[i], tau);
    }
    const auto srcBuffers = source.buffers();
    auto dstBuffers = target.buffers();
    for (size_t i = 0; i < srcBuffers.size() && i < dstBuffers.size(); ++i) dstBuffers[i].copy_(srcBuffers[i]);
}

} // namespace foxhunt::models

namespace foxhunt::models {

void flatten_parameters(torch::nn::Module& module, FlatParameters& flat, bool with_grads)
{
    torch::NoGradGuard guard;
    auto params = module.parameters();
    TORCH_CHECK(!params.empty(), "flatten_parameters: the module has no parameters");
    int64_t total = 0;
    for (const torch::Tensor& p : params) {
        TORCH_CHECK(p.scalar_type() == torch::kFloat32 && p.device() == params.front().device(),
                    "flatten_parameters: parameters must be float32 on one device");
        total += p.numel();
    }
    const auto options = params.front().options().requires_grad(false);
    if (!flat.values.defined() || flat.values.numel() != total) flat.values = torch::empty({total}, options);
    int64_t offset = 0;
    for (torch::Tensor& p : params) {
        const int64_t n = p.numel();
        torch::Tensor slot = flat.values.narrow(0, offset, n).view(p.sizes());
        // p may already be this very view (a second call): copying onto itself is harmless.
        if (!p.is_same(slot) && p.data_ptr() != slot.data_ptr()) slot.copy_(p.detach());
        p.set_data(slot);
        offset += n;
    }
    if (!with_grads) return;
    if (!flat.grads.defined() || flat.grads.numel() != total) flat.grads = torch::zeros({total}, options);
    else flat.grads.zero_();
    flat.values.mutable_grad() = flat.grads;
    offset = 0;
    for (torch::Tensor& p : params) {
        const int64_t n = p.numel();
        p.mutable_grad() = flat.grads.narrow(0, offset, n).view(p.sizes());
        offset += n;
    }
}

void polyak_update(torch::Tensor& target, const torch::Tensor& source, double tau)
{
    torch::NoGradGuard guard;
    TORCH_CHECK(target.sizes() == source.sizes(), "polyak_update: flat buffers differ in size");
    if (tau >= 1.0) target.copy_(source);
    else target.mul_(1.0 - tau).add_(source, tau);
}

} // namespace foxhunt::models

namespace foxhunt::models {

void adam_step_fused(torch::optim::Adam& optimizer)
{
    auto& groups = optimizer.param_groups();
    if (groups.size() != 1 || groups.front().params().size() != 1) {
        optimizer.step();
        return;
    }
    torch::Tensor& p = groups.front().params().front();
    const auto& options = static_cast<const torch::optim::AdamOptions&>(groups.front().options());
    const torch::Tensor& grad = p.grad();
    if (options.amsgrad() || options.weight_decay() != 0.0 || !grad.defined() || !p.device().is_cpu() ||
        p.scalar_type() != torch::kFloat32 || grad.scalar_type() != torch::kFloat32 || !p.is_contiguous() ||
        !grad.is_contiguous()) {
        optimizer.step();
        return;
    }
    torch::NoGradGuard no_grad;
    // The state entry torch::optim::Adam keys by the parameter's TensorImpl, created as it does.
    const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
    auto& states = optimizer.state();
    auto found = states.find(key);
    if (found == states.end()) {
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = states.emplace(key, std::move(fresh)).first;
    }
    auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
    torch::Tensor& exp_avg = state.exp_avg();
    torch::Tensor& exp_avg_sq = state.exp_avg_sq();
    if (!exp_avg.is_contiguous() || !exp_avg_sq.is_contiguous() || exp_avg.scalar_type() != torch::kFloat32 ||
        exp_avg_sq.scalar_type() != torch::kFloat32) {
        optimizer.step();
        return;
    }
    state.step(state.step() + 1);
    // Adam::step's scalars, computed in double as there and applied in float32 like its tensor ops.
    const double beta1 = std::get<0>(options.betas());
    const double beta2 = std::get<1>(options.betas());
    const double bias_correction1 = 1 - std::pow(beta1, state.step());
    const double bias_correction2 = 1 - std::pow(beta2, state.step());
    const auto b1 = static_cast<float>(beta1);
    const auto one_minus_b1 = static_cast<float>(1 - beta1);
    const auto b2 = static_cast<float>(beta2);
    const auto one_minus_b2 = static_cast<float>(1 - beta2);
    const auto sqrt_bc2 = static_cast<float>(std::sqrt(bias_correction2));
    const auto eps = static_cast<float>(options.eps());
    const auto neg_step = static_cast<float>(-(options.lr() / bias_correction1));
    float* pv = p.data_ptr<float>();
    const float* gv = grad.data_ptr<float>();
    float* m = exp_avg.data_ptr<float>();
    float* v = exp_avg_sq.data_ptr<float>();
    const int64_t n = p.numel();
    int64_t i = 0;
#if defined(__SSE2__)
    // Four lanes of the very same IEEE operations as the scalar loop below (sqrtps and divps round
    // like sqrtss and divss), so the result does not depend on where the vector part ends; plain
    // scalar code does not vectorize here because of std::sqrt's errno and the two divisions.
    const __m128 vb1 = _mm_set1_ps(b1), v1b1 = _mm_set1_ps(one_minus_b1), vb2 = _mm_set1_ps(b2),
                 v1b2 = _mm_set1_ps(one_minus_b2), vbc2 = _mm_set1_ps(sqrt_bc2), veps = _mm_set1_ps(eps),
                 vstep = _mm_set1_ps(neg_step);
    for (; i + 4 <= n; i += 4) {
        const __m128 g = _mm_loadu_ps(gv + i);
        const __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + i), vb1), _mm_mul_ps(v1b1, g));
        const __m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), vb2), _mm_mul_ps(_mm_mul_ps(v1b2, g), g));
        _mm_storeu_ps(m + i, mi);
        _mm_storeu_ps(v + i, vi);
        const __m128 denom = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), vbc2), veps);
        _mm_storeu_ps(pv + i, _mm_add_ps(_mm_loadu_ps(pv + i), _mm_mul_ps(vstep, _mm_div_ps(mi, denom))));
    }
#endif
    for (; i < n; ++i) {
        const float g = gv[i];
        const float mi = m[i] * b1 + one_minus_b1 * g;
        const float vi = v[i] * b2 + one_minus_b2 * g * g;
        m[i] = mi;
        v[i] = vi;
        const float denom = std::sqrt(vi) / sqrt_bc2 + eps;
        pv[i] = pv[i] + neg_step * (mi / denom);
    }
}

} // namespace foxhunt::models
