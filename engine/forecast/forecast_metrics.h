// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Evaluation of quantile forecasts against three baselines: zero return, persistence and the
// climatology of the training split. No torch.
//
// Beside the losses, evaluateQuantileForecasts() reports what a reader needs to judge them:
//  - skill scores 1 - score / climatology's score for the quantile loss and the CRPS (from the
//    quantiles, stats::crpsFromQuantiles): > 0 beats the training split's time-of-day quantiles;
//  - calibration: how often the outcome falls inside the outer quantiles against the nominal rate
//    (0.8 for 10-90), and the PIT histogram (a flat one, in proportion to the bin widths, is calibrated);
//  - a Diebold-Mariano test of the model's per-window quantile loss against the best baseline's,
//    with the forecast horizon as the lag (windows overlap by horizon - 1 targets).

#include "engine/data/index_range.h"
#include "engine/forecast/forecast_data.h"
#include "engine/stats/diebold_mariano.h"
#include "engine/stats/forecast_scores.h"

#include <cstddef>
#include <string>
#include <vector>

namespace foxhunt {

/// Scores of one forecaster on a set of windows.
struct ForecastMetrics {
    double quantileLoss = 0.0; ///< mean pinball loss over windows, steps and quantiles
    double crps = 0.0;         ///< mean CRPS approximated from the quantiles (stats::crpsFromQuantiles)
    double medianMae = 0.0;    ///< mean |median - y|
    double directionalAccuracy =
        0.0; ///< share of non-zero targets whose sign the median gets right (a zero median is wrong)
    double intervalCoverage = 0.0; ///< share of targets inside [lowest, highest] quantile (10-90 by default)
    double intervalNominal = 0.0;  ///< the nominal rate of that interval: highest - lowest level (0.8 by default)
    std::size_t count = 0;         ///< number of (window, step) pairs scored
};

/// The Diebold-Mariano test of the model against its best baseline.
struct ForecastComparison {
    std::string baseline;             ///< "zero_return", "persistence" or "climatology": lowest quantile loss
    stats::DieboldMarianoResult test; ///< lossA = model, lossB = baseline: per-window mean pinball loss
};

/// A model's scores beside the baselines on the same windows.
struct ForecastEvaluation {
    ForecastMetrics model;          ///< the trained forecaster
    ForecastMetrics zeroReturn;     ///< every quantile = 0
    ForecastMetrics persistence;    ///< every quantile = the last observed return
    ForecastMetrics climatology;    ///< the training split's quantiles of the target per time-of-day bucket
    double skillQuantileLoss = 0.0; ///< 1 - model / climatology quantile loss (> 0: better than climatology)
    double skillCrps = 0.0;         ///< 1 - model / climatology CRPS
    stats::Coverage coverage;       ///< the model's outer-quantile interval against its nominal rate
    stats::PitHistogram pit;        ///< the model's PIT histogram over all (window, step) pairs
    ForecastComparison comparison;  ///< Diebold-Mariano against the best baseline
    std::size_t windows = 0;        ///< windows evaluated
};

/// Pinball loss of quantile forecast q at level tau for outcome y.
double pinballLoss(double y, double q, double tau);

/// Scores predictions [N, H, Q] (row-major) against targets [N, H].
/// Quantiles must be ascending; the median is the level closest to 0.5.
ForecastMetrics scoreQuantileForecasts(const std::vector<double>& predictions, const std::vector<double>& targets,
                                       const std::vector<double>& quantiles);

/// The climatology of the targets of the training windows: bars train.begin + 1 .. train.end - 1 + horizon,
/// bucketed by data.timeOfDay (one bucket when empty), at the given levels.
stats::Climatology trainingClimatology(const ForecastData& data, IndexRange train, std::size_t horizon,
                                       const std::vector<double>& quantiles);

/// Scores the model's predictions [anchors.size(), horizon, Q] (row-major, targets logReturns[a + 1 .. a + H])
/// and the three baselines, the climatology fitted on the `train` anchors' targets. Throws
/// std::invalid_argument on inconsistent sizes or ranges outside the data.
ForecastEvaluation evaluateQuantileForecasts(const std::vector<double>& predictions, const ForecastData& data,
                                             IndexRange train, IndexRange anchors, std::size_t horizon,
                                             const std::vector<double>& quantiles);

} // namespace foxhunt
