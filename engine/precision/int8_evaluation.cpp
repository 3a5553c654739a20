// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/precision/int8_evaluation.h"

#include <algorithm>
#include <cmath>

namespace foxhunt {

LatencyPercentiles latencyPercentiles(std::vector<double> micros)
{
    LatencyPercentiles p;
    if (micros.empty()) return p;
    std::sort(micros.begin(), micros.end());
    const auto at = [&](double q) {
        const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(micros.size())));
        return micros[std::min(rank == 0 ? 0 : rank - 1, micros.size() - 1)];
    };
    p.p50 = at(0.50);
    p.p95 = at(0.95);
    p.p99 = at(0.99);
    p.count = micros.size();
    return p;
}

} // namespace foxhunt
