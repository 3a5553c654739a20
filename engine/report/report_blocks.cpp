// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/report_blocks.h"

#include "engine/report/run_report.h"
#include "engine/report/run_summary.h"
#include "engine/report/svg_chart.h"
#include "engine/telemetry/metric_registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace foxhunt {

namespace {

using json = nlohmann::json;

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

constexpr double kInt8DegradationLimit = 0.05; ///< relative loss change of the INT8 copy that earns a warning
constexpr double kSkippedStepLimit = 0.10;     ///< share of skipped optimizer steps that earns a warning
constexpr double kExplodingLossFactor = 100.0; ///< late loss this many times the early loss: diverged

const std::set<std::string> kAgents{"dqn", "ppo"};
/// A model's byte counts (not the session's RSS), in registry order: drawn together.
const std::vector<std::string>& memoryMetrics()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const metrics::Metric& m : metrics::all())
            if (m.unit == metrics::Unit::Bytes && m.family != metrics::Family::Session) out.emplace_back(m.name);
        return out;
    }();
    return names;
}

/// The headline metrics, each a chart of its own in every model's section, drawn before every other one.
const std::vector<std::string>& mainCharts()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const metrics::Chart& c : metrics::charts()) {
            const auto lines = metrics::inChart(c.key);
            if (c.family == metrics::Family::Any && !c.onDemand && lines.size() == 1 &&
                lines.front()->unit != metrics::Unit::Bytes)
                out.emplace_back(lines.front()->name);
        }
        return out;
    }();
    return names;
}

/// Metrics drawn in a group (memory, equity, forecast band), not each in a chart of its own.
bool isGrouped(const std::string& name)
{
    const metrics::Metric* m = metrics::find(name);
    if (!m || m->chart.empty()) return false;
    const metrics::Chart* c = metrics::chart(m->chart);
    return m->unit == metrics::Unit::Bytes || (c && c->family != metrics::Family::Any);
}

bool isMainChart(const std::string& name)
{
    return std::find(mainCharts().begin(), mainCharts().end(), name) != mainCharts().end();
}

bool isBytes(const std::string& name)
{
    const metrics::Metric* m = metrics::find(name);
    return m ? m->unit == metrics::Unit::Bytes : name.ends_with("_bytes");
}

const std::string kSession(metrics::kSessionModel);
const std::string kRss(metrics::kRssBytes);

