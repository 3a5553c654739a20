// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/run_summary.h"

#include "engine/telemetry/metric_registry.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace foxhunt {

namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

json parsed(const std::string& text)
{
    json j = json::parse(text, nullptr, false);
    return j.is_discarded() ? json::object() : j;
}

/// The number at a path of keys, or NaN.
double numberAt(const json& doc, std::initializer_list<const char*> path)
{
    const json* at = &doc;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key)) return kNaN;
        at = &(*at)[key];
    }
    return at->is_number() ? at->get<double>() : kNaN;
}

std::string upper(std::string s)
{
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

/// What the run trained in: the hand-chosen dtype, or auto's choice per model.
std::string precisionText(const json& config, const json& versions, const std::map<std::string, bool>& int8Served)
{
    const json precision = config.value("precision", json::object());
    std::string text;
    if (versions.contains("amp_choice") && versions["amp_choice"].is_object() && !versions["amp_choice"].empty()) {
        std::map<std::string, std::vector<std::string>> byDtype;
        for (const auto& [model, choice] : versions["amp_choice"].items())
            byDtype[choice.value("enabled", false) ? upper(choice.value("dtype", std::string("bf16"))) : "FP32"]
                .push_back(model);
        text = "auto:";
        bool first = true;
        for (const auto& [dtype, models] : byDtype) {
            text += first ? " " : ", ";
            first = false;
            text += dtype;
            for (const std::string& m : models) text += " " + m;
        }
    } else if (precision.value("amp", false)) {
        text = upper(precision.value("amp_dtype", std::string("bf16")));
    } else {
        text = "FP32";
    }
    if (precision.value("int8", false)) {
        const bool any = std::any_of(int8Served.begin(), int8Served.end(), [](const auto& p) { return p.second; });
        const bool all = std::all_of(int8Served.begin(), int8Served.end(), [](const auto& p) { return p.second; });
        text += int8Served.empty() || all ? " + INT8" : any ? " + INT8 (some refused)" : " + INT8 (refused)";
    }
    return text;
}

void flatten(const json& value, const std::string& prefix, std::map<std::string, std::string>& out)
{
    if (value.is_object() && !value.empty()) {
        for (const auto& [key, child] : value.items()) flatten(child, prefix.empty() ? key : prefix + "." + key, out);
        return;
    }
    out[prefix] = value.dump();
}

} // namespace

const std::vector<Measure>& measures()
{
    using K = MeasureKind;
    static const std::vector<Measure> table = {
        {"validation_sharpe", "validation Sharpe (daily, annualised)", true, false, K::Number,
         &ModelResults::validationSharpe, true, false},
        {"test_sharpe", "test Sharpe (daily, annualised)", true, false, K::Number, &ModelResults::testSharpe, true,
         true},
        {"test_pnl", "test P&L", true, false, K::Usd, &ModelResults::testPnlUsd, true, true},
        {"buy_hold_pnl", "buy-and-hold P&L", true, false, K::Usd, &ModelResults::buyHoldPnlUsd, true, false},
        {"quantile_loss", "test quantile loss", false, true, K::Number, &ModelResults::quantileLoss, false, true},
        {"persistence_loss", "persistence quantile loss", false, true, K::Number, &ModelResults::persistenceLoss, false,
         false},
        {"int8_degradation", "INT8 degradation", true, true, K::Fraction, &ModelResults::int8Degradation, false, false},
        {"p95_latency", "P95 latency", true, true, K::Milliseconds, &ModelResults::p95LatencyMs, false, false},
        {"peak_memory", "peak memory", true, true, K::Bytes, &ModelResults::peakMemoryBytes, false, false},
    };
    return table;
}

