// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Run reports: one or more stored runs as self-contained HTML, JSON or CSV
// (PDF from the same blocks in the Qt layer: ui/report_pdf.h).

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace foxhunt {

class BarStore;

/// Progress of an export, 0..1; returning false cancels it.
using ReportProgress = std::function<bool(double fraction)>;

/// The whole report's data: runs with config, evaluations and every metric series. `progress`
/// (0..1, may cancel) steps per run after its data facts, its evaluations and each model's metrics.
nlohmann::json runReportJson(BarStore& store, const std::vector<std::int64_t>& runIds,
                             const ReportProgress& progress = {});
/// Self-contained HTML (inline CSS and SVG charts, no scripts, no network); several runs are overlaid.
std::string renderRunReportHtml(const nlohmann::json& report);
/// Every metric in long format: run,model,metric,step,time,value. `progress` steps per run and model.
std::string renderRunReportCsv(BarStore& store, const std::vector<std::int64_t>& runIds,
                               const ReportProgress& progress = {});

/// Output formats of a run report.
enum class ReportFormat { Html, Pdf, Json, Csv };

/// The format named by a file's extension (.html/.htm, .pdf, .json, .csv, any case); throws
/// std::invalid_argument for anything else.
ReportFormat reportFormatForPath(const std::string& path);

/// Thrown when a progress callback cancels an export; no file is left behind.
class ReportCancelled : public std::runtime_error {
public:
    ReportCancelled() : std::runtime_error("report export cancelled") { }
};

/// Calls `progress` (if set) and throws ReportCancelled when it returns false.
void checkReportProgress(const ReportProgress& progress, double fraction);
/// `progress` seen through a part of the whole: 0..1 of the part is from..to of `progress`
/// (empty when `progress` is).
ReportProgress reportProgressPart(const ReportProgress& progress, double from, double to);

/// Writes `text` to `path` all or nothing (writeFileAtomically in engine/store/atomic_file.h);
/// throws std::runtime_error with the reason when it cannot.
void writeTextFile(const std::string& path, const std::string& text);

/// Writes the report of `runIds` to `path`; the format follows the extension
/// (.html, .json, .csv; .pdf needs the Qt layer: see ui/report_export.h).
/// Throws std::invalid_argument for other extensions, no runs or unknown runs,
/// std::runtime_error when the file cannot be written, ReportCancelled when
/// `progress` returns false.
void writeRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path,
                    const ReportProgress& progress = {});

} // namespace foxhunt
