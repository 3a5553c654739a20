// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Min/max-per-bucket decimation, the one every chart uses: the live dashboard
// (incrementally, as points arrive), the runs overlay, the bars preview and the
// report's SVG charts. Qt-free: it works on indices, the caller owns the points.
//
// Buckets hold a power-of-two number of points counted from index 0, so a
// sequence that only grows at its end extends the cached buckets instead of
// scanning again: a tick costs the new points plus the output.

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace foxhunt {

/// Which extremes of each bucket a decimation keeps: both (a line), or only the
/// lowest or the highest (the lower or upper edge of a band).
enum class DecimateExtremes { Both, Min, Max };

/// Picks the points to draw of a sequence of values y(0) .. y(n - 1): the first,
/// per bucket its minimum and maximum in index order (or only one of them), and the
/// last. At most 2 * buckets indices (for buckets >= 3); every index when
/// n <= 2 * max(buckets, 2) or buckets <= 0. Between calls the sequence may only
/// grow at its end; after any other change call reset().
class MinMaxDecimator {
public:
    /// Forgets the cached buckets.
    void reset()
    {
        m_buckets.clear();
        m_bucketSize = 0;
    }

    /// Fills `out` with the ascending indices to draw; `y(i)` returns value i.
    template <class Y>
    void select(const Y& y, std::size_t n, int buckets, DecimateExtremes which, std::vector<std::size_t>& out);

    /// True when select() keeps every index of n values.
    static bool keepsAll(std::size_t n, int buckets)
    {
        return buckets <= 0 || n <= static_cast<std::size_t>(2 * std::max(buckets, 2));
    }

private:
    struct Bucket {
        std::size_t lo = 0; ///< index of the minimum
        std::size_t hi = 0; ///< index of the maximum
    };
    template <class Y>
    static Bucket scan(const Y& y, std::size_t begin, std::size_t end);
    template <class Y>
    void update(const Y& y, std::size_t n, int buckets);

    std::vector<Bucket> m_buckets; ///< complete buckets of m_bucketSize values from index 0
    std::size_t m_bucketSize = 0;  ///< 0 = cache invalid
    int m_cacheBuckets = 0;
};

/// One-shot decimation of contiguous values (see MinMaxDecimator::select()).
std::vector<std::size_t> decimateMinMax(std::span<const double> y, int buckets,
                                        DecimateExtremes which = DecimateExtremes::Both);

// ---------------------------------------------------------------------------

template <class Y>
MinMaxDecimator::Bucket MinMaxDecimator::scan(const Y& y, std::size_t begin, std::size_t end)
{
    Bucket b{begin, begin};
    for (std::size_t i = begin; i < end; ++i) {
        const double v = y(i);
        if (v < y(b.lo)) b.lo = i;
        if (v > y(b.hi)) b.hi = i;
    }
    return b;
}

template <class Y>
void MinMaxDecimator::update(const Y& y, std::size_t n, int buckets)
{
    // Appends only complete new buckets; when there are too many, adjacent pairs merge.
    const std::size_t maxBuckets = static_cast<std::size_t>(std::max(1, buckets - 2));
    if (m_bucketSize == 0 || m_cacheBuckets != buckets) {
        m_buckets.clear();
        m_bucketSize = 1;
        m_cacheBuckets = buckets;
    }
    while (n / m_bucketSize > maxBuckets) {
        std::vector<Bucket> merged;
        merged.reserve(m_buckets.size() / 2);
        for (std::size_t i = 0; i + 1 < m_buckets.size(); i += 2) {
            const Bucket& a = m_buckets[i];
            const Bucket& b = m_buckets[i + 1];
            merged.push_back({y(b.lo) < y(a.lo) ? b.lo : a.lo, y(b.hi) > y(a.hi) ? b.hi : a.hi});
        }
        m_buckets = std::move(merged);
        m_bucketSize *= 2;
    }
    for (std::size_t begin = m_buckets.size() * m_bucketSize; begin + m_bucketSize <= n; begin += m_bucketSize)
        m_buckets.push_back(scan(y, begin, begin + m_bucketSize));
}

template <class Y>
void MinMaxDecimator::select(const Y& y, std::size_t n, int buckets, DecimateExtremes which,
                             std::vector<std::size_t>& out)
{
    out.clear();
    if (keepsAll(n, buckets)) {
        out.resize(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = i;
        return;
    }
    update(y, n, buckets);
    out.reserve(2 * static_cast<std::size_t>(buckets));
    auto take = [&out](std::size_t i) {
        if (!out.empty() && i <= out.back()) return;
        out.push_back(i);
    };
    auto emitBucket = [&](const Bucket& b) {
        switch (which) {
        case DecimateExtremes::Both:
            take(std::min(b.lo, b.hi));
            take(std::max(b.lo, b.hi));
            break;
        case DecimateExtremes::Min: take(b.lo); break;
        case DecimateExtremes::Max: take(b.hi); break;
        }
    };
    take(0);
    for (const Bucket& b : m_buckets) emitBucket(b);
    const std::size_t tail = m_buckets.size() * m_bucketSize;
    if (tail < n) emitBucket(scan(y, tail, n));
    take(n - 1);
}

} // namespace foxhunt
