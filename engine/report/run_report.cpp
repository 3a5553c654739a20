#include "engine/report/run_report.h"

#include "engine/data/market_time.h"
#include "engine/report/svg_chart.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace foxhunt {

namespace {

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

std::string num(const nlohmann::json& v, int decimals = 4)
{
    if (!v.is_number()) return v.is_null() ? "n/a" : v.dump();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v.get<double>());
    return buf;
}

const char* kCss = R"(body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:980px;padding:12px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;margin-top:1.5em}h3{font-size:1.05em}
table{border-collapse:collapse;width:100%;font-size:.88em;margin:.5em 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}.warn{background:#fff3cd;border:1px solid #e0c060;padding:8px;margin:8px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:8px}pre{white-space:pre-wrap;font-size:.8em;background:#f8f8f8;padding:6px}
@media print{body{max-width:none}.grid{display:block}}@media (max-width:600px){table{font-size:.72em}})";

} // namespace

nlohmann::json runReportJson(BarStore& store, const std::vector<std::int64_t>& runIds)
{
    RunStore runs(store);
    nlohmann::json report;
    report["foxhunt_version"] = FOXHUNT_VERSION;
    report["generated"] = formatUtc(wallClockNs());
    report["machine"] = {{"cpu", cpuModel()}, {"hardware_threads", std::thread::hardware_concurrency()}, {"gpu", nullptr}};
    nlohmann::json list = nlohmann::json::array();
    for (std::int64_t id : runIds) {
        const std::optional<RunInfo> info = runs.run(id);
        if (!info) throw std::invalid_argument("no run " + std::to_string(id) + " in " + store.path());
        nlohmann::json r;
        r["id"] = info->id;
        r["name"] = info->name;
        r["status"] = toString(info->status);
        r["created"] = formatUtc(info->createdNs);
        r["finished"] = info->finishedNs ? formatUtc(info->finishedNs) : "";
        r["duration_s"] = info->finishedNs ? static_cast<double>(info->finishedNs - info->createdNs) / 1e9 : 0.0;
        r["series"] = info->series;
        r["data_from"] = formatUtc(info->fromTs);
        r["data_to"] = formatUtc(info->toTs);
        r["config"] = nlohmann::json::parse(info->configJson);
        r["versions"] = nlohmann::json::parse(info->versionsJson);
        r["error"] = info->error;
        const auto series = store.findSeries(std::to_string(info->seriesId));
        r["synthetic"] = series ? series->synthetic() : false;
        nlohmann::json evals = nlohmann::json::object();
        for (const EvaluationRecord& e : runs.evaluations(id)) evals[e.model][e.split] = nlohmann::json::parse(e.resultJson);
        r["evaluations"] = evals;
        nlohmann::json metrics = nlohmann::json::object();
        for (const MetricSample& s : runs.metrics(id)) {
            nlohmann::json& m = metrics[s.model][s.metric];
            m["step"].push_back(s.step);
            m["value"].push_back(s.value);
        }
        r["metrics"] = metrics;
        list.push_back(std::move(r));
    }
    report["runs"] = list;
    return report;
}

