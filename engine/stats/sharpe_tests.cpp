// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/sharpe_tests.h"

#include "engine/stats/descriptive.h"
#include "engine/stats/distributions.h"
#include "engine/stats/returns.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace foxhunt::stats {

double deannualiseSharpe(double annualSharpe, double periodsPerYear)
{
    return annualSharpe / std::sqrt(periodsPerYear);
}

double deannualiseSharpeVariance(double annualVariance, double periodsPerYear)
{
    return annualVariance / periodsPerYear;
}

double probabilisticSharpe(double sharpe, double benchmark, std::size_t observations, double skew, double kurt)
{
    const double bracket = 1.0 - skew * sharpe + (kurt - 1.0) / 4.0 * sharpe * sharpe;
    if (observations < 2 || !(bracket > 0.0)) return std::numeric_limits<double>::quiet_NaN();
    const double z = (sharpe - benchmark) * std::sqrt(static_cast<double>(observations - 1)) / std::sqrt(bracket);
    return normalCdf(z);
}

double probabilisticSharpe(std::span<const double> returns, double benchmark)
{
    return probabilisticSharpe(perBarSharpe(returns), benchmark, returns.size(), skewness(returns), kurtosis(returns));
}

double expectedMaxSharpe(double trialsSharpeVariance, std::size_t trials)
{
    if (trials == 0 || !(trialsSharpeVariance >= 0.0)) return std::numeric_limits<double>::quiet_NaN();
    if (trials == 1) return 0.0;
    const auto n = static_cast<double>(trials);
    const double z1 = normalQuantile(1.0 - 1.0 / n);
    const double z2 = normalQuantile(1.0 - 1.0 / (n * std::numbers::e));
    return std::sqrt(trialsSharpeVariance) * ((1.0 - kEulerMascheroni) * z1 + kEulerMascheroni * z2);
}

DeflatedSharpeInput deflatedSharpeInput(std::span<const double> selectedReturns, std::span<const double> trialSharpes)
{
    DeflatedSharpeInput in;
    in.sharpe = perBarSharpe(selectedReturns);
    in.observations = selectedReturns.size();
    in.skewness = skewness(selectedReturns);
    in.kurtosis = kurtosis(selectedReturns);
    in.trials = trialSharpes.size();
    if (trialSharpes.size() >= 2) {
        const double sd = sampleStd(trialSharpes);
        in.trialsSharpeVariance = sd * sd;
    }
    return in;
}

bool isSignificant(double probability, double level)
{
    return probability >= level;
}

SharpeVerdict deflatedSharpe(const DeflatedSharpeInput& input, double level)
{
    SharpeVerdict verdict;
    verdict.benchmark = expectedMaxSharpe(input.trialsSharpeVariance, input.trials);
    verdict.probability = probabilisticSharpe(input.sharpe, verdict.benchmark, input.observations, input.skewness,
                                              input.kurtosis);
    verdict.significant = isSignificant(verdict.probability, level);
    return verdict;
}

} // namespace foxhunt::stats
