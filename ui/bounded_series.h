// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The bounded window of points behind each dashboard (and runs overlay) line.
// Its points are QPointF, as the chart series take them; the decimation itself
// is the engine's (engine/telemetry/decimate.h), cached here per series.

#include "engine/telemetry/decimate.h"

#include <QPointF>

#include <cstddef>
#include <optional>
#include <vector>

namespace foxhunt {

/// A bounded window of points: at most `capacity`; when full, the older half is
/// halved keeping the min and max of every four points, so spikes survive.
/// Min/max decimation is cached per bucket count and extended as points
/// arrive, so a tick costs the new points plus the output, not the window.
class BoundedSeries {
public:
    /// Points a dashboard series holds by default.
    static constexpr std::size_t kDefaultCapacity = 50'000;
    /// Which extremes of each bucket decimated() keeps.
    using Extremes = DecimateExtremes;

    explicit BoundedSeries(std::size_t capacity = kDefaultCapacity) : m_capacity(capacity) { }
    /// Appends in x order (x never decreases within one series).
    void append(double x, double y);
    void clear();
    /// Changes the bound; thins at once when over it.
    void setCapacity(std::size_t capacity);
    std::size_t capacity() const { return m_capacity; }
    /// Min/max per bucket in x order, plus the first and last point: at most 2 * buckets points.
    /// With Min or Max only that extreme of each bucket (the two edges of a band).
    std::vector<QPointF> decimated(int buckets, Extremes which = Extremes::Both) const;
    /// The held point whose x is nearest to `x`.
    std::optional<QPointF> nearest(double x) const;
    const std::vector<QPointF>& points() const { return m_points; }
    std::size_t size() const { return m_points.size(); }
    bool empty() const { return m_points.empty(); }

private:
    std::vector<QPointF> m_points;
    std::size_t m_capacity;
    mutable MinMaxDecimator m_decimator;     ///< its cache follows m_points while they only grow
    mutable std::vector<std::size_t> m_kept; ///< the last decimation's indices (reused storage)
};

} // namespace foxhunt
