// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exact bytes of what training keeps besides activations: parameters, their gradients and the
// optimizer's state tensors.

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstddef>

namespace foxhunt::models {

/// numel * element size of a defined tensor, 0 for an undefined one.
std::size_t tensor_bytes(const torch::Tensor& t);
/// Bytes of the module's parameters (each shared parameter once).
std::size_t parameter_bytes(const torch::nn::Module& module);
/// Bytes of the defined gradients of the module's parameters.
std::size_t gradient_bytes(const torch::nn::Module& module);
/// Bytes of the optimizer's per-parameter state tensors (Adam/AdamW exp_avg, exp_avg_sq and
/// max_exp_avg_sq; SGD momentum; RMSprop, Adagrad and LBFGS buffers). 0 before the first step.
/// Throws c10::Error for a state type it does not know, rather than undercount.
std::size_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer);

} // namespace foxhunt::models
