// SPDX-License-Identifier: GPL-3.0-or-later
// Agent and environment throughput: env steps/s, DQN updates/s (batch 32 and
// 256, MLP obs->256->256->actions, Adam, Huber), PPO update time (2048 steps
// x 10 epochs x 64 minibatch) and per-decision inference latency.
// tests/bench/dqn_reference.py runs the same DQN update through PyTorch.
// Also: the DQN update with its hand-written backward vs autograd, at 1 vs 2 LibTorch threads (backs the threads=1
// default), BF16 autocast vs FP32 updates for both agents, and INT8 vs FP32
// decision latency for both agents.

#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/env/trading_env.h"
#include "engine/session/amp_auto.h"
#include "models/runtime.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace foxhunt;

constexpr int kBenchObservation = 32;
constexpr int kBenchActions = 3;

struct BenchSeries {
    std::vector<Bar> bars;
    std::vector<float> features;
    std::vector<EpisodeRange> days;
};

// 20 days of 390 one-minute bars, random walk on the tick grid, 8 features.
const BenchSeries& benchSeries()
{
    static const BenchSeries series = [] {
        BenchSeries s;
        std::mt19937_64 rng(99);
        std::int64_t close = fromPoints(4500.0);
        for (int d = 0; d < 20; ++d) {
            const std::size_t begin = s.bars.size();
            for (int i = 0; i < 390; ++i) {
                Bar b;
                b.tsEvent = (19000LL + d) * kNsPerDay + i * kNsPerMinute;
                b.open = close;
                b.close = close + (static_cast<int>(rng() % 5) - 2) * kEsTick;
                b.high = std::max(b.open, b.close);
                b.low = std::min(b.open, b.close);
                close = b.close;
                s.bars.push_back(b);
                for (int f = 0; f < 8; ++f) s.features.push_back(static_cast<float>(rng() % 1000) / 1000.0f);
            }
            s.days.push_back({begin, s.bars.size()});
        }
        return s;
    }();
    return series;
}

std::vector<float> randomObservation(std::mt19937_64& rng)
{
    return foxhunt::detail::randomObservation(rng, kBenchObservation);
}

