// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/memory/memory_tracker.h"

#include "models/compat.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace foxhunt::models {

namespace {

// Above the default allocator's 0, so that a later re-registration of the default does not
// silently end counting, yet below 255 so that a deliberately installed allocator still wins.
constexpr std::uint8_t kCountingPriority = 100;

// Each counted block starts with a header holding its requested size, so the plain-function
// deleter knows what to subtract. The header is one alignment unit wide: the data behind it
// keeps the alignment LibTorch's vectorised kernels rely on.
constexpr std::size_t kHeader = c10::gAlignment;
static_assert(kHeader >= sizeof(std::size_t));

std::atomic<std::size_t> g_live{0};
std::atomic<std::size_t> g_peak{0};
std::atomic<std::uint64_t> g_allocations{0};
std::atomic<std::uint64_t> g_frees{0};
c10::Allocator* g_inner = nullptr;
c10::DeleterFnPtr g_innerDelete = nullptr;

void raisePeakTo(std::size_t value)
{
    std::size_t peak = g_peak.load(std::memory_order_relaxed);
    while (value > peak && !g_peak.compare_exchange_weak(peak, value, std::memory_order_relaxed)) { }
}

void freeCounted(void* data)
{
    if (!data) return;
    void* base = static_cast<char*>(data) - kHeader;
    const std::size_t n = *static_cast<const std::size_t*>(base);
    g_live.fetch_sub(n, std::memory_order_relaxed);
    g_frees.fetch_add(1, std::memory_order_relaxed);
    g_innerDelete(base);
}

class CountingCpuAllocator final : public compat::portable_allocator {
public:
    c10::DataPtr allocate_bytes(std::size_t n) const override
    {
        // Empty storages own no memory: hand them to the inner allocator uncounted.
        if (n == 0) return g_inner->allocate(0);
        void* base = g_inner->raw_allocate(n + kHeader);
        *static_cast<std::size_t*>(base) = n;
        raisePeakTo(g_live.fetch_add(n, std::memory_order_relaxed) + n);
        g_allocations.fetch_add(1, std::memory_order_relaxed);
        void* data = static_cast<char*>(base) + kHeader;
        return {data, data, &freeCounted, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &freeCounted; }
};

CountingCpuAllocator g_counting;

} // namespace

bool installCountingCpuAllocator()
{
    static std::once_flag once;
    std::call_once(once, [] {
        c10::Allocator* inner = c10::GetCPUAllocator();
        // The header scheme frees through the inner allocator's raw deleter; LibTorch's default
        // CPU allocator has one. Without it counting stays off rather than guessing.
        if (inner == &g_counting || !inner->raw_deleter()) return;
        g_inner = inner;
        g_innerDelete = inner->raw_deleter();
        g_peak.store(g_live.load());
        c10::SetCPUAllocator(&g_counting, kCountingPriority);
    });
    return countingCpuAllocatorInstalled();
}

bool countingCpuAllocatorInstalled()
{
    return c10::GetCPUAllocator() == &g_counting;
}

std::size_t liveCpuBytes()
{
    return g_live.load(std::memory_order_relaxed);
}

std::size_t peakCpuBytes()
{
    return g_peak.load(std::memory_order_relaxed);
}

void resetPeakCpuBytes()
{
    g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
    // An allocation between the two loads may have raised live above the stored peak.
    raisePeakTo(g_live.load(std::memory_order_relaxed));
}

MemoryCounters cpuMemoryCounters()
{
    return {liveCpuBytes(), peakCpuBytes(), g_allocations.load(std::memory_order_relaxed),
            g_frees.load(std::memory_order_relaxed)};
}

bool cudaMemoryStatsAvailable()
{
    return compat::cuda_allocated_bytes().available;
}

std::size_t liveCudaBytes()
{
    return compat::cuda_allocated_bytes().current;
}

namespace {
// The most bytes seen before the innermost CUDA scope reset the allocator's peak, so that an
// enclosing scope still sees them (the allocator keeps one peak per device).
std::atomic<std::size_t> g_cudaCarried{0};
} // namespace

std::size_t peakCudaBytes()
{
    return std::max(compat::cuda_allocated_bytes().peak, g_cudaCarried.load(std::memory_order_relaxed));
}

void resetPeakCudaBytes()
{
    compat::reset_cuda_peak_bytes();
    g_cudaCarried.store(0, std::memory_order_relaxed);
}

PeakMemoryScope::PeakMemoryScope(MemoryDevice device) : m_device(device)
{
    if (m_device == MemoryDevice::Cuda) {
        m_start = liveCudaBytes();
        m_peakBefore = peakCudaBytes();
        resetPeakCudaBytes();
        return;
    }
    m_start = liveCpuBytes();
    m_peakBefore = g_peak.exchange(m_start, std::memory_order_relaxed);
    raisePeakTo(g_live.load(std::memory_order_relaxed));
}

PeakMemoryScope::~PeakMemoryScope()
{
    if (m_device == MemoryDevice::Cpu) {
        raisePeakTo(m_peakBefore);
        return;
    }
    std::size_t carried = g_cudaCarried.load(std::memory_order_relaxed);
    while (carried < m_peakBefore &&
           !g_cudaCarried.compare_exchange_weak(carried, m_peakBefore, std::memory_order_relaxed)) { }
}

std::size_t PeakMemoryScope::peakAboveStart() const
{
    const std::size_t peak = m_device == MemoryDevice::Cuda ? peakCudaBytes() : peakCpuBytes();
    return peak > m_start ? peak - m_start : 0;
}

CudaWorkScope::CudaWorkScope(CudaAttribution& attribution, bool onCuda)
{
    if (!onCuda || !cudaMemoryStatsAvailable()) return;
    m_attribution = &attribution;
    m_residentBefore = attribution.resident;
    m_scope.emplace(MemoryDevice::Cuda);
}

CudaWorkScope::~CudaWorkScope()
{
    if (!m_attribution) return;
    const auto held = static_cast<std::size_t>(std::max<std::int64_t>(0, m_residentBefore));
    m_attribution->peak = held + m_scope->peakAboveStart();
    m_attribution->resident += static_cast<std::int64_t>(liveCudaBytes()) -
                               static_cast<std::int64_t>(m_scope->startBytes());
}

std::size_t CudaAttribution::residentBytes() const
{
    return static_cast<std::size_t>(std::max<std::int64_t>(0, resident));
}

} // namespace foxhunt::models
