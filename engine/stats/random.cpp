// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/random.h"

#include <cmath>
#include <numbers>

namespace foxhunt::stats {

std::uint64_t Rng::below(std::uint64_t n)
{
    if (n == 0) return 0;
    // The high 64 bits of x * n are uniform on [0, n) once the low word avoids the 2^64 mod n
    // values that would make some results one draw more likely than others.
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(product);
    if (low < n) {
        const std::uint64_t threshold = (0 - n) % n; // 2^64 mod n
        while (low < threshold) {
            product = static_cast<unsigned __int128>(next()) * n;
            low = static_cast<std::uint64_t>(product);
        }
    }
    return static_cast<std::uint64_t>(product >> 64);
}

double Rng::uniform()
{
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::normal()
{
    // 1 - uniform() lies in (0, 1], so the logarithm is finite.
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

} // namespace foxhunt::stats
