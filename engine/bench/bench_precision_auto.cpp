// SPDX-License-Identifier: GPL-3.0-or-later
// Whole-model precision benchmarks: each model at the session-default and at the seed sizes, FP32
// against what `auto` chooses on this machine, for the train step (AMP) and for inference P95 at
// batch 1 and 32 (INT8 with kernels timed per layer). Labels name what auto chose and why.

#include "engine/bench/cyclic_series.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/precision/int8_serving.h"
#include "engine/session/amp_auto.h"
#include "engine/session/training_session.h"
#include "models/hardware/machine_probe.h"
#include "models/runtime.h"

#include <benchmark/benchmark.h>

#include <random>

namespace {

using namespace foxhunt;
namespace mp = foxhunt::models::precision;

enum Model { kMamba2, kTft, kDqn, kPpo };
enum Size { kDefault, kSeed };

// Every model at the session's defaults or at the seeds' sizes (the "seed" model preset).
SessionConfig sizedConfig(Size size)
{
    SessionConfig c = SessionConfig::defaults();
    applyModelPreset(c, size == kSeed ? ModelPreset::Seed : ModelPreset::Default);
    return effectiveConfig(c);
}

ForecasterConfig forecasterConfig(Model model, Size size)
{
    const SessionConfig c = sizedConfig(size);
    return model == kMamba2 ? c.mamba2 : c.tft;
}

void report(benchmark::State& state, const mp::AmpChoice& amp, const Int8Evaluation& e)
{
    state.counters["fp32_step_ms"] = amp.measured ? amp.fp32_ms : 0.0;
    state.counters["auto_step_ms"] = amp.measured ? (amp.config.enabled ? amp.amp_ms : amp.fp32_ms) : 0.0;
    state.counters["auto_amp"] = amp.config.enabled ? 1.0 : 0.0;
    state.counters["fp32_p95_b1_ms"] = e.fp32Batch1.p95 / 1000.0;
    state.counters["int8_p95_b1_ms"] = e.int8Batch1.p95 / 1000.0;
    state.counters["fp32_p95_b32_ms"] = e.fp32Batch32.p95 / 1000.0;
    state.counters["int8_p95_b32_ms"] = e.int8Batch32.p95 / 1000.0;
    // What a user gets with INT8 auto: the copy when served, FP32 otherwise.
    state.counters["auto_p95_b32_ms"] = (e.served ? e.int8Batch32.p95 : e.fp32Batch32.p95) / 1000.0;
    state.counters["degradation"] = e.degradation;
    state.counters["int8_served"] = e.served ? 1.0 : 0.0;
    state.counters["weight_bytes_ratio"] = e.bytesRatio;
    state.SetLabel("amp: " + amp.reason + " | int8: " + e.backend + "; " + e.verdict);
}

const mp::DeviceCapabilities& cpuCapabilities()
{
    static const mp::DeviceCapabilities caps = mp::capabilities_of(mp::ComputeDevice::Cpu);
    return caps;
}

void BM_PrecisionAuto(benchmark::State& state)
{
    models::setThreads(1);
    const auto model = static_cast<Model>(state.range(0));
    const auto size = static_cast<Size>(state.range(1));
    for (auto _ : state) {
        mp::AmpChoice amp;
        Int8Evaluation e;
        Int8Serving serving; // auto kernels, the 5 % gate, timings kept in this process
        if (model == kMamba2 || model == kTft) {
            const ForecasterConfig c = forecasterConfig(model, size);
            CyclicSeriesOptions so;
            so.scaledReturns = 16;
            const ForecastData data = cyclicSeries(1600, so);
            const IndexRange train{c.windowing.pastLength, 1200};
            const IndexRange validation{1200, 1600 - c.windowing.horizon};
            amp = foxhunt::detail::chooseAmp(cpuCapabilities(),
                                             foxhunt::detail::forecasterSteps(c, data, train, validation));
            ForecasterTrainer t(c, data, train, validation);
            for (int i = 0; i < 3; ++i) t.trainStep();
            Int8EvaluationOptions o;
            o.calibrationSamples = 256;
            o.latencyRepeats = 20;
            o.serving = serving;
            e = t.evaluateInt8(o);
        } else {
            const SessionConfig defaults = sizedConfig(size);
            constexpr int kObservation = 16, kActions = 3;
            std::mt19937_64 rng(3);
            std::uniform_real_distribution<float> u(-1.0f, 1.0f);
            const auto observation = [&] {
                std::vector<float> o(kObservation);
                for (float& x : o) x = u(rng);
                return o;
            };
            AgentInt8Options o;
            o.calibrationSamples = 256;
            o.latencyRepeats = 50;
            o.serving = serving;
            if (model == kDqn) {
                DqnOptions d = defaults.dqn;
                amp = foxhunt::detail::chooseAmp(cpuCapabilities(),
                                                 foxhunt::detail::dqnUpdateSteps(kObservation, kActions, d));
                d.bufferSize = 4096;
                d.learningStarts = 1'000'000'000;
                Dqn agent(kObservation, kActions, d);
                for (int i = 0; i < 2048; ++i)
                    agent.observe(observation(), static_cast<int>(rng() % kActions), 0.0, observation(), false, false);
                e = agent.evaluateInt8(o);
            } else {
                PpoOptions p = defaults.ppo;
                amp = foxhunt::detail::chooseAmp(cpuCapabilities(),
                                                 foxhunt::detail::ppoUpdateSteps(kObservation, kActions, p));
                Ppo agent(kObservation, kActions, p);
                std::vector<float> rows;
                for (int i = 0; i < 1024; ++i) {
                    const auto x = observation();
                    rows.insert(rows.end(), x.begin(), x.end());
                }
                e = agent.evaluateInt8(rows, o);
            }
        }
        report(state, amp, e);
    }
}
BENCHMARK(BM_PrecisionAuto)
    ->ArgNames({"model", "size"})
    ->ArgsProduct({{kMamba2, kTft, kDqn, kPpo}, {kDefault, kSeed}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
