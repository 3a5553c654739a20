// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/precision/int8_evaluation.h"

#include <algorithm>
#include <chrono>
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

PairedLatencies timeLatenciesInTurns(const std::function<void()>& fp32, const std::function<void()>& int8, int repeats,
                                     const MicrosClock& clock)
{
    const MicrosClock now = clock ? clock : [] {
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
    const auto timed = [&](const std::function<void()>& pass, std::vector<double>& micros) {
        const double t0 = now();
        pass();
        micros.push_back(now() - t0);
    };
    fp32();
    int8();
    const auto rounds = static_cast<std::size_t>(std::max(1, repeats));
    std::vector<double> a, b;
    a.reserve(rounds);
    b.reserve(rounds);
    for (std::size_t i = 0; i < rounds; ++i) {
        if (i % 2 == 0) {
            timed(fp32, a);
            timed(int8, b);
        } else {
            timed(int8, b);
            timed(fp32, a);
        }
    }
    return {latencyPercentiles(std::move(a)), latencyPercentiles(std::move(b))};
}

} // namespace foxhunt
