// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// From per-bar returns to daily returns and Sharpe ratios.

#include <cstdint>
#include <span>
#include <vector>

namespace foxhunt::stats {

/// Trading days per year used to annualise daily Sharpe ratios.
inline constexpr double kTradingDaysPerYear = 252.0;

/// One trading day's compounded simple return.
struct DailyReturn {
    std::int64_t day = 0; ///< the day key as given (e.g. days since epoch, or yyyymmdd)
    double ret = 0.0;     ///< prod(1 + r_bar) - 1 over that day's bars
    std::size_t bars = 0; ///< bars compounded into it
};

/// Compounds per-bar simple returns into one return per trading day: consecutive bars with the
/// same day key form one day, ret = prod(1 + r) - 1. Bars must be in time order, so the keys
/// must be non-decreasing; throws std::invalid_argument when sizes differ or a key goes back.
std::vector<DailyReturn> dailyReturns(std::span<const double> barReturns, std::span<const std::int64_t> barDays);
/// The `ret` column of dailyReturns(), for the functions below.
std::vector<double> dailyReturnValues(std::span<const double> barReturns, std::span<const std::int64_t> barDays);

/// Annualised Sharpe ratio of DAILY returns: mean / sampleStd * sqrt(252), zero risk-free rate.
/// NaN when fewer than 2 days or the standard deviation is 0.
double annualisedDailySharpe(std::span<const double> dailyReturns);
/// Per-bar Sharpe ratio: mean / sampleStd of the bar returns themselves, NOT annualised and not
/// comparable across bar sizes; the per-observation Sharpe that PSR and DSR take. NaN when fewer
/// than 2 bars or the standard deviation is 0.
double perBarSharpe(std::span<const double> barReturns);

} // namespace foxhunt::stats
