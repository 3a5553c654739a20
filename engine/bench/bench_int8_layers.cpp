// SPDX-License-Identifier: GPL-3.0-or-later
// Per-layer INT8 inference cost: one models::precision::Int8Linear call against a plain FP32
// torch::nn::Linear of the same shape, at the (in, out) shapes of our four models, 512x512 and
// 1024x1024, batch 1 and 32, one intra-op thread, no autograd. The "batch" arg is the rows of one
// call: a forecaster's layers run on every bar of a window, so for them batch 1 and 32 are 60 and
// 1920 rows (1 and 32 windows of 60 bars, as in BM_PrecisionInference).
// tests/bench/int8_reference.py times the same shapes and batches through PyTorch's
// quantize_dynamic, so the INT8/FP32 ratio measured here has a same-machine reference.
//
// Counters: rel_err = |y - y_fp32| / |y_fp32| over one output (0 for fp32; shows whether a
// backend saturates), weight_bytes = bytes the layer stores (FP32 weight and bias, or the int8
// buffers). The label names the layer of that shape and the backend.
//
// BM_Int8Forecaster: the same three backends through a whole forecaster (quantize_for_inference
// with QuantizeOptions::backend), at the session's default sizes and at BM_PrecisionInference's,
// so that a per-layer gain can be checked against what a model's inference gains.
//
// BM_FusedSelection: the TFT's encoder variable selection (18 variables) at the session's and the
// seed's widths and rows, its kernels timed as an int8 plan times them (time_block_kernels():
// medians of 5-50 calls): the float model layer by layer and fused, and its int8 copy layer by
// layer (dequantized weights), fused in float, fused in int8 (AVX512-VNNI only) and, calibrated on
// N(0, 1) inputs, as tables over the calibrated range (where the table is lighter than the GRNs).

#include "models/mamba2/mamba2_forecaster.h"
#include "models/precision/int8_linear.h"
#include "models/precision/quantize.h"
#include "models/tft/tft.h"
#include "models/tft/variable_selection.h"

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string>

