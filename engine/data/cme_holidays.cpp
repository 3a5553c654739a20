// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/cme_holidays.h"

#include "engine/data/market_time.h"

#include <algorithm>

namespace foxhunt {

namespace {

constexpr int kMonday = 1, kThursday = 4, kSaturday = 6, kSunday = 0;

// The n-th (1-based) given weekday of a month.
std::int64_t nthWeekday(int year, unsigned month, int weekday, int n)
{
    const std::int64_t first = daysFromCivil(year, month, 1);
    return first + (weekday - weekdayFromDays(first) + 7) % 7 + 7 * (n - 1);
}

std::int64_t lastWeekday(int year, unsigned month, int weekday)
{
    const std::int64_t last = daysFromCivil(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, 1) - 1;
    return last - (weekdayFromDays(last) - weekday + 7) % 7;
}

// Saturday -> Friday before, Sunday -> Monday after.
std::int64_t observed(std::int64_t day)
{
    const int w = weekdayFromDays(day);
    return w == kSaturday ? day - 1 : w == kSunday ? day + 1 : day;
}

} // namespace

std::int64_t easterSunday(int year)
{
    // The anonymous Gregorian algorithm (Meeus/Jones/Butcher).
    const int a = year % 19, b = year / 100, c = year % 100;
    const int d = b / 4, e = b % 4, f = (b + 8) / 25, g = (b - f + 1) / 3;
    const int h = (19 * a + b - d - g + 15) % 30;
    const int i = c / 4, k = c % 4;
    const int l = (32 + 2 * e + 2 * i - h - k) % 7;
    const int m = (a + 11 * h + 22 * l) / 451;
    const int month = (h + l - 7 * m + 114) / 31;
    const int day = (h + l - 7 * m + 114) % 31 + 1;
    return daysFromCivil(year, unsigned(month), unsigned(day));
}

std::vector<CmeHoliday> cmeEquityHolidays(int year)
{
    std::vector<CmeHoliday> out;
    const std::int64_t newYear = daysFromCivil(year, 1, 1);
    if (weekdayFromDays(newYear) != kSaturday) out.push_back({observed(newYear), "New Year's Day"});
    if (year >= 1998) out.push_back({nthWeekday(year, 1, kMonday, 3), "Martin Luther King Jr. Day"});
    out.push_back({nthWeekday(year, 2, kMonday, 3), "Presidents' Day"});
    out.push_back({easterSunday(year) - 2, "Good Friday"});
    out.push_back({lastWeekday(year, 5, kMonday), "Memorial Day"});
    if (year >= 2022) out.push_back({observed(daysFromCivil(year, 6, 19)), "Juneteenth"});
    out.push_back({observed(daysFromCivil(year, 7, 4)), "Independence Day"});
    out.push_back({nthWeekday(year, 9, kMonday, 1), "Labor Day"});
    out.push_back({nthWeekday(year, 11, kThursday, 4), "Thanksgiving Day"});
    out.push_back({observed(daysFromCivil(year, 12, 25)), "Christmas Day"});
    std::sort(out.begin(), out.end(), [](const CmeHoliday& a, const CmeHoliday& b) { return a.day < b.day; });
    return out;
}

std::optional<CmeHoliday> cmeEquityHoliday(std::int64_t day)
{
    int year = 0;
    unsigned month = 0, dom = 0;
    civilFromDays(day, year, month, dom);
    // The observed New Year's Day of next year never falls in this one (see above), so one year suffices.
    for (const CmeHoliday& h : cmeEquityHolidays(year))
        if (h.day == day) return h;
    return std::nullopt;
}

} // namespace foxhunt
