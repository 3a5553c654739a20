// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/env/trading_env.h"

#include "engine/data/market_time.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace foxhunt {

namespace {

int signOf(int v)
{
    return (v > 0) - (v < 0);
}

[[noreturn]] void fail(const std::string& reason)
{
    throw std::invalid_argument("trading_env: " + reason);
}

} // namespace

std::vector<EpisodeRange> episodesByTradingDay(const std::vector<Bar>& bars, std::size_t minBars)
{
    std::vector<EpisodeRange> out;
    if (bars.empty()) return out;
    EsCalendar calendar;
    std::size_t begin = 0;
    std::int64_t day = calendar.tradingDay(bars.front().tsEvent);
    const auto flush = [&](std::size_t end) {
        if (end - begin >= std::max<std::size_t>(minBars, 2)) out.push_back({begin, end});
    };
    for (std::size_t i = 1; i < bars.size(); ++i) {
        const std::int64_t d = calendar.tradingDay(bars[i].tsEvent);
        if (d != day) {
            flush(i);
            begin = i;
            day = d;
        }
    }
    flush(bars.size());
    return out;
}

std::vector<EpisodeRange> splitIntoWindows(const std::vector<EpisodeRange>& ranges, std::size_t length)
{
    if (length < 2) fail("window length must be at least 2 bars");
    std::vector<EpisodeRange> out;
    for (const EpisodeRange& r : ranges) {
        for (std::size_t b = r.begin; b < r.end; b += length) {
            const std::size_t e = std::min(r.end, b + length);
            if (e - b >= 2) out.push_back({b, e});
        }
    }
    return out;
}

TradingEnv::TradingEnv(const std::vector<Bar>& bars, std::vector<float> features, int featureCount,
                       std::vector<EpisodeRange> episodes, TradingEnvOptions options)
    : m_bars(bars), m_features(std::move(features)), m_featureCount(featureCount), m_episodes(std::move(episodes)),
      m_options(options)
{
    if (m_featureCount < 0) fail("featureCount must not be negative");
    if (m_features.size() != m_bars.size() * static_cast<std::size_t>(m_featureCount))
        fail("feature matrix has " + std::to_string(m_features.size()) + " values, expected " +
             std::to_string(m_bars.size()) + " bars x " + std::to_string(m_featureCount) + " features");
    if (m_options.maxContracts < 1) fail("maxContracts must be at least 1");
    if (m_options.window < 1) fail("window must be at least 1");
    if (m_options.extraObservationSize < 0) fail("extraObservationSize must not be negative");
    if (!(m_options.pnlScaleTicks > 0.0)) fail("pnlScaleTicks must be positive");
    if (m_episodes.empty()) fail("no episodes given");
    for (const EpisodeRange& r : m_episodes) {
        if (r.end > m_bars.size() || r.begin + 2 > r.end)
            fail("episode [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                 ") needs at least 2 bars inside the " + std::to_string(m_bars.size()) + " bars");
    }
    m_extra.assign(static_cast<std::size_t>(m_options.extraObservationSize), 0.0f);
    m_observation.assign(static_cast<std::size_t>(observationSize()), 0.0f);
}

int TradingEnv::observationSize() const
{
    return m_options.window * m_featureCount + 2 + m_options.extraObservationSize;
}

std::span<const float> TradingEnv::reset(int episode)
{
    if (episode < 0 || episode >= episodeCount())
        throw std::out_of_range("trading_env: episode " + std::to_string(episode) + " out of range 0.." +
                                std::to_string(episodeCount() - 1));
    m_state = TradingEnvState{};
    m_state.episode = episode;
    m_state.bar = m_episodes[static_cast<std::size_t>(episode)].begin;
    m_state.done = false;
    buildObservation();
    return m_observation;
}

void TradingEnv::setExtraObservation(std::span<const float> values)
{
    if (values.size() != m_extra.size())
        fail("extra observation has " + std::to_string(values.size()) + " values, expected " +
             std::to_string(m_extra.size()));
    std::copy(values.begin(), values.end(), m_extra.begin());
    std::copy(m_extra.begin(), m_extra.end(), m_observation.end() - static_cast<std::ptrdiff_t>(m_extra.size()));
}

// Moves the position to `target` at `priceTicks` (a mid price): returns the
// cost in ticks and keeps the round-trip bookkeeping.
double TradingEnv::fillAt(double priceTicks, int target, StepResult& result)
{
    const int old = m_state.position;
    const int delta = target - old;
    if (delta == 0) return 0.0;
    const double perContract = m_options.slippageTicks + m_options.commissionPerContract / kEsTickValue;
    const double fillPrice = priceTicks + signOf(delta) * m_options.slippageTicks;
    const bool closes = old != 0 && (target == 0 || signOf(target) != signOf(old));
    if (closes) {
        m_state.tradePnlTicks -= std::abs(old) * perContract;
        result.tradeClosed = true;
        result.closedTradePnlTicks = m_state.tradePnlTicks;
        m_state.tradePnlTicks = -std::abs(target) * perContract;
        m_state.entryPriceTicks = fillPrice;
    } else if (old == 0) {
        m_state.tradePnlTicks = -std::abs(target) * perContract;
        m_state.entryPriceTicks = fillPrice;
    } else {
        m_state.tradePnlTicks -= std::abs(delta) * perContract;
        if (std::abs(target) > std::abs(old))
            m_state.entryPriceTicks = (m_state.entryPriceTicks * std::abs(old) + fillPrice * std::abs(delta)) /
                                      std::abs(target);
    }
    m_state.position = target;
    const double cost = std::abs(delta) * perContract;
    result.costTicks += cost;
    result.contractsTraded += std::abs(delta);
    return cost;
}

