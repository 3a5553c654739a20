// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/run_report.h"

#include "engine/data/market_time.h"
#include "engine/replay/split.h"
#include "engine/report/csv_field.h"
#include "engine/report/report_blocks.h"
#include "engine/report/run_summary.h"
#include "engine/session/devices.h"
#include "engine/store/bar_store.h"
#include "engine/store/atomic_file.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace foxhunt {

namespace {

/// Series, contracts, rolls and the train / validation / test split of a run. The
/// session does not store its split, so it is recomputed here from the run's
/// bars and fractions with the same function the session used.
void addDataFacts(BarStore& store, const RunInfo& info, const std::optional<SeriesInfo>& series, nlohmann::json& r)
{
    r["rolls"] = nlohmann::json::array();
    r["contracts"] = nlohmann::json::array();
    r["split"] = nullptr;
    if (!series) {
        r["split_note"] = "the series of this run is no longer in the store; its split cannot be shown";
        return;
    }
    r["series_info"] = {{"id", series->id},
                        {"dataset", series->dataset},
                        {"interval_s", static_cast<double>(series->intervalNs) / 1e9},
                        {"bars", series->barCount}};
    std::vector<std::string> contracts;
    auto addContract = [&](const std::string& c) {
        if (!c.empty() && std::find(contracts.begin(), contracts.end(), c) == contracts.end()) contracts.push_back(c);
    };
    for (const Roll& roll : store.rolls(series->id)) {
        if (roll.ts < info.fromTs || roll.ts > info.toTs) continue;
        r["rolls"].push_back({{"time", formatUtc(roll.ts)},
                              {"from", roll.fromSymbol},
                              {"to", roll.toSymbol},
                              {"price_gap", static_cast<double>(roll.priceGap) / 1e9}});
        addContract(roll.fromSymbol);
        addContract(roll.toSymbol);
    }
    if (contracts.empty()) addContract(series->symbol);
    r["contracts"] = contracts;
    try {
        const nlohmann::json& config = r["config"];
        const std::vector<Bar> bars = store.loadBars(series->id, info.fromTs, info.toTs + 1);
        const auto day = [&](const char* key) {
            return config.contains(key) && config[key].is_number_integer()
                       ? std::optional<std::int64_t>(config[key].get<std::int64_t>())
                       : std::nullopt;
        };
        const WalkForwardSplit split = splitForRun(bars, config.value("train_fraction", 0.7),
                                                   config.value("validation_fraction", 0.15),
                                                   day("validation_from_day"), day("test_from_day"));
        auto part = [&](const DateRange& d, std::size_t n) {
            return nlohmann::json{{"from", formatUtc(d.fromTs)}, {"to", formatUtc(d.toTs)}, {"bars", n}};
        };
        r["split"] = {{"train", part(split.train, split.trainBars)},
                      {"validation", part(split.validation, split.validationBars)},
                      {"test", part(split.test, split.testBars)}};
    } catch (const std::exception& e) {
        r["split_note"] = std::string("split not available: ") + e.what();
    }
}

} // namespace

nlohmann::json runReportJson(BarStore& store, const std::vector<std::int64_t>& runIds, const ReportProgress& progress)
{
    RunStore runs(store);
    checkReportProgress(progress, 0.0);
    const double perRun = 1.0 / static_cast<double>(std::max<std::size_t>(runIds.size(), 1));
    double base = 0.0;
    nlohmann::json report;
    report["foxhunt_version"] = FOXHUNT_VERSION;
    report["generated"] = formatUtc(wallClockNs());
    report["machine"] = {
        {"cpu", cpuModel()}, {"hardware_threads", std::thread::hardware_concurrency()}, {"gpu", nullptr}};
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
        // A running run's duration so far.
        r["duration_s"] = static_cast<double>((info->finishedNs ? info->finishedNs : wallClockNs()) - info->createdNs) /
                          1e9;
        r["series"] = info->series;
        r["data_from"] = formatUtc(info->fromTs);
        r["data_to"] = formatUtc(info->toTs);
        r["config"] = nlohmann::json::parse(info->configJson);
        r["versions"] = nlohmann::json::parse(info->versionsJson);
        r["error"] = info->error;
        const auto series = store.findSeries(std::to_string(info->seriesId));
        r["synthetic"] = series ? series->synthetic() : false;
        addDataFacts(store, *info, series, r);
        // Of a run's share: a tenth each for its data facts and evaluations, the rest for its
        // metrics, by samples, with a step as each model's series are done.
        checkReportProgress(progress, base + 0.1 * perRun);
        nlohmann::json evals = nlohmann::json::object();
        for (const EvaluationRecord& e : runs.evaluations(id))
            evals[e.model][e.split] = nlohmann::json::parse(e.resultJson);
        r["evaluations"] = evals;
        checkReportProgress(progress, base + 0.2 * perRun);
        nlohmann::json metrics = nlohmann::json::object();
        const MetricBatch samples = runs.metrics(id);
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const MetricSample& s = samples[i];
            nlohmann::json& m = metrics[s.model][s.metric];
            m["step"].push_back(s.step);
            m["value"].push_back(s.value);
            if (i + 1 == samples.size() || samples[i + 1].model != s.model)
                checkReportProgress(
                    progress,
                    base + (0.2 + 0.8 * static_cast<double>(i + 1) / static_cast<double>(samples.size())) * perRun);
        }
        r["metrics"] = metrics;
        // The headline results per model, as the report's summary and the runs table give them (NaN = null).
        const RunSummary summary = summarizeReportRun(r);
        nlohmann::json models = nlohmann::json::array();
        for (const ModelResults& m : summary.models) {
            nlohmann::json results = {{"model", m.model}};
            for (const Measure& measure : measures()) {
                const double v = m.*measure.field;
                results[std::string(measure.key)] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
            }
            models.push_back(std::move(results));
        }
        r["summary"] = {{"precision", summary.precision},
                        {"device", summary.device},
                        {"processes", summary.processes},
                        {"models", models}};
        list.push_back(std::move(r));
        base += perRun;
        checkReportProgress(progress, base);
    }
    report["runs"] = list;
    return report;
}

