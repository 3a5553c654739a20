// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace foxhunt::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> sortedCopy(std::span<const double> values)
{
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

// Population central moments m2, m3, m4 about the mean.
struct Moments {
    double m2 = 0.0;
    double m3 = 0.0;
    double m4 = 0.0;
};

Moments centralMoments(std::span<const double> values)
{
    const double mu = mean(values);
    Moments m;
    for (double x : values) {
        const double d = x - mu;
        const double d2 = d * d;
        m.m2 += d2;
        m.m3 += d2 * d;
        m.m4 += d2 * d2;
    }
    const auto n = static_cast<double>(values.size());
    m.m2 /= n;
    m.m3 /= n;
    m.m4 /= n;
    return m;
}

} // namespace

double mean(std::span<const double> values)
{
    if (values.empty()) return kNaN;
    double sum = 0.0;
    for (double x : values) sum += x;
    return sum / static_cast<double>(values.size());
}

double median(std::span<const double> values)
{
    return quantile(values, 0.5);
}

double quantileSorted(std::span<const double> sorted, double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        throw std::invalid_argument("quantile: level must lie in [0, 1], got " + std::to_string(p));
    if (sorted.empty()) return kNaN;
    const double h = static_cast<double>(sorted.size() - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    if (lo + 1 >= sorted.size()) return sorted.back();
    const double frac = h - static_cast<double>(lo);
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double quantile(std::span<const double> values, double p)
{
    const std::vector<double> sorted = sortedCopy(values);
    return quantileSorted(sorted, p);
}

double interquartileMean(std::span<const double> values)
{
    if (values.empty()) return kNaN;
    const std::vector<double> sorted = sortedCopy(values);
    const auto n = static_cast<double>(sorted.size());
    const double lo = n / 4.0;
    const double hi = 3.0 * n / 4.0;
    double weighted = 0.0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        const double a = std::max(static_cast<double>(i), lo);
        const double b = std::min(static_cast<double>(i + 1), hi);
        if (b > a) weighted += (b - a) * sorted[i];
    }
    return weighted / (n / 2.0);
}

double sampleStd(std::span<const double> values)
{
    if (values.size() < 2) return kNaN;
    const double mu = mean(values);
    double ss = 0.0;
    for (double x : values) ss += (x - mu) * (x - mu);
    return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

double skewness(std::span<const double> values)
{
    if (values.size() < 2) return kNaN;
    const Moments m = centralMoments(values);
    if (!(m.m2 > 0.0)) return kNaN;
    return m.m3 / std::pow(m.m2, 1.5);
}

double kurtosis(std::span<const double> values)
{
    if (values.size() < 2) return kNaN;
    const Moments m = centralMoments(values);
    if (!(m.m2 > 0.0)) return kNaN;
    return m.m4 / (m.m2 * m.m2);
}

} // namespace foxhunt::stats
