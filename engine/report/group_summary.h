// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run group in figures: for every model, its test results across the group's members (and the
// baselines' on the same bars) as mean, median, interquartile mean and stratified-bootstrap 95 %
// intervals; for the agents the probability of beating buy-and-hold and the deflated Sharpe ratio
// of the best member, with the members as the trials. Each member's figures are read by
// summarizeRun(), the same as the runs table and the report show.

#include "engine/replay/fold_plan.h"
#include "engine/report/run_summary.h"
#include "engine/stats/bootstrap.h"
#include "engine/stats/sharpe_tests.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

/// One figure across a group's members (those that have it; NaN members left out).
struct MemberAggregate {
    std::size_t count = 0;                      ///< members with a finite value
    double mean = 0.0, median = 0.0, iqm = 0.0; ///< NaN when count is 0
    stats::Interval meanCi, medianCi, iqmCi;    ///< stratified percentile bootstrap, 95 %
};

/// A trading strategy's test figures across the members.
struct TradingAggregates {
    MemberAggregate sharpe, pnlUsd, maxDrawdownUsd;
};

/// The deflated Sharpe ratio of the group's best member (by test Sharpe).
struct BestMemberSharpe {
    std::int64_t member = 0; ///< its seed
    std::int64_t runId = 0;
    double sharpe = 0.0;              ///< its annualised test Sharpe
    std::size_t trials = 0;           ///< members with a test Sharpe, the trials it was picked from
    stats::DeflatedSharpeInput input; ///< per-bar figures the DSR was computed from
    stats::SharpeVerdict verdict;     ///< DSR and "significant at 95 %"
};

/// Folds groups: one member's fold, out of sample.
struct FoldRow {
    std::int64_t member = 0, seed = 0, runId = 0; ///< runId 0: never started
    std::size_t fold = 0;
    std::int64_t testFrom = 0, testTo = 0; ///< trading days (days since epoch), inclusive
    std::size_t testDays = 0;
    double pnlUsd = 0.0, buyHoldPnlUsd = 0.0, sharpe = 0.0, buyHoldSharpe = 0.0; ///< NaN without a test evaluation
};

/// Folds groups: one seed's out-of-sample segments joined in fold order into one equity curve,
/// each segment starting where the previous one ended.
struct JoinedEquity {
    std::int64_t seed = 0;
    std::size_t folds = 0;         ///< folds planned for this seed
    std::size_t foldsJoined = 0;   ///< of them, those with a test evaluation (joined in order; a gap ends the join)
    bool complete = false;         ///< every fold joined
    double pnlUsd = 0.0;           ///< sum of the joined folds' test P&L
    double buyHoldPnlUsd = 0.0;    ///< buy-and-hold's over the same folds
    std::vector<double> equityUsd; ///< the joined (thinned) curves
    std::vector<std::size_t> foldStarts; ///< index in equityUsd where each joined fold begins
};

/// Folds groups, per agent: the fold-by-fold table, the joined curves and the figures over folds.
struct WalkForwardSummary {
    std::vector<FoldRow> rows;        ///< in member order
    std::vector<JoinedEquity> joined; ///< one per seed, in seed order
    /// Over every fold with a test evaluation; the folds are the bootstrap's strata when each has
    /// two or more seeds, else all are one stratum.
    TradingAggregates policy;
    MemberAggregate buyHoldPnlUsd, buyHoldSharpe;
    std::size_t foldsBeatingBuyHold = 0, foldsCompared = 0; ///< test P&L above buy-and-hold's
};

/// One model of the group.
struct ModelGroupSummary {
    std::string model;
    bool agent = false;                         ///< DQN/PPO (trading figures) rather than a forecaster
    TradingAggregates policy, flat, buyAndHold; ///< agents
    stats::Interval beatsBuyHold;               ///< agents: P(member's test P&L > buy-and-hold's), with its interval
    bool hasBeatsBuyHold = false;
    BestMemberSharpe best; ///< agents
    bool hasBest = false;
    MemberAggregate quantileLoss, zeroReturnLoss, persistenceLoss; ///< forecasters: test quantile loss
    MemberAggregate climatologyLoss;                               ///< forecasters: the climatological baseline's
    MemberAggregate skillQuantileLoss, skillCrps; ///< forecasters: skill against climatology (> 0: better)
    MemberAggregate coverageObserved;             ///< forecasters: share of outcomes inside the outer band
    double coverageNominal = std::numeric_limits<double>::quiet_NaN(); ///< what that band should cover
    stats::Interval beatsClimatology; ///< forecasters: P(member's loss < climatology's), with its interval
    bool hasBeatsClimatology = false;
    /// Forecasters: members whose Diebold-Mariano test against their best baseline was valid, and of
    /// them those whose loss is lower (or higher) at the 5 % level.
    std::size_t dmTested = 0, dmBetter = 0, dmWorse = 0;
    WalkForwardSummary walkForward; ///< agents of a folds group
    bool hasWalkForward = false;
};

/// One member of the group as the summary saw it.
struct GroupMemberLine {
    std::int64_t member = 0; ///< the seed (seeds group) or the index into the fold plan (folds group)
    std::int64_t seed = 0;   ///< its seed
    std::int64_t fold = -1;  ///< folds group: its fold
    std::int64_t runId = 0;  ///< 0: never started
    std::string status;      ///< the run's, or "pending"
};

/// Sweep groups: one trial and where it ranks.
struct TrialLine {
    std::size_t rank = 0;    ///< 1 = best; 0 = no test result (listed last)
    std::int64_t member = 0; ///< the trial's index in the sweep plan
    std::int64_t runId = 0;  ///< 0: never started
    std::string settings;    ///< its values, "dqn.learning_rate=0.001, steps=500"
    std::string scoreName;   ///< what it is ranked by, e.g. "dqn test Sharpe"
    double score = 0.0;      ///< NaN without a test result
};

/// One member's run as the summary read it (members with a run only).
struct GroupMemberResults {
    std::int64_t member = 0, seed = 0, fold = -1, runId = 0;
    RunSummary summary; ///< its figures, those the aggregates are of
};

struct GroupSummary {
    std::int64_t groupId = 0;
    std::string kind; ///< "seeds", "folds" or "sweep"
    std::string status;
    std::vector<GroupMemberLine> members;
    std::optional<FoldPlan> folds; ///< folds group: the stored plan
    std::vector<ModelGroupSummary> models;
    /// Sweep groups: every trial, best first, by the first agent's test Sharpe (higher is better) or,
    /// without agents, the first forecaster's test quantile loss (lower is better). The best trial's
    /// deflated Sharpe (ModelGroupSummary::best) counts every trial with a result as tried.
    std::vector<TrialLine> trials;
    /// Every member with a run, in member order, with its own figures (performance profiles, CSV).
    std::vector<GroupMemberResults> results;
};

/// The same over several strata (a folds group's folds: each fold resampled within itself).
MemberAggregate aggregateStrata(const std::vector<std::vector<double>>& strata, int resamples = 2000);

/// The figures across the members: count, mean, median, IQM and their 95 % intervals (one
/// stratum: the members of a seeds group are draws from one distribution). Bootstrap seed 0.
MemberAggregate aggregateMembers(const std::vector<double>& values, int resamples = 2000);

/// Summarises group `groupId` of `runs` (members without a test evaluation add nothing). Throws
/// std::invalid_argument when there is no such group.
GroupSummary summarizeGroup(const RunStore& runs, std::int64_t groupId);

/// The summary as the CLI prints it (train --json of a group, groups --json).
nlohmann::json toJson(const GroupSummary& summary);

} // namespace foxhunt
