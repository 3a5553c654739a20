// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One live chart of the dashboard (ui/dashboard.h): the lines of one chart of the
// metric registry (engine/telemetry/metric_registry.h) or of one picked metric,
// each a bounded window decimated min/max per pixel column and replaced once per
// redraw, against value axes in the display unit the data reads best in. It
// switches its left axis to log scale where every value is > 0, zooms and pans
// its steps axis, draws a crosshair, shows a placeholder while it has no data and
// a one-line read-out while every line holds one value, and exports its data as
// CSV or itself as PNG/SVG. The dashboard routes samples to its lines and places
// its widget in the grid.

#include "engine/telemetry/axis_scale.h"
#include "engine/telemetry/debiased_ema.h"
#include "engine/telemetry/metric_registry.h"
#include "ui/bounded_series.h"

#include <QCoreApplication>
#include <QList>
#include <QPair>
#include <QPoint>
#include <QPointF>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QChart;
class QChartView;
class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QStackedWidget;
class QValueAxis;
QT_END_NAMESPACE

namespace foxhunt {

/// Which models a chart is drawn for.
enum class ModelRole { Any, Agent, Forecaster };

/// A line of a chart, as the registry (engine/telemetry/metric_registry.h) defines it.
struct LineSpec {
    QString metric;
    QString label;
    bool session = false;   ///< fed by the "session" model (rss_bytes), drawn in every model's chart
    bool rightAxis = false; ///< against the right-hand axis (a much larger scale)
    BoundedSeries::Extremes extremes = BoundedSeries::Extremes::Both;
    bool perRank = false; ///< `metric` is a prefix: one line per "<metric><rank>", labelled "<label> <rank>"
    QString legend;       ///< a shorter name for the legend of a crowded chart (the read-out keeps `label`)
    const metrics::Metric* source = nullptr; ///< the registry's line
};

/// A chart of a model's section, as the registry defines it (or a picked metric's).
struct ChartSpec {
    QString key;
    QString title;
    metrics::Unit unit = metrics::Unit::None; ///< of every line; values are held in it and scaled for display
    ModelRole role = ModelRole::Any;
    bool smoothable = false;
    bool stepped = false;  ///< drawn as steps: a value holds until the next sample (memory)
    bool zeroLine = false; ///< a flat reference at 0 across the x range
    bool band = false;     ///< lines 0 and 1 are the lower and upper edge of an area
    std::vector<LineSpec> lines;
    /// Made when the model first emits one of its metrics, on the row under the model's charts:
    /// metrics only some runs have (multi-process ones) never leave an empty chart in the others.
    bool onDemand = false;
};

/// What the dashboard sets alike for every chart.
struct ChartStyle {
    /// Smoothing weight 0..0.99 of the smoothable lines (TensorBoard's debiased EMA; 0 = off).
    double smoothing = 0.0;
    /// Y axes fitted to the 2nd..98th percentile of the drawn points rather than to every point.
    bool ignoreOutliers = true;
    /// Points each line holds.
    std::size_t capacity = BoundedSeries::kDefaultCapacity;
};

/// (step, UNIX ns) of a series' held points, in step order: the wall times of the CSV export.
using WallTimes = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Notes a sample's wall time in `wall` (kept for the held points of `raw` only).
void noteWallTime(WallTimes& wall, const BoundedSeries& raw, std::int64_t step, std::int64_t wallNs);

class MetricChart;

/// A line of a MetricChart: the samples it holds, their decimation as last drawn, and what every
/// sample it has seen says (whether it ever changed, its minimum).
struct MetricLine {
    /// Adds a sample (and its wall time when `wallNs` > 0); the next redraw draws it.
    void append(std::int64_t step, double value, std::int64_t wallNs);
    /// Notes a sample's value in what the line has seen (constancy, minimum).
    void noteValue(double value);

