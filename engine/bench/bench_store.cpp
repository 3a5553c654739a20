// SPDX-License-Identifier: GPL-3.0-or-later
// Store benchmarks: SQLite import and load throughput, synthetic generation.
#include "engine/bench/bench_suite.h"
#include "engine/data/synthetic.h"
#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace {

using namespace foxhunt;

// About one million one-minute bars (725 synthetic trading days).
const std::vector<Bar>& millionBars()
{
    static const std::vector<Bar> bars = [] {
        SyntheticOptions options;
        options.tradingDays = 725;
        return generateSyntheticBars(options);
    }();
    return bars;
}

using bench::ScratchDb;

void BM_StoreSeries(benchmark::State& state)
{
    const auto& bars = millionBars();
    for (auto _ : state) {
        state.PauseTiming();
        ScratchDb db;
        {
            BarStore store(db.path());
            state.ResumeTiming();
            benchmark::DoNotOptimize(store.storeSeries("ES", "bench", SeriesKind::Series, kNsPerMinute, bars));
            state.PauseTiming();
        }
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_StoreSeries)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ImportParsed(benchmark::State& state)
{
    const auto& bars = millionBars();
    for (auto _ : state) {
        state.PauseTiming();
        ScratchDb db;
        {
            BarStore store(db.path());
            ParsedFile file;
            file.path = "bench.csv";
            file.format = FileFormat::Csv;
            file.bars = bars;
            file.lines.resize(bars.size());
            for (std::size_t i = 0; i < bars.size(); ++i) file.lines[i] = i + 2;
            state.ResumeTiming();
            benchmark::DoNotOptimize(BarImporter(store).importParsed(std::move(file)));
            state.PauseTiming();
        }
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_ImportParsed)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LoadBars(benchmark::State& state)
{
    const auto& bars = millionBars();
    ScratchDb db;
    BarStore store(db.path());
    const std::int64_t id = store.storeSeries("ES", "bench", SeriesKind::Series, kNsPerMinute, bars);
    for (auto _ : state) {
        const auto loaded = store.loadBars(id);
        benchmark::DoNotOptimize(loaded.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(bars.size()));
}
BENCHMARK(BM_LoadBars)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_SyntheticBars(benchmark::State& state)
{
    SyntheticOptions options; // 40 days, 55,200 bars
    std::size_t count = 0;
    for (auto _ : state) {
        const auto bars = generateSyntheticBars(options);
        count = bars.size();
        benchmark::DoNotOptimize(bars.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(count));
}
BENCHMARK(BM_SyntheticBars)->Unit(benchmark::kMillisecond);

} // namespace
