// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain metric samples: what every model step yields for the charts and the store.

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// One value of one metric of one model at one step.
struct MetricSample {
    std::string model;       ///< "dqn", "ppo", "mamba2", "tft", "replay"
    std::string metric;      ///< e.g. "loss", "grad_norm", "loss_scale", "latency_ms"
    std::int64_t step = 0;   ///< the model's own step counter
    std::int64_t wallNs = 0; ///< UNIX ns when the value was measured
    double value = 0;
};

/// A batch of samples, in the order they were produced.
using MetricBatch = std::vector<MetricSample>;

/// UNIX nanoseconds now (system clock).
std::int64_t wallClockNs();

} // namespace foxhunt