namespace {

namespace mp = foxhunt::models::precision;

struct LayerShape {
    const char* layer;
    int64_t in;
    int64_t out;
    // A forecaster's layer: it runs on every bar of a window, so one call sees batch x 60 rows.
    bool perBar = false;
};

// Bars per forecaster window (ForecastWindowing::pastLength).
constexpr int64_t kWindowBars = 60;

// Session defaults (SessionConfig::defaults(): DqnOptions/PpoOptions hidden {64, 64} over an
// observation of 1 x 9 features + 2 position values; ForecasterConfig: Mamba-2 d_model 32,
// expand 2, d_state 16, head_dim 16; TFT hidden 16, 4 heads), the agent benchmarks' DQN
// (32 -> 256 -> 256 -> 3, BM_DqnUpdate) and the forecaster benchmarks' Mamba-2 (d_model 128,
// head_dim 32, BM_PrecisionInference); the 512 and 1024 squares show where the int8 kernels
// start to pay. Keep in step with SHAPES in tests/bench/int8_reference.py.
constexpr std::array kShapes{
    LayerShape{"dqn fc1 (session)", 11, 64},
    LayerShape{"dqn fc2 (session)", 64, 64},
    LayerShape{"dqn q_head (session)", 64, 3},
    LayerShape{"dqn fc1 (bench)", 32, 256},
    LayerShape{"dqn fc2 (bench)", 256, 256},
    LayerShape{"tft grn fc1/fc2 (session)", 16, 16, /*perBar=*/true},
    LayerShape{"tft grn glu fc (session)", 16, 32, /*perBar=*/true},
    LayerShape{"mamba2 in_proj (session)", 32, 164, /*perBar=*/true},
    LayerShape{"mamba2 out_proj (session)", 64, 32, /*perBar=*/true},
    LayerShape{"mamba2 in_proj (bench)", 128, 552, /*perBar=*/true},
    LayerShape{"mamba2 out_proj (bench)", 256, 128, /*perBar=*/true},
    LayerShape{"square 512", 512, 512},
    LayerShape{"square 1024", 1024, 1024},
};

enum Backend : int64_t { kFp32 = 0, kInt8Dequantize = 1, kInt8OneDnn = 2 };

const char* backendName(int64_t backend)
{
    switch (backend) {
    case kFp32: return "fp32";
    case kInt8Dequantize: return "int8-dequantize";
    case kInt8OneDnn: return "int8-onednn";
    }
    return "unknown";
}

double relativeError(const torch::Tensor& y, const torch::Tensor& reference)
{
    const double norm = reference.norm().item<double>();
    return norm > 0.0 ? (y - reference).norm().item<double>() / norm : 0.0;
}

// Which of our layers has this shape ("" for none).
std::string layerName(int64_t in, int64_t out)
{
    const auto it = std::find_if(kShapes.begin(), kShapes.end(),
                                 [in, out](const LayerShape& s) { return s.in == in && s.out == out; });
    return it != kShapes.end() ? it->layer : "";
}

// Args: in, out, batch (rows), backend (0 fp32, 1 int8 dequantize, 2 int8 oneDNN).
void BM_Int8Linear(benchmark::State& state)
{
    torch::set_num_threads(1);
    const int64_t in = state.range(0);
    const int64_t out = state.range(1);
    const int64_t batch = state.range(2);
    const int64_t backend = state.range(3);
    if (backend == kInt8OneDnn && !mp::onednn_quantized_available()) {
        state.SkipWithError("this LibTorch has no oneDNN quantized engine");
        return;
    }
    torch::NoGradGuard noGrad;
    torch::manual_seed(7);
    torch::nn::Linear fp32(in, out);
    fp32->eval();
    const torch::Tensor x = torch::randn({batch, in});
    const torch::Tensor reference = fp32(x);

    std::function<torch::Tensor(const torch::Tensor&)> forward;
    double weightBytes = static_cast<double>((fp32->weight.numel() + fp32->bias.numel()) * 4);
    if (backend == kFp32) {
        forward = [fp32](const torch::Tensor& v) mutable { return fp32(v); };
    } else {
        mp::Int8Linear int8(fp32->weight, fp32->bias,
                            mp::Int8LinearOptions().backend(backend == kInt8OneDnn ? mp::Int8Backend::OneDnn
                                                                                   : mp::Int8Backend::Dequantize));
        int8->eval();
        weightBytes = static_cast<double>(int8->weight_bytes());
        forward = [int8](const torch::Tensor& v) mutable { return int8(v); };
    }
    // The first call fills the layer's caches (decoded scales, oneDNN prepack): not timed.
    const double err = backend == kFp32 ? 0.0 : relativeError(forward(x), reference);
    for (auto _ : state) benchmark::DoNotOptimize(forward(x));
    state.SetItemsProcessed(state.iterations() * batch);
    state.SetLabel(layerName(in, out) + " " + backendName(backend));
    state.counters["rel_err"] = err;
    state.counters["weight_bytes"] = weightBytes;
}

void int8LinearArgs(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"in", "out", "batch", "backend"});
    for (const LayerShape& s : kShapes) {
        const int64_t rowsPerSample = s.perBar ? kWindowBars : 1;
        for (int64_t batch : {rowsPerSample, 32 * rowsPerSample})
            for (int64_t backend : {kFp32, kInt8Dequantize, kInt8OneDnn}) b->Args({s.in, s.out, batch, backend});
    }
}
BENCHMARK(BM_Int8Linear)->Apply(int8LinearArgs)->Unit(benchmark::kMicrosecond)->MinTime(0.05);

namespace mm = foxhunt::models::mamba2;
namespace mt = foxhunt::models::tft;

constexpr int64_t kFeatures = 18, kKnown = 2, kHorizon = 5, kQuantiles = 3;

using ForecastFn = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)>;

// model 0 Mamba-2, 1 TFT; size 0: the session's defaults (Mamba-2 d_model 32, head_dim 16; TFT
// hidden 16), 1: BM_PrecisionInference's (Mamba-2 d_model 128, head_dim 32; TFT hidden 32).
// Returns the FP32 forward, or the forward of an int8 copy through `backend`.
ForecastFn makeForecaster(int64_t model, int64_t size, int64_t backend)
{
    torch::manual_seed(0);
    mp::QuantizeOptions q;
    q.backend = backend == kInt8OneDnn ? mp::Int8Backend::OneDnn : mp::Int8Backend::Dequantize;
    if (model == 0) {
        auto o = mm::Mamba2ForecasterOptions(kFeatures, kHorizon, kQuantiles).known_features(kKnown);
        if (size == 1) o.d_model(128).head_dim(32);
        mm::Mamba2Forecaster m(o);
        m->eval();
        if (backend != kFp32) m = mp::quantize_for_inference(m, q);
        return [m](const torch::Tensor& x, const torch::Tensor& k) mutable { return m->forward(x, k); };
    }
    mt::TemporalFusionTransformer t(
        mt::TftOptions(kFeatures, kKnown, kHorizon, kQuantiles).hidden_size(size == 1 ? 32 : 16).n_heads(4));
    t->eval();
    if (backend != kFp32) t = mp::quantize_for_inference(t, q);
    return [t](const torch::Tensor& x, const torch::Tensor& k) mutable { return t->forward(x, k).quantiles; };
}