std::string renderRunReportHtml(const nlohmann::json& report)
{
    return renderReportHtml(buildRunReport(report));
}

std::string renderRunReportCsv(BarStore& store, const std::vector<std::int64_t>& runIds, const ReportProgress& progress)
{
    RunStore runs(store);
    std::string out = "run,model,metric,step,time,value\n";
    char buf[64];
    checkReportProgress(progress, 0.0);
    const double perRun = 1.0 / static_cast<double>(std::max<std::size_t>(runIds.size(), 1));
    for (std::size_t k = 0; k < runIds.size(); ++k) {
        const std::int64_t id = runIds[k];
        const MetricBatch samples = runs.metrics(id);
        // A tenth of a run's share for reading its metrics, the rest by rows, a step per model.
        checkReportProgress(progress, (static_cast<double>(k) + 0.1) * perRun);
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const MetricSample& s = samples[i];
            out += std::to_string(id) + ',';
            appendCsvField(out, s.model);
            out += ',';
            appendCsvField(out, s.metric);
            out += ',' + std::to_string(s.step) + ',' + formatUtc(s.wallNs) + ',';
            std::snprintf(buf, sizeof buf, "%.17g", s.value);
            out += buf;
            out += '\n';
            if (i + 1 == samples.size() || samples[i + 1].model != s.model)
                checkReportProgress(progress, (static_cast<double>(k) + 0.1 +
                                               0.9 * static_cast<double>(i + 1) / static_cast<double>(samples.size())) *
                                                  perRun);
        }
        checkReportProgress(progress, static_cast<double>(k + 1) * perRun);
    }
    return out;
}

ReportFormat reportFormatForPath(const std::string& path)
{
    const std::size_t dot = path.find_last_of('.');
    std::string ext = dot == std::string::npos ? std::string() : path.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == "html" || ext == "htm") return ReportFormat::Html;
    if (ext == "json") return ReportFormat::Json;
    if (ext == "csv") return ReportFormat::Csv;
    if (ext == "pdf") return ReportFormat::Pdf;
    throw std::invalid_argument("report format follows the extension: .html, .pdf, .json or .csv (" + path + ")");
}

void checkReportProgress(const ReportProgress& progress, double fraction)
{
    if (progress && !progress(fraction)) throw ReportCancelled();
}

ReportProgress reportProgressPart(const ReportProgress& progress, double from, double to)
{
    if (!progress) return {};
    return [progress, from, to](double f) { return progress(from + (to - from) * std::clamp(f, 0.0, 1.0)); };
}

void writeTextFile(const std::string& path, const std::string& text)
{
    // All or nothing, so a full disk or a cancelled export never leaves half a file.
    writeFileAtomically(path, text);
}

void writeRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path,
                    const ReportProgress& progress)
{
    const ReportFormat format = reportFormatForPath(path);
    if (format == ReportFormat::Pdf)
        throw std::invalid_argument("PDF reports are written by the Qt layer (exportRunReport in ui/report_export.h); "
                                    "this build has no PDF writer: " +
                                    path);
    if (runIds.empty()) throw std::invalid_argument("no runs to report");
    checkReportProgress(progress, 0.0);
    BarStore store(databasePath);
    std::string text;
    // Each part reports its own steps (per run, per model, per section) inside its share.
    if (format == ReportFormat::Csv) {
        text = renderRunReportCsv(store, runIds, reportProgressPart(progress, 0.0, 0.9));
    } else if (format == ReportFormat::Json) {
        const nlohmann::json report = runReportJson(store, runIds, reportProgressPart(progress, 0.0, 0.8));
        text = report.dump(2) + "\n";
    } else {
        const nlohmann::json report = runReportJson(store, runIds, reportProgressPart(progress, 0.0, 0.4));
        const ReportDocument document = buildRunReport(report);
        checkReportProgress(progress, 0.5);
        text = renderReportHtml(document, reportProgressPart(progress, 0.5, 0.9));
    }
    checkReportProgress(progress, 0.9);
    writeTextFile(path, text);
    checkReportProgress(progress, 1.0);
}

} // namespace foxhunt
