// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/bars_chart_view.h"

#include "engine/telemetry/decimate.h"

#include <QtCharts/QChart>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QDateTime>

#include <algorithm>

namespace foxhunt {

std::vector<QPointF> decimateMinMax(const std::vector<Bar>& bars, int buckets)
{
    std::vector<QPointF> points;
    if (bars.empty() || buckets <= 0) return points;
    auto toPoint = [](const Bar& b) { return QPointF(static_cast<double>(b.tsEvent / 1'000'000), toPoints(b.close)); };
    MinMaxDecimator decimator;
    std::vector<std::size_t> kept;
    decimator.select([&bars](std::size_t i) { return static_cast<double>(bars[i].close); }, bars.size(), buckets,
                     DecimateExtremes::Both, kept);
    points.reserve(kept.size());
    for (const std::size_t i : kept) points.push_back(toPoint(bars[i]));
    return points;
}

BarsChartView::BarsChartView(QWidget* parent) : QChartView(parent)
{
    auto* chart = new QChart;
    chart->legend()->hide();
    m_series = new QLineSeries;
    chart->addSeries(m_series);
    m_axisX = new QDateTimeAxis;
    m_axisX->setFormat(QStringLiteral("yyyy-MM-dd"));
    m_axisX->setTickCount(5);
    m_axisY = new QValueAxis;
    m_axisY->setLabelFormat(QStringLiteral("%.2f"));
    chart->addAxis(m_axisX, Qt::AlignBottom);
    chart->addAxis(m_axisY, Qt::AlignLeft);
    m_series->attachAxis(m_axisX);
    m_series->attachAxis(m_axisY);
    setChart(chart);
    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(320, 240);
}

void BarsChartView::setBars(const std::vector<Bar>& bars, const QString& title)
{
    const int buckets = std::max(200, width());
    const std::vector<QPointF> points = decimateMinMax(bars, buckets);
    m_series->replace(QList<QPointF>(points.begin(), points.end()));
    chart()->setTitle(title);
    if (points.empty()) return;
    double lo = points.front().y(), hi = lo;
    for (const QPointF& p : points) {
        lo = std::min(lo, p.y());
        hi = std::max(hi, p.y());
    }
    const double pad = std::max(0.25, (hi - lo) * 0.05);
    m_axisY->setRange(lo - pad, hi + pad);
    const double spanDays = (points.back().x() - points.front().x()) / 86'400'000.0;
    m_axisX->setFormat(spanDays < 3 ? QStringLiteral("MM-dd hh:mm") : QStringLiteral("yyyy-MM-dd"));
    m_axisX->setRange(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(points.front().x()), Qt::UTC),
                      QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(points.back().x()), Qt::UTC));
}

int BarsChartView::pointCount() const
{
    return static_cast<int>(m_series->count());
}

} // namespace foxhunt
