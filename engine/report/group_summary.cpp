// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/group_summary.h"

#include "engine/data/market_time.h"
#include "engine/replay/sweep_plan.h"
#include "engine/stats/comparison.h"
#include "engine/stats/descriptive.h"
#include "engine/stats/returns.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

namespace foxhunt {

namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool isAgent(const std::string& model)
{
    return model == "dqn" || model == "ppo";
}

json number(double v)
{
    return std::isfinite(v) ? json(v) : json(nullptr);
}

json toJson(const stats::Interval& i)
{
    return json::array({number(i.lower), number(i.upper)});
}

json toJson(const MemberAggregate& a)
{
    return {{"n", a.count},
            {"mean", number(a.mean)},
            {"median", number(a.median)},
            {"iqm", number(a.iqm)},
            {"ci95", {{"mean", toJson(a.meanCi)}, {"median", toJson(a.medianCi)}, {"iqm", toJson(a.iqmCi)}}}};
}

json toJson(const TradingAggregates& t)
{
    return {
        {"sharpe", toJson(t.sharpe)}, {"pnl_usd", toJson(t.pnlUsd)}, {"max_drawdown_usd", toJson(t.maxDrawdownUsd)}};
}

/// The finite values of a field over the members' summaries of one model.
std::vector<double> finiteValues(const std::vector<const ModelResults*>& results, double ModelResults::*field)
{
    std::vector<double> out;
    for (const ModelResults* r : results)
        if (std::isfinite(r->*field)) out.push_back(r->*field);
    return out;
}

json toJson(const WalkForwardSummary& w)
{
    json rows = json::array();
    for (const FoldRow& r : w.rows)
        rows.push_back({{"member", r.member},
                        {"seed", r.seed},
                        {"fold", r.fold},
                        {"run_id", r.runId},
                        {"test_from", formatDate(r.testFrom)},
                        {"test_to", formatDate(r.testTo)},
                        {"test_days", r.testDays},
                        {"pnl_usd", number(r.pnlUsd)},
                        {"buy_and_hold_pnl_usd", number(r.buyHoldPnlUsd)},
                        {"sharpe", number(r.sharpe)},
                        {"buy_and_hold_sharpe", number(r.buyHoldSharpe)}});
    json joined = json::array();
    for (const JoinedEquity& j : w.joined) {
        json curve = json::array();
        for (double v : j.equityUsd) curve.push_back(number(v));
        joined.push_back({{"seed", j.seed},
                          {"folds", j.folds},
                          {"folds_joined", j.foldsJoined},
                          {"complete", j.complete},
                          {"pnl_usd", number(j.pnlUsd)},
                          {"buy_and_hold_pnl_usd", number(j.buyHoldPnlUsd)},
                          {"fold_starts", j.foldStarts},
                          {"equity_usd", curve}});
    }
    return {{"folds", rows},
            {"out_of_sample", joined},
            {"over_folds",
             {{"policy", toJson(w.policy)},
              {"buy_and_hold", {{"sharpe", toJson(w.buyHoldSharpe)}, {"pnl_usd", toJson(w.buyHoldPnlUsd)}}},
              {"folds_beating_buy_and_hold", w.foldsBeatingBuyHold},
              {"folds_compared", w.foldsCompared}}}};
}

TradingAggregates trading(const std::vector<const ModelResults*>& results, double ModelResults::*sharpe,
                          double ModelResults::*pnl, double ModelResults::*drawdown)
{
    return {aggregateMembers(finiteValues(results, sharpe)), aggregateMembers(finiteValues(results, pnl)),
            aggregateMembers(finiteValues(results, drawdown))};
}

/// The strata of a folds group's figures: one per fold when every fold has two or more values
/// (then each fold is resampled within itself), else all values pooled in one.
std::vector<std::vector<double>> foldStrata(const std::map<std::size_t, std::vector<double>>& byFold)
{
    std::vector<std::vector<double>> strata;
    bool enough = !byFold.empty();
    for (const auto& [fold, values] : byFold) {
        strata.push_back(values);
        enough = enough && values.size() >= 2;
    }
    if (enough) return strata;
    std::vector<double> pooled;
    for (const std::vector<double>& v : strata) pooled.insert(pooled.end(), v.begin(), v.end());
    return {pooled};
}

/// A folds group's figures for one agent; resultOf(member) gives the member's run id (0: none)
/// and its results for that agent (nullptr: none).
WalkForwardSummary walkForward(
    const FoldPlan& plan, const std::function<std::pair<std::int64_t, const ModelResults*>(std::int64_t)>& resultOf)
{
    WalkForwardSummary w;
    std::map<std::size_t, std::vector<double>> sharpe, pnl, drawdown, buyHoldPnl, buyHoldSharpe;
    std::vector<const ModelResults*> results(plan.members.size(), nullptr);
    for (std::size_t i = 0; i < plan.members.size(); ++i) {
        const FoldMember& m = plan.members[i];
        FoldRow row;
        row.member = static_cast<std::int64_t>(i);
        row.seed = m.seed;
        row.fold = m.days.fold;
        row.testFrom = m.days.testFrom;
        row.testTo = m.days.testTo;
        row.testDays = m.days.testDays;
        row.pnlUsd = row.buyHoldPnlUsd = row.sharpe = row.buyHoldSharpe = kNaN;
        const auto [runId, r] = resultOf(row.member);
        row.runId = runId;
        if (r) {
            results[i] = r;
            row.pnlUsd = r->testPnlUsd;
            row.buyHoldPnlUsd = r->buyHoldPnlUsd;
            row.sharpe = r->testSharpe;
            row.buyHoldSharpe = r->buyHoldSharpe;
            const auto add = [&](std::map<std::size_t, std::vector<double>>& to, double v) {
                if (std::isfinite(v)) to[row.fold].push_back(v);
            };
            add(sharpe, r->testSharpe);
            add(pnl, r->testPnlUsd);
            add(drawdown, r->testMaxDrawdownUsd);
            add(buyHoldPnl, r->buyHoldPnlUsd);
            add(buyHoldSharpe, r->buyHoldSharpe);
            if (std::isfinite(r->testPnlUsd) && std::isfinite(r->buyHoldPnlUsd)) {
                ++w.foldsCompared;
                w.foldsBeatingBuyHold += r->testPnlUsd > r->buyHoldPnlUsd;
            }
        }
        w.rows.push_back(row);
    }
    w.policy = {aggregateStrata(foldStrata(sharpe)), aggregateStrata(foldStrata(pnl)),
                aggregateStrata(foldStrata(drawdown))};
    w.buyHoldPnlUsd = aggregateStrata(foldStrata(buyHoldPnl));
    w.buyHoldSharpe = aggregateStrata(foldStrata(buyHoldSharpe));

    // One joined out-of-sample curve per seed: its folds in order, each segment shifted by the P&L
    // of the folds before it (a segment is the P&L since its own first test bar).
    std::vector<std::int64_t> seeds;
    for (const FoldMember& m : plan.members)
        if (std::find(seeds.begin(), seeds.end(), m.seed) == seeds.end()) seeds.push_back(m.seed);
    for (std::int64_t seed : seeds) {
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < plan.members.size(); ++i)
            if (plan.members[i].seed == seed) order.push_back(i);
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return plan.members[a].days.fold < plan.members[b].days.fold; });
        JoinedEquity j;
        j.seed = seed;
        j.folds = order.size();
        for (std::size_t i : order) {
            const ModelResults* r = results[i];
            if (!r || !std::isfinite(r->testPnlUsd) || !std::isfinite(r->buyHoldPnlUsd)) break; // a gap ends the join
            j.foldStarts.push_back(j.equityUsd.size());
            for (double v : r->testEquityUsd) j.equityUsd.push_back(j.pnlUsd + v);
            j.pnlUsd += r->testPnlUsd;
            j.buyHoldPnlUsd += r->buyHoldPnlUsd;
            ++j.foldsJoined;
        }
        j.complete = j.foldsJoined == j.folds;
        w.joined.push_back(std::move(j));
    }
    return w;
}

} // namespace

