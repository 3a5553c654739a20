// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/cli_util.h"

#include "engine/report/group_report.h"
#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"
#ifdef FOXHUNT_HAVE_PDF_REPORTS
#include "ui/report_export.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

namespace foxhunt::cli {

void addDbOption(CLI::App& command, std::string& dbPath)
{
    command.add_option("--db", dbPath, "SQLite store (default: $XDG_DATA_HOME/foxhunt/foxhunt.db)");
}

std::string resolveDbPath(const std::string& option)
{
    return option.empty() ? defaultDatabasePath() : option;
}

void printJson(const nlohmann::json& value)
{
    std::cout << value.dump(2) << '\n';
}

#ifndef FOXHUNT_HAVE_PDF_REPORTS
namespace {

/// A foxhunt-cli without Qt writes every report format but PDF.
void refusePdfWithoutQt(const std::string& path)
{
    if (reportFormatForPath(path) == ReportFormat::Pdf)
        throw std::invalid_argument("this foxhunt-cli was built without Qt (FOXHUNT_BUILD_GUI=OFF) and cannot write "
                                    "PDF; use .html, .json or .csv: " +
                                    path);
}

} // namespace
#endif

void exportReport(const std::string& dbPath, const std::vector<std::int64_t>& runIds, const std::string& path,
                  bool letter, const std::function<bool(double fraction)>& progress)
{
#ifdef FOXHUNT_HAVE_PDF_REPORTS
    exportRunReport(dbPath, runIds, path, progress, letter ? ReportPageSize::Letter : ReportPageSize::A4);
#else
    refusePdfWithoutQt(path);
    (void)letter;
    writeRunReport(dbPath, runIds, path, progress);
#endif
}

void exportGroupReportTo(const std::string& dbPath, const std::vector<std::int64_t>& groupIds, const std::string& path,
                         bool letter, const std::function<bool(double fraction)>& progress)
{
#ifdef FOXHUNT_HAVE_PDF_REPORTS
    exportGroupReport(dbPath, groupIds, path, progress, letter ? ReportPageSize::Letter : ReportPageSize::A4);
#else
    refusePdfWithoutQt(path);
    (void)letter;
    writeGroupReport(dbPath, groupIds, path, progress);
#endif
}

void printError(const std::string& message)
{
    std::cerr << "foxhunt-cli: " << message << '\n';
}

} // namespace foxhunt::cli
