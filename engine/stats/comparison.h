// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Comparing runs: probability of improvement and performance profiles (after rliable,
// Agarwal et al., "Deep RL at the Edge of the Statistical Precipice", 2021).

#include "engine/stats/bootstrap.h"

#include <span>
#include <vector>

namespace foxhunt::stats {

/// P(X > Y) for X drawn from `x` and Y from `y` independently: the fraction of the |x| |y| pairs
/// with x_i > y_j, a tie counting 1/2 (the Mann-Whitney U statistic over |x| |y|). 0.5 means no
/// edge either way. NaN when either sample is empty.
double probabilityOfImprovement(std::span<const double> x, std::span<const double> y);
/// probabilityOfImprovement() with its percentile bootstrap interval, x and y resampled
/// independently (twoSampleBootstrapInterval).
Interval probabilityOfImprovementInterval(std::span<const double> x, std::span<const double> y,
                                          const BootstrapOptions& options = {});

/// rliable's average probability of improvement over tasks: the mean over tasks m of
/// P(X_m > Y_m), where xByTask[m] and yByTask[m] are the two algorithms' runs on task m (e.g. a
/// walk-forward fold or a data set). Throws std::invalid_argument when the task counts differ,
/// there is no task, or a task has no run.
double probabilityOfImprovement(const std::vector<std::vector<double>>& xByTask,
                                const std::vector<std::vector<double>>& yByTask);
/// The task-averaged probability of improvement with its stratified bootstrap interval: each
/// resample redraws, task by task, x's runs and then y's runs with replacement.
Interval probabilityOfImprovementInterval(const std::vector<std::vector<double>>& xByTask,
                                          const std::vector<std::vector<double>>& yByTask,
                                          const BootstrapOptions& options = {});

/// Performance profile: for each threshold tau, the fraction of `scores` strictly greater than tau.
/// Empty scores give NaN at every tau.
std::vector<double> performanceProfile(std::span<const double> scores, std::span<const double> thresholds);

/// A performance profile with pointwise percentile bootstrap bands.
struct PerformanceProfile {
    std::vector<double> thresholds;  ///< the taus, as given
    std::vector<Interval> fractions; ///< per tau: the fraction above tau and its bootstrap band
};
/// Performance profile of all runs pooled over the strata, with bands from the stratified
/// bootstrap (one set of resamples shared by every tau, so the bands come from the same draws).
PerformanceProfile performanceProfileWithBands(const std::vector<std::vector<double>>& strata,
                                               std::span<const double> thresholds,
                                               const BootstrapOptions& options = {});

} // namespace foxhunt::stats