MemberAggregate aggregateMembers(const std::vector<double>& values, int resamples)
{
    return aggregateStrata({values}, resamples);
}

MemberAggregate aggregateStrata(const std::vector<std::vector<double>>& given, int resamples)
{
    std::vector<std::vector<double>> strata;
    std::vector<double> values;
    for (const std::vector<double>& s : given)
        if (!s.empty()) {
            strata.push_back(s);
            values.insert(values.end(), s.begin(), s.end());
        }
    MemberAggregate a;
    a.count = values.size();
    const stats::Interval none{kNaN, kNaN, kNaN, 0};
    if (values.empty()) {
        a.mean = a.median = a.iqm = kNaN;
        a.meanCi = a.medianCi = a.iqmCi = none;
        return a;
    }
    a.mean = stats::mean(values);
    a.median = stats::median(values);
    a.iqm = stats::interquartileMean(values);
    stats::BootstrapOptions options;
    options.resamples = resamples;
    const auto interval = [&](double (*statistic)(std::span<const double>)) {
        return stats::stratifiedBootstrapInterval(strata, statistic, options);
    };
    a.meanCi = interval(&stats::mean);
    a.medianCi = interval(&stats::median);
    a.iqmCi = interval(&stats::interquartileMean);
    return a;
}

namespace {

/// One member of a group with its run's figures.
struct Member {
    std::int64_t member, runId;
    RunSummary summary;
};

/// A sweep's trials, best first (see GroupSummary::trials).
void rankTrials(GroupSummary& s, const SweepPlan& sweep, const std::vector<Member>& summaries,
                const std::vector<std::string>& modelOrder)
{
    if (modelOrder.empty()) return;
    const auto agent = std::find_if(modelOrder.begin(), modelOrder.end(), isAgent);
    const std::string model = agent != modelOrder.end() ? *agent : modelOrder.front();
    const bool higherIsBetter = isAgent(model);
    const std::string scoreName = model + (higherIsBetter ? " test Sharpe" : " test quantile loss");
    for (const GroupMemberLine& m : s.members) {
        TrialLine t;
        t.member = m.member;
        t.runId = m.runId;
        t.scoreName = scoreName;
        t.score = std::numeric_limits<double>::quiet_NaN();
        if (m.member >= 0 && static_cast<std::size_t>(m.member) < sweep.trials.size())
            t.settings = describeTrial(sweep.trials[static_cast<std::size_t>(m.member)], sweep.keys);
        for (const Member& r : summaries)
            if (r.member == m.member)
                if (const ModelResults* res = r.summary.find(model))
                    t.score = higherIsBetter ? res->testSharpe : res->quantileLoss;
        s.trials.push_back(std::move(t));
    }
    std::stable_sort(s.trials.begin(), s.trials.end(), [&](const TrialLine& a, const TrialLine& b) {
        if (std::isfinite(a.score) != std::isfinite(b.score)) return std::isfinite(a.score);
        return higherIsBetter ? a.score > b.score : a.score < b.score;
    });
    for (std::size_t i = 0; i < s.trials.size(); ++i) s.trials[i].rank = std::isfinite(s.trials[i].score) ? i + 1 : 0;
}

} // namespace

