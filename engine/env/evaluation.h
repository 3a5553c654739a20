// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs a deterministic policy over episodes of a TradingEnv and reports
// trading metrics beside two baselines on the same bars and costs:
// flat (never trade) and buy-and-hold 1 contract (long from the first fill
// of each episode to its forced exit).
//
// Annualisation. The per-bar return is the per-step equity change in USD
// (a return on a fixed notional; Sharpe and Sortino do not depend on that
// notional). With m the mean and s the standard deviation of those changes,
//   Sharpe  = m / s * sqrt(barsPerYear),
//   Sortino = m / d * sqrt(barsPerYear), d = sqrt(mean(min(r, 0)^2)),
//   barsPerYear = 252 trading days * bars per day, where bars per day is the
//   mean number of steps per evaluated episode unless given explicitly.
// Calmar = (m * barsPerYear) / max drawdown (both USD); 0 when there is no drawdown.

#include "engine/env/trading_env.h"

#include <functional>
#include <span>
#include <vector>

namespace foxhunt {

/// Trading days per year used for annualisation.
inline constexpr double kTradingDaysPerYear = 252.0;

/// Metrics of one policy over the evaluated episodes.
struct PerformanceMetrics {
    double pnlUsd = 0.0;        ///< total net PnL in USD
    double pnlTicks = 0.0;      ///< total net PnL in ticks (per contract tick value)
    double sharpe = 0.0;        ///< annualised, see header comment
    double sortino = 0.0;       ///< annualised, see header comment
    double maxDrawdownUsd = 0.0; ///< largest peak-to-trough fall of cumulative equity
    double calmar = 0.0;        ///< annualised PnL / max drawdown
    double winRate = 0.0;       ///< winning closed trades / closed trades (0 with none)
    double profitFactor = 0.0;  ///< gross profit / gross loss of closed trades (0 with none; +inf with no losses)
    int trades = 0;             ///< closed round trips
    long long turnover = 0;     ///< contracts traded (sum of |position change|)
    int steps = 0;              ///< decisions taken
};

/// A policy's report beside the two baselines.
struct EvaluationReport {
    PerformanceMetrics policy;      ///< the evaluated policy
    PerformanceMetrics flat;        ///< never trade
    PerformanceMetrics buyAndHold;  ///< long 1 contract throughout each episode
    int episodes = 0;               ///< episodes evaluated
    double barsPerYear = 0.0;       ///< used for annualisation
    std::vector<double> policyEquityUsd;     ///< cumulative equity after each step of the policy
    std::vector<double> buyAndHoldEquityUsd; ///< same for buy-and-hold 1 contract (flat is 0 throughout)
};

/// A deterministic policy: observation -> action index.
using GreedyPolicy = std::function<int(std::span<const float> observation)>;

/// Computes metrics from per-step PnL (USD) and closed-trade PnL (USD).
PerformanceMetrics computeMetrics(std::span<const double> stepPnlUsd, std::span<const double> tradePnlUsd,
                                  long long turnover, double barsPerYear);

/// Transitions of a deterministic policy over whole episodes: held-out inputs for checks that need
/// data the model did not train on (the INT8 check of an agent on the validation split).
struct PolicyTransitions {
    int observationSize = 0;             ///< values per observation
    std::vector<float> observations;     ///< [size(), observationSize] row-major
    std::vector<float> nextObservations; ///< the observation after each step, same layout
    std::vector<int> actions;            ///< the policy's action at each step
    std::vector<float> rewards;          ///< the environment's reward for it
    std::vector<float> terminated;       ///< 1 where the step ended its episode, else 0
    /// Transitions held.
    std::size_t size() const { return actions.size(); }
};

/// Runs `policy` over `episodes` (all when empty) and keeps at most `maxSamples` transitions (0: all),
/// spread evenly over the run; the environment's state is restored afterwards.
PolicyTransitions collectTransitions(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes,
                                     std::size_t maxSamples);

/// Runs `policy` and the baselines over `episodes` (all episodes when empty).
/// barsPerYear <= 0 means 252 * mean steps per episode.
EvaluationReport evaluatePolicy(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes = {},
                                double barsPerYear = 0.0);

} // namespace foxhunt