StepResult TradingEnv::step(int action)
{
    if (m_state.done) throw std::logic_error("trading_env: step() after the episode ended; call reset()");
    if (action < 0 || action >= actionCount())
        throw std::out_of_range("trading_env: action " + std::to_string(action) + " out of range 0.." +
                                std::to_string(actionCount() - 1));
    const int target = action - m_options.maxContracts;
    const int before = m_state.position;
    const std::size_t t = m_state.bar;
    const Bar& now = m_bars[t];
    const Bar& next = m_bars[t + 1];

    StepResult result;
    double pnl = 0.0;
    const auto mark = [&](double from, double to) {
        const double p = m_state.position * (to - from);
        pnl += p;
        if (m_state.position != 0) m_state.tradePnlTicks += p;
    };
    if (m_options.fillTiming == FillTiming::NextOpen) {
        mark(priceTicks(now.close), priceTicks(next.open));
        pnl -= fillAt(priceTicks(next.open), target, result);
        mark(priceTicks(next.open), priceTicks(next.close));
    } else {
        pnl -= fillAt(priceTicks(now.close), target, result);
        mark(priceTicks(now.close), priceTicks(next.close));
    }
    m_state.bar = t + 1;
    const EpisodeRange& range = m_episodes[static_cast<std::size_t>(m_state.episode)];
    if (m_state.bar + 1 >= range.end) {
        // A round trip closed earlier in this step (a flip) is superseded by the
        // forced exit only if the exit closes another one; keep the first otherwise.
        StepResult exit;
        pnl -= fillAt(priceTicks(next.close), 0, exit);
        result.costTicks += exit.costTicks;
        result.contractsTraded += exit.contractsTraded;
        if (exit.tradeClosed) {
            if (result.tradeClosed) {
                // Two round trips ended in one step; report their sum so the
                // per-trade totals still add up to the PnL.
                result.closedTradePnlTicks += exit.closedTradePnlTicks;
            } else {
                result.closedTradePnlTicks = exit.closedTradePnlTicks;
            }
            result.tradeClosed = true;
        }
        m_state.tradePnlTicks = 0.0;
        m_state.done = true;
        result.terminated = true;
    }
    m_state.equityTicks += pnl;
    result.pnlTicks = pnl;
    result.position = m_state.position;

    double reward = pnl;
    if (m_options.reward == RewardKind::DifferentialSharpe) {
        const double dA = pnl - m_state.dsrA;
        const double dB = pnl * pnl - m_state.dsrB;
        const double variance = m_state.dsrB - m_state.dsrA * m_state.dsrA;
        reward = variance > 1e-12 ? (m_state.dsrB * dA - 0.5 * m_state.dsrA * dB) / std::pow(variance, 1.5) : 0.0;
        m_state.dsrA += m_options.dsrEta * dA;
        m_state.dsrB += m_options.dsrEta * dB;
    }
    reward -= m_options.positionChangePenaltyTicks * std::abs(target - before);
    result.reward = reward;
    buildObservation();
    return result;
}

void TradingEnv::restoreState(const TradingEnvState& state)
{
    if (state.episode >= episodeCount())
        fail("restored state names episode " + std::to_string(state.episode) + " of " + std::to_string(episodeCount()));
    m_state = state;
    if (m_state.episode >= 0) buildObservation();
}

void TradingEnv::setExtraObservationSource(ExtraObservationSource source)
{
    m_extraSource = std::move(source);
    if (m_extraSource && m_state.episode >= 0) buildObservation();
}

void TradingEnv::buildObservation()
{
    if (m_extraSource && !m_extra.empty()) m_extraSource(m_state.bar, m_extra);
    const std::size_t f = static_cast<std::size_t>(m_featureCount);
    const std::size_t w = static_cast<std::size_t>(m_options.window);
    float* out = m_observation.data();
    for (std::size_t k = 0; k < w; ++k) {
        // Row t - (w - 1 - k): the oldest row first, the decision bar last.
        const std::size_t back = w - 1 - k;
        if (back > m_state.bar) {
            std::fill(out, out + f, 0.0f);
        } else {
            const float* row = m_features.data() + (m_state.bar - back) * f;
            std::copy(row, row + f, out);
        }
        out += f;
    }
    const double close = priceTicks(m_bars[m_state.bar].close);
    *out++ = static_cast<float>(static_cast<double>(m_state.position) / m_options.maxContracts);
    const double unrealised = m_state.position * (close - m_state.entryPriceTicks);
    *out++ = static_cast<float>(m_state.position == 0 ? 0.0 : unrealised / m_options.pnlScaleTicks);
    std::copy(m_extra.begin(), m_extra.end(), out);
}

} // namespace foxhunt
