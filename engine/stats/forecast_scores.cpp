// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/forecast_scores.h"

#include "engine/stats/descriptive.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace foxhunt::stats {

namespace {

void validateLevels(std::span<const double> levels, bool openInterval, const char* what)
{
    if (levels.empty()) throw std::invalid_argument(std::string(what) + ": no quantile levels");
    for (std::size_t k = 0; k < levels.size(); ++k) {
        const double tau = levels[k];
        const bool inside = openInterval ? (tau > 0.0 && tau < 1.0) : (tau >= 0.0 && tau <= 1.0);
        if (!inside)
            throw std::invalid_argument(std::string(what) + ": level " + std::to_string(k) + " = " +
                                        std::to_string(tau) + " is outside the unit interval");
        if (k > 0 && !(tau > levels[k - 1]))
            throw std::invalid_argument(std::string(what) + ": levels must be strictly increasing");
    }
}

void validateForecasts(std::span<const double> y, std::span<const double> quantiles, std::span<const double> levels,
                       const char* what)
{
    validateLevels(levels, /*openInterval=*/true, what);
    if (quantiles.size() != y.size() * levels.size())
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(quantiles.size()) + " quantiles for " +
                                    std::to_string(y.size()) + " outcomes x " + std::to_string(levels.size()) +
                                    " levels");
}

} // namespace

double pinballLoss(double y, double q, double tau)
{
    const double diff = y - q;
    return diff >= 0.0 ? tau * diff : (tau - 1.0) * diff;
}

double meanPinballLoss(std::span<const double> y, std::span<const double> quantiles, std::span<const double> levels)
{
    validateForecasts(y, quantiles, levels, "meanPinballLoss");
    if (y.empty()) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t k = levels.size();
    double sum = 0.0;
    for (std::size_t t = 0; t < y.size(); ++t)
        for (std::size_t j = 0; j < k; ++j) sum += pinballLoss(y[t], quantiles[t * k + j], levels[j]);
    return sum / static_cast<double>(y.size() * k);
}

double crpsFromQuantiles(double y, std::span<const double> quantiles, std::span<const double> levels)
{
    const double one[] = {y};
    return meanCrpsFromQuantiles(one, quantiles, levels);
}

double meanCrpsFromQuantiles(std::span<const double> y, std::span<const double> quantiles,
                             std::span<const double> levels)
{
    return 2.0 * meanPinballLoss(y, quantiles, levels);
}

Coverage intervalCoverage(std::span<const double> y, std::span<const double> lower, std::span<const double> upper,
                          double nominal)
{
    if (lower.size() != y.size() || upper.size() != y.size())
        throw std::invalid_argument("intervalCoverage: " + std::to_string(y.size()) + " outcomes, " +
                                    std::to_string(lower.size()) + " lower and " + std::to_string(upper.size()) +
                                    " upper bounds");
    Coverage c;
    c.nominal = nominal;
    c.n = y.size();
    std::size_t inside = 0;
    for (std::size_t t = 0; t < y.size(); ++t)
        if (y[t] >= lower[t] && y[t] <= upper[t]) ++inside;
    c.observed = y.empty() ? std::numeric_limits<double>::quiet_NaN()
                           : static_cast<double>(inside) / static_cast<double>(y.size());
    c.gap = c.observed - nominal;
    return c;
}

double PitHistogram::fraction(std::size_t bin) const
{
    if (n == 0 || bin >= counts.size()) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(counts[bin]) / static_cast<double>(n);
}

PitHistogram pitHistogram(std::span<const double> y, std::span<const double> quantiles, std::span<const double> levels)
{
    validateForecasts(y, quantiles, levels, "pitHistogram");
    const std::size_t k = levels.size();
    PitHistogram h;
    h.edges.push_back(0.0);
    h.edges.insert(h.edges.end(), levels.begin(), levels.end());
    h.edges.push_back(1.0);
    h.counts.assign(k + 1, 0);
    for (std::size_t j = 0; j <= k; ++j) h.expected.push_back(h.edges[j + 1] - h.edges[j]);
    h.n = y.size();
    for (std::size_t t = 0; t < y.size(); ++t) {
        std::size_t bin = 0;
        for (std::size_t j = 0; j < k; ++j)
            if (quantiles[t * k + j] <= y[t]) ++bin;
        ++h.counts[bin];
    }
    return h;
}

const std::vector<double>& Climatology::quantilesFor(int bucket) const
{
    const auto it = perBucket.find(bucket);
    return it != perBucket.end() ? it->second : pooled;
}

bool Climatology::usesFallback(int bucket) const
{
    return perBucket.find(bucket) == perBucket.end();
}

Climatology fitClimatology(std::span<const std::pair<int, double>> samples, std::span<const double> levels,
                           std::size_t minCount)
{
    validateLevels(levels, /*openInterval=*/false, "fitClimatology");
    if (samples.empty()) throw std::invalid_argument("fitClimatology: no training values");
    std::map<int, std::vector<double>> values;
    std::vector<double> all;
    all.reserve(samples.size());
    for (const auto& [bucket, value] : samples) {
        values[bucket].push_back(value);
        all.push_back(value);
    }
    auto quantilesOf = [&](std::vector<double>& v) {
        std::sort(v.begin(), v.end());
        std::vector<double> q;
        q.reserve(levels.size());
        for (double tau : levels) q.push_back(quantileSorted(v, tau));
        return q;
    };
    Climatology c;
    c.levels.assign(levels.begin(), levels.end());
    c.pooled = quantilesOf(all);
    for (auto& [bucket, v] : values) {
        c.counts[bucket] = v.size();
        if (v.size() >= minCount) c.perBucket[bucket] = quantilesOf(v);
    }
    return c;
}

double skillScore(double score, double baseline)
{
    if (baseline == 0.0) return std::numeric_limits<double>::quiet_NaN();
    return 1.0 - score / baseline;
}

} // namespace foxhunt::stats
