// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Evaluation of quantile forecasts and of the two naive baselines. No torch.

#include <cstddef>
#include <vector>

namespace foxhunt {

/// Scores of one forecaster on a set of windows.
struct ForecastMetrics {
    double quantileLoss = 0.0;        ///< mean pinball loss over windows, steps and quantiles
    double medianMae = 0.0;           ///< mean |median - y|
    double directionalAccuracy = 0.0; ///< share of non-zero targets whose sign the median gets right (a zero median is wrong)
    double intervalCoverage = 0.0;    ///< share of targets inside [lowest, highest] quantile (10-90 by default)
    std::size_t count = 0;            ///< number of (window, step) pairs scored
};

/// A model's scores beside the two baselines on the same windows.
struct ForecastEvaluation {
    ForecastMetrics model;       ///< the trained forecaster
    ForecastMetrics zeroReturn;  ///< every quantile = 0
    ForecastMetrics persistence; ///< every quantile = the last observed return
    std::size_t windows = 0;     ///< windows evaluated
};

/// Pinball loss of quantile forecast q at level tau for outcome y.
double pinballLoss(double y, double q, double tau);

/// Scores predictions [N, H, Q] (row-major) against targets [N, H].
/// Quantiles must be ascending; the median is the level closest to 0.5.
ForecastMetrics scoreQuantileForecasts(const std::vector<double>& predictions, const std::vector<double>& targets,
                                       const std::vector<double>& quantiles);

} // namespace foxhunt
