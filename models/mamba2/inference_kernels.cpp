// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/inference_kernels.h"

#include "models/kernel_isa.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

// The kernels pass 64-byte vectors only between always-inline functions of one instruction set,
// so the ABI GCC warns of (such vectors without AVX512F) is never crossed.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace foxhunt::models::mamba2 {

namespace generic {
#include "models/mamba2/inference_kernels.inc"
} // namespace generic

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "models/mamba2/inference_kernels.inc"
} // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,fma")
namespace avx512 {
#include "models/mamba2/inference_kernels.inc"
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
    FOXHUNT_KERNEL_DISPATCH(scan_range, s, first, last);
}

void causal_conv_silu_rows(const ConvOperands& s, int64_t first, int64_t last)
{
    if (!s.x || !s.wt || !s.bias || !s.y)
        throw std::invalid_argument("causal_conv_silu_rows: x, wt, bias and y are needed");
    if (s.batch < 0 || s.length <= 0 || s.channels <= 0 || s.taps <= 0)
        throw std::invalid_argument("causal_conv_silu_rows: sizes must be positive");
    if (first < 0 || last > s.batch * s.length || first > last)
        throw std::invalid_argument("causal_conv_silu_rows: rows out of range");
    FOXHUNT_KERNEL_DISPATCH(conv_silu_rows, s, first, last);
}

void gated_rms_norm_rows(const GatedNormOperands& s, int64_t first, int64_t last)
{
    if (!s.x || !s.weight || !s.out) throw std::invalid_argument("gated_rms_norm_rows: x, weight and out are needed");
    if (s.dim <= 0 || s.group <= 0 || s.dim % s.group != 0)
        throw std::invalid_argument("gated_rms_norm_rows: the group must divide a positive width");
    if (first < 0 || first > last) throw std::invalid_argument("gated_rms_norm_rows: rows out of range");
    FOXHUNT_KERNEL_DISPATCH(gated_norm_rows, s, first, last);
}

} // namespace foxhunt::models::mamba2
