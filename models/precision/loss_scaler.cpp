// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/loss_scaler.h"

#include <cmath>

namespace foxhunt::models::precision {

LossScaler::LossScaler(const MixedPrecisionConfig& config) : m_config(config), m_enabled(config.scales_loss())
{
    if (m_enabled) {
        TORCH_CHECK(config.loss_scale > 0.0 && std::isfinite(config.loss_scale),
                    "LossScaler: loss_scale must be positive and finite, got ", config.loss_scale);
        TORCH_CHECK(config.growth_interval > 0, "LossScaler: growth_interval must be positive");
        // GradScaler keeps its scale in a float32 tensor; round the same way so the sequences match.
        m_scale = static_cast<float>(config.loss_scale);
    }
}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const
{
    if (!m_enabled) return loss;
    return loss * m_scale;
}

void LossScaler::unscale(torch::optim::Optimizer& optimizer)
{
    TORCH_CHECK(!m_unscaled, "LossScaler::unscale: already called since the last update()");
    m_unscaled = true;
    if (!m_enabled) return;
    // GradScaler multiplies by the reciprocal computed in float64 and rounded to float32.
    const double inv = static_cast<float>(1.0 / m_scale);
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> finite;
    for (auto& group : optimizer.param_groups())
        for (auto& p : group.params()) {
            if (!p.grad().defined()) continue;
            auto g = p.mutable_grad();
            g.mul_(inv);
            finite.push_back(torch::isfinite(g).all());
        }
    // One host sync for all parameters rather than one per tensor.
    m_found_inf = !finite.empty() && !torch::stack(finite).all().item<bool>();
}

bool LossScaler::step(torch::optim::Optimizer& optimizer)
{
    TORCH_CHECK(!m_stepped, "LossScaler::step: already called since the last update()");
    if (!m_unscaled) unscale(optimizer);
    m_stepped = true;
    if (m_enabled && m_found_inf) return false;
    optimizer.step();
    return true;
}

void LossScaler::update()
{
    // As GradScaler: a scaling update() must follow this step's inf check (unscale() or step()),
    // or the scale would move on gradients nobody looked at.
    TORCH_CHECK(!m_enabled || m_unscaled,
                "LossScaler::update: no unscale() or step() since the last update(), so there is no inf check to "
                "update the scale from");
    m_last_found_inf = m_enabled && m_found_inf;
    if (m_last_found_inf) ++m_skipped;
    if (m_enabled && m_config.dynamic_loss_scale) {
        if (m_found_inf) {
            m_scale = static_cast<float>(m_scale * m_config.backoff_factor);
            m_growth_tracker = 0;
        } else if (m_growth_tracker + 1 == m_config.growth_interval) {
            const float grown = static_cast<float>(m_scale * m_config.growth_factor);
            if (std::isfinite(grown)) m_scale = grown;
            m_growth_tracker = 0;
        } else {
            ++m_growth_tracker;
        }
    }
    m_unscaled = false;
    m_stepped = false;
    m_found_inf = false;
}

torch::Tensor LossScaler::state() const
{
    return torch::tensor({m_scale, static_cast<double>(m_growth_tracker), static_cast<double>(m_skipped)},
                         torch::kDouble);
}

void LossScaler::load_state(const torch::Tensor& state)
{
    TORCH_CHECK(state.numel() == 3, "LossScaler::load_state: expected 3 values, got ", state.numel());
    auto s = state.to(torch::kCPU, torch::kDouble).contiguous();
    const double* v = s.data_ptr<double>();
    m_scale = m_enabled ? v[0] : 1.0;
    m_growth_tracker = static_cast<int64_t>(v[1]);
    m_skipped = static_cast<int64_t>(v[2]);
}

} // namespace foxhunt::models::precision