    QString metric;
    QString label;
    bool smoothable = false;
    bool session = false; ///< fed by the session model's samples (process RSS), not the chart's model's
    BoundedSeries::Extremes extremes = BoundedSeries::Extremes::Both;
    BoundedSeries raw;
    BoundedSeries smooth;
    DebiasedEma ema;
    QLineSeries* series = nullptr;
    QLineSeries* smoothSeries = nullptr;
    MetricChart* owner = nullptr;
    int rank = -1;          ///< the rank of a per-rank line
    int colorIndex = -1;    ///< in the line colours; -1 for a band's edges (the area draws them)
    bool secondary = false; ///< drawn against the chart's right-hand axis
    bool dirty = false;
    bool rescale = false;                 ///< the axis's display unit changed: draw the kept decimation again
    std::vector<QPointF> decimated;       ///< what was last drawn, in the registry's unit
    std::vector<QPointF> smoothDecimated; ///< likewise of the smoothed line
    // Range of what was last drawn, so an untouched line is not decimated again.
    double x0 = 0, x1 = 0, lo = 0, hi = 0;
    double robustLo = 0, robustHi = 0; ///< lo and hi without the outliers (the 2nd and 98th percentile)
    bool drawn = false;
    // Every sample seen (not only those held): whether it ever changed, and its minimum.
    std::size_t samples = 0;
    double first = 0.0;
    bool varies = false;
    double minSeen = std::numeric_limits<double>::infinity();
    WallTimes wall; ///< wall times of the held points
};

/// One chart of a model's section: a QChart of the lines of a ChartSpec in a stack with its
/// placeholder and its one-line read-out.
class MetricChart {
    Q_DECLARE_TR_FUNCTIONS(foxhunt::MetricChart)
public:
    /// The narrowest and shortest a chart gets (an expanded one is twice as tall).
    static constexpr int kMinWidth = 300;
    static constexpr int kMinHeight = 230;

    /// The chart of `spec` (which must outlive it) in `model`'s section, `order`-th there, with the
    /// spec's lines that are not per-rank (those come with their rank's first sample: addLine()).
    /// Nothing is drawn until redrawAll().
    MetricChart(const QString& model, const ChartSpec& spec, std::size_t order, const ChartStyle& style);
    MetricChart(const MetricChart&) = delete;
    MetricChart& operator=(const MetricChart&) = delete;

    /// The model whose section it is in.
    const QString& model() const { return m_model; }
    /// The chart key ("loss", "metric:epsilon").
    const QString& key() const { return m_spec->key; }
    /// "model — chart title".
    const QString& title() const { return m_title; }
    /// What it draws: a registry chart's spec or a picked metric's.
    const ChartSpec& spec() const { return *m_spec; }
    /// What the dashboard set for it (smoothing, outliers, capacity).
    const ChartStyle& style() const { return m_style; }
    /// Place in the section: registry charts first, then picked ones.
    std::size_t order() const { return m_order; }
    /// The stack of placeholder, chart view and read-out that the grid places; whoever places it
    /// deletes it (with the view, the chart and its series).
    QStackedWidget* widget() const { return m_stack; }
    /// The view of the chart (the stack's second page), and the chart.
    QChartView* view() const { return m_view; }
    QChart* chart() const { return m_chart; }
    /// The lines, per-rank ones in rank order.
    const std::vector<std::unique_ptr<MetricLine>>& lines() const { return m_lines; }

    /// Adds line `index` of the spec (for a per-rank line, the one of `rank`; else rank -1).
    MetricLine* addLine(std::size_t index, int rank);

    /// A line got samples since the last redraw.
    void markDirty() { m_dirty = true; }
    /// Whether one did, and forgets it.
    bool takeDirty() { return std::exchange(m_dirty, false); }
    /// Decimates the lines whose samples changed, draws them and moves the axes where the data
    /// left them.
    void redraw();
    /// Decimates and draws every line again.
    void redrawAll();
    /// redrawAll() when the plot area's width changed since the last redraw.
    void redecimate();
    /// Shows the placeholder (no data yet: `live` says "waiting for data", else "no samples"), the
    /// chart, or the one-line read-out of a chart whose every line has held one value. True when the
    /// read-out came or went (the grid puts read-outs after the charts).
    bool updatePlaceholder(bool live);
    /// The placeholder's message ("" when the chart has data).
    QString message() const;
    /// The one-line read-out shown instead of the chart ("" while the chart is drawn).
    QString constantReadout() const;
    /// Showing the one-line read-out instead of the chart.
    bool collapsed() const { return m_collapsed; }
    /// A picked metric's chart: its one line takes over the samples held so far.
    void takeSamples(BoundedSeries raw, WallTimes wall);

    /// Smoothing weight of the smoothable lines, 0..0.99; the raw line stays, faint.
    void setSmoothing(double weight);
    /// Y axes fitted to the 2nd..98th percentile of the drawn points, or to every point.
    void setIgnoreOutliers(bool ignore);
    /// Points each line holds.
    void setCapacity(std::size_t capacity);
    /// Every line's pens, and the band's and zero line's (a chart theme resets them).
    void restyle();

    /// Across the whole width and twice as tall: the minimum heights (the grid places it).
    void setExpanded(bool expanded);
    /// Whether it is expanded.
    bool expanded() const { return m_expanded; }
    /// The view's tooltip under `readout`: how to expand or restore the chart.
    QString toolTip(const QString& readout) const;

