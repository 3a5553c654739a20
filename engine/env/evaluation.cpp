// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/env/evaluation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace foxhunt {

PerformanceMetrics computeMetrics(std::span<const double> stepPnlUsd, std::span<const double> tradePnlUsd,
                                  long long turnover, double barsPerYear)
{
    PerformanceMetrics m;
    m.steps = static_cast<int>(stepPnlUsd.size());
    m.turnover = turnover;
    m.pnlUsd = std::accumulate(stepPnlUsd.begin(), stepPnlUsd.end(), 0.0);
    m.pnlTicks = m.pnlUsd / kEsTickValue;
    if (!stepPnlUsd.empty()) {
        const double n = static_cast<double>(stepPnlUsd.size());
        const double mean = m.pnlUsd / n;
        double sq = 0.0;
        double down = 0.0;
        double equity = 0.0;
        double peak = 0.0;
        for (double r : stepPnlUsd) {
            sq += (r - mean) * (r - mean);
            down += r < 0.0 ? r * r : 0.0;
            equity += r;
            peak = std::max(peak, equity);
            m.maxDrawdownUsd = std::max(m.maxDrawdownUsd, peak - equity);
        }
        const double sd = std::sqrt(sq / n);
        const double dd = std::sqrt(down / n);
        const double annual = std::sqrt(std::max(barsPerYear, 0.0));
        m.sharpe = sd > 0.0 ? mean / sd * annual : 0.0;
        m.sortino = dd > 0.0 ? mean / dd * annual : 0.0;
        m.calmar = m.maxDrawdownUsd > 0.0 ? mean * barsPerYear / m.maxDrawdownUsd : 0.0;
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
    std::vector<double> tradePnlUsd;
    long long turnover = 0;
};

Run runPolicy(TradingEnv& env, const GreedyPolicy& policy, const std::vector<int>& episodes)
{
    Run run;
    for (int e : episodes) {
        std::span<const float> obs = env.reset(e);
        while (!env.done()) {
            const StepResult r = env.step(policy(obs));
            obs = env.observation();
            run.stepPnlUsd.push_back(r.pnlTicks * kEsTickValue);
            run.turnover += r.contractsTraded;
            if (r.tradeClosed)
                run.tradePnlUsd.push_back(r.closedTradePnlTicks * kEsTickValue);
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

EvaluationReport evaluatePolicy(TradingEnv& env, const GreedyPolicy& policy, std::vector<int> episodes,
                                double barsPerYear)
{
    if (episodes.empty()) {
        episodes.resize(static_cast<std::size_t>(env.episodeCount()));
        std::iota(episodes.begin(), episodes.end(), 0);
    }
    const TradingEnvState saved = env.state();
    EvaluationReport report;
    report.episodes = static_cast<int>(episodes.size());
    const Run mine = runPolicy(env, policy, episodes);
    if (barsPerYear <= 0.0)
        barsPerYear = kTradingDaysPerYear * static_cast<double>(mine.stepPnlUsd.size()) / std::max<std::size_t>(episodes.size(), 1);
    report.barsPerYear = barsPerYear;
    const int flatAction = env.actionForPosition(0);
    const int longAction = env.actionForPosition(1);
    const Run flat = runPolicy(env, [flatAction](std::span<const float>) { return flatAction; }, episodes);
    const Run hold = runPolicy(env, [longAction](std::span<const float>) { return longAction; }, episodes);
    report.policy = computeMetrics(mine.stepPnlUsd, mine.tradePnlUsd, mine.turnover, barsPerYear);
    report.flat = computeMetrics(flat.stepPnlUsd, flat.tradePnlUsd, flat.turnover, barsPerYear);
    report.buyAndHold = computeMetrics(hold.stepPnlUsd, hold.tradePnlUsd, hold.turnover, barsPerYear);
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
