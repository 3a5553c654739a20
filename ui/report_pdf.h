// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PDF rendering of a run report's blocks (engine/report/report_blocks.h):
// the same content as the HTML, laid out on pages with QPainter, charts drawn
// from their SVG so they stay vectors. Std-only header: the CLI includes it.

#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"

#include <string>

namespace foxhunt {

/// Paper sizes a PDF report can be printed on.
enum class ReportPageSize { A4, Letter };

/// Writes `document` as a PDF at `path` and returns its page count. Pages are
/// numbered "Page i of n". Needs a QGuiApplication (fonts); reports 0..1 to
/// `progress`, which can cancel (ReportCancelled, no file left behind). Throws
/// std::runtime_error when the file cannot be written.
int writeReportPdf(const ReportDocument& document, const std::string& path,
                   ReportPageSize pageSize = ReportPageSize::A4, const ReportProgress& progress = {});

} // namespace foxhunt
