// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/bounded_series.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace foxhunt {

void BoundedSeries::append(double x, double y)
{
    if (m_points.size() >= m_capacity && m_capacity >= 4) {
        // Halve the older half so the window keeps its whole span in bounded memory:
        // of each four points the lowest and the highest stay, so a spike survives thinning.
        // The first point stays too: it is where the window starts.
        const std::size_t half = 1 + (m_points.size() / 2 - 1) / 4 * 4;
        std::size_t w = 1;
        for (std::size_t i = 1; i < half; i += 4) {
            std::size_t lo = i, hi = i;
            for (std::size_t j = i + 1; j < i + 4; ++j) {
                if (m_points[j].y() < m_points[lo].y()) lo = j;
                if (m_points[j].y() > m_points[hi].y()) hi = j;
            }
            if (lo == hi) hi = i + 3;
            const QPointF a = m_points[std::min(lo, hi)], b = m_points[std::max(lo, hi)];
            m_points[w++] = a;
            m_points[w++] = b;
        }
        for (std::size_t i = half; i < m_points.size(); ++i) m_points[w++] = m_points[i];
        m_points.resize(w);
        m_decimator.reset();
    }
    m_points.emplace_back(x, y);
}

void BoundedSeries::clear()
{
    m_points.clear();
    m_decimator.reset();
}

void BoundedSeries::setCapacity(std::size_t capacity)
{
    m_capacity = std::max<std::size_t>(2, capacity);
    if (m_points.size() <= m_capacity) return;
    // Keep every k-th point so the whole span survives, and the newest point exactly.
    const std::size_t k = (m_points.size() + m_capacity - 1) / m_capacity;
    std::vector<QPointF> kept;
    kept.reserve(m_capacity);
    for (std::size_t i = 0; i + 1 < m_points.size() && kept.size() + 1 < m_capacity; i += k)
        kept.push_back(m_points[i]);
    kept.push_back(m_points.back());
    m_points = std::move(kept);
    m_decimator.reset();
}

std::vector<QPointF> BoundedSeries::decimated(int buckets, Extremes which) const
{
    if (MinMaxDecimator::keepsAll(m_points.size(), buckets)) return m_points;
    m_decimator.select([this](std::size_t i) { return m_points[i].y(); }, m_points.size(), buckets, which, m_kept);
    std::vector<QPointF> out;
    out.reserve(m_kept.size());
    for (const std::size_t i : m_kept) out.push_back(m_points[i]);
    return out;
}

std::optional<QPointF> BoundedSeries::nearest(double x) const
{
    if (m_points.empty()) return std::nullopt;
    const auto it = std::lower_bound(m_points.begin(), m_points.end(), x,
                                     [](const QPointF& p, double v) { return p.x() < v; });
    if (it == m_points.begin()) return *it;
    if (it == m_points.end()) return m_points.back();
    const auto before = std::prev(it);
    return (x - before->x() <= it->x() - x) ? *before : *it;
}

} // namespace foxhunt
