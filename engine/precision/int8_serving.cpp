// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/precision/int8_serving.h"
#include "engine/precision/kernel_cache.h"

#include "engine/store/kernel_timings.h"
#include "models/memory/memory_tracker.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace foxhunt::detail {

namespace mp = foxhunt::models::precision;

namespace {

std::string percent(double share)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f %%", 100.0 * share);
    return buffer;
}

std::string ratio(double r)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2fx", r);
    return buffer;
}

} // namespace

std::optional<std::vector<mp::KernelTiming>> StoredKernelTimings::find(const std::string& machine,
                                                                       const std::string& device,
                                                                       const mp::KernelShape& shape)
{
    const auto stored = m_table.find(machine, device, shape.key());
    if (!stored) return std::nullopt;
    std::vector<mp::KernelTiming> timings;
    for (const StoredKernelTiming& t : *stored)
        if (const auto backend = mp::int8_backend_from_string(t.backend))
            timings.push_back({*backend, t.micros, t.relativeError});
    if (timings.empty()) return std::nullopt;
    return timings;
}

void StoredKernelTimings::store(const std::string& machine, const std::string& device, const mp::KernelShape& shape,
                                const std::vector<mp::KernelTiming>& timings)
{
    std::vector<StoredKernelTiming> rows;
    for (const mp::KernelTiming& t : timings) rows.push_back({mp::to_string(t.backend), t.micros, t.relative_error});
    m_table.store(machine, device, shape.key(), rows);
}

mp::KernelPlan planInt8Kernels(torch::nn::Module& int8Model, const std::function<void()>& serve,
                               const Int8Serving& serving, Int8Evaluation& e,
                               const std::vector<mp::Int8Backend>& exclude)
{
    const auto backend = mp::int8_backend_from_string(serving.backend);
    if (!backend)
        throw std::invalid_argument("int8 backend '" + serving.backend +
                                    "' is not one of auto, fp32, dequantize, onednn, static, cuda-int-mm");
    mp::KernelPlanOptions options;
    options.backend = *backend;
    options.cache = serving.cache;
    options.exclude = exclude;
    const mp::KernelPlan plan = mp::plan_int8_kernels(int8Model, serve, options);

    e.kernelMode = serving.backend;
    e.measuredShapes = plan.measured_shapes;
    e.cachedShapes = plan.cached_shapes;
    e.kernels.clear();
    for (const mp::LayerKernel& k : plan.layers) {
        Int8LayerKernel l{k.layer, k.shape.key(), mp::to_string(k.backend), k.cached, {}};
        for (const mp::KernelTiming& t : k.timings)
            l.timings.push_back({mp::to_string(t.backend), t.micros, t.relative_error});
        e.kernels.push_back(std::move(l));
    }
    // A fused block's kernels stand beside its layers' (the layers' rows above apply when it
    // serves "layers").
    for (const mp::BlockKernel& k : plan.blocks) {
        Int8LayerKernel l{k.block + " (fused block)", std::to_string(k.rows) + " rows", k.kernel, false, {}};
        for (const mp::BlockTiming& t : k.timings) l.timings.push_back({t.kernel, t.micros, t.relative_error});
        e.kernels.push_back(std::move(l));
    }
    e.backend = plan.summary();
    return plan;
}

bool planUses(const mp::KernelPlan& plan, mp::Int8Backend backend)
{
    return std::any_of(plan.layers.begin(), plan.layers.end(),
                       [backend](const mp::LayerKernel& k) { return k.backend == backend; });
}

void gateOnAccuracy(Int8Evaluation& e)
{
    e.served = e.degradation <= e.maxDegradation;
    e.verdict = e.served ? "served: degradation " + percent(e.degradation) + " <= " + percent(e.maxDegradation)
                         : "rejected: degradation " + percent(e.degradation) + " > " + percent(e.maxDegradation) +
                               ", FP32 serves instead";
}

void gate(Int8Evaluation& e)
{
    gateOnAccuracy(e);
    if (!e.served || e.kernelMode != "auto") return;
    // Both the typical call (P50) and the tail (P95), at the serving batch and at batch 1 (live
    // inference during a replay): a copy that is faster on most calls but slower on its slow
    // ones, or faster in batches but slower one window at a time, would still lose where latency
    // targets are set.
    const auto ratios = [](const LatencyPercentiles& fp32, const LatencyPercentiles& int8) {
        return std::pair{fp32.p50 > 0.0 ? int8.p50 / fp32.p50 : 0.0, fp32.p95 > 0.0 ? int8.p95 / fp32.p95 : 0.0};
    };
    const auto [p50, p95] = ratios(e.fp32Batch32, e.int8Batch32);
    const auto [b1p50, b1p95] = ratios(e.fp32Batch1, e.int8Batch1);
    const std::string batch = std::to_string(e.servingBatch);
    const std::string limit = "auto serves it only up to " + ratio(kInt8MaxSlowdown) + "), FP32 serves instead";
    if (p50 > kInt8MaxSlowdown || p95 > kInt8MaxSlowdown) {
        e.served = false;
        e.verdict = "not served: INT8 takes " + ratio(p50) + " FP32's time at batch " + batch + " (P50; " + ratio(p95) +
                    " at P95; " + limit;
    } else if (b1p50 > kInt8MaxSlowdown || b1p95 > kInt8MaxSlowdown) {
        e.served = false;
        e.verdict = "not served: INT8 takes " + ratio(b1p50) + " FP32's time at batch 1 (P50; " + ratio(b1p95) +
                    " at P95; " + limit;
    } else if (p50 > 0.0) {
        e.verdict += "; " + ratio(p50) + " FP32's time at batch " + batch + " (P50; " + ratio(p95) + " at P95)";
        if (b1p50 > 0.0) e.verdict += ", " + ratio(b1p50) + " at batch 1";
    }
}

std::size_t peakBytesOf(const std::function<void()>& run, bool onCuda)
{
    if (onCuda ? !models::cudaMemoryStatsAvailable() : !models::countingCpuAllocatorInstalled()) {
        run();
        return 0;
    }
    models::PeakMemoryScope scope(onCuda ? models::MemoryDevice::Cuda : models::MemoryDevice::Cpu);
    run();
    return scope.peakAboveStart();
}

} // namespace foxhunt::detail

namespace foxhunt {

std::shared_ptr<models::precision::KernelTimingCache> storedKernelTimings(KernelTimingTable& table)
{
    return std::make_shared<detail::StoredKernelTimings>(table);
}

} // namespace foxhunt
