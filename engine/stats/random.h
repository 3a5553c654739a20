// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A seeded random source whose output is the same with every standard library: std::mt19937_64
// is fully specified by the standard, but std::uniform_int_distribution and friends are not, so
// indices and variates are derived from its raw 64-bit output here.

#include <cstdint>
#include <random>

namespace foxhunt::stats {

/// Portable random numbers from std::mt19937_64.
class Rng {
public:
    /// Seeds std::mt19937_64 with `seed` directly.
    explicit Rng(std::uint64_t seed) : m_engine(seed) { }

    /// The next raw 64-bit output of std::mt19937_64.
    std::uint64_t next() { return m_engine(); }
    /// A uniform integer in [0, n), n > 0, by Lemire's multiply-and-reject method (unbiased;
    /// "Fast Random Integer Generation in an Interval", 2019). n == 0 returns 0.
    std::uint64_t below(std::uint64_t n);
    /// A uniform double in [0, 1) with 53 random bits.
    double uniform();
    /// A standard normal variate by the Box-Muller transform (one of each pair, no cached state).
    /// Portable up to the last bits of std::log/std::cos/std::sqrt of the platform's libm.
    double normal();

private:
    std::mt19937_64 m_engine;
};

} // namespace foxhunt::stats
