#pragma once
// Run reports: one or more stored runs as self-contained HTML, JSON or CSV.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

class BarStore;

/// The whole report's data: runs with config, evaluations and every metric series.
nlohmann::json runReportJson(BarStore& store, const std::vector<std::int64_t>& runIds);
/// Self-contained HTML (inline CSS and SVG charts, no scripts, no network); several runs are overlaid.
std::string renderRunReportHtml(const nlohmann::json& report);
/// Every metric in long format: run,model,metric,step,time,value.
std::string renderRunReportCsv(BarStore& store, const std::vector<std::int64_t>& runIds);

/// Writes the report of `runIds` to `path`; the format follows the extension
/// (.html, .json, .csv). Throws std::invalid_argument for other extensions or
/// unknown runs, std::runtime_error when the file cannot be written.
void writeRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path);

} // namespace foxhunt
