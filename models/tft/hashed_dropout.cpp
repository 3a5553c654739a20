// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/hashed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cstdint>
#include <mutex>

namespace foxhunt::models::tft {

namespace {

// Chris Wellons' lowbias32 integer hash: every output bit depends on every input bit.
inline std::uint32_t mix32(std::uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Keep element i when the top 24 bits of its hash reach `drop_below` (p * 2^24).
template <class T>
inline T keep_value(std::uint32_t i, std::uint32_t key, std::int32_t drop_below, T scale)
{
    return static_cast<std::int32_t>(mix32(i * 0x9e3779b9U + key) >> 8) >= drop_below ? scale : T(0);
}

// Fixed 16-wide inner blocks so that -O2's cheap vectoriser takes them; an AVX2 clone where the CPU has it.
template <class T>
__attribute__((target_clones("avx2", "default"))) void fill_mask(T* out, std::int64_t begin, std::int64_t end,
                                                                 std::uint32_t key, std::int32_t drop_below, T scale)
{
    constexpr std::int64_t kBlock = 16;
    std::int64_t i = begin;
    for (; i + kBlock <= end; i += kBlock) {
        const auto base = static_cast<std::uint32_t>(i);
        for (std::uint32_t k = 0; k < kBlock; ++k) out[i + k] = keep_value<T>(base + k, key, drop_below, scale);
    }
    for (; i < end; ++i) out[i] = keep_value<T>(static_cast<std::uint32_t>(i), key, drop_below, scale);
}

template void fill_mask<float>(float*, std::int64_t, std::int64_t, std::uint32_t, std::int32_t, float);
template void fill_mask<double>(double*, std::int64_t, std::int64_t, std::uint32_t, std::int32_t, double);

std::uint64_t draw_seed()
{
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    return gen.get<at::CPUGeneratorImpl>()->random64();
}

} // namespace

torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training)
{
    TORCH_CHECK(p >= 0.0 && p <= 1.0, "hashed_dropout: p must be in [0, 1], got ", p);
    if (!training || p == 0.0) return x;
    const auto dtype = x.scalar_type();
    if (!x.device().is_cpu() || (dtype != torch::kFloat && dtype != torch::kDouble) || p == 1.0)
        return torch::dropout(x, p, /*train=*/true);
    const std::uint64_t seed = draw_seed();
    const auto drop_below = static_cast<std::int32_t>(p * static_cast<double>(1 << 24));
    auto mask = torch::empty(x.sizes(), x.options().requires_grad(false));
    const std::int64_t n = mask.numel();
    // One key per 2^32 elements, so that indices never repeat within a key.
    constexpr std::int64_t kSpan = std::int64_t{1} << 32;
    AT_DISPATCH_FLOATING_TYPES(dtype, "hashed_dropout", [&] {
        auto* out = mask.data_ptr<scalar_t>();
        const auto scale = static_cast<scalar_t>(1.0 / (1.0 - p));
        for (std::int64_t span = 0; span < n; span += kSpan) {
            const auto key = mix32(static_cast<std::uint32_t>(seed) ^ mix32(static_cast<std::uint32_t>(seed >> 32) +
                                                                            static_cast<std::uint32_t>(span >> 32)));
            const std::int64_t end = std::min(n, span + kSpan);
            at::parallel_for(span, end, /*grain_size=*/32768, [&](std::int64_t b, std::int64_t e) {
                fill_mask<scalar_t>(out, b, e, key, drop_below, scale);
            });
        }
    });
    return x * mask;
}

} // namespace foxhunt::models::tft