std::string renderRunReportHtml(const nlohmann::json& report)
{
    const nlohmann::json& runs = report.at("runs");
    std::ostringstream h;
    const std::string title = runs.size() == 1 ? "Foxhunt run " + std::to_string(runs[0]["id"].get<long long>()) + ": " +
                                                     runs[0]["name"].get<std::string>()
                                               : "Foxhunt comparison of " + std::to_string(runs.size()) + " runs";
    h << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width,initial-scale=1\"><title>"
      << escapeXml(title) << "</title><style>" << kCss << "</style></head><body><h1>" << escapeXml(title) << "</h1>";
    h << "<p>Generated " << escapeXml(report["generated"].get<std::string>()) << " by Foxhunt "
      << escapeXml(report["foxhunt_version"].get<std::string>()) << " on " << escapeXml(report["machine"]["cpu"].get<std::string>())
      << " (" << report["machine"]["hardware_threads"] << " hardware threads, no GPU).</p>";

    h << "<h2>Runs</h2><table><tr><th>Run</th><th>Status</th><th>Series</th><th>Data</th><th>Models</th><th>Seed</th>"
         "<th>Steps</th><th>Duration (s)</th><th>LibTorch</th></tr>";
    for (const auto& r : runs) {
        std::string models;
        for (const auto& m : r["config"]["models"]) models += (models.empty() ? "" : ", ") + m.get<std::string>();
        h << "<tr><td>" << r["id"] << " " << escapeXml(r["name"].get<std::string>()) << "</td><td>"
          << escapeXml(r["status"].get<std::string>()) << "</td><td>" << escapeXml(r["series"].get<std::string>())
          << (r["synthetic"].get<bool>() ? " (synthetic)" : "") << "</td><td>" << escapeXml(r["data_from"].get<std::string>())
          << " .. " << escapeXml(r["data_to"].get<std::string>()) << "</td><td>" << escapeXml(models) << "</td><td>"
          << r["config"]["seed"] << "</td><td>" << r["config"]["steps"] << "</td><td>" << num(r["duration_s"], 1) << "</td><td>"
          << escapeXml(r["versions"].value("torch", "")) << "</td></tr>";
    }
    h << "</table>";

    // Warnings the runs flagged.
    for (const auto& r : runs) {
        if (r["synthetic"].get<bool>())
            h << "<div class=\"warn\">Run " << r["id"] << " trained on the bundled <b>synthetic</b> series, not real market data.</div>";
        if (r["status"] == "failed")
            h << "<div class=\"warn\">Run " << r["id"] << " failed: " << escapeXml(r["error"].get<std::string>()) << "</div>";
    }

    // Per model: charts overlaid across runs, then evaluation tables.
    std::map<std::string, std::map<std::string, bool>> modelMetrics;
    for (const auto& r : runs)
        for (const auto& [model, metrics] : r["metrics"].items())
            for (const auto& [metric, _] : metrics.items()) modelMetrics[model][metric] = true;
    for (const auto& [model, metrics] : modelMetrics) {
        h << "<h2>" << escapeXml(model) << "</h2><div class=\"grid\">";
        for (const auto& [metric, _] : metrics) {
            std::vector<SvgSeries> lines;
            std::size_t k = 0;
            for (const auto& r : runs) {
                const auto mm = r["metrics"].find(model);
                if (mm == r["metrics"].end() || !mm->contains(metric)) continue;
                SvgSeries s{"run " + std::to_string(r["id"].get<long long>()), kPalette[k++ % 6], {}, {}};
                const auto& d = (*mm)[metric];
                for (std::size_t i = 0; i < d["step"].size(); ++i) {
                    s.x.push_back(d["step"][i].get<double>());
                    s.y.push_back(d["value"][i].is_number() ? d["value"][i].get<double>() : std::nan(""));
                }
                lines.push_back(std::move(s));
            }
            h << renderSvgLineChart(lines, {.title = metric, .yLabel = "", .width = 480, .height = 220});
        }
        h << "</div>";
        for (const auto& r : runs) {
            const auto ev = r["evaluations"].find(model);
            if (ev == r["evaluations"].end()) continue;
            for (const char* split : {"validation", "test"}) {
                if (!ev->contains(split)) continue;
                const auto& e = (*ev)[split];
                h << "<h3>Run " << r["id"] << ", " << split << "</h3>";
                if (e.contains("policy")) {
                    h << "<table><tr><th></th><th>PnL USD</th><th>PnL ticks</th><th>Sharpe</th><th>Sortino</th><th>Max DD USD</th>"
                         "<th>Calmar</th><th>Win rate</th><th>Profit factor</th><th>Trades</th><th>Turnover</th></tr>";
                    for (const auto& [label, key] : {std::pair{"agent", "policy"}, std::pair{"flat", "flat"},
                                                     std::pair{"buy and hold", "buy_and_hold"}}) {
                        const auto& p = e[key];
                        h << "<tr><td>" << label << "</td><td>" << num(p["pnl_usd"], 2) << "</td><td>" << num(p["pnl_ticks"], 1)
                          << "</td><td>" << num(p["sharpe"], 2) << "</td><td>" << num(p["sortino"], 2) << "</td><td>"
                          << num(p["max_drawdown_usd"], 2) << "</td><td>" << num(p["calmar"], 2) << "</td><td>"
                          << num(p["win_rate"], 3) << "</td><td>" << num(p["profit_factor"], 2) << "</td><td>" << p["trades"]
                          << "</td><td>" << p["turnover"] << "</td></tr>";
                    }
                    h << "</table>";
                    SvgSeries eq{"agent equity (USD)", kPalette[0], {}, {}};
                    for (std::size_t i = 0; i < e["equity_usd"].size(); ++i) {
                        eq.x.push_back(static_cast<double>(i));
                        eq.y.push_back(e["equity_usd"][i].get<double>());
                    }
                    h << renderSvgLineChart({eq}, {.title = std::string("Equity on ") + split + " (flat = 0)", .yLabel = "USD"});
                } else if (e.contains("model")) {
                    h << "<table><tr><th></th><th>Quantile loss</th><th>MAE of median</th><th>Directional accuracy</th>"
                         "<th>10-90 coverage</th></tr>";
                    for (const auto& [label, key] : {std::pair{"model", "model"}, std::pair{"zero return", "zero_return"},
                                                     std::pair{"persistence", "persistence"}}) {
                        const auto& m = e[key];
                        h << "<tr><td>" << label << "</td><td>" << num(m["quantile_loss"], 6) << "</td><td>"
                          << num(m["median_mae"], 6) << "</td><td>" << num(m["directional_accuracy"], 3) << "</td><td>"
                          << num(m["interval_coverage"], 3) << "</td></tr>";
                    }
                    h << "</table>";
                }
            }
            if (ev->contains("training")) {
                const auto& t = (*ev)["training"];
                h << "<p>Training: " << t["steps"] << " steps; parameters " << num(t["param_bytes"], 0)
                  << " bytes; inference latency P50 " << num(t["latency"]["p50_ms"], 3) << " ms, P95 "
                  << num(t["latency"]["p95_ms"], 3) << " ms, P99 " << num(t["latency"]["p99_ms"], 3) << " ms.</p>";
            }
        }
    }
    h << "<h2>Configuration</h2>";
    for (const auto& r : runs)
        h << "<h3>Run " << r["id"] << "</h3><pre>" << escapeXml(r["config"].dump(2)) << "</pre>";
    h << "</body></html>\n";
    return h.str();
}

