// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal helpers (LibTorch) both agents share: behind Dqn::evaluateInt8 and
// Ppo::evaluateInt8, their INT8 greedy action and their memory figures.

#include "engine/precision/int8_evaluation.h"
#include "engine/agents/agent.h"
#include "engine/agents/agent_precision.h"
#include "engine/precision/int8_serving.h"
#include "models/device.h"
#include "models/memory/memory_tracker.h"
#include "models/precision/quantize.h"

#include <torch/torch.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace foxhunt::detail {

/// Fills the four latency fields of `e`: FP32 and INT8 at batch 1 and at batch min(32, rows of `inputs`),
/// each pair timed in turns (timeLatenciesInTurns).
template <class Fp32, class Int8>
void timeInt8Latencies(Int8Evaluation& e, Fp32&& fp32, Int8&& int8, const torch::Tensor& inputs, int repeats)
{
    torch::NoGradGuard guard;
    for (const int64_t rows : {int64_t{1}, std::min<int64_t>(32, inputs.size(0))}) {
        const torch::Tensor x = inputs.narrow(0, 0, rows);
        const PairedLatencies t = timeLatenciesInTurns([&] { fp32(x); }, [&] { int8(x); }, repeats);
        (rows == 1 ? e.fp32Batch1 : e.fp32Batch32) = t.fp32;
        (rows == 1 ? e.int8Batch1 : e.int8Batch32) = t.int8;
    }
}

/// Fills the size and layer fields of `e` from a quantization of `floatModel`.
inline void describeInt8(Int8Evaluation& e, const torch::nn::Module& floatModel,
                         const models::precision::QuantizeReport& report)
{
    namespace mp = foxhunt::models::precision;
    e.quantizedLayers = static_cast<int>(report.linear_layers + report.lstm_layers);
    e.fp32Bytes = static_cast<std::size_t>(mp::module_bytes(floatModel));
    e.int8Bytes = static_cast<std::size_t>(report.int8_bytes);
    e.bytesRatio = static_cast<double>(e.int8Bytes) / static_cast<double>(std::max<std::size_t>(1, e.fp32Bytes));
}

/// Bytes `model` (an agent's FP32 network) needs to serve `batch` observations of `obsSize`
/// values: its weights plus the peak activation bytes of one inference forward after a warm-up.
template <class Holder>
std::size_t servingBytesOf(Holder model, int64_t obsSize, int batch, const torch::Device& device)
{
    torch::NoGradGuard guard;
    const torch::Tensor x = torch::zeros({std::max(1, batch), obsSize}, torch::TensorOptions().device(device));
    const auto run = [&] {
        model->forward(x);
        models::synchronize(device);
    };
    run(); // first-use packing and allocations are not the steady state
    return static_cast<std::size_t>(models::precision::module_bytes(*model)) + peakBytesOf(run, device.is_cuda());
}

/// The INT8 check both agents run: quantizes `net` (with `qopts`), plans the copy's kernels at
/// batch 1 and 32 of `obs`, scores it (`score(copy)` sets e's losses and agreement), tries once
/// more without oneDNN when the gate would refuse an automatic plan that used it, times FP32 and
/// INT8 (`logits(model, x)` is the output to time) and applies the gate. Returns the copy when the
/// gate serves it, a null holder otherwise.
template <class Holder, class Score, class Logits>
Holder checkAgentInt8(Int8Evaluation& e, const Holder& net, const models::precision::QuantizeOptions& qopts,
                      const torch::Tensor& obs, const AgentInt8Options& options, Score&& score, Logits&& logits,
                      const torch::Device& device)
{
    namespace mp = foxhunt::models::precision;
    e.maxDegradation = options.serving.maxDegradation;
    e.servingBatch = static_cast<std::size_t>(std::min<int64_t>(32, obs.size(0)));
    const torch::Tensor one = obs.narrow(0, 0, 1);
    const torch::Tensor b32 = obs.narrow(0, 0, static_cast<int64_t>(e.servingBatch));
    const auto build = [&](const std::vector<mp::Int8Backend>& exclude, mp::KernelPlan& plan) {
        mp::QuantizeReport report;
        Holder copy = mp::quantize_for_inference(net, qopts, &report);
        describeInt8(e, *net, report);
        plan = planInt8Kernels(
            *copy,
            [&] {
                logits(copy, one);
                logits(copy, b32);
            },
            options.serving, e, exclude);
        score(copy);
        return copy;
    };
    mp::KernelPlan plan;
    Holder copy = build({}, plan);
    if (e.degradation > e.maxDegradation && options.serving.backend == "auto" &&
        planUses(plan, mp::Int8Backend::OneDnn))
        copy = build({mp::Int8Backend::OneDnn}, plan);

    // Synchronised, so the timer sees the kernels and not only their launch.
    const auto fp32 = [&](const torch::Tensor& x) {
        torch::Tensor y = logits(net, x);
        models::synchronize(device);
        return y;
    };
    const auto int8 = [&](const torch::Tensor& x) {
        torch::Tensor y = logits(copy, x);
        models::synchronize(device);
        return y;
    };
    timeInt8Latencies(e, fp32, int8, obs, options.latencyRepeats);
    e.fp32ServingBytes = e.fp32Bytes + peakBytesOf([&] { fp32(b32); }, device.is_cuda());
    e.int8ServingBytes = e.int8Bytes + peakBytesOf([&] { int8(b32); }, device.is_cuda());
    gate(e);
    return e.served ? copy : Holder{nullptr};
}

