// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Walk-forward splits of one bar series into train / validation / test by ES
// trading day, so that no session is ever cut in two and later data never
// lands in an earlier part.

#include "engine/data/bar.h"
#include "engine/data/index_range.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace foxhunt {

/// A half-open UTC interval [fromTs, toTs) in nanoseconds.
struct DateRange {
    std::int64_t fromTs = 0;
    std::int64_t toTs = 0;
    /// True when ts lies in [fromTs, toTs).
    bool contains(std::int64_t ts) const { return ts >= fromTs && ts < toTs; }
    friend bool operator==(const DateRange&, const DateRange&) = default;
};

/// One train / validation / test split. The date ranges run from the 18:00 ET
/// open of a part's first trading day to the 18:00 ET open after its last one.
struct WalkForwardSplit {
    DateRange train, validation, test;                           ///< UTC spans of the three parts
    IndexRange trainIndex, validationIndex, testIndex;           ///< the same parts as bar index ranges
    std::size_t trainBars = 0, validationBars = 0, testBars = 0; ///< bars in each part
    /// First trading day (days since epoch, EsCalendar::tradingDay) of each part,
    /// and the day after the last one of test.
    std::int64_t trainStartDay = 0, validationStartDay = 0, testStartDay = 0, endDay = 0;
};

/// Splits at the given trading days (days since epoch): train is every day
/// before validationStartDay, validation runs up to testStartDay, test is the
/// rest. Throws std::invalid_argument when bars are out of time order or a part
/// would be empty.
WalkForwardSplit splitByDates(const std::vector<Bar>& bars, std::int64_t validationStartDay, std::int64_t testStartDay);

/// Splits by share of bars, each boundary moved to the nearest trading-day
/// boundary (every part keeps at least one day). Throws std::invalid_argument
/// for fractions outside (0, 1), train + validation >= 1, or fewer than 3 trading days.
WalkForwardSplit splitByFraction(const std::vector<Bar>& bars, double trainFraction = 0.7,
                                 double validationFraction = 0.15);

/// A run's split: at the given trading days when both are set (a walk-forward fold member's
/// explicit split), else by share of bars. Throws as splitByDates() or splitByFraction().
WalkForwardSplit splitForRun(const std::vector<Bar>& bars, double trainFraction, double validationFraction,
                             std::optional<std::int64_t> validationStartDay, std::optional<std::int64_t> testStartDay);

/// Expanding-window walk-forward folds. The first fold trains on the first
/// initialTrainFraction of the trading days; the remaining days are cut into
/// folds + 1 equal blocks of whole days. Fold k validates on block k and tests
/// on block k + 1 (the last fold's test also takes the leftover days), and
/// trains on everything before its validation block, so each fold's training
/// set is the previous one plus the previous validation block. Throws
/// std::invalid_argument for folds == 0, a fraction outside (0, 1), or too few days.
std::vector<WalkForwardSplit> walkForwardFolds(const std::vector<Bar>& bars, std::size_t folds,
                                               double initialTrainFraction = 0.5);

/// The UTC instant at which trading day `day` opens (18:00 ET the evening before).
std::int64_t sessionOpenUtc(std::int64_t day);

} // namespace foxhunt
