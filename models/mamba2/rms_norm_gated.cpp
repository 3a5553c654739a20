// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/rms_norm_gated.h"

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
    auto h = x;
    if (z.defined()) {
        TORCH_CHECK(z.sizes() == x.sizes(), "RmsNormGated: z must match x ", x.sizes(), ", got ", z.sizes());
        h = h * torch::silu(z);
    }
    const int64_t group = options.group_size() == 0 ? options.dim() : options.group_size();
    auto sizes = h.sizes().vec();
    auto grouped_sizes = sizes;
    grouped_sizes.back() = options.dim() / group;
    grouped_sizes.push_back(group);
    auto g = h.reshape(grouped_sizes);
    auto normed = g * torch::rsqrt(g.pow(2).mean(-1, /*keepdim=*/true) + options.eps());
    return normed.reshape(sizes) * weight;
}

} // namespace foxhunt::models::mamba2
