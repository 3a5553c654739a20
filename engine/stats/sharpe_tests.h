// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Is a Sharpe ratio real? The probabilistic and the deflated Sharpe ratio of Bailey & López de
// Prado ("The Sharpe Ratio Efficient Frontier", 2012; "The Deflated Sharpe Ratio: Correcting for
// Selection Bias, Backtest Overfitting and Non-Normality", 2014).
//
// Every Sharpe ratio here is PER OBSERVATION (not annualised) and uses the same observations as
// the skewness, kurtosis and count: de-annualise first with deannualiseSharpe() (SR / sqrt(periods
// per year); a variance of Sharpe ratios divides by periods per year).

#include <cstddef>
#include <span>

namespace foxhunt::stats {

/// Euler-Mascheroni constant gamma.
inline constexpr double kEulerMascheroni = 0.57721566490153286061;

/// SR_annual / sqrt(periodsPerYear).
double deannualiseSharpe(double annualSharpe, double periodsPerYear);
/// Var_annual / periodsPerYear, for a variance of annualised Sharpe ratios.
double deannualiseSharpeVariance(double annualVariance, double periodsPerYear);

/// Probabilistic Sharpe ratio: P(true SR > benchmark) given the observed per-observation `sharpe`
/// from `observations` returns with `skew` and (non-excess) `kurt`:
///   PSR = Phi( (SR - SR*) sqrt(n - 1) / sqrt(1 - skew SR + (kurt - 1) / 4 SR^2) ).
/// NaN when n < 2 or the bracket under the root is not positive.
double probabilisticSharpe(double sharpe, double benchmark, std::size_t observations, double skew, double kurt);
/// probabilisticSharpe() of a return series: perBarSharpe, skewness, kurtosis and n from `returns`.
double probabilisticSharpe(std::span<const double> returns, double benchmark);

/// Expected maximum of `trials` independent Sharpe estimates whose true SR is 0, with variance
/// `trialsSharpeVariance` across trials (the DSR benchmark SR0):
///   SR0 = sqrt(V) ((1 - gamma) Phi^-1(1 - 1/N) + gamma Phi^-1(1 - 1/(N e))).
/// 0 for a single trial (no selection); NaN for 0 trials or a negative variance.
double expectedMaxSharpe(double trialsSharpeVariance, std::size_t trials);

/// What the deflated Sharpe ratio needs. All Sharpe figures per observation.
struct DeflatedSharpeInput {
    double sharpe = 0.0;               ///< observed SR of the selected strategy
    std::size_t observations = 0;      ///< returns behind it, T
    double skewness = 0.0;             ///< skewness of those returns
    double kurtosis = 3.0;             ///< non-excess kurtosis of those returns
    std::size_t trials = 1;            ///< independent trials N the strategy was selected from
    double trialsSharpeVariance = 0.0; ///< variance of the trials' SR estimates
};

/// The input for the strategy picked from a set of trials: sharpe (perBarSharpe), observations,
/// skewness and kurtosis from `selectedReturns`; trials = trialSharpes.size() and the sample
/// variance (divisor N - 1) of `trialSharpes`, which must be per-observation Sharpe ratios of the
/// same frequency as `selectedReturns` (the selected one included). Fewer than 2 trials: variance 0.
DeflatedSharpeInput deflatedSharpeInput(std::span<const double> selectedReturns, std::span<const double> trialSharpes);

/// A probability that the true Sharpe ratio beats a benchmark, with the verdict at a level.
struct SharpeVerdict {
    double benchmark = 0.0;   ///< SR* the observed SR was tested against (SR0 for the DSR)
    double probability = 0.0; ///< PSR(SR*) (the DSR when SR* = SR0)
    bool significant = false; ///< probability >= the level asked for (0.95 by default)
};

/// True when `probability` reaches `level` (a NaN probability is never significant).
bool isSignificant(double probability, double level = 0.95);

/// Deflated Sharpe ratio: PSR against SR0 = expectedMaxSharpe(V, N), with the verdict at `level`.
SharpeVerdict deflatedSharpe(const DeflatedSharpeInput& input, double level = 0.95);

} // namespace foxhunt::stats
