// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/data_report.h"

#include "engine/data/market_time.h"
#include "engine/report/svg_chart.h"
#include "engine/store/store_json.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace foxhunt {

namespace {

std::string fmt(double v, int decimals = 4)
{
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

const char* kCss =
    R"(body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:960px;padding:12px;color:#222}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;border-bottom:1px solid #ddd;padding-bottom:2px;margin-top:1.4em}
table{border-collapse:collapse;width:100%;font-size:.9em;margin:.5em 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}.synthetic{background:#fff3cd;border:1px solid #e0c060;padding:8px;margin:8px 0}
.meta td{text-align:left}.chart{max-width:100%;height:auto}@media print{body{max-width:none}}
@media (max-width:600px){table{font-size:.75em}})";

} // namespace

std::string renderDataReportHtml(const DataReport& r)
{
    std::ostringstream h;
    h << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      << "<title>Foxhunt data report: " << escapeXml(r.series.symbol) << "</title><style>" << kCss
      << "</style></head><body>";
    h << "<h1>Foxhunt data report: " << escapeXml(r.series.symbol) << "</h1>";
    if (r.series.synthetic())
        h << "<div class=\"synthetic\"><b>Synthetic data.</b> This series is the bundled ES-like generator's output, "
             "not a real market. Import real bars with <code>foxhunt-cli import</code>.</div>";
    h << "<table class=\"meta\"><tr><td>Foxhunt</td><td>" << FOXHUNT_VERSION << "</td></tr>"
      << "<tr><td>LibTorch</td><td>" << escapeXml(r.torchVersion) << "</td></tr>"
      << "<tr><td>Series</td><td>" << escapeXml(r.series.symbol) << " (" << escapeXml(toString(r.series.kind)) << ", "
      << escapeXml(r.series.dataset) << ", " << r.series.intervalNs / kNsPerSecond << " s bars)</td></tr>"
      << "<tr><td>Stored range</td><td>" << formatUtc(r.series.firstTs) << " .. " << formatUtc(r.series.lastTs) << " ("
      << r.series.barCount << " bars)</td></tr>"
      << "<tr><td>Replayed</td><td>" << r.barsReplayed << " bars in " << fmt(r.wallSeconds, 3) << " s ("
      << fmt(r.barsPerSecond / 1e6, 2) << " M bars/s, max speed)</td></tr></table>";

    SvgSeries close{"close", "#1f77b4", {}, {}};
    close.x.reserve(r.bars.size());
    close.y.reserve(r.bars.size());
    for (const Bar& b : r.bars) {
        close.x.push_back(static_cast<double>(b.tsEvent / kNsPerSecond));
        close.y.push_back(toPoints(b.close));
    }
    h << "<h2>Price</h2>"
      << renderSvgLineChart({close}, {.title = "Close (index points)", .yLabel = "points", .timeAxis = true});

    h << "<h2>Walk-forward split</h2><table><tr><th>Part</th><th>From (UTC)</th><th>To (UTC)</th><th>Bars</th></tr>";
    for (const SplitPart& p : r.split)
        h << "<tr><td>" << escapeXml(p.name) << "</td><td>" << formatUtc(p.fromTs) << "</td><td>" << formatUtc(p.toTs)
          << "</td><td>" << p.bars << "</td></tr>";
    h << "</table>";

    const GapCounts gaps = countGaps(r.gaps);
    const std::uint64_t other = gaps.other;
    h << "<h2>Gaps and rolls</h2><p>" << gaps.dailyBreaks << " daily maintenance breaks, " << gaps.weekends
      << " weekends, " << gaps.holidays << " exchange holidays, " << other
      << " other gaps (missing data or unlisted closures). Gaps are reported, never filled.</p>";
    if (other > 0) {
        h << "<table><tr><th>Other gap from (UTC)</th><th>to</th><th>minutes</th></tr>";
        int shown = 0;
        for (const Gap& g : r.gaps) {
            if (g.kind != Gap::Kind::Other || ++shown > 25) continue;
            h << "<tr><td>" << formatUtc(g.fromTs) << "</td><td>" << formatUtc(g.toTs) << "</td><td>"
              << fmt(static_cast<double>(g.toTs - g.fromTs) / 60e9, 0) << "</td></tr>";
        }
        h << "</table>";
    }
    if (r.rolls.empty()) {
        h << "<p>No contract rolls in this series.</p>";
    } else {
        h << "<table><tr><th>Trading day</th><th>From</th><th>To</th><th>Price gap</th></tr>";
        for (const Roll& roll : r.rolls)
            h << "<tr><td>" << formatDate(roll.tradingDay) << "</td><td>" << escapeXml(roll.fromSymbol) << "</td><td>"
              << escapeXml(roll.toSymbol) << "</td><td>" << fmt(toPoints(roll.priceGap), 2) << "</td></tr>";
        h << "</table>";
    }

    h << "<h2>Online features (normalised, no look-ahead)</h2><table><tr><th>Feature</th><th>Mean</th><th>Std</th>"
         "<th>Min</th><th>Max</th></tr>";
    for (const FeatureSummary& f : r.features)
        h << "<tr><td>" << escapeXml(f.name) << "</td><td>" << fmt(f.mean) << "</td><td>" << fmt(f.stddev)
          << "</td><td>" << fmt(f.min) << "</td><td>" << fmt(f.max) << "</td></tr>";
    h << "</table></body></html>\n";
    return h.str();
}

nlohmann::json dataReportJson(const DataReport& r)
{
    nlohmann::json j;
    j["foxhunt_version"] = FOXHUNT_VERSION;
    j["torch_version"] = r.torchVersion;
    j["series"] = toJson(r.series);
    j["synthetic"] = r.series.synthetic();
    j["bars_replayed"] = r.barsReplayed;
    j["wall_seconds"] = r.wallSeconds;
    j["bars_per_second"] = r.barsPerSecond;
    nlohmann::json split = nlohmann::json::array();
    for (const SplitPart& p : r.split)
        split.push_back({{"name", p.name},
                         {"from_ts", p.fromTs},
                         {"to_ts", p.toTs},
                         {"from", formatUtc(p.fromTs)},
                         {"to", formatUtc(p.toTs)},
                         {"bars", p.bars}});
    j["split"] = split;
    const GapCounts gaps = countGaps(r.gaps);
    j["gaps"] = {{"daily_breaks", gaps.dailyBreaks},
                 {"weekends", gaps.weekends},
                 {"holidays", gaps.holidays},
                 {"other", gaps.other}};
    nlohmann::json rolls = nlohmann::json::array();
    for (const Roll& roll : r.rolls) rolls.push_back(toJson(roll));
    j["rolls"] = rolls;
    nlohmann::json features = nlohmann::json::array();
    for (const FeatureSummary& f : r.features)
        features.push_back({{"name", f.name}, {"mean", f.mean}, {"std", f.stddev}, {"min", f.min}, {"max", f.max}});
    j["features"] = features;
    return j;
}

} // namespace foxhunt
