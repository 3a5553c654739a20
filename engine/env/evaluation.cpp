// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/env/evaluation.h"

#include "engine/data/market_time.h"
#include "engine/stats/returns.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

namespace foxhunt {

PerformanceMetrics computeMetrics(std::span<const double> stepPnlUsd, std::span<const std::int64_t> stepDays,
                                  std::span<const double> tradePnlUsd, long long turnover)
{
    if (stepPnlUsd.size() != stepDays.size())
        throw std::invalid_argument("evaluation: " + std::to_string(stepPnlUsd.size()) + " step PnLs but " +
                                    std::to_string(stepDays.size()) + " step days");
    PerformanceMetrics m;
    m.steps = static_cast<int>(stepPnlUsd.size());
    m.turnover = turnover;
    m.pnlUsd = std::accumulate(stepPnlUsd.begin(), stepPnlUsd.end(), 0.0);
    m.pnlTicks = m.pnlUsd / kEsTickValue;
    // The notional is fixed, so a day's return is its summed PnL in USD (not compounded).
    std::map<std::int64_t, double> byDay;
    double equity = 0.0;
    double peak = 0.0;
    for (std::size_t i = 0; i < stepPnlUsd.size(); ++i) {
        byDay[stepDays[i]] += stepPnlUsd[i];
        equity += stepPnlUsd[i];
        peak = std::max(peak, equity);
        m.maxDrawdownUsd = std::max(m.maxDrawdownUsd, peak - equity);
    }
    m.dailyPnlUsd.reserve(byDay.size());
    for (const auto& [day, pnl] : byDay) m.dailyPnlUsd.push_back(pnl);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    m.sharpe = stats::annualisedDailySharpe(m.dailyPnlUsd);
    m.sharpePerBar = stats::perBarSharpe(stepPnlUsd);
    m.sortino = nan;
    if (!m.dailyPnlUsd.empty()) {
        const double days = static_cast<double>(m.dailyPnlUsd.size());
        const double mean = m.pnlUsd / days;
        double down = 0.0;
        for (double d : m.dailyPnlUsd) down += d < 0.0 ? d * d : 0.0;
        const double dd = std::sqrt(down / days);
        if (dd > 0.0) m.sortino = mean / dd * std::sqrt(stats::kTradingDaysPerYear);
        m.calmar = m.maxDrawdownUsd > 0.0 ? mean * stats::kTradingDaysPerYear / m.maxDrawdownUsd : 0.0;
    }
    m.trades = static_cast<int>(tradePnlUsd.size());
    double grossProfit = 0.0;
    double grossLoss = 0.0;
    int wins = 0;
    for (double p : tradePnlUsd) {
        if (p > 0.0) {
            ++wins;
            grossProfit += p;
        } else {
            grossLoss -= p;
        }
    }
    if (m.trades > 0) {
        m.winRate = static_cast<double>(wins) / m.trades;
        m.profitFactor = grossLoss > 0.0 ? grossProfit / grossLoss
                                         : (grossProfit > 0.0 ? std::numeric_limits<double>::infinity() : 0.0);
    }
    return m;
}

namespace {

struct Run {
    std::vector<double> stepPnlUsd;
    std::vector<std::int64_t> stepDays; ///< the trading day of each step's decision bar
    std::vector<double> tradePnlUsd;
    long long turnover = 0;
};

Run runPolicy(TradingEnv& env, const GreedyPolicy& policy, const std::vector<int>& episodes)
{
    Run run;
    EsCalendar calendar;
    for (int e : episodes) {
        std::span<const float> obs = env.reset(e);
        while (!env.done()) {
            run.stepDays.push_back(calendar.tradingDay(env.bars()[env.currentBar()].tsEvent));
            const StepResult r = env.step(policy(obs));
            obs = env.observation();
            run.stepPnlUsd.push_back(r.pnlTicks * kEsTickValue);
            run.turnover += r.contractsTraded;
            if (r.tradeClosed) run.tradePnlUsd.push_back(r.closedTradePnlTicks * kEsTickValue);
        }
    }
    return run;
}

} // namespace

PolicyTransitions collectTransitions(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes,
                                     std::size_t maxSamples)
{
    if (episodes.empty()) {
        episodes.resize(static_cast<std::size_t>(env.episodeCount()));
        std::iota(episodes.begin(), episodes.end(), 0);
    }
    const TradingEnvState saved = env.state();
    PolicyTransitions all;
    for (int e : episodes) {
        const std::span<const float> first = env.reset(e);
        std::vector<float> obs(first.begin(), first.end());
        all.observationSize = static_cast<int>(obs.size());
        while (!env.done()) {
            const int action = policy(obs);
            const StepResult r = env.step(action);
            const std::span<const float> next = env.observation();
            all.observations.insert(all.observations.end(), obs.begin(), obs.end());
            all.nextObservations.insert(all.nextObservations.end(), next.begin(), next.end());
            all.actions.push_back(action);
            all.rewards.push_back(static_cast<float>(r.reward));
            all.terminated.push_back(r.terminated ? 1.0f : 0.0f);
            obs.assign(next.begin(), next.end());
        }
    }
    env.restoreState(saved);
    if (maxSamples == 0 || all.size() <= maxSamples) return all;
    // Evenly spread, so every held-out day is represented.
    PolicyTransitions kept;
    kept.observationSize = all.observationSize;
    const auto o = static_cast<std::size_t>(all.observationSize);
    for (std::size_t k = 0; k < maxSamples; ++k) {
        const std::size_t i = k * all.size() / maxSamples;
        kept.observations.insert(kept.observations.end(), all.observations.begin() + static_cast<std::ptrdiff_t>(i * o),
                                 all.observations.begin() + static_cast<std::ptrdiff_t>((i + 1) * o));
        kept.nextObservations.insert(kept.nextObservations.end(),
                                     all.nextObservations.begin() + static_cast<std::ptrdiff_t>(i * o),
                                     all.nextObservations.begin() + static_cast<std::ptrdiff_t>((i + 1) * o));
        kept.actions.push_back(all.actions[i]);
        kept.rewards.push_back(all.rewards[i]);
        kept.terminated.push_back(all.terminated[i]);
    }
    return kept;
}

EvaluationReport evaluatePolicy(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes)
{
    if (episodes.empty()) {
        episodes.resize(static_cast<std::size_t>(env.episodeCount()));
        std::iota(episodes.begin(), episodes.end(), 0);
    }
    const TradingEnvState saved = env.state();
    EvaluationReport report;
    report.episodes = static_cast<int>(episodes.size());
    const Run mine = runPolicy(env, policy, episodes);
    report.tradingDays.assign(mine.stepDays.begin(), mine.stepDays.end());
    std::sort(report.tradingDays.begin(), report.tradingDays.end());
    report.tradingDays.erase(std::unique(report.tradingDays.begin(), report.tradingDays.end()),
                             report.tradingDays.end());
    const int flatAction = env.actionForPosition(0);
    const int longAction = env.actionForPosition(1);
    const Run flat = runPolicy(
        env, [flatAction](std::span<const float>) { return flatAction; }, episodes);
    const Run hold = runPolicy(
        env, [longAction](std::span<const float>) { return longAction; }, episodes);
    report.policy = computeMetrics(mine.stepPnlUsd, mine.stepDays, mine.tradePnlUsd, mine.turnover);
    report.flat = computeMetrics(flat.stepPnlUsd, flat.stepDays, flat.tradePnlUsd, flat.turnover);
    report.buyAndHold = computeMetrics(hold.stepPnlUsd, hold.stepDays, hold.tradePnlUsd, hold.turnover);
    auto cumulative = [](const std::vector<double>& stepPnl) {
        std::vector<double> curve;
        curve.reserve(stepPnl.size());
        double equity = 0.0;
        for (double r : stepPnl) curve.push_back(equity += r);
        return curve;
    };
    report.policyEquityUsd = cumulative(mine.stepPnlUsd);
    report.buyAndHoldEquityUsd = cumulative(hold.stepPnlUsd);
    env.restoreState(saved);
    return report;
}

} // namespace foxhunt