std::string renderRunReportCsv(BarStore& store, const std::vector<std::int64_t>& runIds)
{
    RunStore runs(store);
    std::string out = "run,model,metric,step,time,value\n";
    char buf[64];
    for (std::int64_t id : runIds)
        for (const MetricSample& s : runs.metrics(id)) {
            out += std::to_string(id) + ',' + s.model + ',' + s.metric + ',' + std::to_string(s.step) + ',' +
                   formatUtc(s.wallNs) + ',';
            std::snprintf(buf, sizeof buf, "%.17g", s.value);
            out += buf;
            out += '\n';
        }
    return out;
}

void writeRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path)
{
    auto endsWith = [&](const char* ext) {
        const std::string e(ext);
        return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
    };
    if (!endsWith(".html") && !endsWith(".htm") && !endsWith(".json") && !endsWith(".csv"))
        throw std::invalid_argument("report format follows the extension: .html, .json or .csv (" + path + ")");
    BarStore store(databasePath);
    std::string text;
    if (endsWith(".csv"))
        text = renderRunReportCsv(store, runIds);
    else if (endsWith(".json"))
        text = runReportJson(store, runIds).dump(2) + "\n";
    else
        text = renderRunReportHtml(runReportJson(store, runIds));
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
}

} // namespace foxhunt
