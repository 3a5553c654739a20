// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/kernel_isa.h"

#include <algorithm>
#include <atomic>

namespace foxhunt::models {
namespace {

std::atomic<KernelIsa> g_cap{KernelIsa::Avx512Vnni};

KernelIsa detected()
{
#if defined(__x86_64__)
    static const KernelIsa isa = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512vnni"))
            return KernelIsa::Avx512Vnni;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
            return KernelIsa::Avx2;
        return KernelIsa::Generic;
    }();
    return isa;
#else
    return KernelIsa::Generic;
#endif
}

} // namespace

KernelIsa kernel_isa()
{
    return std::min(detected(), g_cap.load());
}

KernelIsa cap_kernel_isa(KernelIsa cap)
{
    return g_cap.exchange(cap);
}

} // namespace foxhunt::models
