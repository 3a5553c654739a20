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