    /// The left axis's range (min, max).
    QPair<double, double> yRange() const;
    /// A value axis's title and its display unit's divisor (the left axis, or with `right` the
    /// right-hand one); ("", 0) without that axis.
    QPair<QString, double> yAxisUnit(bool right) const;
    /// Upper or lower edge of the band as drawn (empty without a band).
    QList<QPointF> bandEdge(bool upper) const;

    /// Whether the left-axis lines have only seen values > 0 (and the chart has no zero line or band).
    bool logPossible() const;
    /// Whether the left axis is on log scale.
    bool isLogScale() const { return m_ylog != nullptr; }
    /// Switches the left axis to log scale (false when not possible) or back to linear.
    bool setLogScale(bool on);

    /// The x range shown (min, max).
    QPair<double, double> xRange() const;
    /// Whether the x range is the user's (zoomed or panned).
    bool isZoomed() const { return m_zoomed; }
    /// Zooms the x axis by `factor` (< 1 in, > 1 out) around step `centre`; the range stays until
    /// resetZoom().
    void zoomX(double factor, double centre);
    /// Shows steps min..max (panning); the range stays until resetZoom().
    void showXRange(double min, double max);
    /// Back to the whole x range, following the data.
    void resetZoom();

    /// Whether a position in the view's viewport is inside the plot area.
    bool inPlot(const QPointF& viewportPos) const;
    /// The step at a position in the view's viewport.
    double stepAt(const QPointF& viewportPos) const;
    /// Read-out for a position in the view's viewport: the nearest held point of each line
    /// ("model — loss · step 120 · loss 0.53"). Empty outside the plot or without data.
    QString readoutAt(const QPoint& viewportPos) const;

    /// Shows the crosshair at step `x`: a vertical line and, beside it, the values there (hidden
    /// when `x` is outside the x range, the chart has no data or shows its one-line read-out).
    void setCrosshair(double x);
    /// Hides the crosshair.
    void hideCrosshair();
    /// The values the crosshair shows ("" when hidden).
    QString crosshairText() const;

    /// Writes the held data as CSV: step, wall_time (ISO 8601 UTC where the sample carried one) and
    /// one column per line in the registry's unit; through a temporary file and rename.
    bool exportCsv(const QString& path, QString* error) const;
    /// Writes the chart as drawn, PNG or SVG by the path's suffix, all or nothing.
    bool exportImage(const QString& path, QString* error) const;

private:
    /// A line's pens: its colour, faint while smoothing is on, its smoothed line in the same colour.
    void styleLine(MetricLine& line) const;
    void recomputeSmoothing(MetricLine& line) const;
    /// Moves the left-axis lines to a log axis or back; the next redraw fits it.
    void switchLog(bool on);
    /// Fits the log axis to its lines (display units, every value > 0).
    void fitLogAxis(double lo, double hi);
    /// The one-line read-out of a chart whose every line has held one value ("" otherwise).
    QString constantText() const;
    /// Marks every line with data for decimation at the next redraw.
    void markAllDirty();

    QString m_model;
    QString m_title;
    const ChartSpec* m_spec = nullptr;
    std::size_t m_order = 0;
    ChartStyle m_style;
    QStackedWidget* m_stack = nullptr;
    QLabel* m_placeholder = nullptr;
    QLabel* m_constant = nullptr; ///< the one-line read-out of a chart whose lines never change
    bool m_collapsed = false;     ///< showing `m_constant` instead of the chart
    QChartView* m_view = nullptr;
    QChart* m_chart = nullptr;
    QValueAxis* m_x = nullptr;
    QValueAxis* m_y = nullptr;
    QValueAxis* m_y2 = nullptr;          ///< right-hand axis of the session-wide lines (process RSS)
    axis::DisplayUnit m_yUnit, m_y2Unit; ///< what the axes' values are divided by, and its symbol
    bool m_unitsSet = false;
    QLogValueAxis* m_ylog = nullptr; ///< replaces `m_y` while log scale is on
    bool m_zoomed = false;           ///< the x range is the user's (wheel, drag) until reset
    int m_zoomBuckets = 0; ///< while zoomed in: buckets over the whole series, so the part shown keeps its detail
    QGraphicsLineItem* m_cross = nullptr;           ///< the crosshair's vertical line
    QGraphicsSimpleTextItem* m_crossText = nullptr; ///< and the values beside it
    QLineSeries* m_zero = nullptr;
    QAreaSeries* m_band = nullptr;
    std::vector<std::unique_ptr<MetricLine>> m_lines;
    bool m_dirty = false;
    bool m_refit = false;    ///< fit the y axes to the data at the next redraw, however well they fit now
    bool m_expanded = false; ///< shown across the whole width, twice as tall
    int m_decimatedFor = -1; ///< plot-area width the lines were last decimated for
};

} // namespace foxhunt
