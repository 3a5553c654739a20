// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// JSON form of Int8Evaluation: the "int8" document of a model's validation evaluation.

#include "engine/precision/int8_evaluation.h"

#include <nlohmann/json_fwd.hpp>

namespace foxhunt {

/// {"p50_ms","p95_ms","p99_ms","count"} (the struct holds microseconds).
nlohmann::json toJson(const LatencyPercentiles& latency);
/// {fp32_loss, int8_loss, degradation, fp32_bytes, int8_bytes, bytes_ratio, quantized_layers, backend,
/// static_activations, calibration_bars, latency: {fp32_b1, int8_b1, fp32_b32, int8_b32}} plus
/// action_agreement when set.
nlohmann::json toJson(const Int8Evaluation& evaluation);

} // namespace foxhunt
