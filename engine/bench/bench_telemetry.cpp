// SPDX-License-Identifier: GPL-3.0-or-later
// Telemetry benchmarks: the SQLite metric insert rate, the cost of a session's telemetry on a
// forecaster train step, and the exact memory of each forecaster at the seed sizes.

#include "engine/bench/bench_suite.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/staging_buffer.h"

#include "models/memory/memory_tracker.h"
#include "models/runtime.h"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <random>

namespace {

using namespace foxhunt;
using Clock = std::chrono::steady_clock;

using bench::ScratchDb;

std::int64_t createBenchRun(RunStore& runs)
{
    SeriesInfo series;
    series.symbol = "ES.BENCH";
    return runs.createRun("bench", "{}", series, 0, 0, "{}");
}

// The metrics a session emits per forecaster step (see COMMON.md's shared contract).
constexpr const char* kStepMetrics[] = {"loss",          "grad_norm",    "learning_rate", "step_ms",      "loss_scale",
                                        "skipped_steps", "forecast_q10", "forecast_q50",  "forecast_q90", "realised"};
constexpr std::size_t kStepMetricCount = std::size(kStepMetrics);

// Samples of `steps` steps of four models, interleaved as a session's ticks produce them.
MetricBatch sessionLikeBatch(std::int64_t firstStep, std::size_t samples)
{
    static const char* const kModels[] = {"dqn", "ppo", "mamba2", "tft"};
    MetricBatch batch;
    batch.reserve(samples);
    const std::int64_t now = wallClockNs();
    for (std::int64_t step = firstStep; batch.size() < samples; ++step)
        for (const char* model : kModels)
            for (const char* metric : kStepMetrics) {
                if (batch.size() == samples) break;
                batch.push_back({model, metric, step, now, 1e-3 * static_cast<double>(step)});
            }
    return batch;
}

// (a) RunStore::appendMetrics in batches of state.range(0) samples: one transaction each.
void BM_MetricInsert(benchmark::State& state)
{
    const auto batchSize = static_cast<std::size_t>(state.range(0));
    ScratchDb db;
    BarStore store(db.path());
    RunStore runs(store);
    const std::int64_t runId = createBenchRun(runs);
    std::int64_t step = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const MetricBatch batch = sessionLikeBatch(step, batchSize);
        step += static_cast<std::int64_t>(batchSize / (4 * kStepMetricCount)) + 1;
        state.ResumeTiming();
        runs.appendMetrics(runId, batch);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batchSize));
    state.counters["stored"] = static_cast<double>(runs.metricCount(runId));
}
BENCHMARK(BM_MetricInsert)->Arg(100)->Arg(1000)->Arg(20000)->Unit(benchmark::kMillisecond)->MinTime(0.3);

// Seed sizes of engine/bench/bench_forecast.cpp: 16 observed + 2 known features, 2 statics, H = 5.
ForecastData seedData(std::size_t rows)
{
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal;
    ForecastData d;
    d.rows = rows;
    d.cols = 16;
    d.knownCols = 2;
    d.features.resize(rows * d.cols);
    for (float& f : d.features) f = normal(rng);
    d.knownFuture.resize(rows * d.knownCols);
    for (float& f : d.knownFuture) f = normal(rng);
    d.logReturns.resize(rows);
    for (double& r : d.logReturns) r = 1e-3 * normal(rng);
    d.staticFeatures = {1.0f, 0.0f};
    return d;
}

// Mamba-2: batch 8, sequence 60, d_inner 1024 (d_model 512, expand 2), d_state 16, head_dim 64.
// TFT: batch 32, sequence 100, hidden 32, 4 heads.
ForecasterTrainer seedTrainer(ForecasterKind kind)
{
    ForecasterConfig c;
    c.kind = kind;
    c.windowing.horizon = 5;
    if (kind == ForecasterKind::Mamba2) {
        c.batchSize = 8;
        c.windowing.pastLength = 60;
        c.dModel = 512;
        c.expand = 2;
        c.dState = 16;
        c.headDim = 64;
        c.layers = 2;
        c.chunkSize = 32;
    } else {
        c.batchSize = 32;
        c.windowing.pastLength = 100;
        c.hiddenSize = 32;
        c.heads = 4;
    }
    ForecastData data = seedData(1200);
    const IndexRange valid = validAnchors(data, c.windowing);
    return ForecasterTrainer(c, std::move(data), IndexRange{valid.begin, valid.begin + 800},
                             IndexRange{valid.begin + 800, valid.end});
}