std::string fixed(double v, int decimals)
{
    if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string general(double v)
{
    if (!std::isfinite(v)) return fixed(v, 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// A JSON value as report text; null (NaN in stored JSON) and absent read "n/a".
std::string text(const json& v, int decimals = -1)
{
    if (v.is_null()) return "n/a";
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<long long>());
    if (v.is_number()) return decimals < 0 ? general(v.get<double>()) : fixed(v.get<double>(), decimals);
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::string text(const json& object, const char* key, int decimals = -1)
{
    if (!object.is_object()) return "n/a";
    const auto it = object.find(key);
    return it == object.end() ? "n/a" : text(*it, decimals);
}

std::string bytes(double b)
{
    if (!std::isfinite(b)) return "n/a";
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = b;
    while (std::fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    return u == 0 ? fixed(b, 0) + " B" : fixed(v, 1) + " " + units[u];
}

double number(const json& v)
{
    return v.is_number() ? v.get<double>() : std::nan("");
}

/// "q10" for 0.1.
std::string levelName(const json& level)
{
    return level.is_number() ? "q" + fixed(100.0 * level.get<double>(), 0) : std::string("q?");
}

/// A forecaster evaluation's skill, significance and calibration in plain words.
std::string forecastVerdict(const json& e)
{
    const json& skill = e.value("skill", json::object());
    const json& dm = e.value("diebold_mariano", json::object());
    const json& cal = e.value("calibration", json::object());
    std::string out = "Skill vs climatology (1 - loss / climatology's loss, > 0 is better): quantile loss " +
                      text(skill, "quantile_loss_vs_climatology", 3) + ", CRPS " +
                      text(skill, "crps_vs_climatology", 3);
    const json p = dm.value("p_value", json());
    std::string baseline = dm.value("baseline", std::string("baseline"));
    std::replace(baseline.begin(), baseline.end(), '_', ' ');
    if (dm.value("valid", false) && p.is_number()) {
        const bool better = number(dm.value("mean_differential", json())) < 0.0;
        out += " (Diebold-Mariano against the best baseline, " + baseline + ": p = " + text(p, 2) + ", " +
               (p.get<double>() < 0.05
                    ? std::string("significant at 5 %, the model is ") + (better ? "better" : "worse")
                    : std::string("not significant")) +
               ")";
    } else if (!dm.empty()) {
        out += " (Diebold-Mariano against " + baseline + ": undefined on these windows)";
    }
    out += ".";
    if (cal.contains("observed")) {
        const json& edges = cal.value("pit", json::object()).value("edges", json::array());
        const std::string interval = edges.size() >= 3 ? levelName(edges[1]) + "-" + levelName(edges[edges.size() - 2])
                                                       : std::string("outer-quantile");
        out += " Calibration: the " + interval + " interval holds " + text(cal, "observed", 3) +
               " of the outcomes (nominal " + text(cal, "nominal", 2) + "; below it the intervals are too narrow).";
        const json& pit = cal.value("pit", json::object());
        const json& f = pit.value("fractions", json::array());
        const json& x = pit.value("expected", json::array());
        if (!f.empty() && f.size() == x.size()) {
            out += " PIT histogram, observed / expected share per bin:";
            for (std::size_t j = 0; j < f.size(); ++j)
                out += std::string(j == 0 ? " " : ", ") + text(f[j], 2) + " / " + text(x[j], 2);
            out += " (flat when calibrated; heavy outer bins: tails too thin).";
        }
    }
    return out;
}

std::string runLabel(const json& r)
{
    return "run " + std::to_string(r.at("id").get<long long>());
}

std::string modelTitle(const std::string& m)
{
    if (m == "dqn") return "DQN (agent)";
    if (m == "ppo") return "PPO (agent)";
    if (m == "mamba2") return "Mamba-2 (forecaster)";
    if (m == "tft") return "Temporal Fusion Transformer (forecaster)";
    if (m == kSession) return "Session (process-wide)";
    return m;
}

/// The stored samples of one metric (NaN where the JSON holds null).
struct Series {
    std::vector<double> step, value;
    bool empty() const { return step.empty(); }
};

Series metricSeries(const json& run, const std::string& model, const std::string& metric)
{
    Series s;
    const json& metrics = run.at("metrics");
    const auto m = metrics.find(model);
    if (m == metrics.end()) return s;
    const auto d = m->find(metric);
    if (d == m->end()) return s;
    const json& steps = d->at("step");
    const json& values = d->at("value");
    s.step.reserve(steps.size());
    s.value.reserve(values.size());
    for (std::size_t i = 0; i < steps.size() && i < values.size(); ++i) {
        s.step.push_back(number(steps[i]));
        s.value.push_back(number(values[i]));
    }
    return s;
}

double lastFinite(const Series& s)
{
    for (auto it = s.value.rbegin(); it != s.value.rend(); ++it)
        if (std::isfinite(*it)) return *it;
    return std::nan("");
}

double peak(const Series& s)
{
    double p = std::nan("");
    for (double v : s.value)
        if (std::isfinite(v) && !(v <= p)) p = v;
    return p;
}

double percentile(std::vector<double> v, double q)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
    if (v.empty()) return std::nan("");
    const std::size_t k = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

class Builder : private ReportWriter {
public:
    explicit Builder(const json& report) : m_report(report), m_runs(report.at("runs")) { }

    ReportDocument build()
    {
        m_doc.title = m_runs.size() == 1 ? "Foxhunt run " + std::to_string(m_runs[0].at("id").get<long long>()) + ": " +
                                               m_runs[0].value("name", std::string())
                                         : "Foxhunt comparison of " + std::to_string(m_runs.size()) + " runs";
        header();
        warnings();
        data();
        configuration();
        for (const std::string& model : models()) modelSection(model);
        return std::move(m_doc);
    }

private:
    void lineChart(const std::string& title, std::vector<SvgSeries> lines, const std::string& yLabel = {})
    {
        SvgChartOptions o;
        o.title = title;
        o.yLabel = yLabel;
        o.width = 480;
        o.height = 220;
        chart(title, renderSvgLineChart(lines, o), o.width, o.height);
    }

    /// One row per key: a key/value table for one run, runs side by side for several.
    void sideBySide(const std::vector<std::pair<std::string, std::vector<std::string>>>& rows)
    {
        if (rows.empty()) return;
        if (m_runs.size() == 1) {
            std::vector<std::vector<std::string>> pairs;
            for (const auto& [k, v] : rows) pairs.push_back({k, v.empty() ? "" : v[0]});
            keyValues(std::move(pairs));
            return;
        }
        std::vector<std::string> header{""};
        for (const auto& r : m_runs) header.push_back(runLabel(r));
        std::vector<std::vector<std::string>> cells;
        for (const auto& [k, v] : rows) {
            std::vector<std::string> row{k};
            row.insert(row.end(), v.begin(), v.end());
            row.resize(header.size());
            cells.push_back(std::move(row));
        }
        table(std::move(header), std::move(cells));
    }

    template <class F>
    std::vector<std::string> perRun(F&& f) const
    {
        std::vector<std::string> out;
        for (const auto& r : m_runs) out.push_back(f(r));
        return out;
    }

    std::vector<std::string> models() const
    {
        std::vector<std::string> order;
        auto add = [&](const std::string& m) {
            if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
        };
        for (const char* m : {"dqn", "ppo", "mamba2", "tft"})
            for (const auto& r : m_runs) {
                const json& cfg = r.value("config", json::object());
                bool listed = false;
                for (const auto& x : cfg.value("models", json::array())) listed |= x == m;
                if (listed || r.at("metrics").contains(m) || r.value("evaluations", json::object()).contains(m)) add(m);
            }
        for (const auto& r : m_runs)
            for (const auto& [m, _] : r.at("metrics").items()) add(m);
        return order;
    }

    void header()
    {
        heading(1, "header", m_doc.title);
        // The results first: the run and machine facts, the data and the hyperparameters follow.
        summary();
        heading(2, "run", m_runs.size() == 1 ? "Run and machine" : "Runs and machines");
        const json& machine = m_report.value("machine", json::object());
        sideBySide({
            {"Run",
             perRun([](const json& r) { return r.value("name", std::string()) + " (id " + text(r["id"]) + ")"; })},
            {"Status", perRun([](const json& r) { return text(r, "status"); })},
            {"Started", perRun([](const json& r) { return text(r, "created"); })},
            {"Finished", perRun([](const json& r) {
                 const std::string f = r.value("finished", std::string());
                 return f.empty() ? std::string("not finished") : f;
             })},
            {"Duration", perRun([](const json& r) { return fixed(number(r.value("duration_s", json())), 1) + " s"; })},
            {"Foxhunt version", perRun([&](const json& r) {
                 const json& v = r.value("versions", json::object());
                 return v.contains("foxhunt") ? text(v["foxhunt"]) : text(m_report, "foxhunt_version");
             })},
            {"CPU", perRun([&](const json& r) {
                 const json& v = r.value("versions", json::object());
                 return v.contains("cpu") ? text(v["cpu"])
                                          : text(machine, "cpu") + " (this machine; the run did not record its CPU)";
             })},
            {"CPU features", perRun([](const json& r) {
                 const json& m = r.value("versions", json::object()).value("machine", json::object());
                 if (!m.contains("cpu_features")) return std::string("not recorded");
                 std::string out;
                 for (const auto& f : m["cpu_features"]) out += (out.empty() ? "" : " ") + f.get<std::string>();
                 if (out.empty()) out = "none of those precision cares about";
                 if (m.contains("physical_cores"))
                     out += " (" + text(m, "physical_cores") + " cores, " + text(m, "logical_cpus") + " threads)";
                 return out;
             })},
            {"GPU", perRun([](const json& r) { return gpuText(r.value("versions", json::object())); })},
            {"GPU driver", perRun([](const json& r) {
                 const json& v = r.value("versions", json::object());
                 for (const char* k : {"driver", "gpu_driver", "cuda_driver"})
                     if (v.contains(k) && !v[k].is_null()) return text(v[k]);
                 return std::string("none");
             })},
            {"LibTorch", perRun([](const json& r) { return text(r.value("versions", json::object()), "torch"); })},
            {"Device", perRun([](const json& r) { return text(r.value("config", json::object()), "device"); })},
            {"Processes", perRun([](const json& r) {
                 const json& v = r.value("versions", json::object());
                 const int ranks = v.value("ranks", 1);
                 if (ranks <= 1) return std::string("1");
                 const std::string by = v.value("collectives", std::string());
                 return std::to_string(ranks) + (by == "nccl"   ? " (gradients all-reduced in place by NCCL)"
                                                 : by == "gloo" ? " (gradients all-reduced by Gloo)"
                                                                : std::string());
             })},
            {"Seed", perRun([](const json& r) { return text(r.value("config", json::object()), "seed"); })},
            {"Memory budget", perRun([](const json& r) {
                 const json& b = r.value("versions", json::object()).value("memory_budget", json::object());
                 if (!b.contains("budget_mb")) return std::string("none");
                 std::string out = fixed(number(b["budget_mb"]), 1) + " MiB for the served models at batch " +
                                   text(b, "serving_batch") + ": " + fixed(number(b["total_mb"]), 2) + " MiB used, ";
                 const double headroom = number(b["headroom_mb"]);
                 out += headroom >= 0 ? fixed(headroom, 2) + " MiB headroom" : fixed(-headroom, 2) + " MiB over";
                 const json models = b.value("models", json::object());
                 for (const auto& [model, mb] : models.items())
                     out += "; " + model + " " + fixed(number(mb), 2) + " MiB";
                 return out;
             })},
        });
        paragraph("Report generated " + text(m_report, "generated") + " by Foxhunt " +
                  text(m_report, "foxhunt_version") + ".");
    }

    /// Each model's headline results (engine/report/run_summary: what the runs table shows), one column
    /// per model of each run.
    void summary()
    {
        heading(2, "summary", "Summary");
        std::vector<RunSummary> sums;
        for (const auto& r : m_runs) sums.push_back(summarizeReportRun(r));
        std::vector<std::string> header{""};
        std::vector<std::pair<std::size_t, const ModelResults*>> columns;
        for (std::size_t i = 0; i < sums.size(); ++i)
            for (const ModelResults& m : sums[i].models) {
                header.push_back(m_runs.size() == 1 ? modelTitle(m.model)
                                                    : modelTitle(m.model) + ", " + runLabel(m_runs[i]));
                columns.emplace_back(i, &m);
            }
        if (columns.empty()) {
            paragraph(m_runs.size() == 1 ? "The run trained no model." : "The runs trained no model.");
            return;
        }
        std::vector<std::vector<std::string>> rows;
        const auto add = [&](const std::string& label, auto&& cell) {
            std::vector<std::string> row{label};
            bool any = false;
            for (const auto& [run, results] : columns) {
                row.push_back(cell(run, *results));
                any |= !row.back().empty();
            }
            if (any) rows.push_back(std::move(row));
        };
        add("Status", [&](std::size_t run, const ModelResults&) { return text(m_runs[run], "status"); });
        add("Precision", [&](std::size_t run, const ModelResults&) { return sums[run].precision; });
        add("Device", [&](std::size_t run, const ModelResults&) {
            const RunSummary& s = sums[run];
            return s.device + (s.processes > 1 ? ", " + std::to_string(s.processes) + " processes" : std::string());
        });
        for (const Measure& measure : measures())
            add(std::string(measure.label), [&](std::size_t, const ModelResults& m) {
                const bool agent = kAgents.count(m.model) > 0;
                if (agent ? !measure.agents : !measure.forecasters) return std::string();
                return formatMeasure(measure.kind, m.*measure.field);
            });
        table(std::move(header), std::move(rows));
    }

    static std::string gpuText(const json& v)
    {
        if (v.contains("gpu") && v["gpu"].is_string() && !v["gpu"].get<std::string>().empty()) return text(v["gpu"]);
        if (v.value("cuda", false)) return "CUDA available (device name not recorded)";
        return "none";
    }

    void data()
    {
        heading(2, "data", "Data");
        sideBySide({
            {"Series", perRun([](const json& r) {
                 const json& s = r.value("series_info", json::object());
                 std::string t = text(r, "series");
                 if (s.contains("dataset")) t += " (" + text(s["dataset"]) + ")";
                 return t;
             })},
            {"Data", perRun([](const json& r) {
                 return r.value("synthetic", false) ? std::string("synthetic (bundled generator, not market data)")
                                                    : std::string("real market bars");
             })},
            {"Contracts", perRun([](const json& r) {
                 std::string t;
                 for (const auto& c : r.value("contracts", json::array())) t += (t.empty() ? "" : ", ") + text(c);
                 return t.empty() ? std::string("n/a") : t;
             })},
            {"Rolls", perRun([](const json& r) { return std::to_string(r.value("rolls", json::array()).size()); })},
            {"Bars used", perRun([](const json& r) { return text(r, "data_from") + " .. " + text(r, "data_to"); })},
            {"Train", perRun([](const json& r) { return splitText(r, "train"); })},
            {"Validation", perRun([](const json& r) { return splitText(r, "validation"); })},
            {"Test", perRun([](const json& r) { return splitText(r, "test"); })},
        });
        for (const auto& r : m_runs) {
            if (r.contains("split_note") && r["split_note"].is_string())
                paragraph(runLabel(r) + ": " + r["split_note"].get<std::string>());
            const json& rolls = r.value("rolls", json::array());
            if (rolls.empty()) continue;
            heading(3, "", "Rolls, " + runLabel(r));
            std::vector<std::vector<std::string>> rows;
            for (const auto& roll : rolls)
                rows.push_back({text(roll, "time"), text(roll, "from"), text(roll, "to"), text(roll, "price_gap", 2)});
            table({"First bar of new contract", "From", "To", "Price gap (points)"}, std::move(rows));
        }
    }

    static std::string splitText(const json& r, const char* part)
    {
        const json& s = r.value("split", json());
        if (!s.is_object() || !s.contains(part)) return "n/a";
        const json& p = s[part];
        return text(p, "from") + " .. " + text(p, "to") + ", " + text(p, "bars") + " bars";
    }

    void configuration()
    {
        heading(2, "configuration", "Configuration");
        auto cfg = [](const json& r) -> const json& {
            static const json empty = json::object();
            const auto it = r.find("config");
            return it != r.end() && it->is_object() ? *it : empty;
        };
        sideBySide({
            {"Models", perRun([&](const json& r) {
                 std::string t;
                 for (const auto& m : cfg(r).value("models", json::array())) t += (t.empty() ? "" : ", ") + text(m);
                 return t;
             })},
            {"Steps per model", perRun([&](const json& r) { return text(cfg(r), "steps"); })},
            {"Train / validation fraction", perRun([&](const json& r) {
                 return text(cfg(r), "train_fraction") + " / " + text(cfg(r), "validation_fraction");
             })},
            {"Replay speed", perRun([&](const json& r) { return text(cfg(r), "speed"); })},
            {"Threads", perRun([&](const json& r) { return text(cfg(r), "threads"); })},
            {"Ensemble", perRun([&](const json& r) { return text(cfg(r), "ensemble"); })},
        });

        heading(3, "precision", "Precision");
        auto prec = [&](const json& r) -> json { return cfg(r).value("precision", json::object()); };
        auto onOff = [](const json& p, const char* k) {
            return p.contains(k) ? (p[k].get<bool>() ? std::string("on") : std::string("off")) : std::string("n/a");
        };
        sideBySide({
            {"AMP", perRun([&](const json& r) { return onOff(prec(r), "amp"); })},
            {"AMP dtype", perRun([&](const json& r) { return text(prec(r), "amp_dtype"); })},
            {"Initial loss scale", perRun([&](const json& r) { return text(prec(r), "loss_scale"); })},
            {"Dynamic loss scale", perRun([&](const json& r) { return text(prec(r), "dynamic_loss_scale"); })},
            {"Growth factor / backoff / interval", perRun([&](const json& r) {
                 const json p = prec(r);
                 return text(p, "growth_factor") + " / " + text(p, "backoff_factor") + " / " +
                        text(p, "growth_interval");
             })},
            {"INT8 inference copy", perRun([&](const json& r) { return onOff(prec(r), "int8"); })},
            {"INT8 activations", perRun([&](const json& r) {
                 const json p = prec(r);
                 if (!p.contains("int8_static_activations")) return std::string("n/a");
                 return p["int8_static_activations"].get<bool>() ? std::string("static (calibrated)")
                                                                 : std::string("dynamic (per batch)");
             })},
            {"Calibration bars", perRun([&](const json& r) { return text(prec(r), "calibration_bars"); })},
            {"INT8 refresh interval (ticks)",
             perRun([&](const json& r) { return text(prec(r), "int8_refresh_every"); })},
        });

        for (const std::string& section : std::vector<std::string>{"env", "dqn", "ppo", "mamba2", "tft"}) {
            std::set<std::string> keys;
            bool used = section == "env";
            for (const auto& r : m_runs) {
                for (const auto& m : cfg(r).value("models", json::array())) used |= m == section;
                if (cfg(r).contains(section) && cfg(r)[section].is_object())
                    for (const auto& [k, _] : cfg(r)[section].items()) keys.insert(k);
            }
            if (!used || keys.empty()) continue;
            heading(3, "",
                    section == "env" ? std::string("Trading environment") : modelTitle(section) + " hyperparameters");
            std::vector<std::pair<std::string, std::vector<std::string>>> rows;
            for (const std::string& k : keys)
                rows.push_back({k, perRun([&](const json& r) {
                                    const json& s = cfg(r).value(section, json::object());
                                    return text(s, k.c_str());
                                })});
            sideBySide(rows);
        }
    }

    json evaluation(const json& r, const std::string& model, const char* part) const
    {
        const json& ev = r.value("evaluations", json::object());
        if (!ev.contains(model) || !ev[model].contains(part)) return json();
        return ev[model][part];
    }

    void modelSection(const std::string& model)
    {
        heading(2, "model-" + model, modelTitle(model));

        // Charts: the headline metrics, memory together, then every other metric.
        for (const std::string& metric : mainCharts()) overlay(model, metric, metric);
        memoryChart(model);
        if (kAgents.count(model)) {
            std::vector<SvgSeries> lines;
            std::size_t k = 0;
            for (const auto& r : m_runs)
                for (const metrics::Metric* m : metrics::inChart("equity")) {
                    const std::string metric(m->name);
                    // The agent's own line says "agent" beside its benchmark.
                    const std::string label = metric == metrics::kEquityTicks ? std::string("agent")
                                                                              : std::string(m->label);
                    Series s = metricSeries(r, model, metric);
                    if (s.empty()) continue;
                    lines.push_back({prefix(r) + label, kPalette[k++ % 8], std::move(s.step), std::move(s.value)});
                }
            if (!lines.empty()) lineChart("Training equity (ticks, net of costs)", std::move(lines), "ticks");
        } else {
            std::vector<SvgSeries> lines;
            std::size_t k = 0;
            for (const auto& r : m_runs)
                for (std::string_view name :
                     {metrics::kForecastQ10, metrics::kForecastQ50, metrics::kForecastQ90, metrics::kRealised}) {
                    const std::string metric(name);
                    Series s = metricSeries(r, model, metric);
                    if (s.empty()) continue;
                    lines.push_back({prefix(r) + metric, kPalette[k++ % 8], std::move(s.step), std::move(s.value)});
                }
            if (!lines.empty()) lineChart("Forecast quantiles vs realised log return", std::move(lines));
        }
        std::set<std::string> others;
        for (const auto& r : m_runs) {
            const auto m = r.at("metrics").find(model);
            if (m == r.at("metrics").end()) continue;
            for (const auto& [metric, _] : m->items())
                if (!isGrouped(metric) && !isMainChart(metric)) others.insert(metric);
        }
        for (const std::string& metric : others) overlay(model, metric, metric);

        finalValues(model);
        latency(model);
        amp(model);
        int8(model);
        if (kAgents.count(model)) agentEvaluation(model);
        else forecasterEvaluation(model);
    }

    std::string prefix(const json& r) const { return m_runs.size() > 1 ? runLabel(r) + " " : std::string(); }

    void overlay(const std::string& model, const std::string& metric, const std::string& title)
    {
        std::vector<SvgSeries> lines;
        std::size_t k = 0;
        for (const auto& r : m_runs) {
            Series s = metricSeries(r, model, metric);
            if (s.empty()) continue;
            lines.push_back(
                {m_runs.size() > 1 ? runLabel(r) : metric, kPalette[k++ % 8], std::move(s.step), std::move(s.value)});
        }
        if (!lines.empty()) lineChart(title, std::move(lines));
    }

    void memoryChart(const std::string& model)
    {
        std::vector<SvgSeries> lines;
        std::size_t k = 0;
        for (const auto& r : m_runs) {
            for (const std::string& metric : memoryMetrics()) {
                Series s = metricSeries(r, model, metric);
                if (s.empty()) continue;
                lines.push_back({prefix(r) + metric, kPalette[k++ % 8], std::move(s.step), std::move(s.value)});
            }
            Series rss = metricSeries(r, kSession, kRss);
            if (!rss.empty() && !lines.empty())
                lines.push_back(
                    {prefix(r) + "session rss_bytes", kPalette[k++ % 8], std::move(rss.step), std::move(rss.value)});
        }
        if (!lines.empty()) lineChart("Memory (bytes)", std::move(lines), "bytes");
    }

    void finalValues(const std::string& model)
    {
        std::set<std::string> metrics;
        for (const auto& r : m_runs) {
            const auto m = r.at("metrics").find(model);
            if (m != r.at("metrics").end())
                for (const auto& [metric, _] : m->items()) metrics.insert(metric);
        }
        if (metrics.empty()) return;
        heading(3, "model-" + model + "-final", "Final values");
        std::vector<std::pair<std::string, std::vector<std::string>>> rows;
        for (const std::string& metric : metrics)
            rows.push_back({metric, perRun([&](const json& r) {
                                const Series s = metricSeries(r, model, metric);
                                if (s.empty()) return std::string("n/a");
                                const double v = lastFinite(s);
                                return isBytes(metric) ? bytes(v) : general(v);
                            })});
        for (const std::string& metric : memoryMetrics())
            if (metrics.count(metric))
                rows.push_back({"peak " + metric,
                                perRun([&](const json& r) { return bytes(peak(metricSeries(r, model, metric))); })});
        rows.push_back({"peak session rss_bytes",
                        perRun([&](const json& r) { return bytes(peak(metricSeries(r, kSession, kRss))); })});
        sideBySide(rows);
    }

    void latency(const std::string& model)
    {
        bool any = false;
        std::vector<std::string> p50, p95, p99, count;
        for (const auto& r : m_runs) {
            const json training = evaluation(r, model, "training");
            if (training.is_object() && training.contains("latency")) {
                const json& l = training["latency"];
                p50.push_back(text(l, "p50_ms", 3));
                p95.push_back(text(l, "p95_ms", 3));
                p99.push_back(text(l, "p99_ms", 3));
                count.push_back(text(l, "count"));
                any = true;
                continue;
            }
            const Series s = metricSeries(r, model, std::string(metrics::kLatencyMs));
            any |= !s.empty();
            p50.push_back(fixed(percentile(s.value, 0.50), 3));
            p95.push_back(fixed(percentile(s.value, 0.95), 3));
            p99.push_back(fixed(percentile(s.value, 0.99), 3));
            count.push_back(std::to_string(s.value.size()));
        }
        if (!any) return;
        heading(3, "model-" + model + "-latency", "Inference latency (ms, batch of 1)");
        sideBySide({{"P50", p50}, {"P95", p95}, {"P99", p99}, {"samples", count}});
    }

    void amp(const std::string& model)
    {
        bool any = false;
        for (const auto& r : m_runs) any |= evaluation(r, model, "validation").contains("amp");
        if (!any) return;
        heading(3, "model-" + model + "-amp", "Mixed precision");
        auto field = [&](const char* key) {
            return perRun([&](const json& r) {
                const json v = evaluation(r, model, "validation");
                return v.contains("amp") ? text(v["amp"], key) : std::string("n/a");
            });
        };
        sideBySide({{"enabled", field("enabled")},
                    {"dtype", field("dtype")},
                    {"final loss scale", field("final_scale")},
                    {"skipped steps", field("skipped_steps")},
                    {"scale changes", field("scale_changes")}});
    }

    void int8(const std::string& model)
    {
        bool any = false;
        for (const auto& r : m_runs) any |= evaluation(r, model, "validation").contains("int8");
        if (!any) return;
        heading(3, "model-" + model + "-int8", "INT8 vs FP32");
        std::vector<std::string> header{""};
        const char* names[] = {"validation loss",
                               "weight bytes",
                               "bytes at the serving batch",
                               "latency b1 P50 (ms)",
                               "latency b1 P95 (ms)",
                               "latency b1 P99 (ms)",
                               "latency b32 P50 (ms)",
                               "latency b32 P95 (ms)",
                               "latency b32 P99 (ms)",
                               "throughput b32 (inferences/s)"};
        constexpr std::size_t kRows = sizeof(names) / sizeof(names[0]);
        std::vector<std::vector<std::string>> rows(kRows);
        for (std::size_t i = 0; i < kRows; ++i) rows[i].push_back(names[i]);
        std::vector<std::pair<std::string, std::vector<std::string>>> facts;
        for (const auto& r : m_runs) {
            const json v = evaluation(r, model, "validation");
            const json q = v.contains("int8") ? v["int8"] : json::object();
            header.push_back(prefix(r) + "FP32");
            header.push_back(prefix(r) + "INT8");
            rows[0].push_back(text(q, "fp32_loss"));
            rows[0].push_back(text(q, "int8_loss"));
            rows[1].push_back(q.contains("fp32_bytes") ? bytes(number(q["fp32_bytes"])) : "n/a");
            rows[1].push_back(q.contains("int8_bytes") ? bytes(number(q["int8_bytes"])) : "n/a");
            for (const char* key : {"fp32_serving_bytes", "int8_serving_bytes"})
                rows[2].push_back(q.contains(key) ? bytes(number(q[key])) : "n/a");
            const json& lat = q.value("latency", json::object());
            std::size_t row = 3;
            for (const char* batch : {"b1", "b32"})
                for (const char* p : {"p50_ms", "p95_ms", "p99_ms"}) {
                    for (const char* prec : {"fp32_", "int8_"}) {
                        const std::string key = std::string(prec) + batch;
                        rows[row].push_back(lat.contains(key) ? text(lat[key], p, 3) : "n/a");
                    }
                    ++row;
                }
            const json& tp = q.value("throughput", json::object());
            for (const char* key : {"fp32_b32", "int8_b32"})
                rows[row].push_back(tp.contains(key) ? text(tp, key, 0) : "n/a");
        }
        table(std::move(header), std::move(rows));
        auto field = [&](const char* key, bool percent = false) {
            return perRun([&, key, percent](const json& r) {
                const json v = evaluation(r, model, "validation");
                if (!v.contains("int8") || !v["int8"].contains(key)) return std::string("n/a");
                return percent ? fixed(100.0 * number(v["int8"][key]), 2) + " %" : text(v["int8"][key]);
            });
        };
        std::vector<std::pair<std::string, std::vector<std::string>>> rowsKv{
            {"gate", perRun([&](const json& r) {
                 const json v = evaluation(r, model, "validation");
                 if (!v.contains("int8") || !v["int8"].contains("served")) return std::string("n/a");
                 const json& q = v["int8"];
                 if (q.contains("verdict")) return text(q, "verdict");
                 return std::string(q["served"].get<bool>() ? "served" : "not served: FP32 serves instead");
             })},
            {"loss degradation", field("degradation", true)},
            {"degradation allowed", field("max_degradation", true)},
            {"bytes ratio (INT8 / FP32)", field("bytes_ratio")},
            {"quantized layers", field("quantized_layers")},
            {"backend", field("backend")},
            {"static activations", field("static_activations")},
            {"calibration bars", field("calibration_bars")},
            {"validation samples", field("validation_samples")},
            {"serving batch", field("serving_batch")},
            {"kernel choice", field("kernel_mode")},
            {"layer shapes timed / from the cache", perRun([&](const json& r) {
                 const json v = evaluation(r, model, "validation");
                 if (!v.contains("int8") || !v["int8"].contains("measured_shapes")) return std::string("n/a");
                 return text(v["int8"], "measured_shapes") + " / " + text(v["int8"], "cached_shapes");
             })}};
        if (kAgents.count(model)) rowsKv.push_back({"action agreement", field("action_agreement", true)});
        sideBySide(rowsKv);
        int8Kernels(model);
    }

    /// The backend each quantized layer serves with, and what each candidate measured for its shape.
    void int8Kernels(const std::string& model)
    {
        std::vector<std::vector<std::string>> rows;
        std::vector<std::string> backends;
        for (const auto& r : m_runs) {
            const json v = evaluation(r, model, "validation");
            if (!v.contains("int8")) continue;
            for (const auto& k : v["int8"].value("kernels", json::array()))
                for (const auto& [name, _] : k.value("timings", json::object()).get<json::object_t>())
                    if (std::find(backends.begin(), backends.end(), name) == backends.end()) backends.push_back(name);
        }
        for (const auto& r : m_runs) {
            const json v = evaluation(r, model, "validation");
            if (!v.contains("int8")) continue;
            for (const auto& k : v["int8"].value("kernels", json::array())) {
                std::vector<std::string> row{prefix(r) + text(k, "layer"), text(k, "shape"),
                                             text(k, "backend") + (k.value("cached", false) ? " (cached)" : "")};
                const json& t = k.value("timings", json::object());
                for (const std::string& b : backends)
                    row.push_back(t.contains(b) ? text(t[b], "us", 1) : std::string("n/a"));
                rows.push_back(std::move(row));
            }
        }
        if (rows.empty()) return;
        std::vector<std::string> header{"layer", "shape", "serves with"};
        for (const std::string& b : backends) header.push_back(b + " (us)");
        table(std::move(header), std::move(rows));
    }

    void agentEvaluation(const std::string& model)
    {
        for (const char* split : {"validation", "test"}) {
            std::vector<std::vector<std::string>> rows;
            for (const auto& r : m_runs) {
                const json e = evaluation(r, model, split);
                if (!e.is_object() || !e.contains("policy")) continue;
                for (const auto& [label, key] : {std::pair{"agent", "policy"}, std::pair{"flat", "flat"},
                                                 std::pair{"buy and hold", "buy_and_hold"}}) {
                    const json& p = e.value(key, json::object());
                    rows.push_back({prefix(r) + label, text(p, "pnl_usd", 2), text(p, "pnl_ticks", 1),
                                    text(p, "sharpe", 2), text(p, "sortino", 2), text(p, "max_drawdown_usd", 2),
                                    text(p, "calmar", 2), text(p, "win_rate", 3), text(p, "profit_factor", 2),
                                    text(p, "trades"), text(p, "turnover")});
                }
            }
            if (rows.empty()) continue;
            heading(3, "model-" + model + "-" + split, std::string("Evaluation on the ") + split + " split");
            table({"", "PnL USD", "PnL ticks", "Sharpe (daily, annualised)", "Sortino (daily, annualised)",
                   "Max DD USD", "Calmar", "Win rate", "Profit factor", "Trades", "Turnover"},
                  std::move(rows));
            for (const auto& r : m_runs) {
                const json e = evaluation(r, model, split);
                if (!e.is_object() || !e.contains("policy")) continue;
                const json& p = e["policy"];
                if (p.contains("days"))
                    paragraph(prefix(r) + "Sharpe and Sortino are of the daily P&L (USD, one contract) over " +
                              text(p, "days") +
                              " trading days, annualised with sqrt(252). Per-bar Sharpe of the agent "
                              "(mean / sd of the step P&L, not annualised): " +
                              text(p, "sharpe_per_bar", 4) + ".");
                else
                    paragraph(prefix(r) +
                              "Stored before daily aggregation: Sharpe and Sortino are of the per-bar P&L, "
                              "annualised with sqrt(252 x bars per day), not comparable with daily figures.");
            }
            std::vector<SvgSeries> lines;
            std::size_t k = 0;
            for (const auto& r : m_runs) {
                const json e = evaluation(r, model, split);
                if (!e.is_object() || !e.contains("equity_usd")) continue;
                SvgSeries agent{prefix(r) + "agent", kPalette[k++ % 8], {}, {}};
                const json& eq = e["equity_usd"];
                for (std::size_t i = 0; i < eq.size(); ++i) {
                    agent.x.push_back(static_cast<double>(i));
                    agent.y.push_back(number(eq[i]));
                }
                SvgSeries flat{prefix(r) + "flat", "#7f7f7f", agent.x, std::vector<double>(agent.x.size(), 0.0)};
                lines.push_back(std::move(agent));
                lines.push_back(std::move(flat));
                if (e.contains("buy_and_hold_equity_usd")) {
                    SvgSeries bh{prefix(r) + "buy and hold", kPalette[k++ % 8], {}, {}};
                    const json& b = e["buy_and_hold_equity_usd"];
                    for (std::size_t i = 0; i < b.size(); ++i) {
                        bh.x.push_back(static_cast<double>(i));
                        bh.y.push_back(number(b[i]));
                    }
                    lines.push_back(std::move(bh));
                } else if (e.contains("buy_and_hold") && !lines.empty()) {
                    // Only the final figure is stored: draw buy-and-hold as its end point reached linearly
                    // would invent a path, so show the final PnL as a level instead.
                    const double end = number(e["buy_and_hold"].value("pnl_usd", json()));
                    if (std::isfinite(end)) {
                        const auto& x = lines[lines.size() - 2].x;
                        if (!x.empty())
                            lines.push_back({prefix(r) + "buy and hold (final PnL)",
                                             kPalette[k++ % 8],
                                             {x.front(), x.back()},
                                             {end, end}});
                    }
                }
            }
            if (!lines.empty())
                lineChart(std::string("Equity on the ") + split + " split (USD) vs flat and buy and hold",
                          std::move(lines), "USD");
        }
        trainingParagraph(model);
    }

    void forecasterEvaluation(const std::string& model)
    {
        for (const char* split : {"validation", "test"}) {
            std::vector<std::vector<std::string>> rows;
            for (const auto& r : m_runs) {
                const json e = evaluation(r, model, split);
                if (!e.is_object() || !e.contains("model")) continue;
                for (const auto& [label, key] :
                     {std::pair{"model", "model"}, std::pair{"zero return", "zero_return"},
                      std::pair{"persistence", "persistence"}, std::pair{"climatology", "climatology"}}) {
                    if (!e.contains(key)) continue;
                    const json& m = e[key];
                    rows.push_back({prefix(r) + label, text(m, "quantile_loss", 6), text(m, "crps", 6),
                                    text(m, "median_mae", 6), text(m, "directional_accuracy", 3),
                                    text(m, "interval_coverage", 3)});
                }
            }
            if (rows.empty()) continue;
            heading(3, "model-" + model + "-" + split, std::string("Evaluation on the ") + split + " split");
            table({"", "Quantile loss", "CRPS", "MAE of median", "Directional accuracy", "Outer-quantile coverage"},
                  std::move(rows));
            for (const auto& r : m_runs) {
                const json e = evaluation(r, model, split);
                if (!e.is_object() || !e.contains("skill")) continue;
                paragraph(prefix(r) + forecastVerdict(e));
            }
        }
        for (const auto& r : m_runs) {
            const json v = evaluation(r, model, "validation");
            if (!v.is_object() || !v.contains("interpretation")) continue;
            const json& in = v["interpretation"];
            // Ids stay unique in a comparison: the first run's section keeps the plain id.
            const bool first = &r == &m_runs.front();
            heading(3,
                    "model-" + model + "-interpretation" +
                        (first ? std::string() : "-" + std::to_string(r.at("id").get<long long>())),
                    "Interpretation, " + runLabel(r));
            for (const auto& [names, values, title] :
                 {std::tuple{"encoder_variables", "encoder_importance", "Encoder variable importance"},
                  std::tuple{"decoder_variables", "decoder_importance", "Decoder variable importance"},
                  std::tuple{"static_variables", "static_importance", "Static variable importance"}}) {
                if (!in.contains(names) || !in.contains(values)) continue;
                std::vector<std::pair<double, std::string>> items;
                for (std::size_t i = 0; i < in[names].size() && i < in[values].size(); ++i)
                    items.push_back({number(in[values][i]), text(in[names][i])});
                if (items.empty()) continue;
                std::stable_sort(items.begin(), items.end(),
                                 [](const auto& a, const auto& b) { return a.first > b.first; });
                std::vector<std::string> labels;
                std::vector<double> vals;
                for (auto& [v2, n] : items) {
                    labels.push_back(n);
                    vals.push_back(v2);
                }
                SvgChartOptions o;
                o.title = title;
                o.width = 480;
                const std::string svg = renderSvgBarChart(labels, vals, o);
                chart(title, svg, o.width, svgBarChartHeight(labels.size(), o));
            }
            if (in.contains("attention") && in["attention"].is_array() && !in["attention"].empty()) {
                std::vector<std::vector<double>> cells;
                for (const auto& row : in["attention"]) {
                    std::vector<double> c;
                    for (const auto& x : row) c.push_back(number(x));
                    cells.push_back(std::move(c));
                }
                SvgChartOptions o;
                o.title = "Attention (mean over heads and windows)";
                o.width = 640;
                o.height = 60 + std::clamp(static_cast<int>(cells.size()) * 24, 80, 320);
                chart(o.title, renderSvgHeatmap(cells, "horizon step", "position (past, then horizon)", o), o.width,
                      o.height);
            }
        }
        trainingParagraph(model);
    }

    void trainingParagraph(const std::string& model)
    {
        for (const auto& r : m_runs) {
            const json t = evaluation(r, model, "training");
            if (!t.is_object()) continue;
            paragraph(prefix(r) + "training: " + text(t, "steps") + " steps; parameters " +
                      (t.contains("param_bytes") ? bytes(number(t["param_bytes"])) : std::string("n/a")) + ".");
        }
    }

    void warnings()
    {
        heading(2, "warnings", "Warnings");
        std::vector<std::string> found;
        for (const auto& r : m_runs) {
            const std::string who = runLabel(r);
            const std::string status = r.value("status", std::string());
            if (r.value("synthetic", false))
                found.push_back(who + " trained on the bundled synthetic series, not on real market data.");
            if (status == "failed")
                found.push_back(who + " failed: " + r.value("error", std::string("no reason recorded")));
            if (status == "interrupted")
                found.push_back(who +
                                " was interrupted (its process ended mid-run); the report shows what was committed.");
            if (status == "running") found.push_back(who + " is still running; figures are as of this report.");
            if (status == "stopped") found.push_back(who + " was stopped before its step budget.");
            for (const auto& [model, _] : r.at("metrics").items()) modelWarnings(r, model, found);
            const json evaluations = r.value("evaluations", json::object());
            for (const auto& [model, _] : evaluations.items())
                if (!r.at("metrics").contains(model)) modelWarnings(r, model, found);
        }
        for (const std::string& w : found) paragraph(w, ReportBlockKind::Warning);
        if (found.empty()) paragraph("No warnings.");
    }

    void modelWarnings(const json& r, const std::string& model, std::vector<std::string>& found) const
    {
        const std::string who = runLabel(r) + ", " + model;
        const json v = evaluation(r, model, "validation");
        double degradation = std::nan("");
        if (v.is_object() && v.contains("int8")) degradation = number(v["int8"].value("degradation", json()));
        if (!std::isfinite(degradation)) degradation = lastFinite(metricSeries(r, model, "int8_degradation"));
        if (std::isfinite(degradation) && degradation > kInt8DegradationLimit)
            found.push_back(who + ": INT8 copy degrades the validation loss by " + fixed(100 * degradation, 1) +
                            " % (more than " + fixed(100 * kInt8DegradationLimit, 0) + " %).");

        const Series loss = metricSeries(r, model, std::string(metrics::kLoss));
        double skipped = std::nan("");
        if (v.is_object() && v.contains("amp")) skipped = number(v["amp"].value("skipped_steps", json()));
        if (!std::isfinite(skipped)) skipped = lastFinite(metricSeries(r, model, "skipped_steps"));
        double steps = std::nan("");
        const json t = evaluation(r, model, "training");
        if (t.is_object()) steps = number(t.value("steps", json()));
        if (!(steps > 0) && !loss.empty()) steps = loss.step.back();
        if (std::isfinite(skipped) && steps > 0 && skipped / steps > kSkippedStepLimit)
            found.push_back(who + ": " + fixed(skipped, 0) + " of " + fixed(steps, 0) + " optimizer steps (" +
                            fixed(100 * skipped / steps, 1) +
                            " %) were skipped for inf/NaN gradients (loss-scale storm).");

        std::size_t bad = 0;
        for (double x : loss.value) bad += !std::isfinite(x);
        if (bad > 0) {
            found.push_back(who + ": " + std::to_string(bad) + " non-finite loss value(s): training diverged.");
        } else if (loss.value.size() >= 20) {
            const std::size_t tenth = loss.value.size() / 10;
            std::vector<double> early, late;
            for (std::size_t i = 0; i < tenth; ++i) early.push_back(std::fabs(loss.value[i]));
            for (std::size_t i = loss.value.size() - tenth; i < loss.value.size(); ++i)
                late.push_back(std::fabs(loss.value[i]));
            const double e = percentile(early, 0.5), l = percentile(late, 0.5);
            if (e > 0 && l > kExplodingLossFactor * e)
                found.push_back(who + ": the loss grew from " + general(e) + " to " + general(l) +
                                " (median of the first and last tenth): training diverged.");
        }
    }

    const json& m_report;
    const json& m_runs;
};

const char* kCss =
    R"(body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:980px;padding:12px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;margin-top:1.5em}h3{font-size:1.05em}
table{border-collapse:collapse;width:100%;font-size:.88em;margin:.5em 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}table.kv td{text-align:left}
.warn{background:#fff3cd;border:1px solid #e0c060;padding:8px;margin:8px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:8px}figure{margin:0}
@media print{body{max-width:none}.grid{display:block}section{break-inside:auto}figure{break-inside:avoid}}
@media (max-width:600px){table{font-size:.72em}})";

} // namespace

void ReportWriter::heading(int level, const std::string& id, const std::string& text)
{
    ReportBlock b;
    b.kind = ReportBlockKind::Heading;
    b.level = level;
    b.id = id;
    b.text = text;
    m_doc.blocks.push_back(std::move(b));
}

void ReportWriter::paragraph(const std::string& text, ReportBlockKind kind)
{
    ReportBlock b;
    b.kind = kind;
    b.text = text;
    m_doc.blocks.push_back(std::move(b));
}

void ReportWriter::keyValues(std::vector<std::vector<std::string>> rows)
{
    ReportBlock b;
    b.kind = ReportBlockKind::KeyValue;
    b.rows = std::move(rows);
    m_doc.blocks.push_back(std::move(b));
}

void ReportWriter::table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows)
{
    ReportBlock b;
    b.kind = ReportBlockKind::Table;
    b.header = std::move(header);
    b.rows = std::move(rows);
    m_doc.blocks.push_back(std::move(b));
}

void ReportWriter::chart(const std::string& title, std::string svg, double width, double height)
{
    ReportBlock b;
    b.kind = ReportBlockKind::Chart;
    b.text = title;
    b.svg = std::move(svg);
    b.width = width;
    b.height = height;
    m_doc.blocks.push_back(std::move(b));
}

ReportDocument buildRunReport(const nlohmann::json& report)
{
    return Builder(report).build();
}

int reportSectionCount(const ReportDocument& document)
{
    int n = 0;
    for (const ReportBlock& b : document.blocks)
        n += b.kind == ReportBlockKind::Heading && b.level <= 2 && !b.id.empty();
    return n;
}

std::string renderReportHtml(const ReportDocument& document, const std::function<bool(double)>& progress)
{
    const double sections = std::max(reportSectionCount(document), 1);
    int done = 0;
    checkReportProgress(progress, 0.0);
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/>"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"/><title>"
      << escapeXml(document.title) << "</title><style>" << kCss << "</style></head><body>\n";
    bool sectionOpen = false, gridOpen = false;
    for (const ReportBlock& b : document.blocks) {
        if (gridOpen && b.kind != ReportBlockKind::Chart) {
            h << "</div>\n";
            gridOpen = false;
        }
        switch (b.kind) {
        case ReportBlockKind::Heading: {
            const int level = std::clamp(b.level, 1, 6);
            if (level <= 2 && !b.id.empty()) {
                if (sectionOpen) {
                    h << "</section>\n";
                    checkReportProgress(progress, ++done / sections);
                }
                h << "<section id=\"" << escapeXml(b.id) << "\">";
                sectionOpen = true;
                h << "<h" << level << '>' << escapeXml(b.text) << "</h" << level << ">\n";
            } else {
                h << "<h" << level;
                if (!b.id.empty()) h << " id=\"" << escapeXml(b.id) << '"';
                h << '>' << escapeXml(b.text) << "</h" << level << ">\n";
            }
            break;
        }
        case ReportBlockKind::Paragraph: h << "<p>" << escapeXml(b.text) << "</p>\n"; break;
        case ReportBlockKind::Warning:
            h << "<div class=\"warn\" role=\"alert\">" << escapeXml(b.text) << "</div>\n";
            break;
        case ReportBlockKind::KeyValue:
            h << "<table class=\"kv\"><tbody>";
            for (const auto& row : b.rows)
                h << "<tr><th>" << escapeXml(row.empty() ? "" : row[0]) << "</th><td>"
                  << escapeXml(row.size() > 1 ? row[1] : "") << "</td></tr>";
            h << "</tbody></table>\n";
            break;
        case ReportBlockKind::Table:
            h << "<table><thead><tr>";
            for (const auto& c : b.header) h << "<th>" << escapeXml(c) << "</th>";
            h << "</tr></thead><tbody>";
            for (const auto& row : b.rows) {
                h << "<tr>";
                for (std::size_t i = 0; i < row.size(); ++i)
                    h << (i == 0 ? "<th>" : "<td>") << escapeXml(row[i]) << (i == 0 ? "</th>" : "</td>");
                h << "</tr>";
            }
            h << "</tbody></table>\n";
            break;
        case ReportBlockKind::Chart:
            if (!gridOpen) {
                h << "<div class=\"grid\">";
                gridOpen = true;
            }
            h << "<figure>" << b.svg << "</figure>\n";
            break;
        }
    }
    if (gridOpen) h << "</div>\n";
    if (sectionOpen) h << "</section>\n";
    h << "</body></html>\n";
    checkReportProgress(progress, 1.0);
    return h.str();
}

} // namespace foxhunt
