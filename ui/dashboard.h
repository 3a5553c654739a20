// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The live dashboard: per model a titled section of charts (loss, loss scale,
// gradient norm, latency, memory, and the equity curve for agents or the
// forecast band for forecasters), followed, once a run reports them, by the
// throughput of each rank, the gradient all-reduce time and CUDA memory. The
// charts wrap to as many columns as the visible width holds, so nothing needs
// horizontal scrolling. Each series keeps a bounded window whose min/max-per-pixel
// decimation is maintained incrementally, and gets exactly one replace() per
// tick. The full history is in SQLite; fromStore() draws a stored run. Every
// other scalar a model logs (epsilon, TD error, KL, entropy ...) is held too, and
// the "Metrics" picker puts any of them on the dashboard as a chart of its own.
// Each chart is a MetricChart (ui/metric_chart.h); the dashboard lays them out,
// feeds them samples and applies its settings to all of them.

#include "engine/telemetry/metric_sample.h"
#include "ui/bounded_series.h"

#include <QHash>
#include <QList>
#include <QPair>
#include <QPoint>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QChartView;
class QDoubleSpinBox;
class QGridLayout;
class QJsonObject;
class QLabel;
class QResizeEvent;
class QMenu;
class QToolButton;
QT_END_NAMESPACE

namespace foxhunt {

class MetricChart;
class RunStore;
struct MetricLine;

/// Live (or stored) charts of a session's models.
class Dashboard : public QWidget {
    Q_OBJECT
public:
    /// Chart keys, in column order ("equity" for agents, "forecast" for forecasters), then the
    /// charts made only once a model emits their metrics ("throughput": throughput_rank<r>, one line
    /// per rank; "allreduce": allreduce_ms), on the row under the model's charts.
    static const QStringList& chartKeys();

    explicit Dashboard(QWidget* parent = nullptr);
    ~Dashboard() override;

    /// Creates the rows of the models a run trains (in this order); they show
    /// "waiting for data" until samples arrive. Marks the dashboard live.
    void setModels(const QStringList& models);
    /// Live: empty charts wait for data. Not live (run ended, stored run):
    /// empty charts say the model did not emit that metric.
    void setLive(bool live);
    bool live() const { return m_live; }
    /// Adds a drained batch and replaces each touched series once.
    void addSamples(const MetricBatch& batch);
    /// Forgets every chart (a new run starts).
    void clear();
    /// Draws stored run `runId` (its configured models, every stored metric, and each model's INT8
    /// summary from its validation evaluation). False if the run is unknown.
    bool fromStore(const RunStore& store, std::int64_t runId);
    /// Shows, under each model's title, the INT8 summary of a session's result document (its
    /// models.<m>.validation.int8 objects): latency P50/P95/P99 FP32 vs INT8 at batch 1 and 32,
    /// throughput, bytes, degradation, the gate's verdict and the backend. Models without one show none.
    void setResultDocument(const QByteArray& resultJson);
    /// One model's INT8 summary from its "int8" object (nothing shown for an empty object).
    void setInt8Summary(const QString& model, const QJsonObject& int8);
    /// The INT8 summary shown for a model, as plain text ("" when none).
    QString int8Summary(const QString& model) const;

    /// Puts the lines' own pens back (colours, the faint raw line under a smoothed one, the band)
    /// after a chart theme was applied, which resets every series' pen.
    void restyle();
    /// Smoothing weight 0..0.99 (TensorBoard's debiased EMA); the raw line stays, faint.
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }
    /// Y axes fitted to the 2nd..98th percentile of the drawn points (on by default, as in
    /// TensorBoard) or to every point.
    void setIgnoreOutliers(bool ignore);
    bool ignoresOutliers() const { return m_ignoreOutliers; }
    /// A chart's y-axis range (min, max); (0, 0) without the chart.
    QPair<double, double> yRange(const QString& model, const QString& chart) const;
    /// Points each series holds (default BoundedSeries::kDefaultCapacity).
    void setSeriesCapacity(std::size_t capacity);

