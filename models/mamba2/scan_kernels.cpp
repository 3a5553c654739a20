// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/scan_kernels.h"

#include "models/kernel_isa.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

// The kernels pass 64-byte vectors only between always-inline functions of one instruction set,
// so the ABI GCC warns of (such vectors without AVX512F) is never crossed.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace foxhunt::models::mamba2 {

namespace generic {
#include "models/mamba2/scan_kernels.inc"
} // namespace generic

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "models/mamba2/scan_kernels.inc"
} // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,fma")
namespace avx512 {
#include "models/mamba2/scan_kernels.inc"
} // namespace avx512
#pragma GCC pop_options
#endif

void ssd_scan_range(const ScanOperands& s, int64_t first, int64_t last)
{
    if (!s.x || !s.dt || !s.A || !s.B || !s.h_last || (s.y && !s.C))
        throw std::invalid_argument("ssd_scan_range: x, dt, A, B and h_last are needed, and C with y");
    if (s.batch < 0 || s.length < 0 || s.heads <= 0 || s.head_dim <= 0 || s.state <= 0 || s.groups <= 0 ||
        s.heads % s.groups != 0)
        throw std::invalid_argument("ssd_scan_range: sizes must be positive, heads a multiple of groups");
    if (first < 0 || last > s.batch * s.heads || first > last)
        throw std::invalid_argument("ssd_scan_range: pairs out of range");
#if defined(__x86_64__)
    switch (kernel_isa()) {
    case KernelIsa::Avx512Vnni: avx512::scan_range(s, first, last); return;
    case KernelIsa::Avx2: avx2::scan_range(s, first, last); return;
    case KernelIsa::Generic: break;
    }
#endif
    generic::scan_range(s, first, last);
}

} // namespace foxhunt::models::mamba2
