#pragma once
// Engine-internal helpers (LibTorch) behind Dqn::evaluateInt8 and Ppo::evaluateInt8.

#include "engine/precision/int8_evaluation.h"
#include "models/precision/quantize.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace foxhunt::detail {

/// Latency of `forward(input)` over `repeats` timed calls after one warm-up call.
template <class Forward>
LatencyPercentiles timeForward(Forward&& forward, const torch::Tensor& input, int repeats)
{
    torch::NoGradGuard guard;
    forward(input); // first-use packing and allocations
    std::vector<double> micros;
    micros.reserve(static_cast<std::size_t>(std::max(1, repeats)));
    for (int r = 0; r < std::max(1, repeats); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        forward(input);
        micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    return latencyPercentiles(std::move(micros));
}

/// Fills the four latency fields of `e`: FP32 and INT8 at batch 1 and at batch min(32, rows of `inputs`).
template <class Fp32, class Int8>
void timeInt8Latencies(Int8Evaluation& e, Fp32&& fp32, Int8&& int8, const torch::Tensor& inputs, int repeats)
{
    const torch::Tensor one = inputs.narrow(0, 0, 1);
    const torch::Tensor b32 = inputs.narrow(0, 0, std::min<int64_t>(32, inputs.size(0)));
    e.fp32Batch1 = timeForward(fp32, one, repeats);
    e.int8Batch1 = timeForward(int8, one, repeats);
    e.fp32Batch32 = timeForward(fp32, b32, repeats);
    e.int8Batch32 = timeForward(int8, b32, repeats);
}

/// Fills the size, layer and backend fields of `e` from a quantization of `floatModel` that runs on `device`.
inline void describeInt8(Int8Evaluation& e, const torch::nn::Module& floatModel, const torch::nn::Module& int8Model,
                         const models::precision::QuantizeReport& report, c10::DeviceType device)
{
    namespace mp = foxhunt::models::precision;
    e.quantizedLayers = static_cast<int>(report.linear_layers + report.lstm_layers);
    e.fp32Bytes = static_cast<std::size_t>(mp::module_bytes(floatModel));
    e.int8Bytes = static_cast<std::size_t>(report.int8_bytes);
    e.bytesRatio = static_cast<double>(e.int8Bytes) / static_cast<double>(std::max<std::size_t>(1, e.fp32Bytes));
    for (const auto& item : int8Model.modules()) {
        if (const auto* l = item->as<mp::Int8LinearImpl>()) {
            // A static range runs the emulated int8 GEMM on the CPU (Int8LinearImpl::forward_static).
            e.backend = l->options.activation_absmax() ? "static-range-emulated"
                                                       : mp::to_string(l->resolved_backend(device));
            break;
        }
    }
}

} // namespace foxhunt::detail
