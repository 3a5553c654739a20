// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/comparison.h"

#include "engine/stats/random.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace foxhunt::stats {

double probabilityOfImprovement(std::span<const double> x, std::span<const double> y)
{
    if (x.empty() || y.empty()) return std::numeric_limits<double>::quiet_NaN();
    // Sorting y once makes each x_i an O(log m) count instead of an O(m) scan.
    std::vector<double> sortedY(y.begin(), y.end());
    std::sort(sortedY.begin(), sortedY.end());
    double wins = 0.0;
    for (double xi : x) {
        const auto below = std::lower_bound(sortedY.begin(), sortedY.end(), xi) - sortedY.begin();
        const auto notAbove = std::upper_bound(sortedY.begin(), sortedY.end(), xi) - sortedY.begin();
        wins += static_cast<double>(below) + 0.5 * static_cast<double>(notAbove - below);
    }
    return wins / (static_cast<double>(x.size()) * static_cast<double>(y.size()));
}

Interval probabilityOfImprovementInterval(std::span<const double> x, std::span<const double> y,
                                          const BootstrapOptions& options)
{
    return twoSampleBootstrapInterval(
        x, y, [](std::span<const double> a, std::span<const double> b) { return probabilityOfImprovement(a, b); },
        options);
}

namespace {

void validateTasks(const std::vector<std::vector<double>>& xByTask, const std::vector<std::vector<double>>& yByTask)
{
    if (xByTask.size() != yByTask.size())
        throw std::invalid_argument("probabilityOfImprovement: " + std::to_string(xByTask.size()) + " tasks vs " +
                                    std::to_string(yByTask.size()));
    if (xByTask.empty()) throw std::invalid_argument("probabilityOfImprovement: no task");
    for (std::size_t m = 0; m < xByTask.size(); ++m)
        if (xByTask[m].empty() || yByTask[m].empty())
            throw std::invalid_argument("probabilityOfImprovement: task " + std::to_string(m) + " has no run");
}

void redraw(Rng& rng, const std::vector<double>& from, std::vector<double>& out)
{
    out.resize(from.size());
    for (double& v : out) v = from[rng.below(from.size())];
}

} // namespace

double probabilityOfImprovement(const std::vector<std::vector<double>>& xByTask,
                                const std::vector<std::vector<double>>& yByTask)
{
    validateTasks(xByTask, yByTask);
    double sum = 0.0;
    for (std::size_t m = 0; m < xByTask.size(); ++m) sum += probabilityOfImprovement(xByTask[m], yByTask[m]);
    return sum / static_cast<double>(xByTask.size());
}

Interval probabilityOfImprovementInterval(const std::vector<std::vector<double>>& xByTask,
                                          const std::vector<std::vector<double>>& yByTask,
                                          const BootstrapOptions& options)
{
    validateTasks(xByTask, yByTask);
    if (options.resamples < 1 || !(options.confidence > 0.0 && options.confidence < 1.0))
        throw std::invalid_argument("probabilityOfImprovementInterval: bad bootstrap options");
    Rng rng(options.seed);
    std::vector<std::vector<double>> xs(xByTask.size());
    std::vector<std::vector<double>> ys(yByTask.size());
    std::vector<double> replicates;
    replicates.reserve(static_cast<std::size_t>(options.resamples));
    for (int b = 0; b < options.resamples; ++b) {
        for (std::size_t m = 0; m < xByTask.size(); ++m) {
            redraw(rng, xByTask[m], xs[m]);
            redraw(rng, yByTask[m], ys[m]);
        }
        replicates.push_back(probabilityOfImprovement(xs, ys));
    }
    return percentileInterval(probabilityOfImprovement(xByTask, yByTask), std::move(replicates), options.confidence);
}

std::vector<double> performanceProfile(std::span<const double> scores, std::span<const double> thresholds)
{
    std::vector<double> sorted(scores.begin(), scores.end());
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> fractions;
    fractions.reserve(thresholds.size());
    for (double tau : thresholds) {
        if (sorted.empty()) {
            fractions.push_back(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        const auto above = sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), tau);
        fractions.push_back(static_cast<double>(above) / static_cast<double>(sorted.size()));
    }
    return fractions;
}

PerformanceProfile performanceProfileWithBands(const std::vector<std::vector<double>>& strata,
                                               std::span<const double> thresholds, const BootstrapOptions& options)
{
    std::vector<std::vector<double>> perTau(thresholds.size());
    forEachStratifiedResample(strata, options, [&](const std::vector<double>& resample) {
        const std::vector<double> profile = performanceProfile(resample, thresholds);
        for (std::size_t k = 0; k < profile.size(); ++k) perTau[k].push_back(profile[k]);
    });
    std::vector<double> pooled;
    for (const std::vector<double>& stratum : strata) pooled.insert(pooled.end(), stratum.begin(), stratum.end());
    const std::vector<double> estimate = performanceProfile(pooled, thresholds);
    PerformanceProfile result;
    result.thresholds.assign(thresholds.begin(), thresholds.end());
    for (std::size_t k = 0; k < thresholds.size(); ++k)
        result.fractions.push_back(percentileInterval(estimate[k], std::move(perTau[k]), options.confidence));
    return result;
}

} // namespace foxhunt::stats
