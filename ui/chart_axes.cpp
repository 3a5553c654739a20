// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/chart_axes.h"

#include "engine/telemetry/axis_scale.h"

#include <QtCharts/QValueAxis>

#include <QString>

namespace foxhunt {

void applyRoundTicks(QValueAxis* ax, double min, double max, int maxTicks)
{
    const axis::Ticks t = axis::niceTicks(min, max, maxTicks);
    if (ax->tickType() != QValueAxis::TicksDynamic) ax->setTickType(QValueAxis::TicksDynamic);
    if (ax->tickAnchor() != 0.0) ax->setTickAnchor(0.0);
    if (ax->tickInterval() != t.step) ax->setTickInterval(t.step);
    const QString format = QStringLiteral("%.%1f").arg(t.decimals);
    if (ax->labelFormat() != format) ax->setLabelFormat(format);
}

QList<QPointF> displayPoints(const std::vector<QPointF>& points, double divisor, bool stepped)
{
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(stepped && !points.empty() ? 2 * points.size() - 1 : points.size()));
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (stepped && i > 0) out.append(QPointF(points[i].x(), points[i - 1].y() / divisor));
        out.append(QPointF(points[i].x(), points[i].y() / divisor));
    }
    return out;
}

} // namespace foxhunt
