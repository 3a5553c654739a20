// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/report_export.h"

#include "engine/report/report_blocks.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <nlohmann/json.hpp>

#include <memory>
#include <stdexcept>

namespace foxhunt {

namespace {

/// Fonts need a GUI application; a terminal has no display, so a CLI gets an offscreen one for the
/// duration of the export (the returned pointer owns it; null when the process has one).
std::unique_ptr<QGuiApplication> guiForPdf()
{
    if (!QCoreApplication::instance()) {
        static int argc = 3;
        static char name[] = "foxhunt-report", platformFlag[] = "-platform", platform[] = "offscreen";
        static char* argv[] = {name, platformFlag, platform, nullptr};
        argc = 3;
        return std::make_unique<QGuiApplication>(argc, argv);
    }
    if (!qobject_cast<QGuiApplication*>(QCoreApplication::instance()))
        throw std::runtime_error("PDF reports need a QGuiApplication (fonts); this process runs a QCoreApplication");
    return nullptr;
}

} // namespace

void exportRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path,
                     const ReportProgress& progress, ReportPageSize pageSize)
{
    if (reportFormatForPath(path) != ReportFormat::Pdf) {
        writeRunReport(databasePath, runIds, path, progress);
        return;
    }
    if (runIds.empty()) throw std::invalid_argument("no runs to report");
    checkReportProgress(progress, 0.0);
    const std::unique_ptr<QGuiApplication> ownApp = guiForPdf();

    nlohmann::json report;
    {
        BarStore store(databasePath);
        report = runReportJson(store, runIds, reportProgressPart(progress, 0.0, 0.3));
    }
    const ReportDocument document = buildRunReport(report);
    checkReportProgress(progress, 0.4);
    writeReportPdf(document, path, pageSize, [&](double f) { return !progress || progress(0.4 + 0.6 * f); });
}

void exportGroupReport(const std::string& databasePath, const std::vector<std::int64_t>& groupIds,
                       const std::string& path, const ReportProgress& progress, ReportPageSize pageSize)
{
    if (reportFormatForPath(path) != ReportFormat::Pdf) {
        writeGroupReport(databasePath, groupIds, path, progress);
        return;
    }
    if (groupIds.empty()) throw std::invalid_argument("no run groups to report");
    checkReportProgress(progress, 0.0);
    const std::unique_ptr<QGuiApplication> ownApp = guiForPdf();

    nlohmann::json report;
    {
        BarStore store(databasePath);
        RunStore runs(store);
        report = groupReportJson(runs, groupIds, reportProgressPart(progress, 0.0, 0.3));
    }
    const ReportDocument document = buildGroupReport(report);
    checkReportProgress(progress, 0.4);
    writeReportPdf(document, path, pageSize, [&](double f) { return !progress || progress(0.4 + 0.6 * f); });
}

} // namespace foxhunt