std::string formatMeasure(MeasureKind kind, double value)
{
    if (!std::isfinite(value)) return {};
    char buf[64];
    switch (kind) {
    case MeasureKind::Number: std::snprintf(buf, sizeof buf, "%.4g", value); break;
    case MeasureKind::Usd: {
        // Thousands separated, two decimals: money reads at a glance.
        std::snprintf(buf, sizeof buf, "%.2f", std::abs(value));
        std::string digits(buf);
        const std::size_t dot = digits.find('.');
        for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(dot) - 3; i > 0; i -= 3)
            digits.insert(static_cast<std::size_t>(i), ",");
        return (value < 0 ? "-" : "") + digits + " USD";
    }
    case MeasureKind::Fraction: std::snprintf(buf, sizeof buf, "%.2f %%", value * 100.0); break;
    case MeasureKind::Milliseconds: std::snprintf(buf, sizeof buf, "%.3g ms", value); break;
    case MeasureKind::Bytes: {
        static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = value;
        int u = 0;
        while (std::abs(v) >= 1024.0 && u < 4) {
            v /= 1024.0;
            ++u;
        }
        std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
        break;
    }
    }
    return buf;
}

const ModelResults* RunSummary::find(const std::string& model) const
{
    const auto it = std::find_if(models.begin(), models.end(), [&](const ModelResults& m) { return m.model == model; });
    return it == models.end() ? nullptr : &*it;
}

namespace {

/// The summary from a run's config, versions and evaluations (model -> split -> document); `peakOf(model,
/// metric)` is the largest sample of one of the model's memory metrics, or a negative number for none.
template <class PeakOf>
RunSummary summarize(std::int64_t id, const json& config, const json& versions,
                     std::map<std::string, std::map<std::string, json>>& evaluations, PeakOf&& peakOf)
{
    RunSummary s;
    s.id = id;
    s.device = config.value("device", std::string("cpu"));
    s.processes = std::max(1, versions.value("ranks", config.value("workers", 1)));

    std::vector<std::string> models;
    for (const json& m : config.value("models", json::array()))
        if (m.is_string()) models.push_back(m.get<std::string>());
    std::map<std::string, bool> int8Served;
    for (const std::string& model : models) {
        const json& validation = evaluations[model]["validation"];
        const json& test = evaluations[model]["test"];
        const json& training = evaluations[model]["training"];
        ModelResults r{model, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN,
                       kNaN,  kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, {},   {}};
        r.validationSharpe = numberAt(validation, {"policy", "sharpe"});
        r.testSharpe = numberAt(test, {"policy", "sharpe"});
        r.testPnlUsd = numberAt(test, {"policy", "pnl_usd"});
        r.buyHoldPnlUsd = numberAt(test, {"buy_and_hold", "pnl_usd"});
        r.quantileLoss = numberAt(test, {"model", "quantile_loss"});
        r.persistenceLoss = numberAt(test, {"persistence", "quantile_loss"});
        r.testMaxDrawdownUsd = numberAt(test, {"policy", "max_drawdown_usd"});
        r.flatSharpe = numberAt(test, {"flat", "sharpe"});
        r.flatPnlUsd = numberAt(test, {"flat", "pnl_usd"});
        r.flatMaxDrawdownUsd = numberAt(test, {"flat", "max_drawdown_usd"});
        r.buyHoldSharpe = numberAt(test, {"buy_and_hold", "sharpe"});
        r.buyHoldMaxDrawdownUsd = numberAt(test, {"buy_and_hold", "max_drawdown_usd"});
        r.zeroReturnLoss = numberAt(test, {"zero_return", "quantile_loss"});
        r.climatologyLoss = numberAt(test, {"climatology", "quantile_loss"});
        r.skillQuantileLoss = numberAt(test, {"skill", "quantile_loss_vs_climatology"});
        r.skillCrps = numberAt(test, {"skill", "crps_vs_climatology"});
        r.coverageObserved = numberAt(test, {"calibration", "observed"});
        r.coverageNominal = numberAt(test, {"calibration", "nominal"});
        if (test.contains("diebold_mariano") && test["diebold_mariano"].value("valid", false)) {
            r.dmPValue = numberAt(test, {"diebold_mariano", "p_value"});
            r.dmMeanDifferential = numberAt(test, {"diebold_mariano", "mean_differential"});
        }
        r.testSteps = numberAt(test, {"policy", "steps"});
        r.testBarsPerYear = numberAt(test, {"bars_per_year"});
        if (test.contains("policy") && test["policy"].contains("daily_pnl_usd") &&
            test["policy"]["daily_pnl_usd"].is_array())
            for (const json& v : test["policy"]["daily_pnl_usd"])
                if (v.is_number()) r.testDailyPnlUsd.push_back(v.get<double>());
        if (test.contains("equity_usd") && test["equity_usd"].is_array())
            for (const json& v : test["equity_usd"])
                if (v.is_number()) r.testEquityUsd.push_back(v.get<double>());
        r.int8Degradation = numberAt(validation, {"int8", "degradation"});
        if (validation.contains("int8") && validation["int8"].is_object())
            int8Served[model] = validation["int8"].value("served", false);
        r.p95LatencyMs = numberAt(training, {"latency", "p95_ms"});

        // Each memory component's peak, from the samples (recorded every few seconds).
        double peak = 0.0;
        bool any = false;
        for (const metrics::Metric& m : metrics::all()) {
            if (m.unit != metrics::Unit::Bytes || m.family == metrics::Family::Session || m.chart != "memory") continue;
            const double most = peakOf(model, std::string(m.name));
            if (most >= 0.0) {
                peak += most;
                any = true;
            }
        }
        r.peakMemoryBytes = any ? peak : kNaN;
        s.models.push_back(std::move(r));
    }
    s.precision = precisionText(config, versions, int8Served);
    return s;
}

} // namespace

