// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/precision/int8_evaluation_json.h"

#include <nlohmann/json.hpp>

namespace foxhunt {

nlohmann::json toJson(const LatencyPercentiles& latency)
{
    return {{"p50_ms", latency.p50 / 1000.0},
            {"p95_ms", latency.p95 / 1000.0},
            {"p99_ms", latency.p99 / 1000.0},
            {"count", latency.count}};
}

nlohmann::json toJson(const Int8Evaluation& e)
{
    nlohmann::json kernels = nlohmann::json::array();
    for (const Int8LayerKernel& k : e.kernels) {
        nlohmann::json timings = nlohmann::json::object();
        for (const Int8KernelTime& t : k.timings) timings[t.backend] = {{"us", t.micros}, {"error", t.relativeError}};
        kernels.push_back({{"layer", k.layer},
                           {"shape", k.shape},
                           {"backend", k.backend},
                           {"cached", k.cached},
                           {"timings", timings}});
    }
    nlohmann::json j = {{"fp32_loss", e.fp32Loss},
                        {"int8_loss", e.int8Loss},
                        {"degradation", e.degradation},
                        {"fp32_bytes", e.fp32Bytes},
                        {"int8_bytes", e.int8Bytes},
                        {"bytes_ratio", e.bytesRatio},
                        {"quantized_layers", e.quantizedLayers},
                        {"backend", e.backend},
                        {"static_activations", e.staticActivations},
                        {"calibration_bars", e.calibrationSamples},
                        {"validation_samples", e.evaluatedSamples},
                        {"serving_batch", e.servingBatch},
                        {"fp32_serving_bytes", e.fp32ServingBytes},
                        {"int8_serving_bytes", e.int8ServingBytes},
                        {"throughput",
                         {{"fp32_b32", Int8Evaluation::throughput(e.fp32Batch32, e.servingBatch)},
                          {"int8_b32", Int8Evaluation::throughput(e.int8Batch32, e.servingBatch)}}},
                        {"max_degradation", e.maxDegradation},
                        {"served", e.served},
                        {"verdict", e.verdict},
                        {"kernel_mode", e.kernelMode},
                        {"measured_shapes", e.measuredShapes},
                        {"cached_shapes", e.cachedShapes},
                        {"kernels", kernels},
                        {"latency",
                         {{"fp32_b1", toJson(e.fp32Batch1)},
                          {"int8_b1", toJson(e.int8Batch1)},
                          {"fp32_b32", toJson(e.fp32Batch32)},
                          {"int8_b32", toJson(e.int8Batch32)}}}};
    if (e.actionAgreement) j["action_agreement"] = *e.actionAgreement;
    return j;
}

} // namespace foxhunt
