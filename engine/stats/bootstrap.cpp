// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/bootstrap.h"

#include "engine/stats/descriptive.h"
#include "engine/stats/random.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace foxhunt::stats {

namespace {

void validate(const BootstrapOptions& options)
{
    if (options.resamples < 1)
        throw std::invalid_argument("bootstrap: resamples must be >= 1, got " + std::to_string(options.resamples));
    if (!(options.confidence > 0.0 && options.confidence < 1.0))
        throw std::invalid_argument("bootstrap: confidence must lie in (0, 1), got " +
                                    std::to_string(options.confidence));
}

void drawInto(Rng& rng, std::span<const double> from, std::vector<double>& out)
{
    for (std::size_t i = 0; i < from.size(); ++i) out.push_back(from[rng.below(from.size())]);
}

} // namespace

Interval percentileInterval(double estimate, std::vector<double> replicates, double confidence)
{
    // A statistic can be undefined on a resample (a Sharpe ratio of identical values): such
    // replicates carry no information about the spread and would break the sort.
    std::erase_if(replicates, [](double r) { return std::isnan(r); });
    std::sort(replicates.begin(), replicates.end());
    const double alpha = 1.0 - confidence;
    Interval interval;
    interval.estimate = estimate;
    interval.lower = quantileSorted(replicates, alpha / 2.0);
    interval.upper = quantileSorted(replicates, 1.0 - alpha / 2.0);
    interval.resamples = static_cast<int>(replicates.size());
    return interval;
}

// One buffer reused for every resample, so memory stays at one resample whatever B is.
void forEachStratifiedResample(const std::vector<std::vector<double>>& strata, const BootstrapOptions& options,
                               const std::function<void(const std::vector<double>&)>& use)
{
    validate(options);
    std::size_t total = 0;
    for (std::size_t s = 0; s < strata.size(); ++s) {
        if (strata[s].empty()) throw std::invalid_argument("bootstrap: stratum " + std::to_string(s) + " is empty");
        total += strata[s].size();
    }
    if (total == 0) throw std::invalid_argument("bootstrap: no values to resample");
    Rng rng(options.seed);
    std::vector<double> resample;
    resample.reserve(total);
    for (int b = 0; b < options.resamples; ++b) {
        resample.clear();
        for (const std::vector<double>& stratum : strata) drawInto(rng, stratum, resample);
        use(resample);
    }
}

std::vector<std::vector<double>> stratifiedResamples(const std::vector<std::vector<double>>& strata,
                                                     const BootstrapOptions& options)
{
    std::vector<std::vector<double>> resamples;
    forEachStratifiedResample(strata, options, [&](const std::vector<double>& r) { resamples.push_back(r); });
    return resamples;
}

Interval stratifiedBootstrapInterval(const std::vector<std::vector<double>>& strata, const Statistic& statistic,
                                     const BootstrapOptions& options)
{
    std::vector<double> replicates;
    replicates.reserve(static_cast<std::size_t>(std::max(options.resamples, 0)));
    forEachStratifiedResample(strata, options,
                              [&](const std::vector<double>& r) { replicates.push_back(statistic(r)); });
    std::vector<double> pooled;
    for (const std::vector<double>& stratum : strata) pooled.insert(pooled.end(), stratum.begin(), stratum.end());
    return percentileInterval(statistic(pooled), std::move(replicates), options.confidence);
}

Interval bootstrapInterval(std::span<const double> sample, const Statistic& statistic, const BootstrapOptions& options)
{
    return stratifiedBootstrapInterval({std::vector<double>(sample.begin(), sample.end())}, statistic, options);
}

Interval twoSampleBootstrapInterval(std::span<const double> x, std::span<const double> y,
                                    const TwoSampleStatistic& statistic, const BootstrapOptions& options)
{
    validate(options);
    if (x.empty() || y.empty())
        throw std::invalid_argument("bootstrap: both samples need at least one value (got " + std::to_string(x.size()) +
                                    " and " + std::to_string(y.size()) + ")");
    Rng rng(options.seed);
    std::vector<double> replicates;
    replicates.reserve(static_cast<std::size_t>(options.resamples));
    std::vector<double> xs;
    std::vector<double> ys;
    for (int b = 0; b < options.resamples; ++b) {
        xs.clear();
        ys.clear();
        drawInto(rng, x, xs);
        drawInto(rng, y, ys);
        replicates.push_back(statistic(xs, ys));
    }
    return percentileInterval(statistic(x, y), std::move(replicates), options.confidence);
}

} // namespace foxhunt::stats
