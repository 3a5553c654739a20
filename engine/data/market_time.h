// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Time zones and the ES trading calendar, with the lookups cached so that
// converting millions of timestamps stays cheap.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace foxhunt {

/// What to do with a naive local time that occurs twice (the autumn DST fall-back hour).
enum class AmbiguousTime { Earliest, Latest };

/// Converts between UTC and one IANA time zone, caching the current offset period.
/// Not thread-safe: use one converter per thread.
class ZoneConverter {
public:
    /// Throws std::invalid_argument naming the zone when it is unknown.
    explicit ZoneConverter(std::string_view zoneName = "America/New_York");
    ~ZoneConverter();
    ZoneConverter(ZoneConverter&&) noexcept;
    ZoneConverter& operator=(ZoneConverter&&) noexcept;

    const std::string& name() const;

    /// UTC ns -> local wall-clock ns (as if the local time were UTC).
    std::int64_t utcToLocal(std::int64_t utcNs);
    /// UTC offset in seconds at the given instant (e.g. -18000 for EST).
    std::int64_t offsetSeconds(std::int64_t utcNs);

    /// Local wall-clock ns -> UTC ns. Ambiguous times resolve by `ambiguous`;
    /// nonexistent times (the spring-forward gap) return std::nullopt.
    std::optional<std::int64_t> localToUtc(std::int64_t localNs, AmbiguousTime ambiguous = AmbiguousTime::Earliest);

    /// True when the local time falls in a fall-back hour (occurs twice).
    bool isAmbiguous(std::int64_t localNs);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Days since 1970-01-01 for a civil date (proleptic Gregorian).
std::int64_t daysFromCivil(int year, unsigned month, unsigned day);
/// Civil date for days since 1970-01-01.
void civilFromDays(std::int64_t days, int& year, unsigned& month, unsigned& day);
/// 0 = Sunday ... 6 = Saturday.
int weekdayFromDays(std::int64_t days);
/// "YYYY-MM-DD" for days since epoch.
std::string formatDate(std::int64_t days);
/// ISO-8601 UTC, e.g. "2020-12-28T00:00:00Z" (fractional seconds only when non-zero).
std::string formatUtc(std::int64_t utcNs);
/// Parses "YYYY-MM-DD" (or YYYYMMDD) to days since epoch; nullopt when malformed.
std::optional<std::int64_t> parseDate(std::string_view text);

/// The ES trading calendar in New York time: the electronic session for
/// trading day D opens at 18:00 ET on the previous calendar day and closes at
/// 17:00 ET on D; the regular session is 09:30-16:00 ET.
class EsCalendar {
public:
    EsCalendar();

    /// Trading day (days since epoch, the ET date on which the session closes).
    std::int64_t tradingDay(std::int64_t utcNs);
    /// Minutes since 18:00 ET of the session this bar belongs to, 0..1379.
    double minutesSinceSessionOpen(std::int64_t utcNs);
    /// Minutes since local midnight ET, 0..1439.99.
    double minuteOfDayEt(std::int64_t utcNs);
    /// True inside 09:30-16:00 ET.
    bool isRegularSession(std::int64_t utcNs);
    /// The converter for America/New_York used underneath.
    ZoneConverter& zone() { return m_zone; }

private:
    ZoneConverter m_zone;
};

} // namespace foxhunt
