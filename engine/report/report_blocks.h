// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run report as a flat list of plain blocks, built once from the report
// JSON and rendered by every page format (HTML here, PDF in the ui layer), so
// the formats cannot drift apart.

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <vector>

namespace foxhunt {

/// What a block is.
enum class ReportBlockKind { Heading, Paragraph, KeyValue, Table, Chart, Warning };

/// One block of a report. Only the fields of its kind are used.
struct ReportBlock {
    ReportBlockKind kind = ReportBlockKind::Paragraph;
    int level = 2;                              ///< Heading: 1 (title) .. 3
    std::string id;                             ///< Heading: section anchor ("header", "data", "model-dqn", ...)
    std::string text;                           ///< Heading, Paragraph, Warning: the text; Chart: its title
    std::vector<std::string> header;            ///< Table: column titles
    std::vector<std::vector<std::string>> rows; ///< KeyValue: {key, value} pairs; Table: cells
    std::string svg;                            ///< Chart: a standalone <svg> element
    double width = 0, height = 0;               ///< Chart: the SVG's viewBox size
};

/// A whole report.
struct ReportDocument {
    std::string title;
    std::vector<ReportBlock> blocks;
};

/// Appends blocks to a document: what every report's builder (runs, run groups) writes with.
class ReportWriter {
public:
    void heading(int level, const std::string& id, const std::string& text);
    void paragraph(const std::string& text, ReportBlockKind kind = ReportBlockKind::Paragraph);
    /// {key, value} rows.
    void keyValues(std::vector<std::vector<std::string>> rows);
    void table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows);
    /// A chart: a standalone <svg> element of the given viewBox size.
    void chart(const std::string& title, std::string svg, double width, double height);

protected:
    ReportDocument m_doc;
};

/// Section ids every report has; each model adds "model-<name>" after them.
/// "summary" (each model's headline results) comes first, right after the title.
inline const std::vector<std::string> kReportSectionIds{"header",   "summary", "run",
                                                        "warnings", "data",    "configuration"};

/// Builds the blocks of a report from runReportJson()'s document (one run, or a comparison of several).
ReportDocument buildRunReport(const nlohmann::json& report);

/// The number of sections of a report: its headings of level 1 or 2 with an id.
int reportSectionCount(const ReportDocument& document);

/// Self-contained, well-formed (XML-parsable) HTML of a report: inline CSS and SVG, no scripts, no
/// network. `progress` (0..1; false cancels: ReportCancelled) steps as each section is written.
std::string renderReportHtml(const ReportDocument& document, const std::function<bool(double)>& progress = {});

} // namespace foxhunt
