// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exact tensor memory accounting, without exposing torch headers.
//
// CPU: a counting wrapper around LibTorch's CPU allocator counts the bytes of every tensor
// storage allocated after installCountingCpuAllocator(). Memory that kernels take from malloc
// directly (BLAS and oneDNN scratch) is not a tensor and is not counted.
// CUDA: the caching allocator's own statistics (bytes handed to tensors, not the cached pool).

#include <cstddef>
#include <cstdint>
#include <optional>

namespace foxhunt::models {

/// A snapshot of the CPU counters.
struct MemoryCounters {
    std::size_t liveBytes = 0;     ///< bytes of tensor storage alive now
    std::size_t peakBytes = 0;     ///< most live bytes since install or the last reset
    std::uint64_t allocations = 0; ///< counted allocations so far (empty ones excluded)
    std::uint64_t frees = 0;       ///< counted frees so far
};

/// Wraps the current CPU allocator in a counting one, once per process (later calls do nothing).
/// Tensors allocated before the call are not counted, neither when allocated nor when freed.
/// Returns whether counting is active: false when an allocator of higher priority is installed.
bool installCountingCpuAllocator();
/// Whether the counting CPU allocator is the one LibTorch uses.
bool countingCpuAllocatorInstalled();
/// Bytes of counted tensor storage alive now (0 before installation).
std::size_t liveCpuBytes();
/// Most live bytes since installation or the last resetPeakCpuBytes().
std::size_t peakCpuBytes();
/// Restarts the peak at the current live bytes.
void resetPeakCpuBytes();
/// All CPU counters at once.
MemoryCounters cpuMemoryCounters();

/// Whether this build and machine report CUDA allocator statistics.
bool cudaMemoryStatsAvailable();
/// Bytes held by tensors on the current CUDA device (0 without CUDA).
std::size_t liveCudaBytes();
/// Most bytes held by tensors on the current CUDA device since the last reset (0 without CUDA),
/// including what enclosing PeakMemoryScopes saw before an inner one reset the allocator's peak.
std::size_t peakCudaBytes();
/// Restarts the CUDA peak at the current level.
void resetPeakCudaBytes();

/// Which allocator a PeakMemoryScope watches.
enum class MemoryDevice { Cpu, Cuda };

/// Measures the most bytes allocated above the level at construction while the scope lives, e.g.
/// the peak activation bytes of a forward and backward pass. The counters are process-wide, so
/// allocations of other threads during the scope count too. Scopes nest: the outer scope's peak
/// survives an inner one (a CUDA scope resets the device's peak statistic and carries what it
/// saw before in peakCudaBytes()).
class PeakMemoryScope {
public:
    /// Starts measuring on `device`.
    explicit PeakMemoryScope(MemoryDevice device = MemoryDevice::Cpu);
    /// Folds the peak seen before the scope back into the global CPU peak.
    ~PeakMemoryScope();
    PeakMemoryScope(const PeakMemoryScope&) = delete;
    PeakMemoryScope& operator=(const PeakMemoryScope&) = delete;

    /// Peak bytes above the starting level so far (0 when nothing is counted on the device).
    std::size_t peakAboveStart() const;
    /// Live bytes when the scope started.
    std::size_t startBytes() const { return m_start; }

private:
    MemoryDevice m_device = MemoryDevice::Cpu;
    std::size_t m_start = 0;
    std::size_t m_peakBefore = 0;
};

/// What one model holds in the CUDA caching allocator. Models share a device (and the session's
/// thread), so the allocator's device-wide counters are attributed by measuring them around each
/// piece of a model's own work (building it, a training step, a kept INT8 copy, a checkpoint load).
struct CudaAttribution {
    std::int64_t resident = 0; ///< sum of the live-byte changes across the model's measured work
    std::size_t peak = 0;      ///< most bytes the model held during its last measured work
    /// Bytes held by the model's tensors now (resident, never below 0).
    std::size_t residentBytes() const;
};

/// Measures one piece of a model's work on CUDA into a CudaAttribution (does nothing for the CPU or
/// without allocator statistics). Construct it first in a function: it measures when destroyed,
/// after the function's own temporaries are gone.
class CudaWorkScope {
public:
    /// Starts measuring when `onCuda` and the allocator reports statistics.
    CudaWorkScope(CudaAttribution& attribution, bool onCuda);
    /// Adds the live-byte change to `resident` and sets `peak` (resident before + peak above the start).
    ~CudaWorkScope();
    CudaWorkScope(const CudaWorkScope&) = delete;
    CudaWorkScope& operator=(const CudaWorkScope&) = delete;

private:
    CudaAttribution* m_attribution = nullptr;
    std::int64_t m_residentBefore = 0;
    std::optional<PeakMemoryScope> m_scope;
};

} // namespace foxhunt::models