GroupSummary summarizeGroup(const RunStore& runs, std::int64_t groupId)
{
    const std::optional<RunGroupInfo> group = runs.group(groupId);
    if (!group) throw std::invalid_argument("no run group " + std::to_string(groupId));
    GroupSummary s;
    s.groupId = group->id;
    s.kind = toString(group->kind);
    s.status = toString(group->status);

    const json config = json::parse(group->configJson, nullptr, /*allow_exceptions=*/false);
    if (group->kind == GroupKind::Folds && config.is_object() && config.contains("walk_forward"))
        s.folds = foldPlanFromJson(config["walk_forward"]);
    std::optional<SweepPlan> sweep;
    if (group->kind == GroupKind::Sweep && config.is_object() && config.contains("sweep"))
        sweep = sweepPlanFromJson(config["sweep"]);
    // A member's seed and fold: a seeds group's member is its seed; a folds group's indexes its plan.
    const auto seedAndFold = [&](std::int64_t m) -> std::pair<std::int64_t, std::int64_t> {
        if (s.folds && m >= 0 && static_cast<std::size_t>(m) < s.folds->members.size()) {
            const FoldMember& f = s.folds->members[static_cast<std::size_t>(m)];
            return {f.seed, static_cast<std::int64_t>(f.days.fold)};
        }
        if (sweep) return {config.value("seed", std::int64_t{1}), -1}; // a sweep's member is its trial
        return {m, -1};
    };

    std::map<std::int64_t, RunInfo> byMember;
    for (RunInfo& r : runs.groupMembers(groupId)) byMember.emplace(r.groupMember, std::move(r));
    std::vector<Member> summaries;
    std::vector<std::string> modelOrder;
    for (std::int64_t m : group->members) {
        const auto [seed, fold] = seedAndFold(m);
        const auto it = byMember.find(m);
        if (it == byMember.end()) {
            s.members.push_back({m, seed, fold, 0, "pending"});
            continue;
        }
        s.members.push_back({m, seed, fold, it->second.id, toString(it->second.status)});
        Member member{m, it->second.id, summarizeRun(runs, it->second)};
        for (const ModelResults& r : member.summary.models)
            if (std::find(modelOrder.begin(), modelOrder.end(), r.model) == modelOrder.end())
                modelOrder.push_back(r.model);
        summaries.push_back(std::move(member));
    }

    for (const std::string& model : modelOrder) {
        ModelGroupSummary g;
        g.model = model;
        g.agent = isAgent(model);
        std::vector<const ModelResults*> results;
        std::vector<const Member*> owners;
        for (const Member& m : summaries)
            if (const ModelResults* r = m.summary.find(model)) {
                results.push_back(r);
                owners.push_back(&m);
            }
        if (g.agent) {
            g.policy = trading(results, &ModelResults::testSharpe, &ModelResults::testPnlUsd,
                               &ModelResults::testMaxDrawdownUsd);
            g.flat = trading(results, &ModelResults::flatSharpe, &ModelResults::flatPnlUsd,
                             &ModelResults::flatMaxDrawdownUsd);
            g.buyAndHold = trading(results, &ModelResults::buyHoldSharpe, &ModelResults::buyHoldPnlUsd,
                                   &ModelResults::buyHoldMaxDrawdownUsd);
            // Members whose policy and buy-and-hold both have a test P&L (the same bars for every seed).
            std::vector<double> pnl, buyHold;
            for (const ModelResults* r : results)
                if (std::isfinite(r->testPnlUsd) && std::isfinite(r->buyHoldPnlUsd)) {
                    pnl.push_back(r->testPnlUsd);
                    buyHold.push_back(r->buyHoldPnlUsd);
                }
            if (!pnl.empty()) {
                g.beatsBuyHold = stats::probabilityOfImprovementInterval(pnl, buyHold);
                g.hasBeatsBuyHold = true;
            }

            // The best member by test Sharpe, deflated for having been picked from all of them. A run's
            // Sharpe is of its daily P&L, annualised with sqrt(252): its observations are its test
            // days. Runs stored before the daily figures were annualised per bar (bars_per_year).
            const auto periodsPerYear = [](const ModelResults& r) {
                return !r.testDailyPnlUsd.empty() ? stats::kTradingDaysPerYear : r.testBarsPerYear;
            };
            std::vector<double> perPeriodSharpes;
            std::size_t bestIndex = results.size();
            for (std::size_t i = 0; i < results.size(); ++i) {
                const ModelResults& r = *results[i];
                if (!std::isfinite(r.testSharpe) || !(periodsPerYear(r) > 0.0)) continue;
                perPeriodSharpes.push_back(stats::deannualiseSharpe(r.testSharpe, periodsPerYear(r)));
                if (bestIndex == results.size() || r.testSharpe > results[bestIndex]->testSharpe) bestIndex = i;
            }
            if (bestIndex < results.size()) {
                const ModelResults& r = *results[bestIndex];
                BestMemberSharpe& b = g.best;
                b.member = owners[bestIndex]->member;
                b.runId = owners[bestIndex]->runId;
                b.sharpe = r.testSharpe;
                b.trials = perPeriodSharpes.size();
                b.input.sharpe = stats::deannualiseSharpe(r.testSharpe, periodsPerYear(r));
                // Skewness and kurtosis of the daily P&L the Sharpe is of; for an older run, of the
                // increments of its stored (thinned) equity curve. Too few values: normal returns.
                std::vector<double> increments = r.testDailyPnlUsd;
                if (!r.testDailyPnlUsd.empty()) {
                    b.input.observations = r.testDailyPnlUsd.size();
                } else {
                    b.input.observations = std::isfinite(r.testSteps) && r.testSteps > 0
                                               ? static_cast<std::size_t>(r.testSteps)
                                               : 0;
                    for (std::size_t i = 1; i < r.testEquityUsd.size(); ++i)
                        increments.push_back(r.testEquityUsd[i] - r.testEquityUsd[i - 1]);
                }
                const double skew = increments.size() >= 3 ? stats::skewness(increments) : kNaN;
                const double kurt = increments.size() >= 3 ? stats::kurtosis(increments) : kNaN;
                b.input.skewness = std::isfinite(skew) ? skew : 0.0;
                b.input.kurtosis = std::isfinite(kurt) ? kurt : 3.0;
                b.input.trials = b.trials;
                const double sd = perPeriodSharpes.size() >= 2 ? stats::sampleStd(perPeriodSharpes) : 0.0;
                b.input.trialsSharpeVariance = std::isfinite(sd) ? sd * sd : 0.0;
                b.verdict = stats::deflatedSharpe(b.input);
                g.hasBest = true;
            }
            if (s.folds) {
                g.walkForward = walkForward(*s.folds,
                                            [&](std::int64_t m) -> std::pair<std::int64_t, const ModelResults*> {
                                                for (const Member& x : summaries)
                                                    if (x.member == m) return {x.runId, x.summary.find(model)};
                                                const auto it = byMember.find(m);
                                                return {it == byMember.end() ? 0 : it->second.id, nullptr};
                                            });
                g.hasWalkForward = true;
            }
        } else {
            g.quantileLoss = aggregateMembers(finiteValues(results, &ModelResults::quantileLoss));
            g.zeroReturnLoss = aggregateMembers(finiteValues(results, &ModelResults::zeroReturnLoss));
            g.persistenceLoss = aggregateMembers(finiteValues(results, &ModelResults::persistenceLoss));
            g.climatologyLoss = aggregateMembers(finiteValues(results, &ModelResults::climatologyLoss));
            g.skillQuantileLoss = aggregateMembers(finiteValues(results, &ModelResults::skillQuantileLoss));
            g.skillCrps = aggregateMembers(finiteValues(results, &ModelResults::skillCrps));
            g.coverageObserved = aggregateMembers(finiteValues(results, &ModelResults::coverageObserved));
            const std::vector<double> nominal = finiteValues(results, &ModelResults::coverageNominal);
            g.coverageNominal = nominal.empty() ? kNaN : stats::median(nominal);
            // P(loss below climatology's), as P(beats buy-and-hold) is for agents: on negated losses.
            std::vector<double> model, climatology;
            for (const ModelResults* r : results)
                if (std::isfinite(r->quantileLoss) && std::isfinite(r->climatologyLoss)) {
                    model.push_back(-r->quantileLoss);
                    climatology.push_back(-r->climatologyLoss);
                }
            if (!model.empty()) {
                g.beatsClimatology = stats::probabilityOfImprovementInterval(model, climatology);
                g.hasBeatsClimatology = true;
            }
            for (const ModelResults* r : results) {
                if (!std::isfinite(r->dmPValue) || !std::isfinite(r->dmMeanDifferential)) continue;
                ++g.dmTested;
                if (r->dmPValue < 0.05) (r->dmMeanDifferential < 0.0 ? g.dmBetter : g.dmWorse) += 1;
            }
        }
        s.models.push_back(std::move(g));
    }
    if (sweep) rankTrials(s, *sweep, summaries, modelOrder);
    for (Member& m : summaries) {
        const auto [seed, fold] = seedAndFold(m.member);
        s.results.push_back({m.member, seed, fold, m.runId, std::move(m.summary)});
    }
    return s;
}

