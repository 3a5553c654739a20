// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one entry point that exports a run report in any format, used alike by
// File -> Export report in the GUI and by `foxhunt-cli report` / `train --report`.
// Std-only header.

#include "engine/report/group_report.h"
#include "engine/report/run_report.h"
#include "ui/report_pdf.h"

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// Writes the report of `runIds` (one run, or a comparison of several) from the
/// store at `databasePath` to `path`; the extension picks the format (.html,
/// .pdf, .json, .csv). `progress` gets 0..1 and cancels by returning false
/// (ReportCancelled, and no file is left behind). A PDF needs fonts: without a
/// QGuiApplication (a headless CLI) one is created on the offscreen platform
/// for the export. Throws std::invalid_argument for an unknown extension, no
/// runs or unknown runs, std::runtime_error when the file cannot be written.
void exportRunReport(const std::string& databasePath, const std::vector<std::int64_t>& runIds, const std::string& path,
                     const ReportProgress& progress = {}, ReportPageSize pageSize = ReportPageSize::A4);

/// The same for the run groups `groupIds` (one, or several compared): engine/report/group_report.h.
void exportGroupReport(const std::string& databasePath, const std::vector<std::int64_t>& groupIds,
                       const std::string& path, const ReportProgress& progress = {},
                       ReportPageSize pageSize = ReportPageSize::A4);

} // namespace foxhunt
