// SPDX-License-Identifier: GPL-3.0-or-later
// Precision benchmarks: FP32 vs AMP (BF16 autocast on the CPU) train step per forecaster, FP32 vs
// INT8 inference latency, the INT8 validation-loss degradation of a briefly trained ForecasterTrainer,
// and the cost of one INT8 refresh of each model at the session's default sizes. Every bytes counter
// is the one definition QuantizeReport and the validation "int8" document use: fp32_bytes = all
// parameters and buffers of the FP32 model, int8_bytes = the same of the INT8 copy, bytes_ratio =
// int8_bytes / fp32_bytes. One intra-op thread.

#include "engine/bench/cyclic_series.h"
#include "engine/forecast/forecast_net.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/replay/features.h"
#include "engine/session/training_session.h"
#include "models/agents/actor_critic.h"
#include "models/agents/q_network.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/precision/autocast.h"
#include "models/precision/loss_scaler.h"
#include "models/precision/quantize.h"
#include "models/runtime.h"
#include "models/quantile_loss.h"
#include "models/tft/tft.h"

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace {

namespace mm = foxhunt::models::mamba2;
namespace mt = foxhunt::models::tft;
namespace mp = foxhunt::models::precision;

const std::vector<double> kQuantiles{0.1, 0.5, 0.9};
constexpr int64_t kHorizon = 5, kFeatures = 18, kKnown = 2, kPast = 60;

struct Net {
    std::shared_ptr<torch::nn::Module> module;
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> forward;
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> forwardInt8;
    mp::QuantizeReport report;
};

// model 0: Mamba-2 (d_model 128, 2 layers); 1: TFT (hidden 32, 4 heads).
Net makeNet(int64_t model, bool int8)
{
    torch::manual_seed(0);
    Net n;
    if (model == 0) {
        mm::Mamba2Forecaster m(
            mm::Mamba2ForecasterOptions(kFeatures, kHorizon, 3).known_features(kKnown).d_model(128).head_dim(32));
        n.module = m.ptr();
        n.forward = [m](const torch::Tensor& x, const torch::Tensor& k) mutable { return m->forward(x, k); };
        if (int8) {
            m->eval();
            auto q = mp::quantize_for_inference(m, {}, &n.report);
            n.forwardInt8 = [q](const torch::Tensor& x, const torch::Tensor& k) mutable { return q->forward(x, k); };
        }
    } else {
        mt::TemporalFusionTransformer t(mt::TftOptions(kFeatures, kKnown, kHorizon, 3).hidden_size(32).n_heads(4));
        n.module = t.ptr();
        n.forward = [t](const torch::Tensor& x, const torch::Tensor& k) mutable { return t->forward(x, k).quantiles; };
        if (int8) {
            t->eval();
            auto q = mp::quantize_for_inference(t, {}, &n.report);
            n.forwardInt8 = [q](const torch::Tensor& x, const torch::Tensor& k) mutable {
                return q->forward(x, k).quantiles;
            };
        }
    }
    return n;
}

// Args: model (0 Mamba-2, 1 TFT), amp (0 FP32, 1 BF16 autocast). Batch 16, 60 bars.
void BM_PrecisionTrainStep(benchmark::State& state)
{
    torch::set_num_threads(1);
    auto net = makeNet(state.range(0), /*int8=*/false);
    const auto cfg = state.range(1) ? mp::MixedPrecisionConfig::for_ampere() : mp::MixedPrecisionConfig::disabled();
    torch::optim::AdamW opt(net.module->parameters(), torch::optim::AdamWOptions(1e-4));
    mp::LossScaler scaler(cfg);
    auto x = torch::randn({16, kPast, kFeatures});
    auto k = torch::randn({16, kHorizon, kKnown});
    auto y = torch::randn({16, kHorizon});
    for (auto _ : state) {
        opt.zero_grad();
        torch::Tensor pred;
        {
            mp::AutocastGuard guard(cfg, c10::DeviceType::CPU);
            pred = net.forward(x, k);
        }
        auto loss = foxhunt::models::quantile_loss(pred.to(torch::kFloat), y, kQuantiles);
        scaler.scale(loss).backward();
        scaler.unscale(opt);
        scaler.step(opt);
        scaler.update();
        benchmark::DoNotOptimize(loss);
    }
    state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_PrecisionTrainStep)
    ->ArgNames({"model", "amp"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

// The Mamba-2 forecaster's train step at the seed sizes (the model preset and data of
// BM_PrecisionAuto/model:0/size:1), FP32 and BF16 autocast ForecasterTrainers stepped in turn, so
// that both see the same machine load: one iteration is one FP32 step and one BF16 step. Counters:
// median step times, the median of the per-pair ratios (bf16_over_fp32), and the largest loss gap
// |BF16 - FP32| over the pairs (both start from the same weights and draw the same batches).
void BM_Mamba2AmpStepPair(benchmark::State& state)
{
    foxhunt::models::setThreads(1);
    foxhunt::SessionConfig sc = foxhunt::SessionConfig::defaults();
    foxhunt::applyModelPreset(sc, foxhunt::ModelPreset::Seed);
    foxhunt::ForecasterConfig c = foxhunt::effectiveConfig(sc).mamba2;
    foxhunt::CyclicSeriesOptions so;
    so.scaledReturns = 16;
    const foxhunt::ForecastData data = foxhunt::cyclicSeries(1600, so);
    const foxhunt::IndexRange train{c.windowing.pastLength, 1200};
    const foxhunt::IndexRange validation{1200, 1600 - c.windowing.horizon};
    c.mixedPrecision = mp::MixedPrecisionConfig::disabled();
    foxhunt::ForecasterTrainer fp32(c, data, train, validation);
    c.mixedPrecision = mp::MixedPrecisionConfig::for_ampere();
    foxhunt::ForecasterTrainer bf16(c, data, train, validation);
    for (int i = 0; i < 2; ++i) {
        fp32.trainStep();
        bf16.trainStep();
    }
    std::vector<double> fp32Ms, bf16Ms, ratios;
    double lossGap = 0.0;
    for (auto _ : state) {
        const auto a = fp32.trainStep();
        const auto b = bf16.trainStep();
        fp32Ms.push_back(a.stepSeconds * 1e3);
        bf16Ms.push_back(b.stepSeconds * 1e3);
        ratios.push_back(b.stepSeconds / a.stepSeconds);
        lossGap = std::max(lossGap, std::abs(b.loss - a.loss));
    }
    const auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    state.counters["fp32_step_ms"] = median(fp32Ms);
    state.counters["bf16_step_ms"] = median(bf16Ms);
    state.counters["bf16_over_fp32"] = median(ratios);
    state.counters["max_loss_gap"] = lossGap;
}
BENCHMARK(BM_Mamba2AmpStepPair)->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();

// Args: model, int8 (0 FP32, 1 INT8), batch.
void BM_PrecisionInference(benchmark::State& state)
{
    torch::set_num_threads(1);
    const bool int8 = state.range(1) != 0;
    auto net = makeNet(state.range(0), int8);
    net.module->eval();
    const int64_t batch = state.range(2);
    auto x = torch::randn({batch, kPast, kFeatures});
    auto k = torch::randn({batch, kHorizon, kKnown});
    torch::NoGradGuard ng;
    auto& fn = int8 ? net.forwardInt8 : net.forward;
    for (auto _ : state) benchmark::DoNotOptimize(fn(x, k));
    state.SetItemsProcessed(state.iterations() * batch);
    state.counters["fp32_bytes"] = static_cast<double>(mp::module_bytes(*net.module));
    if (int8) {
        state.counters["int8_bytes"] = static_cast<double>(net.report.int8_bytes);
        state.counters["bytes_ratio"] = net.report.bytes_ratio();
    }
}
BENCHMARK(BM_PrecisionInference)
    ->ArgNames({"model", "int8", "batch"})
    ->ArgsProduct({{0, 1}, {0, 1}, {1, 32}})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.2);

foxhunt::ForecastData syntheticSeries(std::size_t rows)
{
    foxhunt::CyclicSeriesOptions o;
    o.period = 40;
    o.autoregression = 0.5;
    o.seed = 3;
    o.staticFeatures = {};
    return foxhunt::cyclicSeries(rows, o);
}

// Arg: kind (0 Mamba-2, 1 TFT). Trains 30 steps on a planted series, then times evaluateInt8();
// the counters are its results (degradation as a fraction of the FP32 validation loss).
void BM_ForecasterInt8Evaluation(benchmark::State& state)
{
    torch::set_num_threads(1);
    foxhunt::ForecasterConfig c;
    c.kind = state.range(0) == 0 ? foxhunt::ForecasterKind::Mamba2 : foxhunt::ForecasterKind::Tft;
    c.windowing = {/*pastLength=*/32, /*horizon=*/5};
    c.batchSize = 32;
    c.dropout = 0.0;
    foxhunt::ForecasterTrainer trainer(c, syntheticSeries(1200), {31, 900}, {900, 1190});
    for (int i = 0; i < 30; ++i) trainer.trainStep();
    foxhunt::Int8Evaluation e;
    foxhunt::Int8EvaluationOptions opts;
    opts.latencyRepeats = 20;
    for (auto _ : state) e = trainer.evaluateInt8(opts);
    state.SetItemsProcessed(state.iterations() * 290);
    state.counters["loss_degradation"] = e.degradation;
    state.counters["fp32_bytes"] = static_cast<double>(e.fp32Bytes);
    state.counters["int8_bytes"] = static_cast<double>(e.int8Bytes);
    state.counters["bytes_ratio"] = e.bytesRatio;
    state.counters["fp32_b1_p50_us"] = e.fp32Batch1.p50;
    state.counters["int8_b1_p50_us"] = e.int8Batch1.p50;
    state.counters["fp32_b32_p50_us"] = e.fp32Batch32.p50;
    state.counters["int8_b32_p50_us"] = e.int8Batch32.p50;
}
BENCHMARK(BM_ForecasterInt8Evaluation)->ArgName("kind")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

// Arg: model (0 DQN, 1 PPO, 2 Mamba-2, 3 TFT) at SessionConfig::defaults() sizes with the session's
// inputs (agents: one feature row + position + PnL; forecasters: 5 observed + 4 known features).
// Times one refresh of the INT8 copy (deep copy + quantize, dynamic ranges); the counters are its footprint.
void BM_Int8RefreshDefaultSizes(benchmark::State& state)
{
    torch::set_num_threads(1);
    torch::manual_seed(0);
    const foxhunt::SessionConfig d = foxhunt::SessionConfig::defaults();
    const int64_t obs = d.env.window * static_cast<int64_t>(foxhunt::kFeatureCount) + 2;
    const int64_t actions = 2 * d.env.maxContracts + 1;
    constexpr int64_t observed = 5, known = 4;
    auto widths = [](const std::vector<int>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
    const auto sessionShape = [](const foxhunt::ForecasterConfig& c) {
        return foxhunt::detail::ForecastNetShape{.inputs = observed + known,
                                                 .known = known,
                                                 .statics = 0,
                                                 .horizon = static_cast<int64_t>(c.windowing.horizon),
                                                 .quantiles = static_cast<int64_t>(c.quantiles.size())};
    };
    std::function<mp::QuantizeReport()> refresh;
    if (state.range(0) == 0) {
        foxhunt::models::QNetwork n(
            foxhunt::models::QNetworkOptions(obs, actions).hidden(widths(d.dqn.hidden)).dueling(d.dqn.dueling));
        refresh = [n] {
            mp::QuantizeReport r;
            mp::quantize_for_inference(n, {}, &r);
            return r;
        };
    } else if (state.range(0) == 1) {
        foxhunt::models::ActorCritic n(
            foxhunt::models::ActorCriticOptions(obs, actions).hidden(widths(d.ppo.hidden)).shared(d.ppo.sharedNetwork));
        refresh = [n] {
            mp::QuantizeReport r;
            mp::quantize_for_inference(n, {}, &r);
            return r;
        };
    } else if (state.range(0) == 2) {
        const foxhunt::ForecasterConfig& c = d.mamba2;
        mm::Mamba2Forecaster n(foxhunt::detail::mamba2Options(c, sessionShape(c)));
        n->eval();
        refresh = [n] {
            mp::QuantizeReport r;
            mp::quantize_for_inference(n, {}, &r);
            return r;
        };
    } else {
        const foxhunt::ForecasterConfig& c = d.tft;
        mt::TemporalFusionTransformer n(foxhunt::detail::tftOptions(c, sessionShape(c)));
        n->eval();
        refresh = [n] {
            mp::QuantizeReport r;
            mp::quantize_for_inference(n, {}, &r);
            return r;
        };
    }
    mp::QuantizeReport report;
    for (auto _ : state) report = refresh();
    state.SetItemsProcessed(state.iterations());
    state.counters["fp32_bytes"] = static_cast<double>(report.float_bytes);
    state.counters["int8_bytes"] = static_cast<double>(report.int8_bytes);
    state.counters["bytes_ratio"] = report.bytes_ratio();
}
BENCHMARK(BM_Int8RefreshDefaultSizes)->ArgName("model")->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->MinTime(0.2);

} // namespace
