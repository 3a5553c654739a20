// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Group reports: one run group (train --seeds, --folds, --sweep), or several compared, as a
// report of their own. The figures are summarizeGroup()'s; the report draws them as rliable does
// (interval plots of IQM and mean with 95 % bootstrap intervals, performance profiles over the
// members) beside the baselines, with the fold-by-fold table, the joined out-of-sample equity,
// the deflated Sharpe of the best member and a sweep's ranked trials. The same document renders
// to HTML here, to PDF in the ui layer (ui/report_export.h) and in the window (ui/report_view.h).

#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

class RunStore;

/// The data of a group report: for each group (in the order given) its summary as `groups --json`
/// prints it, its config, and every member's own test figures per model ("member_results").
/// `progress` (0..1, may cancel) steps per group. Throws std::invalid_argument for no groups, a
/// repeated group or an unknown one.
nlohmann::json groupReportJson(const RunStore& runs, const std::vector<std::int64_t>& groupIds,
                               const ReportProgress& progress = {});

/// The blocks of a group report from groupReportJson()'s document: a header per group, a
/// comparison when there are several, then per group and model the aggregates with their interval
/// plots and performance profile, the walk-forward folds, the trials and the members.
ReportDocument buildGroupReport(const nlohmann::json& report);

/// A performance profile's shares (stats::performanceProfile, as rliable draws it): for each
/// threshold, the share of `values` above it (higher is better) or at or below it (lower is
/// better, e.g. a loss); NaN without values.
std::vector<double> profileShares(const std::vector<double>& values, const std::vector<double>& thresholds,
                                  bool higherIsBetter);

/// Every member's figures in long format: group,kind,member,seed,fold,run,model,measure,value.
std::string renderGroupReportCsv(const nlohmann::json& report);

/// Writes the report of `groupIds` to `path` (.html, .json or .csv; .pdf needs the Qt layer:
/// ui/report_export.h). Throws as writeRunReport() does.
void writeGroupReport(const std::string& databasePath, const std::vector<std::int64_t>& groupIds,
                      const std::string& path, const ReportProgress& progress = {});

} // namespace foxhunt
