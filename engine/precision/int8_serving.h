// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal (LibTorch): choosing an INT8 copy's kernels by measurement and deciding whether the
// copy may answer inference. Shared by the forecasters and the agents.

#include "engine/precision/int8_evaluation.h"
#include "models/precision/kernel_plan.h"

#include <torch/torch.h>

#include <functional>

namespace foxhunt {
class KernelTimingTable;
}

namespace foxhunt::detail {

/// The models' kernel timing cache over a store's kernel_timings table.
class StoredKernelTimings : public models::precision::KernelTimingCache {
public:
    /// Reads and writes `table` (which must outlive this).
    explicit StoredKernelTimings(KernelTimingTable& table) : m_table(table) { }
    std::optional<std::vector<models::precision::KernelTiming>> find(
        const std::string& machine, const std::string& device, const models::precision::KernelShape& shape) override;
    void store(const std::string& machine, const std::string& device, const models::precision::KernelShape& shape,
               const std::vector<models::precision::KernelTiming>& timings) override;

private:
    KernelTimingTable& m_table;
};

/// Gives every Int8Linear of `int8Model` its kernels as `serving` says: in "auto", the fastest
/// backend within the per-layer error bound at each shape `serve` shows (serve() should run the
/// model at its serving batch sizes), timed once per machine and shape; otherwise the backend by
/// hand. Records the plan in `e` (kernelMode, kernels, measured and cached shapes, backend).
/// Throws std::invalid_argument for an unknown backend name.
models::precision::KernelPlan planInt8Kernels(torch::nn::Module& int8Model, const std::function<void()>& serve,
                                              const Int8Serving& serving, Int8Evaluation& e,
                                              const std::vector<models::precision::Int8Backend>& exclude = {});

/// Whether `plan` serves any layer through `backend`.
bool planUses(const models::precision::KernelPlan& plan, models::precision::Int8Backend backend);

/// The gate on accuracy alone (refreshes during training): served when the degradation is at most
/// maxDegradation; sets served and verdict.
void gateOnAccuracy(Int8Evaluation& e);

/// The whole gate (the final check): accuracy as above and, when the kernels were chosen by
/// measurement, speed: a copy slower than kInt8MaxSlowdown x FP32 (P50 or P95 at the serving batch) is not
/// served, so `auto` never loses to FP32. A backend chosen by hand is served when accurate enough.
void gate(Int8Evaluation& e);

/// Peak bytes of tensors allocated while `run` runs (0 without the counting CPU allocator or on CUDA
/// without allocator statistics).
std::size_t peakBytesOf(const std::function<void()>& run, bool onCuda);

} // namespace foxhunt::detail
