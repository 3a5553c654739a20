// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-modelcheck: correctness checks and benchmarks of the forecasters and the precision
// layer on one device. JSON on stdout; exit status 1 when a check fails, 2 on bad arguments.
// Usage: foxhunt-modelcheck [--device cpu|cuda] [--quick]

#include "models/compat.h"
#include "models/distributed/communicator.h"
#include "models/distributed/gradient_reducer.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/memory/memory_tracker.h"
#include "models/memory/tensor_bytes.h"
#include "models/precision/autocast.h"
#include "models/precision/int8_linear.h"
#include "models/precision/loss_scaler.h"
#include "models/precision/quantize.h"
#include "models/process.h"
#include "models/quantile_loss.h"
#include "models/runtime.h"
#include "models/tft/tft.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace fm = foxhunt::models;
namespace mp = foxhunt::models::precision;

namespace {

struct Check {
    std::string name;
    bool ok = false;
    std::string detail;
};

std::string quoted(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string number(double v)
{
    if (!std::isfinite(v)) return "null";
    std::ostringstream os;
    os.precision(6);
    os << v;
    return os.str();
}

void synchronize(const torch::Device& device)
{
    if (device.is_cuda()) torch::cuda::synchronize();
}

struct Percentiles {
    double p50 = 0, p95 = 0, p99 = 0;
};

Percentiles time_us(const std::function<void()>& fn, int repeats, const torch::Device& device)
{
    fn();
    synchronize(device);
    std::vector<double> us;
    for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        synchronize(device);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    auto at = [&](double q) {
        return us[std::min(us.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(us.size()))) - 1)];
    };
    return {at(0.5), at(0.95), at(0.99)};
}

double relative_error(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(b.abs().max().item<double>(), 1e-12);
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>() / scale;
}

// The half-precision config that fits the device: FP16 with a dynamic scale on CUDA, BF16 on the CPU.
mp::MixedPrecisionConfig amp_for(const torch::Device& device)
{
    return device.is_cuda() ? mp::MixedPrecisionConfig::for_volta_turing() : mp::MixedPrecisionConfig::for_ampere();
}

Check check_scaler_rules()
{
    // GradScaler: interval 3, start 8; c = clean, i = inf.
    const std::string steps = "cciccccn";
    const std::vector<double> scales{8, 8, 4, 4, 4, 8, 8, 4};
    const std::vector<int64_t> trackers{1, 2, 0, 1, 2, 0, 1, 0};
    auto cfg = mp::MixedPrecisionConfig::for_volta_turing();
    cfg.loss_scale = 8;
    cfg.growth_interval = 3;
    mp::LossScaler scaler(cfg);
    torch::nn::Linear layer(2, 2);
    torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(0.1));
    for (size_t i = 0; i < steps.size(); ++i) {
        for (auto& p : layer->parameters()) p.mutable_grad() = torch::full_like(p, scaler.current_scale());
        if (steps[i] == 'i') layer->weight.mutable_grad().view(-1)[0] = std::numeric_limits<float>::infinity();
        if (steps[i] == 'n') layer->bias.mutable_grad()[0] = std::numeric_limits<float>::quiet_NaN();
        scaler.unscale(sgd);
        scaler.step(sgd);
        scaler.update();
        if (scaler.current_scale() != scales[i] || scaler.growth_tracker() != trackers[i])
            return {"scaler_rules", false,
                    "step " + std::to_string(i + 1) + ": scale " + number(scaler.current_scale()) + ", expected " +
                        number(scales[i])};
    }
    const bool ok = scaler.skipped_steps() == 2;
    return {"scaler_rules", ok, "skipped " + std::to_string(scaler.skipped_steps()) + " of 8 steps (expected 2)"};
}

