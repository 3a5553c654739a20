// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A synthetic ES series with a planted, learnable edge for the agent tests:
// every 40-bar day rises 2 ticks per bar over bars 11..20 and falls 2 ticks
// per bar over bars 26..35, with +-2 ticks of noise on every bar. The only
// features are a one-hot 5-bar time-of-day bucket and the time of day as a
// fraction, so the edge is visible through time of day alone.

#include "engine/agents/dqn.h"
#include "engine/data/bar.h"
#include "engine/env/trading_env.h"

#include <random>
#include <vector>

namespace foxhunt::testing {

inline constexpr int kBarsPerDay = 40;
inline constexpr int kBuckets = 8;
inline constexpr int kFeatures = kBuckets + 1;

struct PlantedEdge {
    std::vector<Bar> bars;
    std::vector<float> features;
    std::vector<EpisodeRange> days;
};

/// withEdge = false keeps the noise only: a driftless random walk with the same bars and features.
inline PlantedEdge makePlantedEdge(int days, std::uint64_t seed, bool withEdge = true)
{
    PlantedEdge out;
    std::mt19937_64 rng(seed);
    std::int64_t close = fromPoints(4500.0);
    for (int d = 0; d < days; ++d) {
        const std::size_t begin = out.bars.size();
        for (int i = 0; i < kBarsPerDay; ++i) {
            int drift = 0;
            if (withEdge && i >= 11 && i < 21) drift = 2;
            else if (withEdge && i >= 26 && i < 36) drift = -2;
            const int noise = static_cast<int>(rng() % 5) - 2;
            Bar b;
            b.tsEvent = (19000LL + d) * kNsPerDay + 14LL * 3600 * kNsPerSecond + i * kNsPerMinute;
            b.open = close;
            b.close = close + (drift + noise) * kEsTick;
            b.high = std::max(b.open, b.close) + kEsTick;
            b.low = std::min(b.open, b.close) - kEsTick;
            b.volume = 1000;
            close = b.close;
            out.bars.push_back(b);
            for (int k = 0; k < kBuckets; ++k) out.features.push_back(i / 5 == k ? 1.0f : 0.0f);
            out.features.push_back(static_cast<float>(i) / kBarsPerDay);
        }
        out.days.push_back({begin, out.bars.size()});
    }
    return out;
}

/// The DQN settings that learn the planted edge from 24 days in 12,000 steps (tst_dqn, tst_group_edge).
inline DqnOptions plantedEdgeDqnOptions(std::uint64_t seed)
{
    DqnOptions o;
    o.hidden = {64, 64};
    o.learningRate = 1e-3;
    o.bufferSize = 20'000;
    o.learningStarts = 500;
    o.batchSize = 64;
    o.trainFreq = 1;
    o.targetUpdateInterval = 250;
    o.totalTimesteps = 12'000;
    o.explorationFraction = 0.3;
    o.gamma = 0.9;
    o.seed = seed;
    return o;
}

} // namespace foxhunt::testing
