#pragma once
// The live dashboard: per model a row of charts (loss, gradient norm, latency,
// and episode PnL for the agents), each a bounded, decimated window updated
// with exactly one replace() per series per tick. The full history is in SQLite.

#include "engine/telemetry/metric_sample.h"

#include <QHash>
#include <QPointF>
#include <QString>
#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QGridLayout;
class QLineSeries;
class QValueAxis;
class QChartView;
QT_END_NAMESPACE

namespace foxhunt {

/// A bounded window of points: at most `capacity`, older halves thinned by 2 when full.
class BoundedSeries {
public:
    explicit BoundedSeries(std::size_t capacity = 20'000) : m_capacity(capacity) {}
    void append(double x, double y);
    /// Min/max per bucket, at most 2 * buckets points, in x order.
    std::vector<QPointF> decimated(int buckets) const;
    std::size_t size() const { return m_points.size(); }
    bool empty() const { return m_points.empty(); }

private:
    std::vector<QPointF> m_points;
    std::size_t m_capacity;
};

/// Live charts of a running session.
class Dashboard : public QWidget {
    Q_OBJECT
public:
    explicit Dashboard(QWidget* parent = nullptr);

    /// Adds a drained batch and redraws the touched charts once.
    void addSamples(const MetricBatch& batch);
    /// Forgets every chart (a new run starts).
    void clear();
    /// Points held for a model's metric (for tests).
    int pointCount(const QString& model, const QString& metric) const;
    /// Number of charts shown.
    int chartCount() const { return static_cast<int>(m_charts.size()); }

private:
    struct Chart {
        QChartView* view = nullptr;
        QLineSeries* series = nullptr;
        QValueAxis* x = nullptr;
        QValueAxis* y = nullptr;
        BoundedSeries data;
        bool dirty = false;
    };
    Chart& chartFor(const QString& model, const QString& metric);

    QGridLayout* m_grid = nullptr;
    QHash<QString, int> m_rows;           ///< model -> grid row
    QHash<QString, Chart*> m_charts;      ///< "model/metric" -> chart
    std::vector<std::unique_ptr<Chart>> m_owned;
};

} // namespace foxhunt
