// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal: the forecasters' latest median forecasts as extra agent inputs
// (SessionConfig::ensemble). During training a bar's values are computed once per tick and shared
// by every agent at that bar; for evaluation a table over the validation and test bars is
// computed in batches.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace foxhunt {

class ForecasterTrainer;
struct ForecastData;

struct EnsembleFeed {
    std::vector<ForecasterTrainer*> forecasters;
    const ForecastData* data = nullptr;
    std::size_t size = 0;       ///< sum of the forecasters' horizons
    std::size_t bar = SIZE_MAX; ///< bar of `values`
    long long tick = -1;        ///< tick `values` were computed at
    std::vector<float> values;
    std::size_t tableFrom = 0, tableTo = 0;
    std::vector<float> table; ///< [tableTo - tableFrom, size]

    /// The medians at bar `at` as of tick `now` into `out` (zeros where a forecaster has no full window).
    void fill(std::size_t at, long long now, std::span<float> out);
    /// Computes the table for bars [from, to).
    void buildTable(std::size_t from, std::size_t to);
};

} // namespace foxhunt
