#include "models/agents/grad_utils.h"

#include <cmath>

namespace foxhunt::models {

double grad_norm_f64(const std::vector<torch::Tensor>& parameters)
{
    double sum = 0.0;
    for (const torch::Tensor& p : parameters) {
        const torch::Tensor& g = p.grad();
        if (!g.defined())
            continue;
        if (g.device().is_cpu() && g.scalar_type() == torch::kFloat32 && g.is_contiguous()) {
            // Direct loop: no temporaries on the hot path of small-network updates.
            const float* d = g.data_ptr<float>();
            const int64_t n = g.numel();
            double s = 0.0;
            for (int64_t i = 0; i < n; ++i)
                s += static_cast<double>(d[i]) * static_cast<double>(d[i]);
            sum += s;
        } else {
            sum += g.to(torch::kFloat64).pow(2).sum().item<double>();
        }
    }
    return std::sqrt(sum);
}

double clip_grad_norm_f64(const std::vector<torch::Tensor>& parameters, double max_norm)
{
    const double norm = grad_norm_f64(parameters);
    if (max_norm > 0.0 && std::isfinite(norm)) {
        const double coef = max_norm / (norm + 1e-6);
        if (coef < 1.0) {
            torch::NoGradGuard guard;
            for (const torch::Tensor& p : parameters) {
                if (p.grad().defined())
                    p.grad().mul_(coef);
            }
        }
    }
    return norm;
}

void zero_grad_set_to_none(torch::optim::Optimizer& optimizer)
{
    for (auto& group : optimizer.param_groups()) {
        for (auto& p : group.params())
            p.mutable_grad().reset();
    }
}

void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau)
{
    torch::NoGradGuard guard;
    const auto src = source.parameters();
    auto dst = target.parameters();
    TORCH_CHECK(src.size() == dst.size(), "polyak_update: parameter count differs");
    for (size_t i = 0; i < src.size(); ++i) {
        if (tau >= 1.0)
            dst[i].copy_(src[i]);
        else
            dst[i].mul_(1.0 - tau).add_(src[i], tau);
    }
    const auto srcBuffers = source.buffers();
    auto dstBuffers = target.buffers();
    for (size_t i = 0; i < srcBuffers.size() && i < dstBuffers.size(); ++i)
        dstBuffers[i].copy_(srcBuffers[i]);
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
    if (!flat.values.defined() || flat.values.numel() != total)
        flat.values = torch::empty({total}, options);
    int64_t offset = 0;
    for (torch::Tensor& p : params) {
        const int64_t n = p.numel();
        torch::Tensor slot = flat.values.narrow(0, offset, n).view(p.sizes());
        // p may already be this very view (a second call): copying onto itself is harmless.
        if (!p.is_same(slot) && p.data_ptr() != slot.data_ptr())
            slot.copy_(p.detach());
        p.set_data(slot);
        offset += n;
    }
    if (!with_grads)
        return;
    if (!flat.grads.defined() || flat.grads.numel() != total)
        flat.grads = torch::zeros({total}, options);
    else
        flat.grads.zero_();
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
    if (tau >= 1.0)
        target.copy_(source);
    else
        target.mul_(1.0 - tau).add_(source, tau);
}

} // namespace foxhunt::models
