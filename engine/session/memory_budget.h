// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal: the served copies of a run's models against precision.memory_budget_mb (seed
// 003: four models within 880 MB). Pure figures in, a verdict out, so the check is testable
// without building models.

#include "engine/session/training_session.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace foxhunt {

/// The batch the served copies are measured at (the INT8 check's batch too).
inline constexpr int kServingBatch = 32;

/// The budget document for `servingBytes` (model name, weights plus activations at kServingBatch):
/// {budget_mb, serving_batch, models: {name: MiB}, total_mb, headroom_mb (negative when over), over,
/// action, refused, message}. Over budget, `refused` follows memory_budget_action and the message
/// gives the figures and what to change.
nlohmann::json memoryBudgetJson(const PrecisionSettings& precision,
                                const std::vector<std::pair<std::string, std::size_t>>& servingBytes);

} // namespace foxhunt
