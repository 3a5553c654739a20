// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Gradient helpers shared by the agents: global-norm clipping with the norm
// reduced in float64, zero_grad that frees the gradients, and flat parameter
// storage so that optimizer, clipping and target updates touch one tensor.

#include <torch/torch.h>

#include <vector>

namespace foxhunt::models {

/// Global L2 norm of the gradients of `parameters`, accumulated in float64.
double grad_norm_f64(const std::vector<torch::Tensor>& parameters);
/// Scales gradients so their global norm is at most max_norm (no-op when
/// max_norm <= 0 or the norm is not finite); returns the norm before clipping and, through
/// `clipped`, whether it scaled them.
double clip_grad_norm_f64(const std::vector<torch::Tensor>& parameters, double max_norm, bool* clipped = nullptr);
/// Drops every gradient of the optimizer's parameters (zero_grad(set_to_none)).
void zero_grad_set_to_none(torch::optim::Optimizer& optimizer);
/// Zeroes every defined gradient of the optimizer's parameters in place, keeping its storage
/// (zero_grad(set_to_none=false), spelled out: LibTorch 2 sets to none by default).
void zero_grad_in_place(torch::optim::Optimizer& optimizer);
/// Whether every parameter of the optimizer has a gradient tensor.
bool all_grads_defined(const torch::optim::Optimizer& optimizer);
/// Polyak update target = (1 - tau) target + tau source; tau = 1 copies.
void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau);

/// One contiguous buffer behind all parameters of a module (all float32, one device).
/// `values` is a leaf tensor whose storage every module parameter views; `grads`, when
/// allocated, is values.grad() and every parameter's grad views it. An optimizer built on
/// {values} then runs a handful of ops per step instead of a handful per parameter, and
/// autograd accumulates straight into `grads` (zero it before each backward).
struct FlatParameters {
    /// [N] parameter values.
    torch::Tensor values;
    /// [N] gradients (undefined when flattened without gradients).
    torch::Tensor grads;
};

/// Moves the parameters of `module` into `flat` (reusing its buffers when the size matches, so an
/// optimizer holding flat.values keeps working) and makes them views of it; with `with_grads`,
/// also points every parameter's grad into flat.grads (zeroed). Call again after anything that
/// rebinds parameter storage, e.g. Module::load().
void flatten_parameters(torch::nn::Module& module, FlatParameters& flat, bool with_grads);

/// Polyak update on flat buffers: target = (1 - tau) target + tau source; tau = 1 copies.
void polyak_update(torch::Tensor& target, const torch::Tensor& source, double tau);

/// torch::optim::Adam::step() in one pass over the elements, for an Adam whose only parameter is
/// one contiguous float32 CPU tensor with a gradient (FlatParameters::values): the same update
/// rule in float32, in the same state entry and step count, so a checkpoint of the optimizer
/// does not tell the two apart; it skips the eight tensor ops and the temporary of the stock
/// step. Anything else (amsgrad, weight decay, several parameters or groups) runs optimizer.step().
void adam_step_fused(torch::optim::Adam& optimizer);

} // namespace foxhunt::models
