// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A single-instrument ES trading environment for reinforcement learning:
// position-target actions, fills with slippage and commission, mark-to-market
// rewards, and one episode per trading day (or fixed-length windows).
//
// Timing. A decision is taken at the close of bar t and sees only rows
// <= t of the feature matrix. With FillTiming::NextOpen (the default) the new
// target position fills at the open of bar t+1; with FillTiming::SameClose it
// fills at the close of bar t. A step then marks the position to the close of
// bar t+1. An episode [begin, end) has end - begin - 1 decisions; after the
// last one the position is closed at the close of bar end-1 (forced exit,
// slippage and commission charged) and the step reports `terminated`.
//
// Rewards (RewardKind):
//  - PnlTicks: the change in marked-to-market equity over the step, in ticks,
//    net of slippage and commission (commission converted at 12.50 USD/tick).
//  - DifferentialSharpe: Moody & Saffell's differential Sharpe ratio of the
//    same per-step PnL R_t, with exponential moving moments A (mean) and B
//    (second moment), adaptation rate eta:
//      D_t = (B_{t-1} dA - A_{t-1} dB / 2) / (B_{t-1} - A_{t-1}^2)^{3/2},
//      dA = R_t - A_{t-1}, dB = R_t^2 - B_{t-1}; then A += eta dA, B += eta dB.
//    D_t is 0 while the variance estimate is not positive; A and B restart
//    at 0 with each episode.
//  - Both: minus positionChangePenaltyTicks per contract of position change
//    (a shaping term only; it never enters the reported PnL).
//
// Observation: W feature rows ending at bar t (rows before bar 0 are zero),
// then position / maxContracts, then unrealised PnL in ticks / pnlScaleTicks,
// then extraObservationSize values set through setExtraObservation().

#include "engine/data/bar.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace foxhunt {

/// ES price facts used by the environment.
inline constexpr double kEsTickSize = 0.25;  ///< index points per tick
inline constexpr double kEsTickValue = 12.5; ///< USD per tick per contract

/// When a target position chosen at the close of bar t is filled.
enum class FillTiming { NextOpen, SameClose };
/// What the environment returns as reward (see the header comment).
enum class RewardKind { PnlTicks, DifferentialSharpe };

/// A half-open range [begin, end) of bar indices forming one episode.
struct EpisodeRange {
    std::size_t begin = 0; ///< first bar
    std::size_t end = 0;   ///< one past the last bar

    friend bool operator==(const EpisodeRange&, const EpisodeRange&) = default;
};

/// Writes the extra inputs of decision bar `bar` into `out` (extraObservationSize values).
using ExtraObservationSource = std::function<void(std::size_t bar, std::span<float> out)>;

/// Options of the environment; defaults are the ES facts in DESIGN.md.
struct TradingEnvOptions {
    int maxContracts = 1;                         ///< actions are target positions -N..N
    double commissionPerContract = 2.25;          ///< USD per contract per side
    double slippageTicks = 1.0;                   ///< ticks against us per contract filled
    FillTiming fillTiming = FillTiming::NextOpen; ///< fill at the next open or at this close
    RewardKind reward = RewardKind::PnlTicks;     ///< reward definition
    double dsrEta = 0.01;                         ///< adaptation rate of the differential Sharpe ratio
    double positionChangePenaltyTicks = 0.0;      ///< shaping penalty per contract of position change
    int window = 1;                               ///< feature rows per observation (W)
    double pnlScaleTicks = 100.0;                 ///< unrealised PnL is divided by this in the observation
    int extraObservationSize = 0;                 ///< length of the extra span (forecaster outputs)
};

/// What one step did. PnL figures are net of costs and exclude shaping penalties.
struct StepResult {
    double reward = 0.0;              ///< as defined by RewardKind
    double pnlTicks = 0.0;            ///< equity change over the step, ticks, net of costs
    double costTicks = 0.0;           ///< slippage plus commission paid in the step, ticks
    int contractsTraded = 0;          ///< sum of |position change| filled in the step (incl. forced exit)
    int position = 0;                 ///< position held after the step (0 after the forced exit)
    bool terminated = false;          ///< the episode ended (position flattened)
    bool tradeClosed = false;         ///< a round trip ended in this step
    double closedTradePnlTicks = 0.0; ///< its PnL (net of its costs) when tradeClosed
};

