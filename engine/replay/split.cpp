// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/split.h"

#include "engine/data/market_time.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace foxhunt {

namespace {

constexpr std::int64_t kSessionOpenOffsetNs = 6 * 3600 * kNsPerSecond; // 18:00 is 6 h before midnight

// The distinct trading days of a series and the index of each day's first bar.
struct TradingDays {
    std::vector<std::int64_t> days;
    std::vector<std::size_t> starts; // starts[k] = first bar of days[k]; starts.back() = bars.size()
    std::size_t count() const { return days.size(); }
};

TradingDays scanTradingDays(const std::vector<Bar>& bars, const char* who)
{
    if (bars.empty()) throw std::invalid_argument(std::string(who) + ": no bars to split");
    TradingDays out;
    EsCalendar calendar;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        if (i > 0 && bars[i].tsEvent < bars[i - 1].tsEvent)
            throw std::invalid_argument(std::string(who) + ": bars are not in time order at index " +
                                        std::to_string(i) + " (" + formatUtc(bars[i].tsEvent) + " after " +
                                        formatUtc(bars[i - 1].tsEvent) + ")");
        const std::int64_t day = calendar.tradingDay(bars[i].tsEvent);
        if (out.days.empty() || day != out.days.back()) {
            out.days.push_back(day);
            out.starts.push_back(i);
        }
    }
    out.starts.push_back(bars.size());
    return out;
}

std::int64_t openUtc(ZoneConverter& zone, std::int64_t day)
{
    // 18:00 ET never falls in a DST transition (they happen at 02:00), so the lookup always succeeds.
    const auto utc = zone.localToUtc(day * kNsPerDay - kSessionOpenOffsetNs);
    if (!utc) throw std::logic_error("split: 18:00 ET on " + formatDate(day - 1) + " does not exist");
    return *utc;
}

// First position in `td` whose day is >= `day`.
std::size_t dayPosition(const TradingDays& td, std::int64_t day)
{
    return static_cast<std::size_t>(std::lower_bound(td.days.begin(), td.days.end(), day) - td.days.begin());
}

WalkForwardSplit makeSplit(const TradingDays& td, ZoneConverter& zone, std::int64_t trainStartDay,
                           std::int64_t validationStartDay, std::int64_t testStartDay, std::int64_t endDay)
{
    WalkForwardSplit s;
    s.trainStartDay = trainStartDay;
    s.validationStartDay = validationStartDay;
    s.testStartDay = testStartDay;
    s.endDay = endDay;
    const std::size_t p0 = dayPosition(td, trainStartDay);
    const std::size_t p1 = dayPosition(td, validationStartDay);
    const std::size_t p2 = dayPosition(td, testStartDay);
    const std::size_t p3 = dayPosition(td, endDay);
    s.trainIndex = {td.starts[p0], td.starts[p1]};
    s.validationIndex = {td.starts[p1], td.starts[p2]};
    s.testIndex = {td.starts[p2], td.starts[p3]};
    s.trainBars = s.trainIndex.size();
    s.validationBars = s.validationIndex.size();
    s.testBars = s.testIndex.size();
    const std::int64_t t0 = openUtc(zone, trainStartDay);
    const std::int64_t t1 = openUtc(zone, validationStartDay);
    const std::int64_t t2 = openUtc(zone, testStartDay);
    const std::int64_t t3 = openUtc(zone, endDay);
    s.train = {t0, t1};
    s.validation = {t1, t2};
    s.test = {t2, t3};
    return s;
}

bool isFraction(double f)
{
    return f > 0.0 && f < 1.0;
}

// The day position in [lo, hi] whose first bar index is nearest `target` (earliest on a tie).
std::size_t nearestBoundary(const TradingDays& td, double target, std::size_t lo, std::size_t hi)
{
    std::size_t best = lo;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (std::size_t k = lo; k <= hi; ++k) {
        const double distance = std::abs(double(td.starts[k]) - target);
        if (distance < bestDistance) {
            best = k;
            bestDistance = distance;
        }
    }
    return best;
}

} // namespace

std::int64_t sessionOpenUtc(std::int64_t day)
{
    ZoneConverter zone("America/New_York");
    return openUtc(zone, day);
}