void BM_EnvStep(benchmark::State& state)
{
    const BenchSeries& s = benchSeries();
    TradingEnvOptions options;
    options.window = 4;
    TradingEnv env(s.bars, s.features, 8, s.days, options);
    int episode = 0;
    int action = 0;
    env.reset(episode);
    for (auto _ : state) {
        if (env.done()) env.reset(episode = (episode + 1) % env.episodeCount());
        action = (action * 7 + 1) % env.actionCount();
        benchmark::DoNotOptimize(env.step(action));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EnvStep);

DqnOptions benchDqnOptions(int batch, bool amp = false)
{
    DqnOptions o;
    o.hidden = {256, 256};
    o.batchSize = batch;
    o.bufferSize = 10'000;
    o.learningStarts = 1'000'000'000; // fill without learning
    o.seed = 5;
    if (amp) o.mixedPrecision = models::precision::MixedPrecisionConfig::for_ampere();
    return o;
}

void fillDqn(Dqn& dqn, std::mt19937_64& rng)
{
    foxhunt::detail::fillReplay(dqn, rng, kBenchObservation, kBenchActions, 10'000);
}

void BM_DqnUpdate(benchmark::State& state)
{
    models::setThreads(1);
    Dqn dqn(kBenchObservation, kBenchActions, benchDqnOptions(static_cast<int>(state.range(0))));
    std::mt19937_64 rng(1);
    fillDqn(dqn, rng);
    for (int i = 0; i < 20; ++i) dqn.update();
    double gradNorm = 0.0;
    for (auto _ : state) gradNorm = dqn.update().gradNorm;
    benchmark::DoNotOptimize(gradNorm);
    state.SetItemsProcessed(state.iterations());
    state.counters["batch"] = static_cast<double>(state.range(0));
}
// Wall-clock rates, like the Python reference (time.perf_counter).
BENCHMARK(BM_DqnUpdate)->Arg(32)->Arg(256)->UseRealTime();

// The hand-written backward (the default) against autograd: args batch, hand-written.
void BM_DqnUpdateBackprop(benchmark::State& state)
{
    models::setThreads(1);
    DqnOptions o = benchDqnOptions(static_cast<int>(state.range(0)));
    o.gradients = state.range(1) != 0 ? DqnGradients::HandWritten : DqnGradients::Autograd;
    Dqn dqn(kBenchObservation, kBenchActions, o);
    std::mt19937_64 rng(1);
    fillDqn(dqn, rng);
    for (int i = 0; i < 20; ++i) dqn.update();
    double gradNorm = 0.0;
    for (auto _ : state) gradNorm = dqn.update().gradNorm;
    benchmark::DoNotOptimize(gradNorm);
    state.SetItemsProcessed(state.iterations());
    state.SetLabel(state.range(1) != 0 ? "hand-written" : "autograd");
}
BENCHMARK(BM_DqnUpdateBackprop)
    ->Args({32, 1})
    ->Args({32, 0})
    ->Args({256, 1})
    ->Args({256, 0})
    ->UseRealTime()
    ->MinTime(0.5);

// The same update with 1 or 2 intra-op (and OpenBLAS) threads: args batch, threads.
void BM_DqnUpdateThreads(benchmark::State& state)
{
    models::setThreads(static_cast<int>(state.range(1)));
    Dqn dqn(kBenchObservation, kBenchActions, benchDqnOptions(static_cast<int>(state.range(0))));
    std::mt19937_64 rng(1);
    fillDqn(dqn, rng);
    for (int i = 0; i < 20; ++i) dqn.update();
    double gradNorm = 0.0;
    for (auto _ : state) gradNorm = dqn.update().gradNorm;
    benchmark::DoNotOptimize(gradNorm);
    models::setThreads(1);
    state.SetItemsProcessed(state.iterations());
    state.counters["batch"] = static_cast<double>(state.range(0));
    state.counters["threads"] = static_cast<double>(state.range(1));
}
BENCHMARK(BM_DqnUpdateThreads)
    ->Args({32, 1})
    ->Args({32, 2})
    ->Args({256, 1})
    ->Args({256, 2})
    ->UseRealTime()
    ->MinTime(0.5);

// BF16 autocast (float64 loss) against FP32: args batch, amp.
void BM_DqnUpdateAmp(benchmark::State& state)
{
    models::setThreads(1);
    const bool amp = state.range(1) != 0;
    Dqn dqn(kBenchObservation, kBenchActions, benchDqnOptions(static_cast<int>(state.range(0)), amp));
    std::mt19937_64 rng(1);
    fillDqn(dqn, rng);
    for (int i = 0; i < 20; ++i) dqn.update();
    double loss = 0.0;
    for (auto _ : state) loss = dqn.update().loss;
    benchmark::DoNotOptimize(loss);
    state.SetItemsProcessed(state.iterations());
    state.SetLabel(amp ? "bf16 autocast" : "fp32");
}
BENCHMARK(BM_DqnUpdateAmp)->Args({32, 0})->Args({32, 1})->Args({256, 0})->Args({256, 1})->UseRealTime()->MinTime(0.5);

PpoOptions benchPpoOptions(bool amp)
{
    PpoOptions o;
    o.hidden = {64, 64};
    o.seed = 6;
    if (amp) o.mixedPrecision = models::precision::MixedPrecisionConfig::for_ampere();
    return o;
}

// One PPO update (2048 steps x 10 epochs x 64 minibatch), BF16 autocast or FP32: arg amp.
void BM_PpoUpdateAmp(benchmark::State& state)
{
    models::setThreads(1);
    const bool amp = state.range(0) != 0;
    const PpoOptions o = benchPpoOptions(amp);
    Ppo ppo(kBenchObservation, kBenchActions, o);
    std::mt19937_64 rng(2);
    std::vector<float> obs = randomObservation(rng);
    for (auto _ : state) {
        state.PauseTiming();
        foxhunt::detail::fillRollout(ppo, rng, obs);
        state.ResumeTiming();
        benchmark::DoNotOptimize(ppo.update(obs).policyLoss);
    }
    state.SetItemsProcessed(state.iterations() * o.nSteps * o.nEpochs);
    state.SetLabel(amp ? "bf16 autocast" : "fp32");
}
BENCHMARK(BM_PpoUpdateAmp)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

// Decision latency (batch 1) through the FP32 network or its INT8 copy: args agent (0 DQN, 1 PPO), int8.
void BM_AgentInt8Latency(benchmark::State& state)
{
    models::setThreads(1);
    const bool ppoAgent = state.range(0) == 1;
    const bool int8 = state.range(1) != 0;
    Dqn dqn(kBenchObservation, kBenchActions, benchDqnOptions(32));
    Ppo ppo(kBenchObservation, kBenchActions, benchPpoOptions(false));
    std::mt19937_64 rng(3);
    const std::vector<float> obs = randomObservation(rng);
    const auto decide = [&] {
        if (ppoAgent) return int8 ? ppo.int8GreedyAction(obs) : ppo.greedyAction(obs);
        return int8 ? dqn.int8GreedyAction(obs) : dqn.greedyAction(obs);
    };
    decide(); // builds the INT8 copy outside the timed loop
    std::vector<double> micros;
    micros.reserve(1 << 16);
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(decide());
        if (micros.size() < micros.capacity())
            micros.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(micros.begin(), micros.end());
    if (!micros.empty()) {
        state.counters["p50_us"] = micros[micros.size() / 2];
        state.counters["p99_us"] = micros[micros.size() * 99 / 100];
    }
    state.SetItemsProcessed(state.iterations());
    state.SetLabel(std::string(ppoAgent ? "ppo 64x64" : "dqn 256x256") + (int8 ? " int8" : " fp32"));
}
BENCHMARK(BM_AgentInt8Latency)->Args({0, 0})->Args({0, 1})->Args({1, 0})->Args({1, 1})->MinTime(0.3);

void BM_PpoUpdate(benchmark::State& state)
{
    models::setThreads(1);
    PpoOptions o;
    o.hidden = {64, 64};
    o.seed = 6;
    Ppo ppo(kBenchObservation, kBenchActions, o);
    std::mt19937_64 rng(2);
    double updateMs = 0.0;
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<float> obs = randomObservation(rng);
        foxhunt::detail::fillRollout(ppo, rng, obs);
        state.ResumeTiming();
        updateMs = ppo.update(obs).stepTimeMs;
    }
    state.SetItemsProcessed(state.iterations() * o.nSteps * o.nEpochs);
    state.counters["update_ms"] = updateMs;
}
BENCHMARK(BM_PpoUpdate)->Unit(benchmark::kMillisecond)->Iterations(3);

// Latency of one decision: observation in, action out, batch 1.
void BM_InferenceLatency(benchmark::State& state)
{
    models::setThreads(1);
    const bool ppoAgent = state.range(0) == 1;
    Dqn dqn(kBenchObservation, kBenchActions, benchDqnOptions(32));
    PpoOptions po;
    Ppo ppo(kBenchObservation, kBenchActions, po);
    std::mt19937_64 rng(3);
    const std::vector<float> obs = randomObservation(rng);
    std::vector<double> micros;
    micros.reserve(1 << 16);
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(ppoAgent ? ppo.greedyAction(obs) : dqn.greedyAction(obs));
        if (micros.size() < micros.capacity())
            micros.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(micros.begin(), micros.end());
    if (!micros.empty()) {
        state.counters["p50_us"] = micros[micros.size() / 2];
        state.counters["p99_us"] = micros[micros.size() * 99 / 100];
    }
    state.SetItemsProcessed(state.iterations());
    state.SetLabel(ppoAgent ? "ppo 64x64" : "dqn 256x256");
}
BENCHMARK(BM_InferenceLatency)->Arg(0)->Arg(1);

} // namespace
