// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/inference_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The kernels pass 64-byte vectors only between always-inline functions of one instruction set,
// so the ABI GCC warns of (such vectors without AVX512F) is never crossed.
#pragma GCC diagnostic ignored "-Wpsabi"

// Two-vector shuffles with constant lanes (0-15 from the first, 16-31 from the second):
// __builtin_shufflevector where the compiler has it (GCC 12, Clang), GCC's older __builtin_shuffle
// elsewhere (the GPU machine's toolchain may be older than Debian 12's).
#if !defined(FOXHUNT_OLD_GCC_SHUFFLE) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12))
#define FOXHUNT_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define FOXHUNT_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, v16i{__VA_ARGS__})
#endif

namespace foxhunt::models::tft {

namespace generic {
#define FOXHUNT_FUSED_INT8 0
#define FOXHUNT_FUSED_ISA 0
#include "models/tft/inference_kernels.inc"
#undef FOXHUNT_FUSED_ISA
#undef FOXHUNT_FUSED_INT8
} // namespace generic

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace avx2 {
#define FOXHUNT_FUSED_INT8 0
#define FOXHUNT_FUSED_ISA 1
#include "models/tft/inference_kernels.inc"
#undef FOXHUNT_FUSED_ISA
#undef FOXHUNT_FUSED_INT8
} // namespace avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,fma")
namespace avx512 {
#define FOXHUNT_FUSED_INT8 1
#define FOXHUNT_FUSED_ISA 2
#include "models/tft/inference_kernels.inc"
#undef FOXHUNT_FUSED_ISA
#undef FOXHUNT_FUSED_INT8
} // namespace avx512
#pragma GCC pop_options
#endif

namespace {

using Isa = FusedIsa;

Isa this_cpu()
{
    return kernel_isa();
}

void check_size(const char* what, std::size_t size, int64_t expected)
{
    if (static_cast<int64_t>(size) != expected)
        throw std::invalid_argument(std::string("inference kernels: ") + what + " holds " + std::to_string(size) +
                                    " values, expected " + std::to_string(expected));
}

} // namespace

bool fused_selection_supports(int64_t hidden)
{
    return hidden == 16 || hidden == 32 || hidden == 64;
}

bool fused_selection_int8_available()
{
    return this_cpu() == Isa::Avx512Vnni;
}

FusedIsa fused_selection_isa()
{
    return this_cpu();
}

FusedIsa cap_fused_selection_isa(FusedIsa cap)
{
    return cap_kernel_isa(cap);
}

void fused_selection(const FusedGrnPack& p, const float* x, const float* weights, float* out, int64_t rows)
{
    if (!fused_selection_supports(p.hidden))
        throw std::invalid_argument("fused_selection: hidden width " + std::to_string(p.hidden) +
                                    " is not 16, 32 or 64");
    const int64_t v = p.variables, h = p.hidden;
    check_size("affine", p.affine.size(), v * 4 * h);
    for (const auto* t : {&p.b2, &p.gamma, &p.beta}) check_size("a [V, H] table", t->size(), v * h);
    check_size("bg", p.bg.size(), v * 2 * h);
    if (p.int8()) {
        check_size("w2q", p.w2q.size(), v * h * h);
        check_size("wgq", p.wgq.size(), v * 2 * h * h);
        check_size("s2", p.s2.size(), v * h);
        check_size("z2", p.z2.size(), v * h);
        check_size("sg", p.sg.size(), v * 2 * h);
        check_size("zg", p.zg.size(), v * 2 * h);
    } else {
        check_size("w2", p.w2.size(), v * h * h);
        check_size("wg", p.wg.size(), v * 2 * h * h);
    }
    if (rows <= 0) return;
#if defined(__x86_64__)
    switch (this_cpu()) {
    case Isa::Avx512Vnni:
        if (p.int8()) avx512::run_any<true>(p, x, weights, out, rows);
        else avx512::run_any<false>(p, x, weights, out, rows);
        return;
    case Isa::Avx2:
        if (p.int8()) break;
        avx2::run_any<false>(p, x, weights, out, rows);
        return;
    case Isa::Generic:
        if (p.int8()) break;
        generic::run_any<false>(p, x, weights, out, rows);
        return;
    }
#else
    if (!p.int8()) {
        generic::run_any<false>(p, x, weights, out, rows);
        return;
    }
#endif
    throw std::invalid_argument("fused_selection: int8 weights need AVX512-VNNI, which this CPU lacks");
}

void fused_grn_outputs(const FusedGrnPack& p, int64_t variable, const float* x, float* out, int64_t rows)
{
    if (!fused_selection_supports(p.hidden))
        throw std::invalid_argument("fused_grn_outputs: hidden width " + std::to_string(p.hidden) +
                                    " is not 16, 32 or 64");
    if (p.int8()) throw std::invalid_argument("fused_grn_outputs: a float pack only");
    if (variable < 0 || variable >= p.variables)
        throw std::invalid_argument("fused_grn_outputs: no variable " + std::to_string(variable));
    const int64_t v = p.variables, h = p.hidden;
    check_size("affine", p.affine.size(), v * 4 * h);
    for (const auto* t : {&p.b2, &p.gamma, &p.beta}) check_size("a [V, H] table", t->size(), v * h);
    check_size("bg", p.bg.size(), v * 2 * h);
    check_size("w2", p.w2.size(), v * h * h);
    check_size("wg", p.wg.size(), v * 2 * h * h);
    if (rows <= 0) return;
    FOXHUNT_KERNEL_DISPATCH(grn_outputs_any, p, variable, x, out, rows);
}

void table_selection(const SelectionTableView& t, const float* x, const float* weights, float* out, int64_t rows)
{
    if (!fused_selection_supports(t.hidden))
        throw std::invalid_argument("table_selection: hidden width " + std::to_string(t.hidden) +
                                    " is not 16, 32 or 64");
    if (t.knots < 2 || t.variables <= 0 || !t.values || !t.low || !t.inv_step)
        throw std::invalid_argument("table_selection: a table needs variables, 2 knots or more and its arrays");
    if (rows <= 0) return;
    FOXHUNT_KERNEL_DISPATCH(table_any, t, x, weights, out, rows);
}

bool fused_grn_supports(int64_t in, int64_t hidden, int64_t out)
{
    return in > 0 && in <= 128 && hidden >= 0 && hidden <= 64 && out > 0 && out <= 64;
}

bool fused_grn_int8_supports(int64_t in, int64_t hidden, int64_t out)
{
    return fused_grn_supports(in, hidden, out) && in % 4 == 0 && hidden % 4 == 0 && fused_selection_int8_available();
}

void fused_grn(const FusedDenseGrn& g, const float* x, const float* context, int64_t group, const float* residual,
               float* out, int64_t rows)
{
    if (!fused_grn_supports(g.in, g.hidden, g.out))
        throw std::invalid_argument("fused_grn: widths " + std::to_string(g.in) + ", " + std::to_string(g.hidden) +
                                    ", " + std::to_string(g.out) + " exceed 128, 64, 64");
    const bool int8 = g.int8();
    if (int8 && !fused_grn_int8_supports(g.in, g.hidden, g.out))
        throw std::invalid_argument("fused_grn: int8 weights need AVX512-VNNI and in, hidden multiples of 4");
    // A layer's weights: float, or int8 rows with a scale and a zero correction per row.
    const auto check_layer = [&](const char* name, const std::vector<float>& w, const FusedDenseGrn::Int8Rows& q,
                                 int64_t rows_out, int64_t cols) {
        if (!int8) return check_size(name, w.size(), rows_out * cols);
        check_size(name, q.q.size(), rows_out * cols);
        check_size(name, q.scale.size(), rows_out);
        check_size(name, q.zero.size(), rows_out);
    };
    check_layer("w1", g.w1, g.q1, g.hidden, g.in);
    check_size("b1", g.b1.size(), g.hidden);
    check_layer("w2", g.w2, g.q2, g.hidden, g.hidden);
    check_size("b2", g.b2.size(), g.hidden);
    check_layer("wg", g.wg, g.qg, 2 * g.out, g.hidden > 0 ? g.hidden : g.in); // a gate reads x itself
    check_size("bg", g.bg.size(), 2 * g.out);
    check_size("gamma", g.gamma.size(), g.out);
    check_size("beta", g.beta.size(), g.out);
    if (g.hidden == 0 && !residual) throw std::invalid_argument("fused_grn: a gate (hidden 0) needs its residual");
    const bool has_skip = int8 ? !g.qs.q.empty() : !g.ws.empty();
    if (!residual && !has_skip) {
        if (g.in != g.out) throw std::invalid_argument("fused_grn: no skip layer needs in == out");
    } else if (!residual) {
        check_layer("ws", g.ws, g.qs, g.out, g.in);
        check_size("bs", g.bs.size(), g.out);
    }
    if (context && group <= 0) throw std::invalid_argument("fused_grn: a context needs a positive group");
    if (rows <= 0) return;
#if defined(__x86_64__)
    if (int8) {
        avx512::dense_grn<true>(g, x, context, group, residual, out, rows);
        return;
    }
#endif
    FOXHUNT_KERNEL_DISPATCH(dense_grn<false>, g, x, context, group, residual, out, rows);
}

void attention_head(const float* q, const float* k, const float* v, const std::uint8_t* mask, float scale, float* attn,
                    float* out, int64_t batch, int64_t queries, int64_t keys, int64_t depth)
{
    if (batch <= 0 || queries <= 0 || keys <= 0 || depth <= 0) return;
    FOXHUNT_KERNEL_DISPATCH(attention_rows, q, k, v, mask, scale, attn, out, batch, queries, keys, depth);
}

void folded_attention(const float* qk, const float* x, const std::uint8_t* mask, float scale, float* attn, float* y,
                      int64_t batch, int64_t heads, int64_t queries, int64_t keys, int64_t width)
{
    if (batch <= 0 || heads <= 0 || queries <= 0 || keys <= 0 || width <= 0) return;
    FOXHUNT_KERNEL_DISPATCH(folded_attention_rows, qk, x, mask, scale, attn, y, batch, heads, queries, keys, width);
}

bool lstm_recurrence_supports(int64_t hidden)
{
    return hidden == 16 || hidden == 32 || hidden == 64;
}

void lstm_recurrence(const float* gates_x, const float* w_hh_t, const float* h0, const float* c0, float* out,
                     float* h_n, float* c_n, int64_t batch, int64_t steps, int64_t hidden)
{
    if (!lstm_recurrence_supports(hidden))
        throw std::invalid_argument("lstm_recurrence: hidden width " + std::to_string(hidden) + " is not 16, 32 or 64");
    if (batch <= 0 || steps < 0) return;
    FOXHUNT_KERNEL_DISPATCH(recurrence_any, gates_x, w_hh_t, h0, c0, out, h_n, c_n, batch, steps, hidden);
}

#undef FOXHUNT_SHUFFLE

} // namespace foxhunt::models::tft
