// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one place where LibTorch 1.13 (Debian) and 2.x (PyTorch wheels) differ.

#include <torch/version.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#if defined(FOXHUNT_TORCH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <cstddef>
#include <cstring>
#include <optional>

#define FOXHUNT_TORCH_AT_LEAST(major, minor)                                                                           \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace foxhunt::models::compat {

// Autocast state per device type. 1.13 has one function per device (set_enabled for CUDA,
// set_cpu_enabled for the CPU); 2.4 generalised them to take a DeviceType and deprecated the rest.

/// Whether autocast is on for `device` (CPU or CUDA) in this thread.
inline bool autocast_enabled(c10::DeviceType device)
{
#if FOXHUNT_TORCH_AT_LEAST(2, 4)
    return at::autocast::is_autocast_enabled(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

/// Turns autocast on or off for `device` in this thread.
inline void set_autocast_enabled(c10::DeviceType device, bool enabled)
{
#if FOXHUNT_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(device, enabled);
#else
    if (device == c10::DeviceType::CPU) at::autocast::set_cpu_enabled(enabled);
    else at::autocast::set_enabled(enabled);
#endif
}

/// The type autocast casts to on `device`.
inline at::ScalarType autocast_dtype(c10::DeviceType device)
{
#if FOXHUNT_TORCH_AT_LEAST(2, 4)
    return at::autocast::get_autocast_dtype(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                          : at::autocast::get_autocast_gpu_dtype();
#endif
}

/// Sets the type autocast casts to on `device`.
inline void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype)
{
#if FOXHUNT_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_dtype(device, dtype);
#else
    if (device == c10::DeviceType::CPU) at::autocast::set_autocast_cpu_dtype(dtype);
    else at::autocast::set_autocast_gpu_dtype(dtype);
#endif
}

// Excluding the Autocast dispatch keys is how autocast's own wrappers call the real kernels; the
// key set has this name in 1.13 and 2.x (2.x adds devices to it).
/// Autocast off on every device for a scope, like a nested torch.autocast(enabled=False): ops
/// inside run in their inputs' types. For the few precision-critical ops inside an AMP forward.
class autocast_excluded {
public:
    autocast_excluded() = default;
    autocast_excluded(const autocast_excluded&) = delete;
    autocast_excluded& operator=(const autocast_excluded&) = delete;

private:
    c10::impl::ExcludeDispatchKeyGuard m_guard{c10::autocast_dispatch_keyset};
};

/// CPU autocast accepts FP16 only from 2.5 on; 1.13 supports BF16 only on the CPU.
inline constexpr bool kCpuAutocastSupportsHalf = FOXHUNT_TORCH_AT_LEAST(2, 5);

/// True when this build has an int8 x int8 -> int32 GEMM (`at::_int_mm`, CUDA, from 2.1 on).
inline constexpr bool kHasIntMm = FOXHUNT_TORCH_AT_LEAST(2, 1);

// a: [M, K] int8, b: [K, N] int8 -> [M, N] int32, or nullopt when the build has no int8 GEMM.
/// The CUDA int8 GEMM where the build provides it.
inline std::optional<at::Tensor> int_mm(const at::Tensor& a, const at::Tensor& b)
{
#if FOXHUNT_TORCH_AT_LEAST(2, 1)
    return at::_int_mm(a, b);
#else
    (void)a;
    (void)b;
    return std::nullopt;
#endif
}

// c10::Allocator: 1.13 declares `allocate(n) const`; 2.3 made it non-const and added a pure
// `copy_data`. Defining both signatures overrides whichever this LibTorch has; the other one is
// a plain overload. Derived allocators implement allocate_bytes().
/// A c10::Allocator base that compiles against LibTorch 1.13 and 2.x.
struct portable_allocator : c10::Allocator {
    /// Allocates `n` bytes.
    virtual c10::DataPtr allocate_bytes(std::size_t n) const = 0;
    /// Forwards to allocate_bytes() (the 1.13 signature).
    c10::DataPtr allocate(std::size_t n) const { return allocate_bytes(n); }
    /// Forwards to allocate_bytes() (the 2.3+ signature).
    c10::DataPtr allocate(std::size_t n) { return allocate_bytes(n); }
    /// Plain memcpy: host memory (required from 2.3 on).
    void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
};

/// Bytes held by tensors in the CUDA caching allocator on the current device.
struct cuda_memory_stats {
    bool available = false;  ///< a CUDA build with a device
    std::size_t current = 0; ///< bytes allocated now
    std::size_t peak = 0;    ///< most bytes allocated since the last reset
};

/// The CUDA caching allocator's allocated-bytes counters; `available` is false on CPU builds
/// (FOXHUNT_TORCH_CUDA unset) or without a device.
inline cuda_memory_stats cuda_allocated_bytes()
{
#if defined(FOXHUNT_TORCH_CUDA)
    if (c10::cuda::device_count() == 0) return {};
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
    // Index 0 is StatType::AGGREGATE in every version (the enum moved namespaces in 2.5).
    const auto& bytes = stats.allocated_bytes[0];
    return {true, static_cast<std::size_t>(bytes.current), static_cast<std::size_t>(bytes.peak)};
#else
    return {};
#endif
}

/// Makes CUDA device `index` current for the calling thread; false on CPU builds.
inline bool set_cuda_device(int index)
{
#if defined(FOXHUNT_TORCH_CUDA)
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
    return true;
#else
    (void)index;
    return false;
#endif
}

/// Restarts the CUDA peak at the current level (no-op without CUDA).
inline void reset_cuda_peak_bytes()
{
#if defined(FOXHUNT_TORCH_CUDA)
    if (c10::cuda::device_count() > 0) c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
#endif
}

} // namespace foxhunt::models::compat
