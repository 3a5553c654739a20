// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/bars_chart_view.h"

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
    const std::size_t n = bars.size();
    auto toPoint = [](const Bar& b) { return QPointF(static_cast<double>(b.tsEvent / 1'000'000), toPoints(b.close)); };
    if (n <= static_cast<std::size_t>(2 * buckets)) {
        points.reserve(n);
        for (const Bar& b : bars) points.push_back(toPoint(b));
        return points;
    }
    points.reserve(2 * static_cast<std::size_t>(buckets));
    for (int k = 0; k < buckets; ++k) {
        const std::size_t begin = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(buckets);
        const std::size_t end = n * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(buckets);
        if (begin >= end) continue;
        std::size_t lo = begin, hi = begin;
        for (std::size_t i = begin + 1; i < end; ++i) {
            if (bars[i].close < bars[lo].close) lo = i;
            if (bars[i].close > bars[hi].close) hi = i;
        }
        // Keep time order inside the bucket so the line never runs backwards.
        points.push_back(toPoint(bars[std::min(lo, hi)]));
        if (lo != hi) points.push_back(toPoint(bars[std::max(lo, hi)]));
    }
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

int BarsChartView::pointCount() const { return static_cast<int>(m_series->count()); }

} // namespace foxhunt
