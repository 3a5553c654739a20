// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/group_summary.h"

#include "engine/stats/comparison.h"
#include "engine/stats/descriptive.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace foxhunt {

namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool isAgent(const std::string& model) { return model == "dqn" || model == "ppo"; }

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json toJson(const stats::Interval& i) { return json::array({number(i.lower), number(i.upper)}); }

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
    return {{"sharpe", toJson(t.sharpe)}, {"pnl_usd", toJson(t.pnlUsd)}, {"max_drawdown_usd", toJson(t.maxDrawdownUsd)}};
}

/// The finite values of a field over the members' summaries of one model.
std::vector<double> finiteValues(const std::vector<const ModelResults*>& results, double ModelResults::*field)
{
    std::vector<double> out;
    for (const ModelResults* r : results)
        if (std::isfinite(r->*field)) out.push_back(r->*field);
    return out;
}

TradingAggregates trading(const std::vector<const ModelResults*>& results, double ModelResults::*sharpe,
                          double ModelResults::*pnl, double ModelResults::*drawdown)
{
    return {aggregateMembers(finiteValues(results, sharpe)), aggregateMembers(finiteValues(results, pnl)),
            aggregateMembers(finiteValues(results, drawdown))};
}

} // namespace

MemberAggregate aggregateMembers(const std::vector<double>& values, int resamples)
{
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
    const std::vector<std::vector<double>> strata{values};
    const auto interval = [&](double (*statistic)(std::span<const double>)) {
        return stats::stratifiedBootstrapInterval(strata, statistic, options);
    };
    a.meanCi = interval(&stats::mean);
    a.medianCi = interval(&stats::median);
    a.iqmCi = interval(&stats::interquartileMean);
    return a;
}

GroupSummary summarizeGroup(const RunStore& runs, std::int64_t groupId)
{
    const std::optional<RunGroupInfo> group = runs.group(groupId);
    if (!group) throw std::invalid_argument("no run group " + std::to_string(groupId));
    GroupSummary s;
    s.groupId = group->id;
    s.kind = toString(group->kind);
    s.status = toString(group->status);

    std::map<std::int64_t, RunInfo> byMember;
    for (RunInfo& r : runs.groupMembers(groupId)) byMember.emplace(r.groupMember, std::move(r));
    struct Member {
        std::int64_t member, runId;
        RunSummary summary;
    };
    std::vector<Member> summaries;
    std::vector<std::string> modelOrder;
    for (std::int64_t m : group->members) {
        const auto it = byMember.find(m);
        if (it == byMember.end()) {
            s.members.push_back({m, 0, "pending"});
            continue;
        }
        s.members.push_back({m, it->second.id, toString(it->second.status)});
        Member member{m, it->second.id, summarizeRun(runs, it->second)};
        for (const ModelResults& r : member.summary.models)
            if (std::find(modelOrder.begin(), modelOrder.end(), r.model) == modelOrder.end()) modelOrder.push_back(r.model);
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
            g.policy = trading(results, &ModelResults::testSharpe, &ModelResults::testPnlUsd, &ModelResults::testMaxDrawdownUsd);
            g.flat = trading(results, &ModelResults::flatSharpe, &ModelResults::flatPnlUsd, &ModelResults::flatMaxDrawdownUsd);
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

            // The best member by test Sharpe, deflated for having been picked from all of them.
            std::vector<double> perBarSharpes;
            std::size_t bestIndex = results.size();
            for (std::size_t i = 0; i < results.size(); ++i) {
                const ModelResults& r = *results[i];
                if (!std::isfinite(r.testSharpe) || !(r.testBarsPerYear > 0.0)) continue;
                perBarSharpes.push_back(stats::deannualiseSharpe(r.testSharpe, r.testBarsPerYear));
                if (bestIndex == results.size() || r.testSharpe > results[bestIndex]->testSharpe) bestIndex = i;
            }
            if (bestIndex < results.size()) {
                const ModelResults& r = *results[bestIndex];
                BestMemberSharpe& b = g.best;
                b.member = owners[bestIndex]->member;
                b.runId = owners[bestIndex]->runId;
                b.sharpe = r.testSharpe;
                b.trials = perBarSharpes.size();
                b.input.sharpe = stats::deannualiseSharpe(r.testSharpe, r.testBarsPerYear);
                b.input.observations = std::isfinite(r.testSteps) && r.testSteps > 0 ? static_cast<std::size_t>(r.testSteps) : 0;
                // Skewness and kurtosis from the increments of the stored (thinned) equity curve:
                // the per-bar returns themselves are not stored. Too short a curve: normal returns.
                std::vector<double> increments;
                for (std::size_t i = 1; i < r.testEquityUsd.size(); ++i)
                    increments.push_back(r.testEquityUsd[i] - r.testEquityUsd[i - 1]);
                const double skew = increments.size() >= 3 ? stats::skewness(increments) : kNaN;
                const double kurt = increments.size() >= 3 ? stats::kurtosis(increments) : kNaN;
                b.input.skewness = std::isfinite(skew) ? skew : 0.0;
                b.input.kurtosis = std::isfinite(kurt) ? kurt : 3.0;
                b.input.trials = b.trials;
                const double sd = perBarSharpes.size() >= 2 ? stats::sampleStd(perBarSharpes) : 0.0;
                b.input.trialsSharpeVariance = std::isfinite(sd) ? sd * sd : 0.0;
                b.verdict = stats::deflatedSharpe(b.input);
                g.hasBest = true;
            }
        } else {
            g.quantileLoss = aggregateMembers(finiteValues(results, &ModelResults::quantileLoss));
            g.zeroReturnLoss = aggregateMembers(finiteValues(results, &ModelResults::zeroReturnLoss));
            g.persistenceLoss = aggregateMembers(finiteValues(results, &ModelResults::persistenceLoss));
        }
        s.models.push_back(std::move(g));
    }
    return s;
}

nlohmann::json toJson(const GroupSummary& s)
{
    json members = json::array();
    for (const GroupMemberLine& m : s.members)
        members.push_back({{"member", m.member}, {"run_id", m.runId}, {"status", m.status}});
    json models = json::object();
    for (const ModelGroupSummary& g : s.models) {
        json m;
        if (g.agent) {
            m["test"] = {{"policy", toJson(g.policy)}, {"flat", toJson(g.flat)}, {"buy_and_hold", toJson(g.buyAndHold)}};
            if (g.hasBeatsBuyHold)
                m["p_beats_buy_and_hold"] = {{"estimate", number(g.beatsBuyHold.estimate)}, {"ci95", toJson(g.beatsBuyHold)}};
            if (g.hasBest)
                m["best_member"] = {{"member", g.best.member},
                                    {"run_id", g.best.runId},
                                    {"sharpe", number(g.best.sharpe)},
                                    {"trials", g.best.trials},
                                    {"observations", g.best.input.observations},
                                    {"expected_max_sharpe_per_bar", number(g.best.verdict.benchmark)},
                                    {"deflated_sharpe", number(g.best.verdict.probability)},
                                    {"verdict", g.best.verdict.significant ? "significant" : "not significant"}};
        } else {
            m["test"] = {{"model", {{"quantile_loss", toJson(g.quantileLoss)}}},
                         {"zero_return", {{"quantile_loss", toJson(g.zeroReturnLoss)}}},
                         {"persistence", {{"quantile_loss", toJson(g.persistenceLoss)}}}};
        }
        models[g.model] = std::move(m);
    }
    return {{"group_id", s.groupId}, {"kind", s.kind}, {"status", s.status}, {"members", members}, {"models", models}};
}

} // namespace foxhunt
