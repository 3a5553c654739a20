// SPDX-License-Identifier: GPL-3.0-or-later
// Replay throughput: the bar clock at max speed feeding the feature pipeline,
// and the pipeline alone, over 2M in-memory 1-minute bars.

#include "engine/replay/bar_clock.h"
#include "engine/replay/features.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using namespace foxhunt;

constexpr std::size_t kBenchBars = 2'000'000;

// Continuous 1-minute bars skipping the daily 17:00-18:00 ET hour (22:00-23:00 UTC
// in winter time is close enough for throughput), with a cheap deterministic walk.
const std::vector<Bar>& benchBars()
{
    static const std::vector<Bar> bars = [] {
        std::vector<Bar> out;
        out.reserve(kBenchBars);
        std::uint64_t state = 0x243F6A8885A308D3ULL;
        std::int64_t price = fromPoints(4800.0);
        std::int64_t ts = 1'704'150'000LL * kNsPerSecond;
        while (out.size() < kBenchBars) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            const auto r = static_cast<std::int64_t>(state >> 33);
            Bar b;
            b.tsEvent = ts;
            b.open = price;
            b.close = price + (r % 9 - 4) * kEsTick;
            b.high = std::max(b.open, b.close) + (r >> 8) % 3 * kEsTick;
            b.low = std::min(b.open, b.close) - (r >> 12) % 3 * kEsTick;
            b.volume = 50 + static_cast<std::uint64_t>((r >> 16) % 2000);
            out.push_back(b);
            price = b.close;
            ts += kNsPerMinute;
            if ((ts / kNsPerMinute) % 1440 == 22 * 60) ts += 60 * kNsPerMinute;
        }
        return out;
    }();
    return bars;
}

void BM_ReplayWithFeatures(benchmark::State& state)
{
    const auto& bars = benchBars();
    FeaturePipeline pipeline;
    for (auto _ : state) {
        pipeline.reset();
        BarClock clock(bars);
        float sink = 0.0f;
        const ReplayStats stats = clock.run([&](const Bar& bar, std::size_t) { sink += pipeline.push(bar)[0]; });
        benchmark::DoNotOptimize(sink);
        benchmark::DoNotOptimize(stats.barsReplayed);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_ReplayWithFeatures)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_FeaturesOnly(benchmark::State& state)
{
    const auto& bars = benchBars();
    FeaturePipeline pipeline;
    for (auto _ : state) {
        pipeline.reset();
        float sink = 0.0f;
        for (const Bar& bar : bars) sink += pipeline.push(bar)[0];
        benchmark::DoNotOptimize(sink);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_FeaturesOnly)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_ReplayClockOnly(benchmark::State& state)
{
    const auto& bars = benchBars();
    for (auto _ : state) {
        BarClock clock(bars);
        std::int64_t sink = 0;
        clock.run([&](const Bar& bar, std::size_t) { sink += bar.close; });
        benchmark::DoNotOptimize(sink);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_ReplayClockOnly)->Unit(benchmark::kMillisecond)->MinTime(0.5);

void BM_ComputeFeatureMatrix(benchmark::State& state)
{
    const auto& bars = benchBars();
    for (auto _ : state) {
        const FeatureMatrix m = computeFeatures(bars);
        benchmark::DoNotOptimize(m.values.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_ComputeFeatureMatrix)->Unit(benchmark::kMillisecond)->MinTime(0.5);

} // namespace