RunSummary summarizeRun(const RunStore& runs, const RunInfo& run)
{
    std::map<std::string, std::map<std::string, json>> evaluations; // model -> split -> document
    for (const EvaluationRecord& e : runs.evaluations(run.id)) evaluations[e.model][e.split] = parsed(e.resultJson);
    return summarize(run.id, parsed(run.configJson), parsed(run.versionsJson), evaluations,
                     [&](const std::string& model, const std::string& metric) {
                         double most = -1.0;
                         for (const MetricSample& sample : runs.metrics(run.id, model, metric))
                             if (std::isfinite(sample.value)) most = std::max(most, sample.value);
                         return most;
                     });
}

RunSummary summarizeReportRun(const nlohmann::json& run)
{
    const json empty = json::object();
    const auto objectAt = [&](const char* key) -> const json& {
        return run.contains(key) && run[key].is_object() ? run[key] : empty;
    };
    std::map<std::string, std::map<std::string, json>> evaluations;
    for (const auto& [model, splits] : objectAt("evaluations").items())
        if (splits.is_object())
            for (const auto& [split, doc] : splits.items()) evaluations[model][split] = doc;
    const json& metrics = objectAt("metrics");
    const std::int64_t id = run.contains("id") && run["id"].is_number_integer() ? run["id"].get<std::int64_t>() : 0;
    return summarize(id, objectAt("config"), objectAt("versions"), evaluations,
                     [&](const std::string& model, const std::string& metric) {
                         double most = -1.0;
                         if (!metrics.contains(model) || !metrics[model].contains(metric)) return most;
                         const json& values = metrics[model][metric].value("value", json::array());
                         for (const json& v : values)
                             if (v.is_number() && std::isfinite(v.get<double>()))
                                 most = std::max(most, v.get<double>());
                         return most;
                     });
}

std::vector<ConfigDifference> configDifferences(const std::vector<std::string>& configJsons)
{
    std::vector<std::map<std::string, std::string>> flat(configJsons.size());
    std::set<std::string> keys;
    for (std::size_t i = 0; i < configJsons.size(); ++i) {
        const json doc = json::parse(configJsons[i], nullptr, false);
        if (doc.is_discarded()) throw std::invalid_argument("a run's stored config is not JSON");
        flatten(doc, "", flat[i]);
        for (const auto& [key, _] : flat[i]) keys.insert(key);
    }
    std::vector<ConfigDifference> out;
    for (const std::string& key : keys) {
        ConfigDifference d{key, {}};
        for (const auto& f : flat) {
            const auto it = f.find(key);
            d.values.push_back(it == f.end() ? std::string() : it->second);
        }
        if (std::adjacent_find(d.values.begin(), d.values.end(), std::not_equal_to<>()) != d.values.end())
            out.push_back(std::move(d));
    }
    return out;
}

} // namespace foxhunt
