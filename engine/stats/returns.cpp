// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/returns.h"

#include "engine/stats/descriptive.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace foxhunt::stats {

std::vector<DailyReturn> dailyReturns(std::span<const double> barReturns, std::span<const std::int64_t> barDays)
{
    if (barReturns.size() != barDays.size())
        throw std::invalid_argument("dailyReturns: " + std::to_string(barReturns.size()) + " returns but " +
                                    std::to_string(barDays.size()) + " day keys");
    std::vector<DailyReturn> days;
    double growth = 1.0;
    for (std::size_t i = 0; i < barReturns.size(); ++i) {
        if (days.empty() || barDays[i] != days.back().day) {
            if (!days.empty()) {
                if (barDays[i] < days.back().day)
                    throw std::invalid_argument("dailyReturns: day key goes back at bar " + std::to_string(i) + " (" +
                                                std::to_string(barDays[i]) + " after " +
                                                std::to_string(days.back().day) + ")");
                days.back().ret = growth - 1.0;
            }
            days.push_back(DailyReturn{barDays[i], 0.0, 0});
            growth = 1.0;
        }
        growth *= 1.0 + barReturns[i];
        ++days.back().bars;
    }
    if (!days.empty()) days.back().ret = growth - 1.0;
    return days;
}

std::vector<double> dailyReturnValues(std::span<const double> barReturns, std::span<const std::int64_t> barDays)
{
    std::vector<double> values;
    for (const DailyReturn& d : dailyReturns(barReturns, barDays)) values.push_back(d.ret);
    return values;
}

double perBarSharpe(std::span<const double> barReturns)
{
    if (barReturns.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    const double sd = sampleStd(barReturns);
    if (!(sd > 0.0)) return std::numeric_limits<double>::quiet_NaN();
    return mean(barReturns) / sd;
}

double annualisedDailySharpe(std::span<const double> dailyReturns)
{
    return perBarSharpe(dailyReturns) * std::sqrt(kTradingDaysPerYear);
}

} // namespace foxhunt::stats
