// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The bundled default: a small, deterministic, ES-like bar generator, clearly
// labelled synthetic wherever it is shown.

#include "engine/data/bar.h"

#include <cstdint>
#include <vector>

namespace foxhunt {

/// Symbol and dataset under which the synthetic default is stored.
inline constexpr const char* kSyntheticSymbol = "ES.SYNTH";
inline constexpr const char* kSyntheticDataset = "synthetic";

/// Options of the generator. The defaults give 40 trading days of 1-minute bars.
struct SyntheticOptions {
    std::uint64_t seed = 20240101; ///< same seed -> same bars, bit for bit
    int tradingDays = 40;          ///< Monday-Friday sessions, 18:00-17:00 ET
    int startYear = 2024;          ///< first session closes on the first weekday on/after startYear-startMonth-startDay
    unsigned startMonth = 1;
    unsigned startDay = 8;
    std::int64_t intervalNs = 60'000'000'000; ///< bar length (1 minute)
    double startPrice = 4700.0;               ///< index points
    double annualVolatility = 0.16;           ///< of the random walk, before the intraday profile
    double baseVolume = 400.0;                ///< mean contracts per overnight minute; RTH is several times higher
    /// Planted, learnable edge for tests: a deterministic drift (ticks per bar),
    /// upward during the first hour of the regular session (09:30-10:30 ET) and
    /// downward during its last hour (15:00-16:00 ET). 0 = none (the default).
    double plantedDriftTicks = 0.0;
};

/// Generates bars on the 0.25 grid with OHLC consistency, a U-shaped intraday
/// volume and volatility profile, and the daily 17:00-18:00 ET break.
std::vector<Bar> generateSyntheticBars(const SyntheticOptions& options = {});

} // namespace foxhunt
