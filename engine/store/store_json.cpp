// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/store_json.h"

#include "engine/data/market_time.h"

#include <nlohmann/json.hpp>

namespace foxhunt {

namespace {

const char* gapKindName(Gap::Kind kind)
{
    switch (kind) {
    case Gap::Kind::DailyBreak: return "daily_break";
    case Gap::Kind::Weekend: return "weekend";
    case Gap::Kind::Holiday: return "holiday";
    case Gap::Kind::Other: return "other";
    }
    return "other";
}

} // namespace

nlohmann::json toJson(const ImportResult& r)
{
    nlohmann::json j;
    j["path"] = r.path;
    j["format"] = toString(r.format);
    j["status"] = r.alreadyImported ? "already_imported" : "imported";
    j["sha256"] = r.sha256;
    j["rows_read"] = r.rowsRead;
    j["imported"] = r.imported;
    j["already_stored"] = r.alreadyStored;
    j["replaced"] = r.replaced;
    j["removed"] = r.removed;
    j["duplicates_dropped"] = r.duplicatesDropped;
    j["warnings"] = r.warnings;
    j["first_ts"] = r.firstTs;
    j["last_ts"] = r.lastTs;
    j["first_time"] = r.rowsRead > 0 || r.imported > 0 ? formatUtc(r.firstTs) : "";
    j["last_time"] = r.rowsRead > 0 || r.imported > 0 ? formatUtc(r.lastTs) : "";
    j["instrument"] = r.instrument;
    j["series_ids"] = r.seriesIds;

    const ValidationReport& v = r.validation;
    nlohmann::json dups = nlohmann::json::array();
    for (const DuplicateRun& d : v.duplicateRuns)
        dups.push_back({{"first_line", d.firstLine},
                        {"last_line", d.lastLine},
                        {"original_line", d.originalLine},
                        {"rows", d.rows}});
    j["duplicate_runs"] = dups;
    j["off_grid_prices"] = v.offGridPrices;
    j["interval_s"] = v.intervalNs / kNsPerSecond;
    j["gaps"] = {
        {"daily_breaks", v.dailyBreaks}, {"weekends", v.weekends}, {"holidays", v.holidays}, {"other", v.otherGaps}};
    nlohmann::json rolls = nlohmann::json::array();
    for (const Roll& roll : r.rolls) rolls.push_back(toJson(roll));
    j["rolls"] = rolls;
    return j;
}

nlohmann::json toJson(const SeriesInfo& s)
{
    return {{"id", s.id},
            {"symbol", s.symbol},
            {"dataset", s.dataset},
            {"kind", toString(s.kind)},
            {"synthetic", s.synthetic()},
            {"interval_s", s.intervalNs / kNsPerSecond},
            {"bars", s.barCount},
            {"first_ts", s.firstTs},
            {"last_ts", s.lastTs},
            {"first_time", s.barCount ? formatUtc(s.firstTs) : ""},
            {"last_time", s.barCount ? formatUtc(s.lastTs) : ""}};
}

nlohmann::json toJson(const Roll& roll)
{
    return {{"ts", roll.ts},           {"time", formatUtc(roll.ts)}, {"trading_day", formatDate(roll.tradingDay)},
            {"from", roll.fromSymbol}, {"to", roll.toSymbol},        {"price_gap", toPoints(roll.priceGap)}};
}

nlohmann::json toJson(const Gap& gap)
{
    return {{"kind", gapKindName(gap.kind)},
            {"from_ts", gap.fromTs},
            {"to_ts", gap.toTs},
            {"from", formatUtc(gap.fromTs)},
            {"to", formatUtc(gap.toTs)},
            {"minutes", static_cast<double>(gap.toTs - gap.fromTs) / 60e9}};
}

} // namespace foxhunt
