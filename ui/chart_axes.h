// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the dashboard's charts and the runs overlay share about their axes: round
// tick values and points scaled to a display unit (engine/telemetry/axis_scale.h),
// drawn as steps where a value holds until the next sample.

#include <QList>
#include <QPointF>

#include <vector>

QT_BEGIN_NAMESPACE
class QValueAxis;
QT_END_NAMESPACE

namespace foxhunt {

/// Ticks every 1, 2 or 5 times a power of ten (dynamic ticks anchored at 0) over [min, max], with
/// the decimals that step needs; at most `maxTicks` of them.
void applyRoundTicks(QValueAxis* axis, double min, double max, int maxTicks = 6);

/// `points` with every y divided by `divisor`; with `stepped` each point after the first is
/// preceded by one at its x and the previous y (a value holds until the next sample).
QList<QPointF> displayPoints(const std::vector<QPointF>& points, double divisor, bool stepped);

} // namespace foxhunt