WalkForwardSplit splitByDates(const std::vector<Bar>& bars, std::int64_t validationStartDay, std::int64_t testStartDay)
{
    const TradingDays td = scanTradingDays(bars, "splitByDates");
    if (validationStartDay >= testStartDay)
        throw std::invalid_argument("splitByDates: validation start " + formatDate(validationStartDay) +
                                    " must be before test start " + formatDate(testStartDay));
    const std::int64_t first = td.days.front();
    const std::int64_t last = td.days.back();
    const auto range = " (bars cover trading days " + formatDate(first) + " to " + formatDate(last) + ")";
    if (validationStartDay <= first)
        throw std::invalid_argument("splitByDates: no training days before validation start " +
                                    formatDate(validationStartDay) + range);
    if (testStartDay > last)
        throw std::invalid_argument("splitByDates: no test days on or after " + formatDate(testStartDay) + range);
    ZoneConverter zone("America/New_York");
    WalkForwardSplit s = makeSplit(td, zone, first, validationStartDay, testStartDay, last + 1);
    if (s.validationBars == 0)
        throw std::invalid_argument("splitByDates: no bars between " + formatDate(validationStartDay) + " and " +
                                    formatDate(testStartDay) + range);
    return s;
}

WalkForwardSplit splitForRun(const std::vector<Bar>& bars, double trainFraction, double validationFraction,
                             std::optional<std::int64_t> validationStartDay, std::optional<std::int64_t> testStartDay)
{
    if (validationStartDay && testStartDay) return splitByDates(bars, *validationStartDay, *testStartDay);
    return splitByFraction(bars, trainFraction, validationFraction);
}

WalkForwardSplit splitByFraction(const std::vector<Bar>& bars, double trainFraction, double validationFraction)
{
    if (!isFraction(trainFraction) || !isFraction(validationFraction) || !(trainFraction + validationFraction < 1.0))
        throw std::invalid_argument("splitByFraction: fractions must lie in (0, 1) and leave room for test (train " +
                                    std::to_string(trainFraction) + ", validation " +
                                    std::to_string(validationFraction) + ")");
    const TradingDays td = scanTradingDays(bars, "splitByFraction");
    const std::size_t days = td.count();
    if (days < 3)
        throw std::invalid_argument("splitByFraction: need at least 3 trading days to split, the bars cover " +
                                    std::to_string(days));
    const double n = double(bars.size());
    const std::size_t p1 = nearestBoundary(td, trainFraction * n, 1, days - 2);
    const std::size_t p2 = nearestBoundary(td, (trainFraction + validationFraction) * n, p1 + 1, days - 1);
    ZoneConverter zone("America/New_York");
    return makeSplit(td, zone, td.days.front(), td.days[p1], td.days[p2], td.days.back() + 1);
}

std::vector<WalkForwardSplit> walkForwardFolds(const std::vector<Bar>& bars, std::size_t folds,
                                               double initialTrainFraction)
{
    if (folds == 0) throw std::invalid_argument("walkForwardFolds: need at least one fold");
    if (!isFraction(initialTrainFraction))
        throw std::invalid_argument("walkForwardFolds: initial train fraction must lie in (0, 1), got " +
                                    std::to_string(initialTrainFraction));
    const TradingDays td = scanTradingDays(bars, "walkForwardFolds");
    const std::size_t days = td.count();
    const auto initial = std::max<std::size_t>(1, std::size_t(std::llround(initialTrainFraction * double(days))));
    const std::size_t rest = days > initial ? days - initial : 0;
    const std::size_t block = rest / (folds + 1);
    if (block == 0)
        throw std::invalid_argument("walkForwardFolds: " + std::to_string(folds) + " folds need at least " +
                                    std::to_string(folds + 1) + " trading days after the first " +
                                    std::to_string(initial) + " training days; the bars cover " + std::to_string(days) +
                                    " days in all");
    ZoneConverter zone("America/New_York");
    std::vector<WalkForwardSplit> out;
    out.reserve(folds);
    for (std::size_t k = 0; k < folds; ++k) {
        const std::size_t validationPos = initial + k * block;
        const std::size_t testPos = validationPos + block;
        const std::size_t endPos = k + 1 == folds ? days : testPos + block;
        const std::int64_t endDay = endPos == days ? td.days.back() + 1 : td.days[endPos];
        out.push_back(makeSplit(td, zone, td.days.front(), td.days[validationPos], td.days[testPos], endDay));
    }
    return out;
}

} // namespace foxhunt
