// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/rms_norm_gated.h"

#include "models/mamba2/inference_kernels.h"
#include "models/mamba2/kernel_path.h"

#include <ATen/Parallel.h>

namespace foxhunt::models::mamba2 {

RmsNormGatedImpl::RmsNormGatedImpl(const RmsNormGatedOptions& options_) : options(options_)
{
    const int64_t group = options.group_size() == 0 ? options.dim() : options.group_size();
    TORCH_CHECK(options.dim() > 0 && group > 0 && options.dim() % group == 0, "RmsNormGated: dim (", options.dim(),
                ") must be a positive multiple of group_size (", group, ")");
    weight = register_parameter("weight", torch::ones({options.dim()}));
}

torch::Tensor RmsNormGatedImpl::forward(const torch::Tensor& x, const torch::Tensor& z)
{
    TORCH_CHECK(x.dim() >= 1 && x.size(-1) == options.dim(), "RmsNormGated: last dim must be ", options.dim(), ", got ",
                x.sizes());
    if (z.defined())
        TORCH_CHECK(z.sizes() == x.sizes(), "RmsNormGated: z must match x ", x.sizes(), ", got ", z.sizes());
    const int64_t group = options.group_size() == 0 ? options.dim() : options.group_size();
    auto sizes = x.sizes().vec();
    auto grouped_sizes = sizes;
    grouped_sizes.back() = options.dim() / group;
    grouped_sizes.push_back(group);
    const bool graph = torch::GradMode::is_enabled() &&
                       (x.requires_grad() || (z.defined() && z.requires_grad()) || weight.requires_grad());
    const bool kernel = z.defined() ? inference_kernels_apply({x, z, weight}) : inference_kernels_apply({x, weight});
    if (kernel && x.numel() > 0) {
        // Inference in float32 on the CPU: one pass over each row (inference_kernels.h).
        const auto xs = x.reshape({-1, options.dim()});
        const auto x2 = xs.stride(1) == 1 ? xs : xs.contiguous();
        torch::Tensor z2;
        if (z.defined()) {
            const auto zs = z.reshape({-1, options.dim()});
            z2 = zs.stride(1) == 1 ? zs : zs.contiguous();
        }
        const auto w = weight.contiguous();
        auto out = torch::empty({x2.size(0), options.dim()}, x.options());
        GatedNormOperands o;
        o.x = x2.data_ptr<float>();
        o.x_row = x2.stride(0);
        if (z2.defined()) {
            o.z = z2.data_ptr<float>();
            o.z_row = z2.stride(0);
        }
        o.weight = w.data_ptr<float>();
        o.out = out.data_ptr<float>();
        o.dim = options.dim();
        o.group = group;
        o.eps = static_cast<float>(options.eps());
        at::parallel_for(0, x2.size(0), 8, [&](int64_t first, int64_t last) { gated_rms_norm_rows(o, first, last); });
        return out.view(sizes);
    }
    if (!graph && x.scalar_type() == weight.scalar_type() && (!z.defined() || z.scalar_type() == x.scalar_type())) {
        // Inference: no graph to keep, so the gate is applied in place on silu(z)'s buffer, the mean
        // square comes from one norm pass, and the scaling reuses one new buffer: five passes over
        // the activations and two full-size allocations instead of six and four.
        auto h = z.defined() ? torch::silu(z).mul_(x) : x;
        auto g = h.reshape(grouped_sizes);
        auto scale = torch::linalg_vector_norm(g, 2, {-1}, /*keepdim=*/true, c10::nullopt)
                         .square_()
                         .div_(static_cast<double>(group))
                         .add_(options.eps())
                         .rsqrt_();
        return (g * scale).reshape(sizes).mul_(weight);
    }
    auto h = z.defined() ? x * torch::silu(z) : x;
    auto g = h.reshape(grouped_sizes);
    auto normed = g * torch::rsqrt(g.pow(2).mean(-1, /*keepdim=*/true) + options.eps());
    return normed.reshape(sizes) * weight;
}

} // namespace foxhunt::models::mamba2
