// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs a deterministic policy over episodes of a TradingEnv and reports
// trading metrics beside two baselines on the same bars and costs:
// flat (never trade) and buy-and-hold 1 contract (long from the first fill
// of each episode to its forced exit).
//
// Daily aggregation. An episode is a trading day (or a window inside one), and
// the figures are those of trading days: every step's net equity change (USD,
// on a fixed notional of 1 contract) is booked to the ES trading day of its
// decision bar (EsCalendar::tradingDay), and the day's "return" is that day's
// P&L in USD (a sum, not a compounded percentage: the notional is fixed). With
// m the mean and s the sample standard deviation of the daily P&L over the
// evaluated days,
//   Sharpe  = m / s * sqrt(252)                  (daily, annualised),
//   Sortino = m / d * sqrt(252), d = sqrt(mean(min(day, 0)^2)),
//   Calmar  = 252 m / max drawdown, the drawdown of the per-step equity curve.
// Sharpe is NaN (undefined, null in JSON) with fewer than 2 days or no
// variation, Sortino NaN with no losing day; Calmar is 0 without a drawdown.
// Neither figure depends on the notional. The per-step ratio mean / s of the
// step changes is kept as sharpePerBar, not annualised and not comparable
// across bar sizes: a detail, not the headline.

#include "engine/env/trading_env.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace foxhunt {

/// Metrics of one policy over the evaluated episodes.
struct PerformanceMetrics {
    double pnlUsd = 0.0;       ///< total net PnL in USD
    double pnlTicks = 0.0;     ///< total net PnL in ticks (per contract tick value)
    double sharpe = 0.0;       ///< Sharpe of daily P&L, annualised with sqrt(252) (NaN: undefined), see header comment
    double sortino = 0.0;      ///< Sortino of daily P&L, annualised with sqrt(252) (NaN: undefined)
    double sharpePerBar = 0.0; ///< mean / sample sd of the per-step P&L, not annualised (NaN: undefined); a detail
    double maxDrawdownUsd = 0.0;     ///< largest peak-to-trough fall of cumulative equity
    double calmar = 0.0;             ///< 252 * mean daily PnL / max drawdown
    double winRate = 0.0;            ///< winning closed trades / closed trades (0 with none)
    double profitFactor = 0.0;       ///< gross profit / gross loss of closed trades (0 with none; +inf with no losses)
    int trades = 0;                  ///< closed round trips
    long long turnover = 0;          ///< contracts traded (sum of |position change|)
    int steps = 0;                   ///< decisions taken
    std::vector<double> dailyPnlUsd; ///< net PnL per trading day (USD), in the order of EvaluationReport::tradingDays
};

/// A policy's report beside the two baselines.
struct EvaluationReport {
    PerformanceMetrics policy;               ///< the evaluated policy
    PerformanceMetrics flat;                 ///< never trade
    PerformanceMetrics buyAndHold;           ///< long 1 contract throughout each episode
    int episodes = 0;                        ///< episodes evaluated
    std::vector<std::int64_t> tradingDays;   ///< the evaluated trading days (days since epoch), ascending
    std::vector<double> policyEquityUsd;     ///< cumulative equity after each step of the policy
    std::vector<double> buyAndHoldEquityUsd; ///< same for buy-and-hold 1 contract (flat is 0 throughout)
};

/// A deterministic policy: observation -> action index.
using GreedyPolicy = std::function<int(std::span<const float> observation)>;

/// Computes metrics from per-step PnL (USD), the trading day each step is booked to (days since
/// epoch, same length; any order), and closed-trade PnL (USD). dailyPnlUsd comes out by ascending
/// day. Throws std::invalid_argument when stepPnlUsd and stepDays differ in length.
PerformanceMetrics computeMetrics(std::span<const double> stepPnlUsd, std::span<const std::int64_t> stepDays,
                                  std::span<const double> tradePnlUsd, long long turnover);

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
EvaluationReport evaluatePolicy(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes = {});

} // namespace foxhunt