// Args: model (0 Mamba-2, 1 TFT), size (0 session defaults, 1 BM_PrecisionInference's), backend,
// batch (windows of 60 bars).
void BM_Int8Forecaster(benchmark::State& state)
{
    torch::set_num_threads(1);
    const int64_t backend = state.range(2);
    const int64_t batch = state.range(3);
    if (backend == kInt8OneDnn && !mp::onednn_quantized_available()) {
        state.SkipWithError("this LibTorch has no oneDNN quantized engine");
        return;
    }
    torch::NoGradGuard noGrad;
    torch::manual_seed(9);
    const torch::Tensor x = torch::randn({batch, kWindowBars, kFeatures});
    const torch::Tensor k = torch::randn({batch, kHorizon, kKnown});
    const torch::Tensor reference = makeForecaster(state.range(0), state.range(1), kFp32)(x, k);
    ForecastFn forward = makeForecaster(state.range(0), state.range(1), backend);
    const double err = backend == kFp32 ? 0.0 : relativeError(forward(x, k), reference);
    for (auto _ : state) benchmark::DoNotOptimize(forward(x, k));
    state.SetItemsProcessed(state.iterations() * batch);
    state.SetLabel(std::string(state.range(0) == 0 ? "mamba2" : "tft") + (state.range(1) == 0 ? " session" : " bench") +
                   " " + backendName(backend));
    state.counters["rel_err"] = err;
}
BENCHMARK(BM_Int8Forecaster)
    ->ArgNames({"model", "size", "backend", "batch"})
    ->ArgsProduct({{0, 1}, {0, 1}, {kFp32, kInt8Dequantize, kInt8OneDnn}, {1, 32}})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.1);

// Args: hidden (16 session, 32 seed), rows (bars x windows: 60 / 1,920 session, 100 / 3,200 seed).
void BM_FusedSelection(benchmark::State& state)
{
    torch::set_num_threads(1);
    const int64_t hidden = state.range(0);
    const int64_t rows = state.range(1);
    torch::manual_seed(11);
    mt::VariableSelectionNetwork vsn(mt::VariableSelectionNetworkOptions(kFeatures, hidden).context_size(hidden));
    vsn->eval();
    mp::QuantizeOptions q;
    q.backend = mp::Int8Backend::Dequantize;
    q.calibrate = [&](torch::nn::Module& m) {
        m.as<mt::VariableSelectionNetworkImpl>()->forward(torch::randn({rows, kFeatures}),
                                                          torch::randn({rows, hidden}));
    };
    auto int8 = mp::quantize_for_inference(vsn, q);
    for (auto _ : state) {
        for (const auto& t : vsn->time_block_kernels(rows)) state.counters["fp32_" + t.kernel + "_us"] = t.micros;
        for (const auto& t : int8->time_block_kernels(rows)) {
            state.counters["int8_" + t.kernel + "_us"] = t.micros;
            state.counters["int8_" + t.kernel + "_err"] = t.relative_error;
        }
    }
    const double layers = state.counters["fp32_layers_us"];
    state.counters["fused_fp32_speedup"] = layers / state.counters["fp32_fused-fp32_us"];
    if (state.counters.count("int8_fused-int8_us"))
        state.counters["fused_int8_vs_fused_fp32"] = state.counters["int8_fused-int8_us"] /
                                                     state.counters["fp32_fused-fp32_us"];
    if (state.counters.count("int8_table_us"))
        state.counters["table_vs_fused_fp32"] = state.counters["int8_table_us"] / state.counters["fp32_fused-fp32_us"];
    state.counters["table_knots"] = static_cast<double>(int8->table_knots());
    state.SetLabel("tft encoder selection, hidden " + std::to_string(hidden) + ", " + std::to_string(rows) + " rows");
}
BENCHMARK(BM_FusedSelection)
    ->ArgNames({"hidden", "rows"})
    ->Args({16, 60})
    ->Args({16, 1920})
    ->Args({32, 100})
    ->Args({32, 3200})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

} // namespace
