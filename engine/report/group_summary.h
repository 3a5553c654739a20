// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run group in figures: for every model, its test results across the group's members (and the
// baselines' on the same bars) as mean, median, interquartile mean and stratified-bootstrap 95 %
// intervals; for the agents the probability of beating buy-and-hold and the deflated Sharpe ratio
// of the best member, with the members as the trials. Each member's figures are read by
// summarizeRun(), the same as the runs table and the report show.

#include "engine/report/run_summary.h"
#include "engine/stats/bootstrap.h"
#include "engine/stats/sharpe_tests.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// One figure across a group's members (those that have it; NaN members left out).
struct MemberAggregate {
    std::size_t count = 0;          ///< members with a finite value
    double mean = 0.0, median = 0.0, iqm = 0.0; ///< NaN when count is 0
    stats::Interval meanCi, medianCi, iqmCi;    ///< stratified percentile bootstrap, 95 %
};

/// A trading strategy's test figures across the members.
struct TradingAggregates {
    MemberAggregate sharpe, pnlUsd, maxDrawdownUsd;
};

/// The deflated Sharpe ratio of the group's best member (by test Sharpe).
struct BestMemberSharpe {
    std::int64_t member = 0;          ///< its seed
    std::int64_t runId = 0;
    double sharpe = 0.0;              ///< its annualised test Sharpe
    std::size_t trials = 0;           ///< members with a test Sharpe, the trials it was picked from
    stats::DeflatedSharpeInput input; ///< per-bar figures the DSR was computed from
    stats::SharpeVerdict verdict;     ///< DSR and "significant at 95 %"
};

/// One model of the group.
struct ModelGroupSummary {
    std::string model;
    bool agent = false;                ///< DQN/PPO (trading figures) rather than a forecaster
    TradingAggregates policy, flat, buyAndHold;  ///< agents
    stats::Interval beatsBuyHold;      ///< agents: P(member's test P&L > buy-and-hold's), with its interval
    bool hasBeatsBuyHold = false;
    BestMemberSharpe best;             ///< agents
    bool hasBest = false;
    MemberAggregate quantileLoss, zeroReturnLoss, persistenceLoss; ///< forecasters: test quantile loss
};

/// One member of the group as the summary saw it.
struct GroupMemberLine {
    std::int64_t member = 0;
    std::int64_t runId = 0;   ///< 0: never started
    std::string status;       ///< the run's, or "pending"
};

struct GroupSummary {
    std::int64_t groupId = 0;
    std::string kind;                  ///< "seeds"
    std::string status;
    std::vector<GroupMemberLine> members;
    std::vector<ModelGroupSummary> models;
};

/// The figures across the members: count, mean, median, IQM and their 95 % intervals (one
/// stratum: the members of a seeds group are draws from one distribution). Bootstrap seed 0.
MemberAggregate aggregateMembers(const std::vector<double>& values, int resamples = 2000);

/// Summarises group `groupId` of `runs` (members without a test evaluation add nothing). Throws
/// std::invalid_argument when there is no such group.
GroupSummary summarizeGroup(const RunStore& runs, std::int64_t groupId);

/// The summary as the CLI prints it (train --json of a group, groups --json).
nlohmann::json toJson(const GroupSummary& summary);

} // namespace foxhunt