/// The environment's full dynamic state, so a training run can be checkpointed.
struct TradingEnvState {
    int episode = -1;    ///< current episode index, -1 before the first reset
    std::size_t bar = 0; ///< decision bar t
    int position = 0;
    double entryPriceTicks = 0.0; ///< average entry price of the open position, ticks
    double equityTicks = 0.0;     ///< episode equity, ticks, net of costs
    double tradePnlTicks = 0.0;   ///< PnL of the open round trip so far
    double dsrA = 0.0;
    double dsrB = 0.0;
    bool done = true;
};

/// Builds one episode per ES trading day (EsCalendar::tradingDay) from time-ordered bars.
/// Days with fewer than `minBars` bars are skipped.
std::vector<EpisodeRange> episodesByTradingDay(const std::vector<Bar>& bars, std::size_t minBars = 2);
/// Splits each range into consecutive windows of `length` bars; a shorter tail of >= 2 bars is kept.
std::vector<EpisodeRange> splitIntoWindows(const std::vector<EpisodeRange>& ranges, std::size_t length);

/// The environment. Holds a reference to the bars (they must outlive it) and owns the features.
class TradingEnv {
public:
    /// `features` is row-major [bars.size(), featureCount]. Throws std::invalid_argument
    /// on inconsistent sizes, empty or out-of-range episodes.
    TradingEnv(const std::vector<Bar>& bars, std::vector<float> features, int featureCount,
               std::vector<EpisodeRange> episodes, TradingEnvOptions options = {});

    /// Number of discrete actions, 2N+1; action a targets position a - N.
    int actionCount() const { return 2 * m_options.maxContracts + 1; }
    /// The action whose target is `position` contracts.
    int actionForPosition(int position) const { return position + m_options.maxContracts; }
    /// Length of the observation vector.
    int observationSize() const;
    /// Number of episodes.
    int episodeCount() const { return static_cast<int>(m_episodes.size()); }
    /// The episode ranges.
    const std::vector<EpisodeRange>& episodes() const { return m_episodes; }
    /// Options as given.
    const TradingEnvOptions& options() const { return m_options; }
    /// The bar series.
    const std::vector<Bar>& bars() const { return m_bars; }

    /// Starts episode `episode` flat at its first bar and returns the observation.
    std::span<const float> reset(int episode);
    /// Applies an action; throws std::logic_error when the episode is over.
    StepResult step(int action);
    /// The current observation (valid until the next reset/step/setExtraObservation).
    std::span<const float> observation() const { return m_observation; }
    /// Sets the extra inputs for the current decision; size must be extraObservationSize.
    void setExtraObservation(std::span<const float> values);
    /// From now on every observation (after reset, step and restoreState) asks `source` for the extra
    /// inputs of its decision bar, so a stored next-observation carries its own bar's values. Empty: off.
    void setExtraObservationSource(ExtraObservationSource source);

    /// Current decision bar index.
    std::size_t currentBar() const { return m_state.bar; }
    /// Position held now.
    int position() const { return m_state.position; }
    /// True once the current episode has ended.
    bool done() const { return m_state.done; }
    /// Dynamic state, for checkpoints.
    const TradingEnvState& state() const { return m_state; }
    /// Restores a state taken from state() on an environment with the same inputs.
    void restoreState(const TradingEnvState& state);

private:
    double priceTicks(std::int64_t fixed) const { return static_cast<double>(fixed) / static_cast<double>(kEsTick); }
    double fillAt(double priceTicks, int delta, StepResult& result);
    void buildObservation();

    const std::vector<Bar>& m_bars;
    std::vector<float> m_features;
    int m_featureCount = 0;
    std::vector<EpisodeRange> m_episodes;
    TradingEnvOptions m_options;
    TradingEnvState m_state;
    std::vector<float> m_extra;
    ExtraObservationSource m_extraSource;
    std::vector<float> m_observation;
};

} // namespace foxhunt
