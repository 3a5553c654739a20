// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Self-contained SVG line charts for reports: no scripts, no network, vector output.

#include <string>
#include <vector>

namespace foxhunt {

/// One line of a chart.
struct SvgSeries {
    std::string name;
    std::string color = "#1f77b4";
    std::vector<double> x; ///< same length as y; for time axes, UNIX seconds
    std::vector<double> y;
};

/// How a chart is drawn.
struct SvgChartOptions {
    std::string title;
    std::string yLabel;
    int width = 720;
    int height = 260;
    bool timeAxis = false; ///< format x ticks as UTC dates
    int maxPoints = 1500;  ///< min/max decimation per series above this
};

/// An <svg> element (responsive: viewBox + width 100%) with axes, ticks, a legend and the lines.
std::string renderSvgLineChart(const std::vector<SvgSeries>& series, const SvgChartOptions& options);

/// Horizontal bars, one per label, longest first as given (e.g. TFT variable importances).
std::string renderSvgBarChart(const std::vector<std::string>& labels, const std::vector<double>& values,
                              const SvgChartOptions& options);

/// The viewBox height renderSvgBarChart() gives `bars` bars (the width is options.width).
double svgBarChartHeight(std::size_t bars, const SvgChartOptions& options);

/// One row of an interval chart: a point estimate and its interval (NaN: not drawn, "no data").
struct SvgInterval {
    std::string label;
    double estimate = 0.0, lower = 0.0, upper = 0.0;
    std::string color = "#1f77b4";
};

/// Horizontal intervals, one row each (a dot at the estimate, a bar from lower to upper, the figures
/// at the right), on one shared x axis with ticks and a dashed line at zero when zero is in range:
/// the interval plots rliable draws for aggregate scores.
std::string renderSvgIntervalChart(const std::vector<SvgInterval>& rows, const SvgChartOptions& options);

/// The viewBox height renderSvgIntervalChart() gives `rows` rows (the width is options.width).
double svgIntervalChartHeight(std::size_t rows, const SvgChartOptions& options);

/// A heat map of `cells` (rows x columns, row-major), light = low, dark = high, with a colour scale legend.
std::string renderSvgHeatmap(const std::vector<std::vector<double>>& cells, const std::string& rowLabel,
                             const std::string& columnLabel, const SvgChartOptions& options);

/// Tick labels for UTC times (seconds since epoch): dates where they tell the ticks apart, else
/// "YYYY-MM-DD HH:MM" on a tick that starts a day and "HH:MM" (or with seconds) on the others.
std::vector<std::string> timeTickLabels(const std::vector<double>& seconds);

/// Escapes &, <, >, " and ' for HTML/XML text and attributes.
std::string escapeXml(const std::string& text);

} // namespace foxhunt
