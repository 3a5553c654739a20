// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Scoring probabilistic forecasts given as quantiles, and the climatological baseline they must
// beat. Quantile forecasts are row-major [n, K]: row t holds the K quantiles of observation t at
// the K `levels` (strictly increasing, inside (0, 1)).

#include <cstddef>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace foxhunt::stats {

/// Pinball (quantile) loss of quantile forecast q at level tau for outcome y:
/// tau (y - q) when y >= q, (1 - tau) (q - y) otherwise.
double pinballLoss(double y, double q, double tau);
/// Mean pinball loss over all n K (observation, level) pairs. Throws std::invalid_argument on
/// inconsistent sizes or levels.
double meanPinballLoss(std::span<const double> y, std::span<const double> quantiles, std::span<const double> levels);

/// CRPS of one forecast approximated from its quantiles: CRPS = 2 integral_0^1 pinball_tau dtau,
/// replaced by the equal-weight average over the K given levels, 2/K sum_k pinball(y, q_k, tau_k).
/// The rule is a midpoint quadrature, good when the levels are (near) evenly spread, e.g.
/// tau_k = (k - 1/2) / K; with few or lopsided levels it ignores the tails beyond them.
double crpsFromQuantiles(double y, std::span<const double> quantiles, std::span<const double> levels);
/// Mean of crpsFromQuantiles() over the n rows.
double meanCrpsFromQuantiles(std::span<const double> y, std::span<const double> quantiles,
                             std::span<const double> levels);

/// Empirical coverage of a central interval against its nominal rate.
struct Coverage {
    double observed = 0.0; ///< fraction of outcomes with lower <= y <= upper
    double nominal = 0.0;  ///< the interval's nominal coverage, e.g. 0.8 for the 10 %-90 % interval
    double gap = 0.0;      ///< observed - nominal (< 0: intervals too narrow)
    std::size_t n = 0;     ///< outcomes counted
};
/// Coverage of [lower_t, upper_t] over the outcomes; throws std::invalid_argument on sizes that differ.
Coverage intervalCoverage(std::span<const double> y, std::span<const double> lower, std::span<const double> upper,
                          double nominal);

/// Probability integral transform histogram from quantile forecasts. The K levels cut [0, 1]
/// into K + 1 bins [0, tau_1), [tau_1, tau_2), ..., [tau_K, 1]; an outcome falls in bin j where j
/// is the number of its forecast quantiles <= y, which is the bin its PIT value lies in. So no
/// interpolation between quantiles is assumed. Calibrated forecasts fill bin j in proportion to
/// its width.
struct PitHistogram {
    std::vector<double> edges;       ///< K + 2 bin edges: 0, tau_1, ..., tau_K, 1
    std::vector<std::size_t> counts; ///< K + 1 outcome counts per bin
    std::vector<double> expected;    ///< K + 1 expected fractions under calibration (bin widths)
    std::size_t n = 0;               ///< outcomes binned

    /// counts[j] / n.
    double fraction(std::size_t bin) const;
};
/// The PIT histogram of the rows; throws std::invalid_argument on inconsistent sizes or levels.
PitHistogram pitHistogram(std::span<const double> y, std::span<const double> quantiles, std::span<const double> levels);

/// Climatological baseline: empirical quantiles (type 7) of the training target per time-of-day
/// bucket. A bucket with fewer than minCount values falls back to the quantiles of all values.
struct Climatology {
    std::vector<double> levels;                   ///< the levels, as given
    std::map<int, std::vector<double>> perBucket; ///< quantiles of buckets with >= minCount values
    std::vector<double> pooled;                   ///< quantiles of all values (the fallback)
    std::map<int, std::size_t> counts;            ///< values seen per bucket

    /// The quantiles used for `bucket`: its own, or the pooled ones when it had too few values
    /// or was never seen.
    const std::vector<double>& quantilesFor(int bucket) const;
    /// True when quantilesFor(bucket) is the pooled fallback.
    bool usesFallback(int bucket) const;
};
/// Fits the climatology from (bucket, value) pairs. Throws std::invalid_argument when there are
/// no values or the levels are not strictly increasing inside [0, 1].
Climatology fitClimatology(std::span<const std::pair<int, double>> samples, std::span<const double> levels,
                           std::size_t minCount = 30);

/// Skill score 1 - score / baseline (1: perfect, 0: no better than the baseline, < 0: worse), for
/// negatively oriented scores (losses). NaN when baseline is 0.
double skillScore(double score, double baseline);

} // namespace foxhunt::stats