/// The greedy action through an agent's INT8 copy: `fp32Greedy()` when the gate refused the copy;
/// else the copy (quantized with dynamic ranges from `net` on first use, its memory counted in
/// `cuda`) run on `observation` through `input` (a [1, obs] CPU buffer), `logits(copy, x)` its output.
template <class Holder, class Logits, class Fp32Greedy>
int int8GreedyOf(Holder& int8Net, bool refused, const Holder& net, std::span<const float> observation,
                 torch::Tensor& input, const torch::Device& device, models::CudaAttribution& cuda, Logits&& logits,
                 Fp32Greedy&& fp32Greedy, const char* who)
{
    TORCH_CHECK(static_cast<int64_t>(observation.size()) == input.size(1), who, ": observation has ",
                observation.size(), " values, expected ", input.size(1));
    if (refused) return fp32Greedy();
    torch::NoGradGuard guard;
    if (!int8Net) {
        models::CudaWorkScope onDevice(cuda, device.is_cuda());
        int8Net = models::precision::quantize_for_inference(net);
    }
    std::copy(observation.begin(), observation.end(), input.data_ptr<float>());
    const torch::Tensor out = logits(int8Net, input.to(device));
    return static_cast<int>(out.argmax(1).item<int64_t>());
}

/// An AgentUpdate with the figures every agent's update statistics have (DqnUpdateStats,
/// PpoUpdateStats), its objective `loss` and the algorithm's own `figures`.
template <class Stats>
AgentUpdate agentUpdate(const Stats& u, double loss, std::vector<std::pair<std::string_view, double>> figures)
{
    AgentUpdate a;
    a.loss = loss;
    a.gradNorm = u.gradNorm;
    a.learningRate = u.learningRate;
    a.stepTimeMs = u.stepTimeMs;
    a.lossScale = u.lossScale;
    a.skippedSteps = u.skippedSteps;
    a.allreduceMs = u.allreduceMs;
    a.figures = std::move(figures);
    return a;
}

/// Adds the bytes of an Adam optimizer's state (first and second moments, and the max of the
/// second with AMSGrad) to `memory`.
inline void addAdamStateBytes(const torch::optim::Optimizer& optimizer, ModelMemory& memory)
{
    for (const auto& item : optimizer.state()) {
        const auto& st = static_cast<const torch::optim::AdamParamState&>(*item.second);
        for (const torch::Tensor& t : {st.exp_avg(), st.exp_avg_sq(), st.max_exp_avg_sq()})
            if (t.defined()) memory.optimizerBytes += static_cast<std::size_t>(t.nbytes());
    }
}

/// An agent's memory figures that do not depend on its networks: the activation peak, where it
/// lives and its CUDA account.
inline ModelMemory agentMemory(std::size_t activationBytes, const torch::Device& device,
                               const models::CudaAttribution& cuda)
{
    ModelMemory m;
    m.activationPeakBytes = activationBytes;
    m.onCuda = device.is_cuda();
    m.cudaAllocatedBytes = cuda.residentBytes();
    m.cudaPeakBytes = cuda.peak;
    return m;
}

} // namespace foxhunt::detail
