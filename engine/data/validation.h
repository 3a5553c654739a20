// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Validation of a parsed file: the rules a bar series must satisfy before it is stored.

#include "engine/data/parsed_file.h"

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// A run of exact duplicate rows that were dropped.
struct DuplicateRun {
    std::uint64_t firstLine = 0;    ///< first file line of the dropped run
    std::uint64_t lastLine = 0;     ///< last file line of the dropped run
    std::uint64_t originalLine = 0; ///< the line the first dropped row repeats
    std::uint64_t rows = 0;
};

/// A gap between consecutive bars of one instrument that is longer than the bar interval.
struct Gap {
    enum class Kind { DailyBreak, Weekend, Holiday, Other };
    Kind kind = Kind::Other;
    std::int64_t fromTs = 0; ///< start of the last bar before the gap (UTC ns)
    std::int64_t toTs = 0;   ///< start of the first bar after it
};

/// What validation found. Bars in `file` are updated in place (duplicates removed).
struct ValidationReport {
    std::uint64_t rowsIn = 0;
    std::uint64_t rowsKept = 0;
    std::uint64_t duplicatesDropped = 0;
    std::vector<DuplicateRun> duplicateRuns;
    std::uint64_t offGridPrices = 0;      ///< bars with a price off the 0.25 tick grid (warning)
    std::uint64_t offGridFirstLine = 0;   ///< file line of the first such bar (0 = none)
    std::uint64_t earlyBars = 0;          ///< bars dated before kPlausibleFromTs (warning)
    std::uint64_t earlyFirstLine = 0;     ///< file line of the first such bar (0 = none)
    std::uint64_t futureBars = 0;         ///< bars dated more than a day after the import (warning)
    std::uint64_t futureFirstLine = 0;    ///< file line of the first such bar (0 = none)
    std::uint64_t priceJumps = 0;         ///< bars with a price kPriceJumpRatio away from the previous close (warning)
    std::uint64_t priceJumpFirstLine = 0; ///< file line of the first such bar (0 = none)
    std::int64_t intervalNs = 0;          ///< the bar interval (from the file, else the most common step)
    std::vector<Gap> gaps;
    std::uint64_t dailyBreaks = 0, weekends = 0, otherGaps = 0;
    std::uint64_t holidays = 0;        ///< gaps over a CME equity holiday (engine/data/cme_holidays.h)
    std::vector<std::string> warnings; ///< readable, ready for a report
};

/// 1982-01-01T00:00:00Z: S&P 500 futures began trading in 1982, so an earlier bar is
/// accepted (when inside kMinBarTs .. kMaxBarTs) but flagged.
inline constexpr std::int64_t kPlausibleFromTs = 4383 * kNsPerDay;

/// A bar whose high is above, or whose low is below, the previous close of its
/// instrument by more than this factor (up 50 %, or down by a third) is flagged as implausible.
/// ES has not moved that far in one bar (its worst day, 1987-10-19, lost about 20 %).
inline constexpr double kPriceJumpRatio = 1.5;

/// Checks OHLC consistency, prices in (0, kMaxBarPrice] and not Databento's undefined
/// price, volumes that fit the store, timestamps in kMinBarTs .. kMaxBarTs and
/// increasing per instrument; drops exact duplicates (counted, with their file
/// lines); classifies gaps; warns of bars dated before 1982 or in the future, and
/// of prices that jump by more than kPriceJumpRatio from the previous close.
/// Throws ImportError (`file:line: reason`) when the file must be rejected whole.
ValidationReport validateBars(ParsedFile& file);

/// Gaps longer than intervalNs between consecutive bars of ONE instrument (time
/// order), classified by the interval. Intraday (under a day), against the ES
/// calendar in New York time: DailyBreak covers a Monday-Thursday 17:00-18:00 ET
/// break with at most an hour missing either side; Weekend covers the Friday 17:00
/// to Sunday 18:00 ET closure and ends before Monday's 17:00 close; Holiday covers
/// a CME equity holiday's closure (17:00 ET the day before to 18:00 ET on it, joined
/// to an adjacent weekend), from within the session before it to the close of the
/// session after it; anything else is Other. Daily (a day or longer), by the UTC
/// dates of the bars: no gap unless a date is skipped; Weekend when only Saturdays
/// and Sundays are, Holiday when only those and holidays are, else Other.
std::vector<Gap> findGaps(const std::vector<Bar>& bars, std::int64_t intervalNs);

/// Fixed point as exact decimal text: 3702750000000 -> "3702.75".
std::string formatPrice(std::int64_t fixed);

/// Gaps counted by kind.
struct GapCounts {
    std::uint64_t dailyBreaks = 0, weekends = 0, other = 0;
    std::uint64_t holidays = 0;
};
/// Counts gaps by kind.
GapCounts countGaps(const std::vector<Gap>& gaps);

/// The most common positive step between consecutive bars (one instrument, time
/// order); the smaller step on a tie; 0 when there is none.
std::int64_t inferIntervalNs(const std::vector<Bar>& bars);

} // namespace foxhunt