// (b) A TFT train step at the seed size, and what a session adds to it per step: the step's
// samples stamped and staged for the UI, copied to the store batch, and the batched SQLite write
// at the session's default flush interval, amortised. overhead_pct = telemetry / train time.
void BM_TelemetryOverhead(benchmark::State& state)
{
    models::setThreads(1);
    models::installCountingCpuAllocator(); // as a session does
    ForecasterTrainer trainer = seedTrainer(ForecasterKind::Tft);
    trainer.trainStep(); // first-use allocations stay out of the measurement
    ScratchDb db;
    BarStore store(db.path());
    RunStore runs(store);
    const std::int64_t runId = createBenchRun(runs);
    StagingBuffer staging;
    MetricBatch storeBatch, drained;
    const double flushSeconds = SessionConfig{}.flushSeconds;
    auto lastFlush = Clock::now();
    Clock::duration train{}, telemetry{};
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const ForecastStepStats st = trainer.trainStep();
        const auto t1 = Clock::now();
        const double values[kStepMetricCount] = {st.loss,
                                                 st.gradNorm,
                                                 st.learningRate,
                                                 st.stepSeconds * 1e3,
                                                 st.lossScale,
                                                 static_cast<double>(st.skippedSteps),
                                                 -1e-3,
                                                 0.0,
                                                 1e-3,
                                                 2e-4};
        MetricBatch tick;
        tick.reserve(kStepMetricCount);
        const std::int64_t now = wallClockNs();
        for (std::size_t i = 0; i < kStepMetricCount; ++i)
            tick.push_back({"tft", kStepMetrics[i], st.step, now, values[i]});
        storeBatch.insert(storeBatch.end(), tick.begin(), tick.end());
        staging.append(std::move(tick));
        if (std::chrono::duration<double>(Clock::now() - lastFlush).count() >= flushSeconds) {
            runs.appendMetrics(runId, storeBatch);
            storeBatch.clear();
            lastFlush = Clock::now();
        }
        const auto t2 = Clock::now();
        train += t1 - t0;
        telemetry += t2 - t1;
        staging.drain(drained); // the UI thread's work, not the training thread's
    }
    const auto t3 = Clock::now();
    runs.appendMetrics(runId, storeBatch); // the last partial batch belongs to these steps too
    telemetry += Clock::now() - t3;
    const double trainNs = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(train).count());
    const double telemetryNs = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(telemetry).count());
    const double steps = static_cast<double>(state.iterations());
    state.SetItemsProcessed(state.iterations());
    state.counters["overhead_pct"] = 100.0 * telemetryNs / trainNs;
    state.counters["train_ms"] = trainNs / steps / 1e6;
    state.counters["telemetry_us"] = telemetryNs / steps / 1e3;
    state.counters["samples"] = static_cast<double>(runs.metricCount(runId));
}
BENCHMARK(BM_TelemetryOverhead)->Unit(benchmark::kMillisecond)->Iterations(8);

// (c) Exact memory of a forecaster at its seed size: parameters, gradients, AdamW state, and the
// peak activation bytes of one forward + backward (counting CPU allocator). Range 0: Mamba-2, 1: TFT.
void BM_ForecasterMemory(benchmark::State& state)
{
    models::setThreads(1);
    models::installCountingCpuAllocator();
    const auto kind = state.range(0) == 0 ? ForecasterKind::Mamba2 : ForecasterKind::Tft;
    ForecasterTrainer trainer = seedTrainer(kind);
    // After one step the gradients and optimizer state exist, so the measured step's peak is
    // activations only (on LibTorch 2.x zero_grad frees gradients and backward re-creates them).
    trainer.trainStep();
    for (auto _ : state) {
        double loss = trainer.trainStep().loss;
        benchmark::DoNotOptimize(loss);
    }
    const ModelMemory m = trainer.memory();
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(trainer.config().batchSize));
    state.SetLabel(kind == ForecasterKind::Mamba2 ? "mamba2 b8 T60 d_inner1024 N16" : "tft b32 T100 h32");
    state.counters["param_bytes"] = static_cast<double>(m.parameterBytes);
    state.counters["grad_bytes"] = static_cast<double>(m.gradientBytes);
    state.counters["optimizer_bytes"] = static_cast<double>(m.optimizerBytes);
    state.counters["activation_bytes"] = static_cast<double>(m.activationPeakBytes);
}
BENCHMARK(BM_ForecasterMemory)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

} // namespace
