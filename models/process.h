// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Process-wide settings that decide how fast LibTorch runs on a CPU, made once at start-up:
// which BLAS kernels do the FP32 products, and whether freed tensor memory stays with the process.
// No torch headers: the BLAS is found at run time, the allocator is glibc's.

#include <cstddef>
#include <string>

namespace foxhunt::models {

/// The BLAS library that serves LibTorch's FP32 matrix products on the CPU, as found at run time.
struct BlasInfo {
    std::string library;  ///< "OpenBLAS 0.3.21 ..." (its build configuration), or "reference BLAS"
    std::string kernels;  ///< the kernel family OpenBLAS runs, e.g. "Cooperlake" or "Haswell"; empty if unknown
    std::string forcedBy; ///< "OPENBLAS_CORETYPE=Haswell" when the environment chose the kernels, else empty

    /// One line, e.g. "OpenBLAS, Haswell kernels (forced by OPENBLAS_CORETYPE=Haswell)".
    std::string summary() const;
};

/// Looks the BLAS up in the running process (openblas_get_config / openblas_get_corename).
BlasInfo blasInfo();

/// What prepareProcess() set.
struct ProcessSetup {
    /// Freed blocks below this size are kept by malloc instead of being returned to the kernel;
    /// 0 when glibc's defaults are in force (FOXHUNT_MALLOC=default).
    std::size_t mallocKeepBytes = 0;
};

/// 256 MiB: above the largest activation a seed-sized model allocates per step.
inline constexpr std::size_t kMallocKeepBytes = std::size_t{256} << 20;

/// Call first thing in main(). glibc hands every block of 128 KiB or more back to the kernel when
/// it is freed (and its dynamic threshold tops out at 32 MiB), so a training step that frees and
/// reallocates the same activations page-faults them in again on every step. Raising the mmap and
/// trim thresholds keeps them in the process, as PyTorch's own CPU allocator settings do. The
/// environment FOXHUNT_MALLOC=default keeps glibc's behaviour. Idempotent.
ProcessSetup prepareProcess();

/// What the last prepareProcess() set (all zero before it ran).
ProcessSetup processSetup();

} // namespace foxhunt::models
