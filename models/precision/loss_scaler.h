// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Dynamic loss scaling with torch.amp.GradScaler's rules, for any torch::optim::Optimizer.

#include "models/precision/mixed_precision.h"

#include <torch/torch.h>

namespace foxhunt::models::precision {

/// Scales the loss before backward and unscales, checks and applies the gradients after it.
///
/// One training step:
///   auto loss = ...;                      // computed in float32, outside autocast
///   scaler.scale(loss).backward();
///   scaler.unscale(optimizer);            // once, before clipping or reading the norm
///   clip(...);
///   bool stepped = scaler.step(optimizer);
///   scaler.update();
///
/// Rules (GradScaler's): a step with any inf/NaN gradient is skipped, the scale is multiplied by
/// backoff_factor and the growth counter resets; after growth_interval consecutive clean steps
/// the scale is multiplied by growth_factor, unless that would overflow float32, and the counter
/// resets. With a static scale, overflowing steps are still skipped but the scale never changes.
/// When the config does not scale (FP32, or BF16 as for_ampere()), the scale is 1 and nothing is
/// checked: every step is applied.
class LossScaler {
public:
    /// A scaler for `config` (see MixedPrecisionConfig::scales_loss()).
    explicit LossScaler(const MixedPrecisionConfig& config = {});

    /// loss * scale (the loss itself when not scaling).
    torch::Tensor scale(const torch::Tensor& loss) const;
    /// Divides every gradient of the optimizer's parameters by the scale (in place) and records
    /// whether any is inf/NaN. At most once between update() calls; step() calls it if needed.
    void unscale(torch::optim::Optimizer& optimizer);
    /// Takes the optimizer step unless this step's gradients overflowed; returns whether it stepped.
    bool step(torch::optim::Optimizer& optimizer);
    /// Applies the scale rules for the step just finished and readies the next one. When scaling,
    /// throws c10::Error unless unscale() or step() ran since the last update() (GradScaler's rule).
    void update();

    /// Current scale (1 when not scaling).
    double current_scale() const { return m_scale; }
    /// Consecutive clean steps since the last growth or backoff (GradScaler's growth tracker).
    int64_t growth_tracker() const { return m_growth_tracker; }
    /// Steps skipped because of inf/NaN gradients, since construction.
    int64_t skipped_steps() const { return m_skipped; }
    /// Whether the last finished step (up to update()) found inf/NaN gradients.
    bool last_step_overflowed() const { return m_last_found_inf; }
    /// Whether this scaler scales and checks (false: a pass-through).
    bool scaling() const { return m_enabled; }
    /// The config it follows.
    const MixedPrecisionConfig& config() const { return m_config; }

    /// Scale, growth tracker and skip count as a tensor [3] (float64), for checkpoints.
    torch::Tensor state() const;
    /// Restores state().
    void load_state(const torch::Tensor& state);

private:
    MixedPrecisionConfig m_config;
    bool m_enabled = false;
    double m_scale = 1.0;
    int64_t m_growth_tracker = 0;
    int64_t m_skipped = 0;
    bool m_unscaled = false;
    bool m_found_inf = false;
    bool m_stepped = false;
    bool m_last_found_inf = false;
};

} // namespace foxhunt::models::precision
