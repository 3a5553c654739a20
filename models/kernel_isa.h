// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The instruction sets the hand-written CPU kernels (the TFT's fused inference, the Mamba-2 scan)
// are compiled for, and the one they dispatch to on this machine. Plain C++: no LibTorch.

namespace foxhunt::models {

/// In the order dispatch prefers them; each includes the ones before it.
enum class KernelIsa { Generic, Avx2, Avx512Vnni };

/// The best instruction set this CPU has (AVX512 F/BW/DQ/VL with VNNI; AVX2 with FMA and F16C),
/// at most the cap below.
KernelIsa kernel_isa();

/// Caps the instruction set dispatch may use (tests run every compiled kernel on one machine, and
/// see what an older CPU would do). Returns the previous cap.
KernelIsa cap_kernel_isa(KernelIsa cap);

} // namespace foxhunt::models

// FOXHUNT_KERNEL_DISPATCH(name, args...): in a kernels file that compiles its kernels once per
// instruction set into namespaces avx512, avx2 (x86-64 only) and generic, runs kernel `name` of the
// build this CPU runs (the plain build where no other applies), then returns from the calling
// function.
#if defined(__x86_64__)
#define FOXHUNT_KERNEL_DISPATCH(name, ...)                                                                             \
    do {                                                                                                               \
        switch (::foxhunt::models::kernel_isa()) {                                                                     \
        case ::foxhunt::models::KernelIsa::Avx512Vnni: avx512::name(__VA_ARGS__); return;                              \
        case ::foxhunt::models::KernelIsa::Avx2: avx2::name(__VA_ARGS__); return;                                      \
        case ::foxhunt::models::KernelIsa::Generic: break;                                                             \
        }                                                                                                              \
        generic::name(__VA_ARGS__);                                                                                    \
        return;                                                                                                        \
    } while (false)
#else
#define FOXHUNT_KERNEL_DISPATCH(name, ...)                                                                             \
    do {                                                                                                               \
        generic::name(__VA_ARGS__);                                                                                    \
        return;                                                                                                        \
    } while (false)
#endif
