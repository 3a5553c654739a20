// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// RMSNorm, optionally gated by silu(z) before normalising (Mamba-2's output norm).

#include <torch/torch.h>

namespace foxhunt::models::mamba2 {

/// Options for RmsNormGated.
struct RmsNormGatedOptions {
    explicit RmsNormGatedOptions(int64_t dim) : dim_(dim) { }
    /// Feature size of the last dimension.
    TORCH_ARG(int64_t, dim);
    /// Size of the groups the RMS is taken over; 0 means the whole dim.
    TORCH_ARG(int64_t, group_size) = 0;
    /// Added to the mean square for stability.
    TORCH_ARG(double, eps) = 1e-5;
};

/// y = norm(x * silu(z)) * weight (z optional), the RMS taken per group.
class RmsNormGatedImpl : public torch::nn::Module {
public:
    /// Builds the norm with a unit weight.
    explicit RmsNormGatedImpl(const RmsNormGatedOptions& options);
    // x: [..., D], z: undefined or [..., D] -> [..., D]
    /// Normalises x, gated by z when z is defined.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& z = {});

    /// The options it was built with.
    RmsNormGatedOptions options;
    /// Learned scale, [D].
    torch::Tensor weight;
};
TORCH_MODULE(RmsNormGated);

} // namespace foxhunt::models::mamba2
