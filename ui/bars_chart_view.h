// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A price preview of one stored series: closes, decimated to min/max per
// pixel column so that millions of bars draw as fast as a few thousand.

#include "engine/data/bar.h"

#include <QtCharts/QChartView>

#include <vector>

QT_BEGIN_NAMESPACE
class QLineSeries;
class QDateTimeAxis;
class QValueAxis;
QT_END_NAMESPACE

namespace foxhunt {

/// Decimates closes to at most 2 * buckets points (the first, the last, and the min and max
/// of each bucket, in time order: engine/telemetry/decimate.h). x = UTC milliseconds, y = index points.
std::vector<QPointF> decimateMinMax(const std::vector<Bar>& bars, int buckets);

/// The chart of one series.
class BarsChartView : public QChartView {
    Q_OBJECT
public:
    explicit BarsChartView(QWidget* parent = nullptr);

    /// Shows the bars (replacing what was shown) under a title.
    void setBars(const std::vector<Bar>& bars, const QString& title);
    /// Number of points currently drawn (after decimation).
    int pointCount() const;

private:
    QLineSeries* m_series = nullptr;
    QDateTimeAxis* m_axisX = nullptr;
    QValueAxis* m_axisY = nullptr;
};

} // namespace foxhunt