    /// Models shown, in row order.
    QStringList models() const { return m_order; }
    /// Number of charts shown.
    int chartCount() const { return static_cast<int>(m_charts.size()); }
    /// Chart keys of one model's row.
    QStringList chartsOf(const QString& model) const;
    /// Legend labels of the lines of a model's chart, in order ("rank 0", "rank 1", ...); empty without the chart.
    QStringList lineLabels(const QString& model, const QString& chart) const;
    /// Points held for a model's metric (rss_bytes: the session's, as drawn in the model's memory chart).
    int pointCount(const QString& model, const QString& metric) const;
    /// Points currently in the chart series of a model's metric (after decimation).
    QList<QPointF> shownPoints(const QString& model, const QString& metric) const;
    /// Points of the smoothed series of a model's metric (empty when smoothing is off).
    QList<QPointF> smoothedPoints(const QString& model, const QString& metric) const;
    /// Upper and lower edge of a forecaster's q10..q90 band as drawn.
    QList<QPointF> bandEdge(const QString& model, bool upper) const;
    /// The placeholder shown instead of a chart ("" when the chart has data).
    QString chartMessage(const QString& model, const QString& chart) const;
    /// The one-line read-out shown instead of a chart whose every line has held one value for a few
    /// samples ("loss scale: 1 (constant)"); "" while the chart is drawn.
    QString constantReadout(const QString& model, const QString& chart) const;
    /// A value axis's title and its display unit's divisor (the left axis, or with `right` the
    /// right-hand one); ("", 0) without the chart or axis.
    QPair<QString, double> yAxisUnit(const QString& model, const QString& chart, bool right = false) const;
    /// Charts per row at the current width (1 to 6).
    int columns() const { return m_columns; }
    /// Grid cell (row, column) of a model's chart; (-1, -1) without the chart.
    QPoint cellOf(const QString& model, const QString& chart) const;
    /// Grid columns a chart spans (all of them when expanded); 0 without the chart.
    int columnSpanOf(const QString& model, const QString& chart) const;
    /// Shows a chart across the whole width and twice as tall, on a row of its own (double-clicking
    /// a chart toggles it), or back in the grid.
    void setExpanded(const QString& model, const QString& chart, bool expanded);
    bool isExpanded(const QString& model, const QString& chart) const;
    /// The view of a chart (for hover tests and screenshots).
    QChartView* chartView(const QString& model, const QString& chart) const;
    /// Read-out for a position in a chart view's viewport: the nearest held point of each
    /// line ("step 120 · loss 0.53"); also shown in the read-out label. Empty outside data.
    QString hoverAt(const QString& model, const QString& chart, const QPoint& viewportPos);
    /// The hover read-out label's text.
    QString hoverText() const;

    /// A log-scale y axis is offered where every value a chart's left-axis lines have seen is > 0
    /// (and the chart has no zero line or band); a value <= 0 arriving later turns it off again.
    bool logScaleAvailable(const QString& model, const QString& chart) const;
    /// Switches a chart's left axis to log scale (false when not available) or back to linear.
    bool setLogScale(const QString& model, const QString& chart, bool on);
    bool isLogScale(const QString& model, const QString& chart) const;

    /// The x range shown (min, max); (0, 0) without the chart.
    QPair<double, double> xRange(const QString& model, const QString& chart) const;
    /// Zooms a chart's x axis by `factor` (< 1 in, > 1 out) around step `centre` (the mouse wheel).
    /// A zoomed chart keeps its x range while samples arrive, until resetZoom().
    void zoomX(const QString& model, const QString& chart, double factor, double centre);
    /// Moves a chart's x range by `steps` (dragging).
    void panX(const QString& model, const QString& chart, double steps);
    /// Back to the whole x range, following the data (the menu's "Reset zoom", or a double-click
    /// on a zoomed chart).
    void resetZoom(const QString& model, const QString& chart);
    bool isZoomed(const QString& model, const QString& chart) const;

    /// Shows at step `x` the crosshair of every chart of `model`: a vertical line and, beside it,
    /// the values there (moving the mouse over any chart of a model's section does so).
    void setCrosshair(const QString& model, double x);
    /// Hides a model's crosshairs (the mouse left its chart).
    void hideCrosshair(const QString& model);
    /// The value text a chart's crosshair shows ("" when hidden).
    QString crosshairText(const QString& model, const QString& chart) const;

    /// Writes a chart's held data as CSV: step, wall_time (ISO 8601 UTC where the sample carried
    /// one) and one column per line in the registry's unit; through a temporary file and rename.
    bool exportCsv(const QString& model, const QString& chart, const QString& path, QString* error = nullptr) const;
    /// Writes the chart as drawn, PNG or SVG by the path's suffix, all or nothing.
    bool exportImage(const QString& model, const QString& chart, const QString& path, QString* error = nullptr) const;
    /// The right-click menu of a chart (log scale, reset zoom, CSV/PNG/SVG export); the caller owns it.
    QMenu* contextMenu(const QString& model, const QString& chart);

