// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/validation.h"

#include "engine/data/cme_holidays.h"
#include "engine/data/import_error.h"
#include "engine/data/market_time.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace foxhunt {

namespace {

constexpr std::int64_t kNsPerHour = 3600 * kNsPerSecond;

std::int64_t floorDiv(std::int64_t a, std::int64_t b)
{
    const std::int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::string formatInterval(std::int64_t ns)
{
    if (ns > 0 && ns % kNsPerDay == 0) return std::to_string(ns / kNsPerDay) + "d";
    if (ns > 0 && ns % kNsPerHour == 0) return std::to_string(ns / kNsPerHour) + "h";
    if (ns > 0 && ns % kNsPerMinute == 0) return std::to_string(ns / kNsPerMinute) + "m";
    if (ns > 0 && ns % kNsPerSecond == 0) return std::to_string(ns / kNsPerSecond) + "s";
    return std::to_string(ns) + "ns";
}

// Accepted bars of one instrument: positions in the compacted output, time order.
struct InstrumentState {
    std::int64_t lastTs = std::numeric_limits<std::int64_t>::min();
    std::int64_t lastClose = 0; ///< 0 until a bar is accepted
    std::vector<std::uint32_t> kept;
};

// checkBar has put open and close between low and high, so those two suffice.
inline bool jumps(std::int64_t previousClose, const Bar& b)
{
    const double ref = static_cast<double>(previousClose);
    return static_cast<double>(b.high) > ref * kPriceJumpRatio || static_cast<double>(b.low) * kPriceJumpRatio < ref;
}

// A timestamp for a message: as a date where formatUtc can show it, else as raw nanoseconds.
std::string describeTs(std::int64_t ts)
{
    constexpr std::int64_t kShowable = 106'750 * kNsPerDay; // inside int64 either side of 1970
    return ts > -kShowable && ts < kShowable ? formatUtc(ts) : std::to_string(ts) + " ns since 1970";
}

[[noreturn]] __attribute__((noinline, cold)) void badPrice(const std::string& file, std::uint64_t line, const Bar& b)
{
    const std::pair<const char*, std::int64_t> prices[] = {
        {"open", b.open}, {"high", b.high}, {"low", b.low}, {"close", b.close}};
    for (const auto& [name, value] : prices)
        if (value == kUndefinedPrice)
            throw ImportError(file, line,
                              std::string("undefined ") + name +
                                  " price (Databento's null price, "
                                  "INT64_MAX): the bar has no value to store");
    for (const auto& [name, value] : prices)
        if (value > kMaxBarPrice)
            throw ImportError(file, line,
                              std::string(name) + " price " + formatPrice(value) +
                                  " cannot be real (the most "
                                  "an import accepts is " +
                                  formatPrice(kMaxBarPrice) + ")");
    throw ImportError(file, line,
                      "non-positive price (open " + formatPrice(b.open) + ", high " + formatPrice(b.high) + ", low " +
                          formatPrice(b.low) + ", close " + formatPrice(b.close) + ")");
}

void checkBar(const std::string& file, std::uint64_t line, const Bar& b)
{
    if (b.tsEvent < kMinBarTs || b.tsEvent >= kMaxBarTs) [[unlikely]]
        throw ImportError(file, line,
                          "timestamp " + describeTs(b.tsEvent) + " is outside the accepted range (" +
                              kBarTimeRangeText + ")");
    if (b.volume > kMaxBarVolume) [[unlikely]]
        throw ImportError(file, line,
                          "volume " + std::to_string(b.volume) + " cannot be real (the most a bar can hold is " +
                              std::to_string(kMaxBarVolume) + ")");
    if (b.open <= 0 || b.high <= 0 || b.low <= 0 || b.close <= 0 || b.open > kMaxBarPrice || b.high > kMaxBarPrice ||
        b.low > kMaxBarPrice || b.close > kMaxBarPrice) [[unlikely]]
        badPrice(file, line, b);
    if (b.low > b.high)
        throw ImportError(file, line, "low " + formatPrice(b.low) + " is above high " + formatPrice(b.high));
    if (b.high < std::max(b.open, b.close))
        throw ImportError(file, line,
                          "high " + formatPrice(b.high) + " is below open " + formatPrice(b.open) + " or close " +
                              formatPrice(b.close));
    if (b.low > std::min(b.open, b.close))
        throw ImportError(file, line,
                          "low " + formatPrice(b.low) + " is above open " + formatPrice(b.open) + " or close " +
                              formatPrice(b.close));
}

inline bool offGrid(const Bar& b)
{
    return (b.open % kEsTick) != 0 || (b.high % kEsTick) != 0 || (b.low % kEsTick) != 0 || (b.close % kEsTick) != 0;
}

void countSteps(const std::vector<Bar>& bars, std::unordered_map<std::int64_t, std::uint64_t>& counts)
{
    // Runs of equal steps are counted once per run to keep the map traffic low.
    std::int64_t runStep = 0;
    std::uint64_t runLen = 0;
    for (std::size_t i = 1; i < bars.size(); ++i) {
        const std::int64_t step = bars[i].tsEvent - bars[i - 1].tsEvent;
        if (step <= 0) continue;
        if (step == runStep) {
            ++runLen;
            continue;
        }
        if (runLen) counts[runStep] += runLen;
        runStep = step;
        runLen = 1;
    }
    if (runLen) counts[runStep] += runLen;
}

std::int64_t mostCommon(const std::unordered_map<std::int64_t, std::uint64_t>& counts)
{
    std::int64_t best = 0;
    std::uint64_t bestCount = 0;
    for (const auto& [step, count] : counts)
        if (count > bestCount || (count == bestCount && step < best)) {
            best = step;
            bestCount = count;
        }
    return best;
}

// True when la..lb (ET wall time, the end of the last bar to the next bar) spans a
// closure that holds a holiday: each holiday H closes from 17:00 on H-1 to 18:00 on H
// (early-close holidays halt at midday and reopen at 18:00 too, inside that window),
// joined to a weekend next to it. The gap may begin anywhere in the session before
// the closure (early closes) and must end before the close of the session after it.
bool coversHolidayClosure(std::int64_t la, std::int64_t lb)
{
    if (lb - la > 6 * kNsPerDay) return false;
    const std::int64_t first = floorDiv(la, kNsPerDay), last = floorDiv(lb, kNsPerDay) + 1;
    for (std::int64_t h = first; h <= last; ++h) {
        if (!cmeEquityHoliday(h)) continue;
        std::int64_t start = (h - 1) * kNsPerDay + 17 * kNsPerHour;
        std::int64_t end = h * kNsPerDay + 18 * kNsPerHour;
        // Join the weekend before (Monday holidays) and after (Friday holidays), and a
        // second holiday next to it.
        for (bool grew = true; grew;) {
            grew = false;
            const std::int64_t before = floorDiv(start, kNsPerDay); // the day the closure starts on
            const int wb = weekdayFromDays(before);
            if (wb == 0) {
                start = (before - 2) * kNsPerDay + 17 * kNsPerHour;
                grew = true;
            } else if (cmeEquityHoliday(before)) {
                start = (before - 1) * kNsPerDay + 17 * kNsPerHour;
                grew = true;
            }
            const std::int64_t after = floorDiv(end, kNsPerDay) + 1; // the day after the reopening day
            const int wa = weekdayFromDays(after);
            if (wa == 6) {
                end = (after + 1) * kNsPerDay + 18 * kNsPerHour;
                grew = true;
            } else if (cmeEquityHoliday(after)) {
                end = after * kNsPerDay + 18 * kNsPerHour;
                grew = true;
            }
        }
        const std::int64_t sessionBefore = start - 23 * kNsPerHour; // 18:00 the evening before
        const std::int64_t closeAfter = end + 23 * kNsPerHour;      // 17:00 the next day
        if (la > sessionBefore && la <= end && lb >= end && lb < closeAfter) return true;
    }
    return false;
}

Gap::Kind classify(ZoneConverter& ny, std::int64_t lastBarEnd, std::int64_t nextBar)
{
    const std::int64_t la = ny.utcToLocal(lastBarEnd);
    const std::int64_t lb = ny.utcToLocal(nextBar);
    const std::int64_t dayA = floorDiv(la, kNsPerDay);
    const int wA = weekdayFromDays(dayA);

    // The Monday-Thursday maintenance break, with at most an hour missing on either side.
    if (wA >= 1 && wA <= 4) {
        const std::int64_t breakStart = dayA * kNsPerDay + 17 * kNsPerHour;
        const std::int64_t breakEnd = breakStart + kNsPerHour;
        if (la <= breakStart && lb >= breakEnd && la >= breakStart - kNsPerHour && lb <= breakEnd + kNsPerHour)
            return Gap::Kind::DailyBreak;
    }
    // The weekend closure, Friday 17:00 to Sunday 18:00, plus at most the partial
    // sessions next to it (RTH-only files reopen on Monday morning).
    std::int64_t friday = dayA + (5 - wA + 7) % 7;
    if (wA == 6) friday = dayA - 1;
    else if (wA == 0) friday = dayA - 2;
    const std::int64_t closeFri = friday * kNsPerDay + 17 * kNsPerHour;
    const std::int64_t openSun = (friday + 2) * kNsPerDay + 18 * kNsPerHour;
    const std::int64_t openThu = (friday - 1) * kNsPerDay + 18 * kNsPerHour;
    const std::int64_t closeMon = (friday + 3) * kNsPerDay + 17 * kNsPerHour;
    if (la <= closeFri && lb >= openSun && la > openThu && lb < closeMon) return Gap::Kind::Weekend;
    if (coversHolidayClosure(la, lb)) return Gap::Kind::Holiday;
    return Gap::Kind::Other;
}

// Daily bars by their UTC dates (Databento's daily bars start at 00:00 UTC, naive
// vendor dates at local midnight, both on the trading day's date).
Gap::Kind classifyDaily(std::int64_t fromTs, std::int64_t toTs, bool& isGap)
{
    const std::int64_t a = floorDiv(fromTs, kNsPerDay), b = floorDiv(toTs, kNsPerDay);
    isGap = b - a > 1;
    if (!isGap) return Gap::Kind::Other; // a 25-hour step over a DST change skips no date
    if (b - a > 12) return Gap::Kind::Other;
    bool holiday = false;
    for (std::int64_t d = a + 1; d < b; ++d) {
        const int w = weekdayFromDays(d);
        if (w == 0 || w == 6) continue;
        if (!cmeEquityHoliday(d)) return Gap::Kind::Other;
        holiday = true;
    }
    return holiday ? Gap::Kind::Holiday : Gap::Kind::Weekend;
}

} // namespace

std::string formatPrice(std::int64_t fixed)
{
    std::string out = fixed < 0 ? "-" : "";
    const std::uint64_t mag = fixed < 0 ? 0 - static_cast<std::uint64_t>(fixed) : static_cast<std::uint64_t>(fixed);
    out += std::to_string(mag / 1'000'000'000ULL);
    std::uint64_t frac = mag % 1'000'000'000ULL;
    if (frac != 0) {
        std::string digits = std::to_string(frac);
        digits.insert(0, 9 - digits.size(), '0');
        while (digits.back() == '0') digits.pop_back();
        out += '.' + digits;
    }
    return out;
}

std::int64_t inferIntervalNs(const std::vector<Bar>& bars)
{
    std::unordered_map<std::int64_t, std::uint64_t> counts;
    countSteps(bars, counts);
    return mostCommon(counts);
}

std::vector<Gap> findGaps(const std::vector<Bar>& bars, std::int64_t intervalNs)
{
    std::vector<Gap> gaps;
    if (intervalNs <= 0) return gaps;
    std::optional<ZoneConverter> ny;
    for (std::size_t i = 1; i < bars.size(); ++i) {
        const std::int64_t from = bars[i - 1].tsEvent;
        const std::int64_t to = bars[i].tsEvent;
        if (to - from <= intervalNs) continue;
        if (intervalNs >= kNsPerDay) {
            bool isGap = false;
            const Gap::Kind kind = classifyDaily(from, to, isGap);
            if (isGap) gaps.push_back(Gap{kind, from, to});
            continue;
        }
        if (!ny) ny.emplace("America/New_York");
        gaps.push_back(Gap{classify(*ny, from + intervalNs, to), from, to});
    }
    return gaps;
}

ValidationReport validateBars(ParsedFile& file)
{
    ValidationReport report;
    std::vector<Bar>& bars = file.bars;
    std::vector<std::uint64_t>& lines = file.lines;
    if (lines.size() != bars.size()) {
        lines.resize(bars.size());
        for (std::size_t i = 0; i < lines.size(); ++i) lines[i] = i + 1;
    }
    report.rowsIn = bars.size();

    std::vector<InstrumentState> states;
    std::unordered_map<std::uint32_t, std::size_t> stateIndex;
    std::uint32_t cachedId = 0;
    InstrumentState* cached = nullptr;
    bool previousDropped = false;
    std::size_t kept = 0;
    // A day of slack: a bar stamped at its end, or in a zone ahead of UTC, is not "in the future".
    const std::int64_t futureTs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count() +
                                  kNsPerDay;

    states.reserve(16);
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const Bar bar = bars[i];
        const std::uint64_t line = lines[i];
        checkBar(file.path, line, bar);

        if (!cached || bar.instrumentId != cachedId) {
            auto [it, inserted] = stateIndex.try_emplace(bar.instrumentId, states.size());
            if (inserted) {
                states.emplace_back();
                // Most files hold one instrument: size its list once.
                if (states.size() == 1) states.back().kept.reserve(bars.size());
            }
            cached = &states[it->second];
            cachedId = bar.instrumentId;
        }
        InstrumentState& st = *cached;

        if (bar.tsEvent > st.lastTs) {
            st.lastTs = bar.tsEvent;
            st.kept.push_back(static_cast<std::uint32_t>(kept));
            bars[kept] = bar;
            lines[kept] = line;
            ++kept;
            previousDropped = false;
            if (st.lastClose > 0 && jumps(st.lastClose, bar)) [[unlikely]] {
                if (report.priceJumps == 0) report.priceJumpFirstLine = line;
                ++report.priceJumps;
            }
            st.lastClose = bar.close;
            if (offGrid(bar)) {
                if (report.offGridPrices == 0) report.offGridFirstLine = line;
                ++report.offGridPrices;
            }
            if (bar.tsEvent < kPlausibleFromTs) [[unlikely]] {
                if (report.earlyBars == 0) report.earlyFirstLine = line;
                ++report.earlyBars;
            } else if (bar.tsEvent > futureTs) [[unlikely]] {
                if (report.futureBars == 0) report.futureFirstLine = line;
                ++report.futureBars;
            }
            continue;
        }

        // Accepted timestamps are increasing, so the earlier occurrence is a binary search away.
        const auto pos = std::lower_bound(st.kept.begin(), st.kept.end(), bar.tsEvent,
                                          [&](std::uint32_t k, std::int64_t ts) { return bars[k].tsEvent < ts; });
        if (pos == st.kept.end() || bars[*pos].tsEvent != bar.tsEvent) {
            const std::uint32_t lastKept = st.kept.back();
            throw ImportError(file.path, line,
                              "timestamp " + formatUtc(bar.tsEvent) + " is out of order (line " +
                                  std::to_string(lines[lastKept]) + " already reached " +
                                  formatUtc(bars[lastKept].tsEvent) + ")");
        }
        if (!(bars[*pos] == bar))
            throw ImportError(file.path, line,
                              "conflicting duplicate of line " + std::to_string(lines[*pos]) + " (" +
                                  formatUtc(bar.tsEvent) + " with different values)");
        ++report.duplicatesDropped;
        if (previousDropped) {
            DuplicateRun& run = report.duplicateRuns.back();
            run.lastLine = line;
            ++run.rows;
        } else {
            report.duplicateRuns.push_back(DuplicateRun{line, line, lines[*pos], 1});
        }
        previousDropped = true;
    }
    bars.resize(kept);
    lines.resize(kept);
    report.rowsKept = kept;

    // Gaps and the interval are per instrument.
    std::vector<std::vector<Bar>> perInstrument;
    if (states.size() > 1) {
        perInstrument.resize(states.size());
        for (std::size_t s = 0; s < states.size(); ++s) {
            perInstrument[s].reserve(states[s].kept.size());
            for (std::uint32_t k : states[s].kept) perInstrument[s].push_back(bars[k]);
        }
    }
    report.intervalNs = file.intervalNs;
    if (report.intervalNs <= 0) {
        std::unordered_map<std::int64_t, std::uint64_t> counts;
        if (perInstrument.empty()) countSteps(bars, counts);
        for (const auto& series : perInstrument) countSteps(series, counts);
        report.intervalNs = mostCommon(counts);
    }
    if (perInstrument.empty()) {
        report.gaps = findGaps(bars, report.intervalNs);
    } else {
        for (const auto& series : perInstrument) {
            auto g = findGaps(series, report.intervalNs);
            report.gaps.insert(report.gaps.end(), g.begin(), g.end());
        }
    }
    for (const Gap& g : report.gaps) {
        switch (g.kind) {
        case Gap::Kind::DailyBreak: ++report.dailyBreaks; break;
        case Gap::Kind::Weekend: ++report.weekends; break;
        case Gap::Kind::Holiday: ++report.holidays; break;
        case Gap::Kind::Other: ++report.otherGaps; break;
        }
    }

    for (const DuplicateRun& run : report.duplicateRuns)
        report.warnings.push_back(std::to_string(run.rows) + " exact duplicate row" + (run.rows == 1 ? "" : "s") +
                                  " dropped: lines " + std::to_string(run.firstLine) + "-" +
                                  std::to_string(run.lastLine) + " repeat from line " +
                                  std::to_string(run.originalLine));
    if (report.offGridPrices > 0)
        report.warnings.push_back(
            std::to_string(report.offGridPrices) + " bar" + (report.offGridPrices == 1 ? "" : "s") +
            " with prices off the 0.25 tick grid (first at line " + std::to_string(report.offGridFirstLine) + ")");
    if (report.priceJumps > 0)
        report.warnings.push_back(std::to_string(report.priceJumps) + " bar" + (report.priceJumps == 1 ? "" : "s") +
                                  " with a price more than 1.5x above or below the previous close of their instrument "
                                  "(first at line " +
                                  std::to_string(report.priceJumpFirstLine) + ")");
    if (report.earlyBars > 0)
        report.warnings.push_back(std::to_string(report.earlyBars) + " bar" + (report.earlyBars == 1 ? "" : "s") +
                                  " dated before 1982, when S&P 500 futures began trading (first at line " +
                                  std::to_string(report.earlyFirstLine) + ")");
    if (report.futureBars > 0)
        report.warnings.push_back(std::to_string(report.futureBars) + " bar" + (report.futureBars == 1 ? "" : "s") +
                                  " dated in the future (first at line " + std::to_string(report.futureFirstLine) +
                                  ")");
    if (!report.gaps.empty())
        report.warnings.push_back(std::to_string(report.gaps.size()) + " gaps longer than the " +
                                  formatInterval(report.intervalNs) +
                                  " interval (not filled): " + std::to_string(report.dailyBreaks) + " daily breaks, " +
                                  std::to_string(report.weekends) + " weekends, " + std::to_string(report.holidays) +
                                  " holidays, " + std::to_string(report.otherGaps) + " other");
    return report;
}

GapCounts countGaps(const std::vector<Gap>& gaps)
{
    GapCounts c;
    for (const Gap& g : gaps) {
        switch (g.kind) {
        case Gap::Kind::DailyBreak: ++c.dailyBreaks; break;
        case Gap::Kind::Weekend: ++c.weekends; break;
        case Gap::Kind::Holiday: ++c.holidays; break;
        case Gap::Kind::Other: ++c.other; break;
        }
    }
    return c;
}

} // namespace foxhunt
