#pragma once
// The one place where LibTorch 1.13 (Debian) and 2.x (PyTorch wheels) differ.

#include <torch/version.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <optional>

#define FOXHUNT_TORCH_AT_LEAST(major, minor) \
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
    if (device == c10::DeviceType::CPU)
        at::autocast::set_cpu_enabled(enabled);
    else
        at::autocast::set_enabled(enabled);
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
    if (device == c10::DeviceType::CPU)
        at::autocast::set_autocast_cpu_dtype(dtype);
    else
        at::autocast::set_autocast_gpu_dtype(dtype);
#endif
}

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

} // namespace foxhunt::models::compat
