// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/market_time.h"

#include <date/tz.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace foxhunt {

namespace {

using SysNs = date::sys_time<std::chrono::nanoseconds>;
using SysSec = date::sys_seconds;

std::int64_t toNs(std::chrono::seconds s)
{
    return static_cast<std::int64_t>(s.count()) * 1'000'000'000;
}

} // namespace

struct ZoneConverter::Impl {
    const date::time_zone* zone = nullptr;
    std::string name;
    // Cached UTC period [begin, end) with a constant offset (from sys_info).
    std::int64_t sysBegin = 1, sysEnd = 0, sysOffsetNs = 0;
    // Cached local period [begin, end) where local->UTC is unique with one offset.
    std::int64_t localBegin = 1, localEnd = 0, localOffsetNs = 0;

    void refreshSys(std::int64_t utcNs)
    {
        const auto tp = SysSec{std::chrono::seconds{floorDiv(utcNs, 1'000'000'000)}};
        const date::sys_info info = zone->get_info(tp);
        sysBegin = clampNs(info.begin.time_since_epoch());
        sysEnd = clampNs(info.end.time_since_epoch());
        sysOffsetNs = toNs(info.offset);
    }

    static std::int64_t floorDiv(std::int64_t a, std::int64_t b)
    {
        const std::int64_t q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
    static std::int64_t clampNs(std::chrono::seconds s)
    {
        constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 1'000'000'000;
        if (s.count() >= kMax) return std::numeric_limits<std::int64_t>::max();
        if (s.count() <= -kMax) return std::numeric_limits<std::int64_t>::min();
        return toNs(s);
    }
};

ZoneConverter::ZoneConverter(std::string_view zoneName) : m_impl(std::make_unique<Impl>())
{
    try {
        m_impl->zone = date::locate_zone(zoneName);
    } catch (const std::exception&) {
        throw std::invalid_argument("unknown time zone '" + std::string(zoneName) + "'");
    }
    m_impl->name = std::string(zoneName);
}

ZoneConverter::~ZoneConverter() = default;
ZoneConverter::ZoneConverter(ZoneConverter&&) noexcept = default;
ZoneConverter& ZoneConverter::operator=(ZoneConverter&&) noexcept = default;

const std::string& ZoneConverter::name() const
{
    return m_impl->name;
}

std::int64_t ZoneConverter::offsetSeconds(std::int64_t utcNs)
{
    Impl& d = *m_impl;
    if (utcNs < d.sysBegin || utcNs >= d.sysEnd) d.refreshSys(utcNs);
    return d.sysOffsetNs / 1'000'000'000;
}

std::int64_t ZoneConverter::utcToLocal(std::int64_t utcNs)
{
    Impl& d = *m_impl;
    if (utcNs < d.sysBegin || utcNs >= d.sysEnd) d.refreshSys(utcNs);
    return utcNs + d.sysOffsetNs;
}

std::optional<std::int64_t> ZoneConverter::localToUtc(std::int64_t localNs, AmbiguousTime ambiguous)
{
    Impl& d = *m_impl;
    if (localNs >= d.localBegin && localNs < d.localEnd) return localNs - d.localOffsetNs;

    const auto lt = date::local_seconds{std::chrono::seconds{Impl::floorDiv(localNs, 1'000'000'000)}};
    const date::local_info info = d.zone->get_info(lt);
    if (info.result == date::local_info::nonexistent) return std::nullopt;
    if (info.result == date::local_info::ambiguous) {
        const auto& period = ambiguous == AmbiguousTime::Earliest ? info.first : info.second;
        return localNs - toNs(period.offset);
    }
    // Unique: cache the local span of this period, trimmed so it never covers
    // an ambiguous or nonexistent stretch next to it.
    const std::int64_t off = toNs(info.first.offset);
    const std::int64_t begin = Impl::clampNs(info.first.begin.time_since_epoch());
    const std::int64_t end = Impl::clampNs(info.first.end.time_since_epoch());
    constexpr std::int64_t kHour2 = 2 * 3600 * 1'000'000'000LL;
    d.localBegin = begin == std::numeric_limits<std::int64_t>::min() ? begin : begin + off + kHour2;
    d.localEnd = end == std::numeric_limits<std::int64_t>::max() ? end : end + off - kHour2;
    d.localOffsetNs = off;
    return localNs - off;
}

bool ZoneConverter::isAmbiguous(std::int64_t localNs)
{
    const auto lt = date::local_seconds{std::chrono::seconds{Impl::floorDiv(localNs, 1'000'000'000)}};
    return m_impl->zone->get_info(lt).result == date::local_info::ambiguous;
}

std::int64_t daysFromCivil(int year, unsigned month, unsigned day)
{
    const date::sys_days d = date::year{year} / date::month{month} / date::day{day};
    return d.time_since_epoch().count();
}

void civilFromDays(std::int64_t days, int& year, unsigned& month, unsigned& day)
{
    const date::year_month_day ymd{date::sys_days{date::days{days}}};
    year = int(ymd.year());
    month = unsigned(ymd.month());
    day = unsigned(ymd.day());
}

int weekdayFromDays(std::int64_t days)
{
    return static_cast<int>(date::weekday{date::sys_days{date::days{days}}}.c_encoding());
}

std::string formatDate(std::int64_t days)
{
    int y = 0;
    unsigned m = 0, d = 0;
    civilFromDays(days, y, m, d);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", y, m, d);
    return buf;
}

namespace {
std::int64_t floorDivNs(std::int64_t a, std::int64_t b)
{
    const std::int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
} // namespace

std::string formatUtc(std::int64_t utcNs)
{
    const std::int64_t days = floorDivNs(utcNs, 86'400'000'000'000LL);
    const std::int64_t nsOfDay = utcNs - days * 86'400'000'000'000LL;
    const std::int64_t secOfDay = nsOfDay / 1'000'000'000;
    const std::int64_t frac = nsOfDay % 1'000'000'000;
    char buf[64];
    const std::string date = formatDate(days);
    if (frac == 0) {
        std::snprintf(buf, sizeof buf, "%sT%02lld:%02lld:%02lldZ", date.c_str(),
                      static_cast<long long>(secOfDay / 3600), static_cast<long long>(secOfDay / 60 % 60),
                      static_cast<long long>(secOfDay % 60));
    } else {
        std::snprintf(buf, sizeof buf, "%sT%02lld:%02lld:%02lld.%09lldZ", date.c_str(),
                      static_cast<long long>(secOfDay / 3600), static_cast<long long>(secOfDay / 60 % 60),
                      static_cast<long long>(secOfDay % 60), static_cast<long long>(frac));
    }
    return buf;
}

std::optional<std::int64_t> parseDate(std::string_view text)
{
    auto digits = [&](std::size_t pos, std::size_t n, int& out) {
        if (pos + n > text.size()) return false;
        out = 0;
        for (std::size_t i = pos; i < pos + n; ++i) {
            if (text[i] < '0' || text[i] > '9') return false;
            out = out * 10 + (text[i] - '0');
        }
        return true;
    };
    int y = 0, m = 0, d = 0;
    bool ok = false;
    if (text.size() == 10 && text[4] == '-' && text[7] == '-')
        ok = digits(0, 4, y) && digits(5, 2, m) && digits(8, 2, d);
    else if (text.size() == 8) ok = digits(0, 4, y) && digits(4, 2, m) && digits(6, 2, d);
    if (!ok || m < 1 || m > 12 || d < 1) return std::nullopt;
    const date::year_month_day ymd{date::year{y}, date::month{unsigned(m)}, date::day{unsigned(d)}};
    if (!ymd.ok()) return std::nullopt;
    return date::sys_days{ymd}.time_since_epoch().count();
}

EsCalendar::EsCalendar() : m_zone("America/New_York") { }

std::int64_t EsCalendar::tradingDay(std::int64_t utcNs)
{
    // Sessions open at 18:00 ET: shifting local time by +6 h maps the whole
    // session onto the calendar day on which it closes.
    const std::int64_t local = m_zone.utcToLocal(utcNs) + 6 * 3'600'000'000'000LL;
    return floorDivNs(local, 86'400'000'000'000LL);
}

double EsCalendar::minuteOfDayEt(std::int64_t utcNs)
{
    const std::int64_t local = m_zone.utcToLocal(utcNs);
    const std::int64_t nsOfDay = local - floorDivNs(local, 86'400'000'000'000LL) * 86'400'000'000'000LL;
    return static_cast<double>(nsOfDay) / 60e9;
}

double EsCalendar::minutesSinceSessionOpen(std::int64_t utcNs)
{
    const double m = minuteOfDayEt(utcNs) - 18.0 * 60.0;
    return m < 0 ? m + 1440.0 : m;
}

bool EsCalendar::isRegularSession(std::int64_t utcNs)
{
    const double m = minuteOfDayEt(utcNs);
    return m >= 9 * 60 + 30 && m < 16 * 60;
}

} // namespace foxhunt
