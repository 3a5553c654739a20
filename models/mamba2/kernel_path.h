// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// When Mamba-2's layers take their inference kernels (inference_kernels.h) instead of the LibTorch
// operators: one rule for the scan, the convolution and the norm.

#include <torch/torch.h>

namespace foxhunt::models::mamba2 {

/// Whether the inference kernels serve these operands: each defined, float32 and on the CPU, and no
/// autograd graph to keep (grad mode off, or none of them requiring a gradient).
inline bool inference_kernels_apply(c10::ArrayRef<torch::Tensor> operands)
{
    bool graph = false;
    for (const auto& t : operands) {
        if (!t.defined() || !t.is_cpu() || t.scalar_type() != torch::kFloat) return false;
        graph = graph || t.requires_grad();
    }
    return !(graph && torch::GradMode::is_enabled());
}

} // namespace foxhunt::models::mamba2
