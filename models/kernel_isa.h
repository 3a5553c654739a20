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