Check check_inf_skip(const torch::Device& device)
{
    torch::nn::Linear layer(8, 4);
    layer->to(device);
    torch::optim::AdamW adam(layer->parameters(), torch::optim::AdamWOptions(1e-2));
    mp::LossScaler scaler(mp::MixedPrecisionConfig::for_volta_turing());
    auto x = torch::randn({4, 8}, device);
    auto step = [&](bool inject) {
        adam.zero_grad();
        scaler.scale(layer(x).pow(2).mean()).backward();
        if (inject) {
            torch::NoGradGuard ng;
            layer->weight.mutable_grad()[0][0] = std::numeric_limits<float>::infinity();
        }
        scaler.unscale(adam);
        const bool stepped = scaler.step(adam);
        scaler.update();
        return stepped;
    };
    step(false);
    auto w = layer->weight.detach().clone();
    const bool skipped = !step(true);
    const bool unchanged = torch::equal(layer->weight.detach(), w);
    return {"inf_skip", skipped && unchanged && scaler.current_scale() == 1024.0,
            std::string("skipped=") + (skipped ? "true" : "false") +
                " weights_unchanged=" + (unchanged ? "true" : "false") + " scale=" + number(scaler.current_scale())};
}

Check check_autocast_dtype(const torch::Device& device)
{
    const auto cfg = amp_for(device);
    torch::nn::Linear layer(16, 8);
    layer->to(device);
    torch::Tensor y;
    {
        mp::AutocastGuard guard(cfg, device.type());
        y = layer(torch::randn({4, 16}, device));
    }
    const auto expected = mp::autocast_scalar_type(cfg);
    const bool restored = !fm::compat::autocast_enabled(device.type());
    return {"autocast_dtype", y.scalar_type() == expected && restored,
            std::string("linear output ") + c10::toString(y.scalar_type()) + ", expected " + c10::toString(expected) +
                (restored ? "" : "; autocast left on")};
}

Check check_int8_roundtrip()
{
    auto w = torch::randn({64, 96}) * torch::rand({64, 1}) * 4;
    auto q = mp::quantize_per_row(w);
    auto err = (mp::dequantize_per_row(q) - w).abs();
    const auto scale = q.scale().unsqueeze(1);
    const bool ok = (err <= scale / 2 + 1e-6).all().item<bool>();
    return {"int8_roundtrip", ok, "max error / scale = " + number((err / scale).max().item<double>())};
}

// A one-rank group on the device: the collectives and the bucketed gradient reducer go through
// the backend the build picks for it (NCCL for CUDA tensors where LibTorch has it, else Gloo), and
// one rank's mean gradient is its own, bit for bit.
Check check_collectives(const torch::Device& device)
{
    namespace dist = fm::dist;
    if (!dist::available()) return {"collectives_one_rank", true, "skipped: this build has no c10d Gloo"};
    dist::RendezvousOptions o;
    o.master_port = dist::free_local_port();
    o.timeout = std::chrono::seconds(30);
    auto c = dist::Communicator::connect(o);
    const std::string backend = c->use_device(device);
    const std::string expected = device.is_cuda() && dist::nccl_available() ? "nccl" : "gloo";
    torch::manual_seed(3);
    torch::nn::Linear layer(64, 16);
    layer->to(device);
    const torch::Tensor x = torch::randn({8, 64}, device);
    layer(x).square().mean().backward();
    std::vector<torch::Tensor> own;
    for (const auto& p : layer->parameters()) {
        own.push_back(p.grad().clone());
        p.grad().zero_();
    }
    dist::GradientReducer reducer(layer->parameters(), c, /*bucket_bytes=*/1024);
    layer(x).square().mean().backward();
    const dist::ReduceTimes times = reducer.synchronize();
    double error = 0.0;
    for (std::size_t i = 0; i < own.size(); ++i)
        error = std::max(error, (layer->parameters()[i].grad() - own[i]).abs().max().item<double>());
    torch::Tensor m = torch::tensor({1.5f, -2.0f}, torch::TensorOptions().device(device));
    c->all_reduce_max_(m);
    c->broadcast_(m, 0);
    const bool values = m.device() == device && m[0].item<float>() == 1.5f && m[1].item<float>() == -2.0f;
    const bool ok = backend == expected && error == 0.0 && values && reducer.bucket_count() > 1;
    return {"collectives_one_rank", ok,
            "backend " + backend + " (expected " + expected + "), " + std::to_string(reducer.bucket_count()) +
                " buckets, " + std::to_string(times.bytes) + " gradient bytes, max gradient change " + number(error) +
                (values ? "" : ", max/broadcast changed the values")};
}