nlohmann::json toJson(const GroupSummary& s)
{
    json members = json::array();
    for (const GroupMemberLine& m : s.members) {
        json line{{"member", m.member}, {"seed", m.seed}, {"run_id", m.runId}, {"status", m.status}};
        if (m.fold >= 0) line["fold"] = m.fold;
        members.push_back(std::move(line));
    }
    json models = json::object();
    for (const ModelGroupSummary& g : s.models) {
        json m;
        if (g.agent) {
            m["test"] = {
                {"policy", toJson(g.policy)}, {"flat", toJson(g.flat)}, {"buy_and_hold", toJson(g.buyAndHold)}};
            if (g.hasBeatsBuyHold)
                m["p_beats_buy_and_hold"] = {{"estimate", number(g.beatsBuyHold.estimate)},
                                             {"ci95", toJson(g.beatsBuyHold)}};
            if (g.hasBest)
                m["best_member"] = {{"member", g.best.member},
                                    {"run_id", g.best.runId},
                                    {"sharpe", number(g.best.sharpe)},
                                    {"trials", g.best.trials},
                                    {"observations", g.best.input.observations},
                                    {"expected_max_sharpe_per_bar", number(g.best.verdict.benchmark)},
                                    {"deflated_sharpe", number(g.best.verdict.probability)},
                                    {"verdict", g.best.verdict.significant ? "significant" : "not significant"}};
            if (g.hasWalkForward) m["walk_forward"] = toJson(g.walkForward);
        } else {
            m["test"] = {
                {"model", {{"quantile_loss", toJson(g.quantileLoss)}}},
                {"zero_return", {{"quantile_loss", toJson(g.zeroReturnLoss)}}},
                {"persistence", {{"quantile_loss", toJson(g.persistenceLoss)}}},
                {"climatology", {{"quantile_loss", toJson(g.climatologyLoss)}}},
                {"skill",
                 {{"quantile_loss_vs_climatology", toJson(g.skillQuantileLoss)},
                  {"crps_vs_climatology", toJson(g.skillCrps)}}},
                {"calibration", {{"coverage", toJson(g.coverageObserved)}, {"nominal", number(g.coverageNominal)}}},
                {"diebold_mariano",
                 {{"tested", g.dmTested}, {"better", g.dmBetter}, {"worse", g.dmWorse}, {"level", 0.05}}}};
            if (g.hasBeatsClimatology)
                m["p_beats_climatology"] = {{"estimate", number(g.beatsClimatology.estimate)},
                                            {"ci95", toJson(g.beatsClimatology)}};
        }
        models[g.model] = std::move(m);
    }
    json out{{"group_id", s.groupId}, {"kind", s.kind}, {"status", s.status}, {"members", members}, {"models", models}};
    if (s.folds) out["walk_forward"] = toJson(*s.folds);
    if (!s.trials.empty()) {
        json trials = json::array();
        for (const TrialLine& t : s.trials)
            trials.push_back({{"rank", t.rank},
                              {"member", t.member},
                              {"run_id", t.runId},
                              {"settings", t.settings},
                              {"ranked_by", t.scoreName},
                              {"score", number(t.score)}});
        out["trials"] = std::move(trials);
    }
    return out;
}

} // namespace foxhunt
