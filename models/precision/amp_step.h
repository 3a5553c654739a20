// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One optimizer step under a LossScaler, in the order torch.amp.GradScaler prescribes. Shared by
// the forecaster trainer and the agents so that every model scales, unscales, clips and skips alike.

#include "models/precision/loss_scaler.h"

#include <torch/torch.h>

#include <utility>

namespace foxhunt::models::precision {

/// What scaled_step() did.
struct ScaledStepResult {
    /// Global gradient norm returned by the clip callback (after unscaling, before clipping).
    double grad_norm = 0.0;
    /// The optimizer step was skipped because the gradients held inf/NaN.
    bool skipped = false;
};

/// backward() of scaler.scale(loss), `after_backward()` (the data-parallel gradient all-reduce goes
/// here, so every rank unscales, checks and clips the same averaged gradients), unscale once, `clip()` (returns the norm before clipping; it
/// must leave non-finite gradients alone), optimizer step unless they overflowed, then update()
/// the scale. With a non-scaling config this is backward, clip, step. Gradients must be zeroed
/// (or set to none) by the caller beforehand.
template <class Clip, class AfterBackward>
ScaledStepResult scaled_step(LossScaler& scaler, torch::optim::Optimizer& optimizer, const torch::Tensor& loss,
                             Clip&& clip, AfterBackward&& after_backward)
{
    scaler.scale(loss).backward();
    std::forward<AfterBackward>(after_backward)();
    scaler.unscale(optimizer);
    ScaledStepResult result;
    result.grad_norm = std::forward<Clip>(clip)();
    result.skipped = !scaler.step(optimizer);
    scaler.update();
    return result;
}

/// scaled_step() of a single process.
template <class Clip>
ScaledStepResult scaled_step(LossScaler& scaler, torch::optim::Optimizer& optimizer, const torch::Tensor& loss,
                             Clip&& clip)
{
    return scaled_step(scaler, optimizer, loss, std::forward<Clip>(clip), [] {});
}

} // namespace foxhunt::models::precision
