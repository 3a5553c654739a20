// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The days CME equity-index futures (ES) do not trade a regular session, by rule.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace foxhunt {

/// One exchange holiday: its (observed) date and its name.
struct CmeHoliday {
    std::int64_t day = 0;  ///< days since 1970-01-01 of the observed date
    std::string_view name; ///< "Good Friday", "Thanksgiving Day", ...
};

/// CME equity holidays of a year, in date order: New Year's Day, Martin Luther King Jr.
/// Day (from 1998), Presidents' Day, Good Friday, Memorial Day, Juneteenth (from 2022),
/// Independence Day, Labor Day, Thanksgiving and Christmas. A fixed-date holiday on a
/// Saturday is observed the Friday before, on a Sunday the Monday after, except New
/// Year's Day, which is not moved back into the old year. One-off closures (national days
/// of mourning, storms) are not rules and are not listed.
std::vector<CmeHoliday> cmeEquityHolidays(int year);

/// The holiday observed on a date (days since epoch), if any.
std::optional<CmeHoliday> cmeEquityHoliday(std::int64_t day);

/// Easter Sunday of a Gregorian year (days since epoch).
std::int64_t easterSunday(int year);

} // namespace foxhunt
