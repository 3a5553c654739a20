// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What this machine can compute with: the CPU's name, cores and instruction-set features, and the
// CUDA devices of this LibTorch build. std-only, so engine headers the ui sees can carry it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace foxhunt::models::hardware {

/// The CPU features that decide which precision kernels can pay (from /proc/cpuinfo's flags).
struct CpuFeatures {
    bool avx2 = false;        ///< 256-bit integer and float SIMD
    bool avx512f = false;     ///< 512-bit SIMD foundation
    bool avx512_bf16 = false; ///< native BF16 dot products (vdpbf16ps)
    bool avx512_vnni = false; ///< int8 dot products with 32-bit accumulation, 512-bit
    bool avx_vnni = false;    ///< the same int8 dot products, 256-bit (VEX)
    bool amx_bf16 = false;    ///< AMX tiles, BF16
    bool amx_int8 = false;    ///< AMX tiles, int8

    /// BF16 arithmetic in hardware (AVX512-BF16 or AMX-BF16): BF16 autocast can be faster than FP32.
    bool native_bf16() const { return avx512_bf16 || amx_bf16; }
    /// int8 dot products that accumulate in 32 bits (VNNI or AMX-INT8): int8 GEMMs pay and need
    /// no reduced (7-bit) activation range.
    bool int8_dot_product() const { return avx512_vnni || avx_vnni || amx_int8; }
    /// The features present, by their /proc/cpuinfo names, in a fixed order.
    std::vector<std::string> names() const;
    /// Field-wise equality.
    bool operator==(const CpuFeatures&) const = default;
};

/// One CUDA device.
struct GpuInfo {
    int index = 0;                  ///< CUDA device index
    std::string name;               ///< e.g. "NVIDIA H200"
    int major = 0;                  ///< compute capability, major
    int minor = 0;                  ///< compute capability, minor
    std::uint64_t memory_bytes = 0; ///< total device memory

    /// "8.0" style compute capability.
    std::string capability() const { return std::to_string(major) + "." + std::to_string(minor); }
};

/// The machine at hand.
struct MachineInfo {
    std::string cpu_model = "unknown CPU"; ///< /proc/cpuinfo "model name"
    int logical_cpus = 0;                  ///< hardware threads ("processor" entries)
    int physical_cores = 0;                ///< distinct (physical id, core id) pairs; logical_cpus when unknown
    CpuFeatures cpu;                       ///< instruction-set features
    std::vector<GpuInfo> gpus;             ///< CUDA devices this build can use (empty on CPU builds)
    std::string torch_version;             ///< LibTorch version

    /// One line for people: "AMD EPYC, 2 cores / 2 threads; AVX2, AVX-512, AVX512-BF16, AVX512-VNNI;
    /// no GPU" (GPUs with their capability and memory).
    std::string summary() const;
    /// A stable key for caches of measurements taken on this machine: CPU model, features, thread
    /// count, GPUs and LibTorch version. Two machines with the same key measure alike.
    std::string fingerprint() const;
};

/// The CPU part of MachineInfo from the text of /proc/cpuinfo (no GPUs, no LibTorch version).
/// Flags are read from the first processor entry; unknown or missing fields keep their defaults.
MachineInfo parse_cpuinfo(std::string_view text);

/// This machine: /proc/cpuinfo, the CUDA devices of this build and the LibTorch version. Read once
/// per process and cached.
const MachineInfo& this_machine();

/// The GPU with CUDA index `index`, when this machine has it.
const GpuInfo* find_gpu(const MachineInfo& machine, int index);

} // namespace foxhunt::models::hardware
