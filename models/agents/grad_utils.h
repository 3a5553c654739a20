#pragma once
// Gradient helpers shared by the agents: global-norm clipping with the norm
// reduced in float64, and zero_grad that frees the gradients.

#include <torch/torch.h>

#include <vector>

namespace foxhunt::models {

/// Global L2 norm of the gradients of `parameters`, accumulated in float64.
double grad_norm_f64(const std::vector<torch::Tensor>& parameters);
/// Scales gradients so their global norm is at most max_norm (no-op when
/// max_norm <= 0); returns the norm before clipping.
double clip_grad_norm_f64(const std::vector<torch::Tensor>& parameters, double max_norm);
/// Drops every gradient of the optimizer's parameters (zero_grad(set_to_none)).
void zero_grad_set_to_none(torch::optim::Optimizer& optimizer);
/// Polyak update target = (1 - tau) target + tau source; tau = 1 copies.
void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau);

} // namespace foxhunt::models