struct ModelSet {
    std::string name;
    std::shared_ptr<torch::nn::Module> module;
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> forward;
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> forward_int8;
    mp::QuantizeReport report;
};

// Seed sizes: the defaults of the engine's ForecasterConfig (F = 8 + 4 known, L = 60, H = 5, Q = 3).
constexpr int64_t kFeatures = 12, kKnown = 4, kPast = 60, kHorizon = 5, kQuantiles = 3;

std::vector<ModelSet> build_models(const torch::Device& device)
{
    std::vector<ModelSet> out;
    torch::manual_seed(1);
    fm::mamba2::Mamba2Forecaster m(
        fm::mamba2::Mamba2ForecasterOptions(kFeatures, kHorizon, kQuantiles).known_features(kKnown));
    m->to(device);
    m->eval();
    ModelSet ms{"mamba2", m.ptr(), nullptr, nullptr, {}};
    auto qm = mp::quantize_for_inference(m, {}, &ms.report);
    ms.forward = [m](const torch::Tensor& x, const torch::Tensor& k) mutable { return m->forward(x, k); };
    ms.forward_int8 = [qm](const torch::Tensor& x, const torch::Tensor& k) mutable { return qm->forward(x, k); };
    out.push_back(ms);

    fm::tft::TemporalFusionTransformer t(fm::tft::TftOptions(kFeatures, kKnown, kHorizon, kQuantiles).dropout(0.1));
    t->to(device);
    t->eval();
    ModelSet ts{"tft", t.ptr(), nullptr, nullptr, {}};
    auto qt = mp::quantize_for_inference(t, {}, &ts.report);
    ts.forward = [t](const torch::Tensor& x, const torch::Tensor& k) mutable { return t->forward(x, k).quantiles; };
    ts.forward_int8 = [qt](const torch::Tensor& x, const torch::Tensor& k) mutable {
        return qt->forward(x, k).quantiles;
    };
    out.push_back(ts);
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    fm::prepareProcess();
    std::string device_name = "cpu";
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--device" && i + 1 < argc) {
            device_name = argv[++i];
        } else if (a == "--quick") {
            quick = true;
        } else {
            std::cerr << "usage: foxhunt-modelcheck [--device cpu|cuda] [--quick]\n";
            return 2;
        }
    }
    if (device_name != "cpu" && device_name != "cuda") {
        std::cerr << "foxhunt-modelcheck: --device must be cpu or cuda, got " << device_name << "\n";
        return 2;
    }
    if (device_name == "cuda" && !torch::cuda::is_available()) {
        std::cout << "{\"ok\": false, \"error\": "
                  << quoted("CUDA requested but this LibTorch (" + fm::torchVersion() + ") sees no CUDA device")
                  << "}\n";
        return 1;
    }
    const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
    if (device.is_cpu()) fm::setThreads(1);
    fm::installCountingCpuAllocator();
    const int repeats = quick ? 10 : 50;
    const int train_steps = quick ? 5 : 20;

    std::vector<Check> checks;
    auto run_check = [&](const std::string& name, const std::function<Check()>& fn) {
        try {
            checks.push_back(fn());
        } catch (const std::exception& e) {
            checks.push_back({name, false, e.what()});
        }
    };
    run_check("scaler_rules", check_scaler_rules);
    run_check("inf_skip", [&] { return check_inf_skip(device); });
    run_check("autocast_dtype", [&] { return check_autocast_dtype(device); });
    run_check("int8_roundtrip", check_int8_roundtrip);
    run_check("collectives_one_rank", [&] { return check_collectives(device); });

    std::ostringstream bench;
    bool first_bench = true;
    try {
        torch::manual_seed(2);
        auto models = build_models(device);
        auto past32 = torch::randn({32, kPast, kFeatures}, device);
        auto known32 = torch::randn({32, kHorizon, kKnown}, device);
        auto target32 = torch::randn({32, kHorizon}, device);
        const std::vector<double> quantiles{0.1, 0.5, 0.9};
        for (auto& m : models) {
            torch::NoGradGuard ng;
            const double err = relative_error(m.forward_int8(past32, known32), m.forward(past32, known32));
            checks.push_back({"int8_close_" + m.name, err < 0.05, "max relative error " + number(err)});
        }
        if (!device.is_cpu()) {
            // The same seed gives the same weights on the CPU: forward and one AdamW step must agree
            // (up to kernel rounding; cuDNN may use TF32) with what the device computed.
            auto reference = build_models(torch::kCPU);
            for (std::size_t i = 0; i < models.size(); ++i) {
                auto step = [&](ModelSet& m, const torch::Device& on) {
                    torch::optim::AdamW opt(m.module->parameters(), torch::optim::AdamWOptions(1e-3));
                    auto out = m.forward(past32.to(on), known32.to(on));
                    fm::quantile_loss(out, target32.to(on), quantiles).backward();
                    opt.step();
                    torch::NoGradGuard ng;
                    return std::pair{out.detach().cpu(), m.forward(past32.to(on), known32.to(on)).cpu()};
                };
                const auto [before, after] = step(models[i], device);
                const auto [before_cpu, after_cpu] = step(reference[i], torch::kCPU);
                const double e0 = relative_error(before, before_cpu), e1 = relative_error(after, after_cpu);
                checks.push_back({"device_matches_cpu_" + models[i].name, e0 < 1e-2 && e1 < 1e-2,
                                  "max relative error " + number(e0) + " before, " + number(e1) + " after one step"});
            }
            models = build_models(device); // the benchmarks start from untrained weights
        }
        for (auto& m : models) {
            // Training step time, FP32 and AMP, on the same weights.
            auto train_time = [&](const mp::MixedPrecisionConfig& cfg) {
                torch::optim::AdamW opt(m.module->parameters(), torch::optim::AdamWOptions(1e-4));
                mp::LossScaler scaler(cfg);
                m.module->train();
                auto step = [&] {
                    opt.zero_grad();
                    torch::Tensor pred;
                    {
                        mp::AutocastGuard guard(cfg, device.type());
                        pred = m.forward(past32, known32);
                    }
                    auto loss = fm::quantile_loss(pred.to(torch::kFloat), target32, quantiles);
                    scaler.scale(loss).backward();
                    scaler.unscale(opt);
                    scaler.step(opt);
                    scaler.update();
                };
                auto p = time_us(step, train_steps, device);
                m.module->eval();
                return p;
            };
            const auto amp_cfg = amp_for(device);
            const auto fp32 = train_time(mp::MixedPrecisionConfig::disabled());
            const auto amp = train_time(amp_cfg);
            // On CUDA both half types: FP16 with dynamic scaling (amp_cfg) and BF16 without.
            const auto bf16 = device.is_cuda() ? train_time(mp::MixedPrecisionConfig::for_ampere()) : amp;
            // Exact bytes after one AdamW step; then the activation peak of one FP32 forward + backward
            // with gradients zeroed in place (so backward allocates no new gradient buffers).
            std::size_t grad_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, allocator_peak = 0;
            {
                torch::optim::AdamW opt(m.module->parameters(), torch::optim::AdamWOptions(1e-4));
                m.module->train();
                opt.zero_grad();
                fm::quantile_loss(m.forward(past32, known32), target32, quantiles).backward();
                opt.step();
                for (auto& p : m.module->parameters())
                    if (p.grad().defined()) p.grad().zero_();
                fm::PeakMemoryScope scope(device.is_cuda() ? fm::MemoryDevice::Cuda : fm::MemoryDevice::Cpu);
                fm::quantile_loss(m.forward(past32, known32), target32, quantiles).backward();
                activation_bytes = scope.peakAboveStart();
                // Everything the device held at the step's peak (weights, grads, AdamW state, activations).
                if (device.is_cuda()) allocator_peak = fm::peakCudaBytes();
                grad_bytes = fm::gradient_bytes(*m.module);
                optimizer_bytes = fm::optimizer_state_bytes(opt);
                m.module->eval();
            }
            torch::NoGradGuard ng;
            auto lat = [&](bool int8, int64_t batch) {
                auto x = past32.narrow(0, 0, batch);
                auto k = known32.narrow(0, 0, batch);
                return time_us([&] { int8 ? m.forward_int8(x, k) : m.forward(x, k); }, repeats, device);
            };
            const auto f1 = lat(false, 1), q1 = lat(true, 1), f32 = lat(false, 32), q32 = lat(true, 32);
            bench << (first_bench ? "" : ",\n    ") << "{\"model\": " << quoted(m.name)
                  << ", \"train_step_us\": {\"fp32\": " << number(fp32.p50) << ", \"amp\": " << number(amp.p50)
                  << ", \"amp_dtype\": " << quoted(mp::to_string(amp_cfg.dtype)) << ", \"bf16\": " << number(bf16.p50)
                  << "}, \"ratios\": {\"amp_over_fp32\": " << number(amp.p50 / fp32.p50)
                  << ", \"bf16_over_fp32\": " << number(bf16.p50 / fp32.p50)
                  << ", \"int8_over_fp32_b32\": " << number(q32.p50 / f32.p50) << "}"
                  << ", \"latency_us\": {\"fp32_b1\": [" << number(f1.p50) << ", " << number(f1.p95) << ", "
                  << number(f1.p99) << "], \"int8_b1\": [" << number(q1.p50) << ", " << number(q1.p95) << ", "
                  << number(q1.p99) << "], \"fp32_b32\": [" << number(f32.p50) << ", " << number(f32.p95) << ", "
                  << number(f32.p99) << "], \"int8_b32\": [" << number(q32.p50) << ", " << number(q32.p95) << ", "
                  << number(q32.p99) << "]}"
                  << ", \"weight_bytes\": {\"fp32\": " << m.report.float_bytes << ", \"int8\": " << m.report.int8_bytes
                  << ", \"ratio\": "
                  << number(static_cast<double>(m.report.int8_bytes) / static_cast<double>(m.report.float_bytes))
                  << "}, \"int8_layers\": " << (m.report.linear_layers + m.report.lstm_layers)
                  << ", \"memory_b32\": {\"param_bytes\": " << fm::parameter_bytes(*m.module)
                  << ", \"grad_bytes\": " << grad_bytes << ", \"optimizer_bytes\": " << optimizer_bytes
                  << ", \"activation_bytes\": " << activation_bytes
                  << (device.is_cuda() ? ", \"cuda_allocator_peak_bytes\": " + std::to_string(allocator_peak)
                                       : std::string())
                  << "}}";
            first_bench = false;
        }
    } catch (const std::exception& e) {
        checks.push_back({"benchmarks", false, e.what()});
    }

    bool ok = true;
    std::cout << "{\n  \"torch\": " << quoted(fm::torchVersion()) << ",\n  \"device\": " << quoted(device_name)
              << ",\n  \"quick\": " << (quick ? "true" : "false") << ",\n  \"int8_backend\": "
              << quoted(mp::to_string(device.is_cuda() && fm::compat::kHasIntMm ? mp::Int8Backend::CudaIntMm
                                                                                : mp::Int8Backend::Dequantize))
              << ",\n  \"checks\": [";
    for (size_t i = 0; i < checks.size(); ++i) {
        ok = ok && checks[i].ok;
        std::cout << (i ? ",\n    " : "\n    ") << "{\"name\": " << quoted(checks[i].name)
                  << ", \"ok\": " << (checks[i].ok ? "true" : "false") << ", \"detail\": " << quoted(checks[i].detail)
                  << "}";
    }
    std::cout << "\n  ],\n  \"benchmarks\": [\n    " << bench.str() << "\n  ],\n  \"ok\": " << (ok ? "true" : "false")
              << "\n}\n";
    return ok ? 0 : 1;
}