    /// Metrics a shown model has logged that no chart of its section draws (epsilon, td_error,
    /// approx_kl, ...), in the registry's order: what the "Metrics" picker offers for it.
    QStringList pickableMetrics(const QString& model) const;
    /// Puts a chart of one such metric in a model's section, with what the model has logged of it so
    /// far, or takes it away. A picked metric stays picked for later runs: its chart appears as soon
    /// as a model logs it. False for a metric a registry chart already draws.
    bool setMetricShown(const QString& model, const QString& metric, bool shown);
    bool isMetricShown(const QString& model, const QString& metric) const;
    /// The chart key of a picked metric's chart ("metric:epsilon").
    static QString pickedChartKey(const QString& metric);
    /// Picked metrics as "model/metric", in the order they were picked (kept in the settings).
    QStringList pickedMetrics() const { return m_picked; }
    void setPickedMetrics(const QStringList& picked);

Q_SIGNALS:
    /// The picked metrics changed (the user ticked or unticked one in the picker).
    void pickedMetricsChanged(const QStringList& picked);

protected:
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    MetricChart* chart(const QString& model, const QString& key) const;
    MetricLine* lineFor(const QString& model, const QString& metric) const;
    void addModel(const QString& model);
    MetricChart* makeChart(const QString& model, const QString& key);
    /// Width the charts may use: the scroll area's viewport when inside one, else our own.
    int availableWidth() const;
    /// Places headers and charts for the current width; with `force` also when the column count is unchanged.
    void relayout(bool force);
    /// Decimates the charts whose plot width changed again, once, after the events now queued.
    void redecimateLater();
    /// The grid cell of a chart's stack: x column, y row, width column span (null when absent).
    QRect gridCellOf(const QString& model, const QString& chart) const;
    /// Feeds a new line the samples of its metric (a session line also gets the process RSS held so far).
    void routeLine(MetricLine& line);
    /// Makes the on-demand chart (and per-rank line) `metric` belongs to; the lines it feeds.
    QList<MetricLine*> onDemandLines(const QString& model, const QString& metric);
    /// Shows a chart's placeholder, chart or read-out; re-flows the grid when a read-out came or went.
    void updatePlaceholder(MetricChart& chart);
    /// Asks where to save and writes (CSV, PNG or SVG); reports a failure in the read-out label.
    void exportWithDialog(const QString& model, const QString& chart, const QString& kind);
    /// Makes the chart of picked metric `metric` in `model`'s section and draws what is held of it.
    void showPicked(const QString& model, const QString& metric);
    /// Takes a chart out of the grid and forgets its lines.
    void removeChart(const QString& model, const QString& key);
    /// Fills the picker's menu with each shown model's pickable metrics.
    void fillPicker();

    QGridLayout* m_grid = nullptr;
    QLabel* m_hint = nullptr;
    QHash<QString, QLabel*> m_headers;       ///< model -> its section title
    QHash<QString, QLabel*> m_int8Summaries; ///< model -> its INT8 summary (only models that have one)
    QWidget* m_watchedParent = nullptr;      ///< the viewport whose resizes re-flow the grid
    int m_columns = 0;
    bool m_redecimatePending = false;
    QLabel* m_readout = nullptr;
    QDoubleSpinBox* m_smoothingBox = nullptr;
    QCheckBox* m_outliersBox = nullptr;
    QStringList m_order;                         ///< models, row order
    QHash<QString, MetricChart*> m_charts;       ///< "model/key" -> chart
    QHash<QString, QList<MetricLine*>> m_routes; ///< "model/metric" -> lines fed by it
    /// Every sample of a metric no chart draws, so that a chart picked later starts with it (a
    /// picked chart's line takes the samples over; taken away, it gives them back).
    struct Held {
        BoundedSeries raw;
        std::vector<std::pair<std::int64_t, std::int64_t>> wall; ///< (step, UNIX ns) of held points
    };
    QHash<QString, Held> m_held; ///< "model/metric" -> what it logged
    QStringList m_picked;        ///< "model/metric" of the picked charts, in picking order
    QToolButton* m_picker = nullptr;
    std::vector<std::unique_ptr<MetricChart>> m_owned;
    BoundedSeries m_sessionRss; ///< copied into memory charts of models added later
    std::size_t m_capacity = BoundedSeries::kDefaultCapacity;
    double m_smoothing = 0.0;
    bool m_ignoreOutliers = true;
    bool m_live = true;
    /// A left-button drag over a chart: its key, the x range and the position at the press.
    QString m_dragChart;
    QPair<double, double> m_dragRange;
    QPointF m_dragStart;
};

} // namespace foxhunt
