// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small helpers shared by the CLI commands.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace foxhunt::cli {

/// Adds `--db PATH` (default: the per-user data directory) to a command.
void addDbOption(CLI::App& command, std::string& dbPath);
/// The database path to use: the option's value, else the per-user default.
std::string resolveDbPath(const std::string& option);
/// Writes pretty JSON and a newline to stdout.
void printJson(const nlohmann::json& value);
/// Writes a run report; the extension picks the format (.html, .pdf, .json, .csv).
/// `letter` picks US Letter paper for a PDF (else A4). `progress` gets the fraction done (a
/// ReportProgress: false cancels). Throws like exportRunReport.
void exportReport(const std::string& dbPath, const std::vector<std::int64_t>& runIds, const std::string& path,
                  bool letter = false, const std::function<bool(double fraction)>& progress = {});
/// The same for run groups (one, or several compared): exportGroupReport.
void exportGroupReportTo(const std::string& dbPath, const std::vector<std::int64_t>& groupIds, const std::string& path,
                         bool letter = false, const std::function<bool(double fraction)>& progress = {});
/// Writes "foxhunt-cli: message" to stderr.
void printError(const std::string& message);

} // namespace foxhunt::cli
