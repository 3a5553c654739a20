// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Portable random draws on std::mt19937_64 (the standard distributions are
// implementation-defined; these give the same numbers on every platform).

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace foxhunt {

/// Uniform double in [0, 1) with 53 random bits.
inline double uniform01(std::mt19937_64& rng)
{
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Uniform integer in [0, n) by multiply-shift (n > 0).
inline std::uint64_t uniformIndex(std::mt19937_64& rng, std::uint64_t n)
{
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

/// The engine's full state as text, for checkpoints.
inline std::string rngState(const std::mt19937_64& rng)
{
    std::ostringstream out;
    out << rng;
    return out.str();
}

/// Restores a state written by rngState().
inline void setRngState(std::mt19937_64& rng, const std::string& state)
{
    std::istringstream in(state);
    in >> rng;
}

} // namespace foxhunt
