// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Percentile bootstrap confidence intervals, plain and stratified (rliable's scheme: resample
// runs with replacement within each stratum, e.g. within each model or task, so every resample
// keeps the strata's sizes). Deterministic for a fixed seed on every platform (see random.h):
// resample b draws, stratum by stratum, n_s indices in [0, n_s) with Rng::below.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace foxhunt::stats {

/// How a bootstrap runs.
struct BootstrapOptions {
    int resamples = 2000;     ///< bootstrap resamples B (>= 1)
    double confidence = 0.95; ///< central coverage of the percentile interval, in (0, 1)
    std::uint64_t seed = 0;   ///< seed of the std::mt19937_64 that draws the indices
};

/// A point estimate with its percentile bootstrap interval.
struct Interval {
    double estimate = 0.0; ///< the statistic on the original sample(s)
    double lower = 0.0;    ///< quantile (1 - confidence) / 2 of the bootstrap distribution (type 7)
    double upper = 0.0;    ///< quantile (1 + confidence) / 2 of the bootstrap distribution (type 7)
    int resamples = 0;     ///< replicates behind lower and upper: B less those where the statistic was NaN

    /// Whether `value` lies in [lower, upper].
    bool contains(double value) const { return value >= lower && value <= upper; }
};

/// A statistic of one (pooled) sample, e.g. stats::mean or stats::interquartileMean.
using Statistic = std::function<double(std::span<const double>)>;
/// A statistic of two samples, e.g. probabilityOfImprovement(x, y).
using TwoSampleStatistic = std::function<double(std::span<const double>, std::span<const double>)>;

/// Percentile interval of `statistic` on one sample (the single-stratum bootstrap). Throws
/// std::invalid_argument on an empty sample or bad options.
Interval bootstrapInterval(std::span<const double> sample, const Statistic& statistic,
                           const BootstrapOptions& options = {});

/// Stratified percentile interval: each resample draws strata[s].size() values with replacement
/// from strata[s] for every s, concatenates them in stratum order and applies `statistic` to the
/// pooled values; the estimate is `statistic` on all original values pooled. With one stratum
/// this is bootstrapInterval(). Throws std::invalid_argument when there is no value at all,
/// a stratum is empty, or the options are bad.
Interval stratifiedBootstrapInterval(const std::vector<std::vector<double>>& strata, const Statistic& statistic,
                                     const BootstrapOptions& options = {});

/// Two independent samples: each resample redraws x and y with replacement (x first, then y)
/// and applies `statistic(x*, y*)`. Throws std::invalid_argument when a sample is empty.
Interval twoSampleBootstrapInterval(std::span<const double> x, std::span<const double> y,
                                    const TwoSampleStatistic& statistic, const BootstrapOptions& options = {});

/// Draws the B stratified resamples of stratifiedBootstrapInterval() (same seed, same order) and
/// hands each pooled resample to `use`, for callers that need several statistics from the same
/// draws (e.g. bands over a grid). The buffer is reused: copy what must outlive the call.
void forEachStratifiedResample(const std::vector<std::vector<double>>& strata, const BootstrapOptions& options,
                               const std::function<void(const std::vector<double>&)>& use);
/// The B bootstrap resamples of stratifiedBootstrapInterval() in draw order, materialised.
std::vector<std::vector<double>> stratifiedResamples(const std::vector<std::vector<double>>& strata,
                                                     const BootstrapOptions& options);

/// The percentile interval of given replicates around `estimate` (what the functions above do).
/// NaN replicates are dropped; with none left, lower and upper are NaN.
Interval percentileInterval(double estimate, std::vector<double> replicates, double confidence);

} // namespace foxhunt::stats
