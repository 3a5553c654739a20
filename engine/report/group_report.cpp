// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/group_report.h"

#include "engine/data/market_time.h"
#include "engine/report/csv_field.h"
#include "engine/report/group_summary.h"
#include "engine/report/svg_chart.h"
#include "engine/stats/comparison.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>

namespace foxhunt {

namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* kPolicyColor = "#1f77b4";
const char* kBuyHoldColor = "#d62728";
const char* kFlatColor = "#7f7f7f";
const char* kClimatologyColor = "#2ca02c";
const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

json number(double v)
{
    return std::isfinite(v) ? json(v) : json(nullptr);
}

double value(const json& v)
{
    return v.is_number() ? v.get<double>() : kNaN;
}

/// A member's own figures for one model, as member_results stores them.
json memberFigures(const GroupMemberResults& m, const ModelResults& r)
{
    return {{"member", m.member},
            {"seed", m.seed},
            {"fold", m.fold},
            {"run_id", m.runId},
            {"model", r.model},
            {"test_sharpe", number(r.testSharpe)},
            {"test_pnl_usd", number(r.testPnlUsd)},
            {"test_max_drawdown_usd", number(r.testMaxDrawdownUsd)},
            {"flat_sharpe", number(r.flatSharpe)},
            {"flat_pnl_usd", number(r.flatPnlUsd)},
            {"flat_max_drawdown_usd", number(r.flatMaxDrawdownUsd)},
            {"buy_and_hold_sharpe", number(r.buyHoldSharpe)},
            {"buy_and_hold_pnl_usd", number(r.buyHoldPnlUsd)},
            {"buy_and_hold_max_drawdown_usd", number(r.buyHoldMaxDrawdownUsd)},
            {"quantile_loss", number(r.quantileLoss)},
            {"zero_return_quantile_loss", number(r.zeroReturnLoss)},
            {"persistence_quantile_loss", number(r.persistenceLoss)},
            {"climatology_quantile_loss", number(r.climatologyLoss)},
            {"skill_quantile_loss_vs_climatology", number(r.skillQuantileLoss)},
            {"skill_crps_vs_climatology", number(r.skillCrps)},
            {"coverage_observed", number(r.coverageObserved)},
            {"coverage_nominal", number(r.coverageNominal)},
            {"diebold_mariano_p_value", number(r.dmPValue)},
            {"diebold_mariano_mean_differential", number(r.dmMeanDifferential)}};
}

// ---------------------------------------------------------------------------
// Text

std::string fixed(double v, int decimals)
{
    if (!std::isfinite(v)) return "n/a";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string general(double v)
{
    if (!std::isfinite(v)) return "n/a";
    char buf[64];
    // Whole units from 10,000 up (USD figures), four significant digits below.
    const double a = std::fabs(v);
    std::snprintf(buf, sizeof buf, a >= 1e4 && a < 1e12 ? "%.0f" : "%.4g", v);
    return buf;
}

std::string modelTitle(const std::string& m)
{
    if (m == "dqn") return "DQN";
    if (m == "ppo") return "PPO";
    if (m == "mamba2") return "Mamba-2";
    if (m == "tft") return "TFT";
    return m;
}

std::string groupTitle(const json& g)
{
    return "group " + std::to_string(g.value("group_id", std::int64_t{0}));
}

/// "1.23 [0.45, 2.01]" of an aggregate's statistic ("mean", "median", "iqm").
std::string withInterval(const json& aggregate, const char* statistic)
{
    if (!aggregate.is_object()) return "n/a";
    const double v = value(aggregate.value(statistic, json()));
    if (!std::isfinite(v)) return "n/a";
    std::string out = general(v);
    const json ci = aggregate.value("ci95", json::object()).value(statistic, json());
    if (ci.is_array() && ci.size() == 2 && std::isfinite(value(ci[0])) && std::isfinite(value(ci[1])))
        out += " [" + general(value(ci[0])) + ", " + general(value(ci[1])) + "]";
    return out;
}

/// "0.60 [0.20, 1.00]" of p_beats_buy_and_hold; "n/a" without it.
std::string probabilityText(const json& p)
{
    if (!p.is_object()) return "n/a";
    const json ci = p.value("ci95", json::array());
    return fixed(value(p.value("estimate", json())), 2) +
           (ci.is_array() && ci.size() == 2 ? " [" + fixed(value(ci[0]), 2) + ", " + fixed(value(ci[1]), 2) + "]"
                                            : std::string());
}

/// An aggregate's rows of an interval chart: its IQM and mean with their intervals.
void addIntervals(std::vector<SvgInterval>& rows, const std::string& label, const json& aggregate,
                  const std::string& color)
{
    for (const char* statistic : {"iqm", "mean"}) {
        SvgInterval row;
        row.label = label + (std::string(statistic) == "iqm" ? " IQM" : " mean");
        row.color = color;
        row.estimate = row.lower = row.upper = kNaN;
        if (aggregate.is_object()) {
            row.estimate = value(aggregate.value(statistic, json()));
            const json ci = aggregate.value("ci95", json::object()).value(statistic, json());
            if (ci.is_array() && ci.size() == 2) {
                row.lower = value(ci[0]);
                row.upper = value(ci[1]);
            }
        }
        rows.push_back(std::move(row));
    }
}

/// A performance profile line, drawn as steps.
SvgSeries profileLine(const std::string& name, const std::string& color, const std::vector<double>& values,
                      const std::vector<double>& thresholds, bool higherIsBetter)
{
    SvgSeries s{name, color, {}, {}};
    const std::vector<double> shares = profileShares(values, thresholds, higherIsBetter);
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        if (i > 0 && shares[i] != shares[i - 1]) {
            s.x.push_back(thresholds[i]);
            s.y.push_back(shares[i - 1]);
        }
        s.x.push_back(thresholds[i]);
        s.y.push_back(shares[i]);
    }
    return s;
}

/// Thresholds spanning every value of every line, with a margin, for a performance profile.
std::vector<double> thresholdsOver(const std::vector<std::vector<double>>& lines)
{
    std::set<double> points;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& l : lines)
        for (double v : l) {
            points.insert(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (points.empty()) return {};
    const double margin = hi > lo ? (hi - lo) * 0.05 : std::max(std::fabs(lo) * 0.05, 1e-9);
    std::vector<double> t{lo - margin};
    t.insert(t.end(), points.begin(), points.end());
    t.push_back(hi + margin);
    return t;
}

// ---------------------------------------------------------------------------
// Blocks

class Builder : private ReportWriter {
public:
    explicit Builder(const json& report) : m_groups(report.at("groups")) { }

    ReportDocument build()
    {
        std::string ids;
        for (const json& g : m_groups) ids += (ids.empty() ? "" : ", ") + std::to_string(g.value("group_id", 0));
        m_doc.title = m_groups.size() == 1 ? "Foxhunt run group " + ids : "Foxhunt run groups " + ids + " compared";
        heading(1, "", m_doc.title);
        header();
        if (m_groups.size() > 1) comparison();
        for (const json& g : m_groups) group(g);
        reading();
        return std::move(m_doc);
    }

private:
    void intervalChart(const std::string& title, const std::string& axis, const std::vector<SvgInterval>& rows)
    {
        SvgChartOptions o;
        o.title = title;
        o.yLabel = axis;
        o.width = 720;
        chart(title, renderSvgIntervalChart(rows, o), o.width, svgIntervalChartHeight(rows.size(), o));
    }

    void profileChart(const std::string& title, const std::string& axis,
                      const std::vector<std::pair<std::string, std::vector<double>>>& lines,
                      const std::vector<std::string>& colors, bool higherIsBetter)
    {
        std::vector<std::vector<double>> values;
        for (const auto& [name, v] : lines) values.push_back(v);
        const std::vector<double> thresholds = thresholdsOver(values);
        if (thresholds.empty()) return;
        std::vector<SvgSeries> series;
        for (std::size_t i = 0; i < lines.size(); ++i)
            if (!lines[i].second.empty())
                series.push_back(profileLine(lines[i].first, colors[i % colors.size()], lines[i].second, thresholds,
                                             higherIsBetter));
        SvgChartOptions o;
        o.title = title;
        o.yLabel = axis;
        o.width = 720;
        o.height = 260;
        chart(title, renderSvgLineChart(series, o), o.width, o.height);
    }

    /// The group's "models" object (a copy: iterating a temporary's items() would dangle).
    static json modelsOf(const json& g)
    {
        return g.contains("models") && g["models"].is_object() ? g["models"] : json::object();
    }

    /// The members' values of one figure of one model, in member order.
    static std::vector<double> memberValues(const json& g, const std::string& model, const char* key)
    {
        std::vector<double> out;
        for (const json& m : g.value("member_results", json::array()))
            if (m.value("model", std::string()) == model) {
                const double v = value(m.value(key, json()));
                if (std::isfinite(v)) out.push_back(v);
            }
        return out;
    }

    void header()
    {
        heading(2, "header", "Groups");
        std::vector<std::vector<std::string>> rows;
        for (const json& g : m_groups) {
            std::size_t finished = 0;
            const json members = g.value("members", json::array());
            for (const json& m : members) finished += m.value("status", std::string()) == "finished";
            const json config = g.value("config", json::object());
            std::string models;
            for (const json& m : config.value("models", json::array()))
                if (m.is_string()) models += (models.empty() ? "" : ", ") + modelTitle(m.get<std::string>());
            std::string what = g.value("kind", std::string()) + ", " + g.value("status", std::string()) + "; " +
                               std::to_string(finished) + " of " + std::to_string(members.size()) + " members finished";
            if (!models.empty()) what += "; models " + models;
            if (config.contains("steps")) what += "; " + config["steps"].dump() + " steps";
            if (config.contains("series") && config["series"].is_string() &&
                !config["series"].get<std::string>().empty())
                what += "; series " + config["series"].get<std::string>();
            if (g.contains("walk_forward")) {
                const json& w = g["walk_forward"];
                what += "; " + w.value("folds", json(0)).dump() + " " + w.value("window", std::string()) +
                        " walk-forward folds";
            }
            what += "; created " + g.value("created", std::string());
            if (!g.value("finished", std::string()).empty()) what += ", finished " + g.value("finished", std::string());
            rows.push_back({"Group " + std::to_string(g.value("group_id", 0)), what});
        }
        keyValues(std::move(rows));
        for (const json& g : m_groups) {
            std::size_t pending = 0;
            for (const json& m : g.value("members", json::array()))
                pending += m.value("status", std::string()) != "finished";
            if (pending > 0)
                paragraph(groupTitle(g) + ": " + std::to_string(pending) +
                              " member(s) did not finish; the figures are over the members with a test evaluation "
                              "(foxhunt-cli train --resume-group " +
                              std::to_string(g.value("group_id", 0)) + " trains the rest).",
                          ReportBlockKind::Warning);
        }
    }

    /// Several groups side by side: per model, each group's IQM with its interval.
    void comparison()
    {
        heading(2, "comparison", "Groups compared");
        std::vector<std::string> models;
        for (const json& g : m_groups) {
            const json ofGroup = modelsOf(g);
            for (const auto& [model, _] : ofGroup.items())
                if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
        }
        for (const std::string& model : models) {
            heading(3, "", modelTitle(model));
            std::vector<std::vector<std::string>> rows;
            std::vector<SvgInterval> intervals;
            bool agent = false;
            for (std::size_t i = 0; i < m_groups.size(); ++i) {
                const json& g = m_groups[i];
                const json m = g.value("models", json::object()).value(model, json());
                if (!m.is_object()) continue;
                const json test = m.value("test", json::object());
                const std::string color = kPalette[i % std::size(kPalette)];
                if (test.contains("policy")) {
                    agent = true;
                    const json p = test["policy"], b = test.value("buy_and_hold", json::object());
                    const json beats = m.value("p_beats_buy_and_hold", json());
                    const json best = m.value("best_member", json());
                    rows.push_back({groupTitle(g) + " (" + g.value("kind", std::string()) + ")",
                                    std::to_string(p.value("pnl_usd", json::object()).value("n", 0)),
                                    withInterval(p.value("pnl_usd", json()), "iqm"),
                                    withInterval(b.value("pnl_usd", json()), "iqm"),
                                    withInterval(p.value("sharpe", json()), "iqm"), probabilityText(beats),
                                    best.is_object() ? general(value(best.value("deflated_sharpe", json()))) + " (" +
                                                           best.value("verdict", std::string()) + ")"
                                                     : "n/a"});
                    addIntervals(intervals, groupTitle(g), p.value("pnl_usd", json()), color);
                } else {
                    const json q = test.value("model", json::object()).value("quantile_loss", json());
                    rows.push_back(
                        {groupTitle(g) + " (" + g.value("kind", std::string()) + ")",
                         std::to_string(q.is_object() ? q.value("n", 0) : 0), withInterval(q, "iqm"),
                         withInterval(test.value("persistence", json::object()).value("quantile_loss", json()), "iqm"),
                         withInterval(test.value("zero_return", json::object()).value("quantile_loss", json()), "iqm"),
                         withInterval(test.value("climatology", json::object()).value("quantile_loss", json()), "iqm"),
                         withInterval(test.value("skill", json::object()).value("quantile_loss_vs_climatology", json()),
                                      "iqm")});
                    addIntervals(intervals, groupTitle(g), q, color);
                }
            }
            if (agent) {
                table({"group", "n", "test P&L IQM [95 % CI]", "buy-and-hold P&L IQM", "test Sharpe IQM",
                       "P(beats buy-and-hold)", "best member's deflated Sharpe"},
                      std::move(rows));
                intervalChart(modelTitle(model) + ": test P&L by group (USD), IQM and mean with 95 % CI", "USD",
                              intervals);
            } else {
                table({"group", "n", "test quantile loss IQM [95 % CI]", "persistence IQM", "zero-return IQM",
                       "climatology IQM", "skill vs climatology IQM"},
                      std::move(rows));
                intervalChart(modelTitle(model) + ": test quantile loss by group, IQM and mean with 95 % CI",
                              "quantile loss (lower is better)", intervals);
            }
        }
    }

    void group(const json& g)
    {
        const std::int64_t id = g.value("group_id", std::int64_t{0});
        const std::string prefix = m_groups.size() > 1 ? "Group " + std::to_string(id) + ": " : "";
        const json models = modelsOf(g);
        for (const auto& [model, m] : models.items()) {
            heading(2, "group-" + std::to_string(id) + "-" + model, prefix + modelTitle(model));
            const json test = m.value("test", json::object());
            if (test.contains("policy")) agent(g, model, m);
            else forecaster(g, model, m);
        }
        trials(g, prefix);
        members(g, prefix);
    }

    void aggregateRows(std::vector<std::vector<std::string>>& rows, const std::string& who, const json& aggregate)
    {
        rows.push_back({who, aggregate.is_object() ? std::to_string(aggregate.value("n", 0)) : "0",
                        withInterval(aggregate, "iqm"), withInterval(aggregate, "median"),
                        withInterval(aggregate, "mean")});
    }

    void agent(const json& g, const std::string& model, const json& m)
    {
        const json test = m.value("test", json::object());
        const json policy = test.value("policy", json::object()), flat = test.value("flat", json::object()),
                   hold = test.value("buy_and_hold", json::object());
        const std::string name = modelTitle(model);
        std::vector<std::vector<std::string>> rows;
        for (const auto& [key, label] :
             {std::pair{"pnl_usd", "test P&L (USD)"}, std::pair{"sharpe", "test Sharpe (daily, annualised)"},
              std::pair{"max_drawdown_usd", "test max drawdown (USD)"}}) {
            aggregateRows(rows, name + " " + label, policy.value(key, json()));
            aggregateRows(rows, "buy and hold " + std::string(label), hold.value(key, json()));
            aggregateRows(rows, "flat " + std::string(label), flat.value(key, json()));
        }
        table({"across the members", "n", "IQM [95 % CI]", "median [95 % CI]", "mean [95 % CI]"}, std::move(rows));

        std::vector<std::vector<std::string>> facts;
        const json beats = m.value("p_beats_buy_and_hold", json());
        if (beats.is_object()) facts.push_back({"P(test P&L > buy-and-hold's)", probabilityText(beats)});
        const json best = m.value("best_member", json());
        if (best.is_object()) {
            facts.push_back({"best member by test Sharpe", (g.contains("walk_forward")                  ? "member "
                                                            : g.value("kind", std::string()) == "sweep" ? "trial "
                                                                                                        : "seed ") +
                                                               best.value("member", json(0)).dump() + " (run " +
                                                               best.value("run_id", json(0)).dump() + "), Sharpe " +
                                                               general(value(best.value("sharpe", json())))});
            facts.push_back(
                {"deflated Sharpe ratio of the best", general(value(best.value("deflated_sharpe", json()))) + ": " +
                                                          best.value("verdict", std::string()) + " at 95 % after " +
                                                          best.value("trials", json(0)).dump() + " trials over " +
                                                          best.value("observations", json(0)).dump() + " test days"});
        }
        if (!facts.empty()) keyValues(std::move(facts));

        std::vector<SvgInterval> pnl, sharpe;
        addIntervals(pnl, name, policy.value("pnl_usd", json()), kPolicyColor);
        addIntervals(pnl, "buy and hold", hold.value("pnl_usd", json()), kBuyHoldColor);
        addIntervals(pnl, "flat", flat.value("pnl_usd", json()), kFlatColor);
        addIntervals(sharpe, name, policy.value("sharpe", json()), kPolicyColor);
        addIntervals(sharpe, "buy and hold", hold.value("sharpe", json()), kBuyHoldColor);
        addIntervals(sharpe, "flat", flat.value("sharpe", json()), kFlatColor);
        intervalChart(name + ": test P&L across the members, IQM and mean with 95 % CI", "USD", pnl);
        intervalChart(name + ": test Sharpe across the members, IQM and mean with 95 % CI",
                      "Sharpe (daily, annualised)", sharpe);
        profileChart(name + ": performance profile of test P&L (share of members above each level)", "share of members",
                     {{name, memberValues(g, model, "test_pnl_usd")},
                      {"buy and hold", memberValues(g, model, "buy_and_hold_pnl_usd")},
                      {"flat", memberValues(g, model, "flat_pnl_usd")}},
                     {kPolicyColor, kBuyHoldColor, kFlatColor}, /*higherIsBetter=*/true);
        if (m.contains("walk_forward")) walkForward(name, m["walk_forward"]);
    }

    void walkForward(const std::string& name, const json& w)
    {
        heading(3, "", name + ": walk-forward folds (out of sample)");
        std::vector<std::vector<std::string>> rows;
        for (const json& r : w.value("folds", json::array()))
            rows.push_back({std::to_string(r.value("fold", 0)), r.value("seed", json(0)).dump(),
                            r.value("test_from", std::string()) + " to " + r.value("test_to", std::string()),
                            std::to_string(r.value("test_days", 0)), fixed(value(r.value("pnl_usd", json())), 2),
                            fixed(value(r.value("buy_and_hold_pnl_usd", json())), 2),
                            general(value(r.value("sharpe", json()))),
                            general(value(r.value("buy_and_hold_sharpe", json()))),
                            r.value("run_id", 0) > 0 ? std::to_string(r.value("run_id", 0)) : "not started"});
        table({"fold", "seed", "test days", "days", "P&L (USD)", "buy-and-hold P&L", "Sharpe", "buy-and-hold Sharpe",
               "run"},
              std::move(rows));
        const json over = w.value("over_folds", json::object());
        const json policy = over.value("policy", json::object());
        const json hold = over.value("buy_and_hold", json::object());
        keyValues({{"test P&L over the folds, IQM", withInterval(policy.value("pnl_usd", json()), "iqm")},
                   {"buy-and-hold's, IQM", withInterval(hold.value("pnl_usd", json()), "iqm")},
                   {"folds beating buy and hold", over.value("folds_beating_buy_and_hold", json(0)).dump() + " of " +
                                                      over.value("folds_compared", json(0)).dump()}});
        std::vector<SvgSeries> lines;
        std::size_t i = 0;
        for (const json& j : w.value("out_of_sample", json::array())) {
            SvgSeries s{"seed " + j.value("seed", json(0)).dump() + " (" + j.value("folds_joined", json(0)).dump() +
                            "/" + j.value("folds", json(0)).dump() + " folds)",
                        kPalette[i++ % std::size(kPalette)],
                        {},
                        {}};
            std::size_t x = 0;
            for (const json& v : j.value("equity_usd", json::array())) {
                s.x.push_back(static_cast<double>(x++));
                s.y.push_back(value(v));
            }
            if (!s.y.empty()) lines.push_back(std::move(s));
        }
        if (!lines.empty()) {
            SvgChartOptions o;
            o.title = name + ": joined out-of-sample equity (USD), folds in order";
            o.yLabel = "USD";
            chart(o.title, renderSvgLineChart(lines, o), o.width, o.height);
        }
    }

    void forecaster(const json& g, const std::string& model, const json& m)
    {
        const std::string name = modelTitle(model);
        const json test = m.value("test", json::object());
        const auto loss = [&](const char* who) {
            return test.value(who, json::object()).value("quantile_loss", json());
        };
        const json q = loss("model"), zero = loss("zero_return"), persistence = loss("persistence"),
                   climatology = loss("climatology");
        const json skill = test.value("skill", json::object());
        const json calibration = test.value("calibration", json::object());
        std::vector<std::vector<std::string>> rows;
        aggregateRows(rows, name + " test quantile loss", q);
        aggregateRows(rows, "climatology", climatology);
        aggregateRows(rows, "zero return", zero);
        aggregateRows(rows, "persistence", persistence);
        aggregateRows(rows, name + " skill vs climatology (quantile loss)",
                      skill.value("quantile_loss_vs_climatology", json()));
        aggregateRows(rows, name + " skill vs climatology (CRPS)", skill.value("crps_vs_climatology", json()));
        aggregateRows(rows, name + " coverage of the outer band", calibration.value("coverage", json()));
        table({"across the members", "n", "IQM [95 % CI]", "median [95 % CI]", "mean [95 % CI]"}, std::move(rows));

        std::vector<std::vector<std::string>> facts;
        facts.push_back(
            {"P(test quantile loss < climatology's)", probabilityText(m.value("p_beats_climatology", json()))});
        const double nominal = value(calibration.value("nominal", json()));
        if (std::isfinite(nominal))
            facts.push_back({"coverage the band should have", fixed(100.0 * nominal, 0) + " %"});
        const json dm = test.value("diebold_mariano", json::object());
        facts.push_back({"Diebold-Mariano against each member's best baseline (5 %)",
                         dm.value("better", json(0)).dump() + " better, " + dm.value("worse", json(0)).dump() +
                             " worse, " +
                             std::to_string(dm.value("tested", 0) - dm.value("better", 0) - dm.value("worse", 0)) +
                             " not told apart, of " + dm.value("tested", json(0)).dump() + " tested"});
        keyValues(std::move(facts));

        std::vector<SvgInterval> intervals;
        addIntervals(intervals, name, q, kPolicyColor);
        addIntervals(intervals, "climatology", climatology, kClimatologyColor);
        addIntervals(intervals, "zero return", zero, kFlatColor);
        addIntervals(intervals, "persistence", persistence, kBuyHoldColor);
        intervalChart(name + ": test quantile loss across the members, IQM and mean with 95 % CI",
                      "quantile loss (lower is better)", intervals);
        std::vector<SvgInterval> skills;
        addIntervals(skills, "quantile loss", skill.value("quantile_loss_vs_climatology", json()), kPolicyColor);
        addIntervals(skills, "CRPS", skill.value("crps_vs_climatology", json()), kClimatologyColor);
        intervalChart(name + ": skill against climatology (above 0: better than the train split's quantiles)",
                      "skill score", skills);
        profileChart(name + ": performance profile of test quantile loss (share of members at or below each level)",
                     "share of members",
                     {{name, memberValues(g, model, "quantile_loss")},
                      {"climatology", memberValues(g, model, "climatology_quantile_loss")},
                      {"zero return", memberValues(g, model, "zero_return_quantile_loss")},
                      {"persistence", memberValues(g, model, "persistence_quantile_loss")}},
                     {kPolicyColor, kClimatologyColor, kFlatColor, kBuyHoldColor}, /*higherIsBetter=*/false);
    }

    void trials(const json& g, const std::string& prefix)
    {
        const json list = g.value("trials", json::array());
        if (list.empty()) return;
        heading(2, "group-" + std::to_string(g.value("group_id", 0)) + "-trials", prefix + "Sweep trials, best first");
        std::vector<std::vector<std::string>> rows;
        for (const json& t : list)
            rows.push_back({t.value("rank", 0) > 0 ? std::to_string(t.value("rank", 0)) : "-",
                            t.value("member", json(0)).dump(), t.value("settings", std::string()),
                            general(value(t.value("score", json()))),
                            t.value("run_id", 0) > 0 ? std::to_string(t.value("run_id", 0)) : "not started"});
        table({"rank", "trial", "settings", list.front().value("ranked_by", std::string("score")), "run"},
              std::move(rows));
    }

    void members(const json& g, const std::string& prefix)
    {
        heading(2, "group-" + std::to_string(g.value("group_id", 0)) + "-members", prefix + "Members");
        std::vector<std::vector<std::string>> rows;
        for (const json& m : g.value("members", json::array()))
            rows.push_back({m.value("member", json(0)).dump(), m.value("seed", json(0)).dump(),
                            m.contains("fold") ? m["fold"].dump() : std::string("-"),
                            m.value("run_id", 0) > 0 ? std::to_string(m.value("run_id", 0)) : "-",
                            m.value("status", std::string())});
        table({"member", "seed", "fold", "run", "status"}, std::move(rows));
    }

    void reading()
    {
        heading(2, "reading", "How to read this report");
        paragraph("Each member is an ordinary run on the same data (a seeds group), on its own walk-forward fold (a "
                  "folds group) or with its own settings (a sweep). The IQM is the mean of the middle half of the "
                  "members' figures: less swayed by one lucky or broken member than the mean, less coarse than the "
                  "median. The intervals are 95 % percentile intervals of a stratified bootstrap over the members "
                  "(2,000 resamples, seed 0; a folds group resamples within each fold). An interval of test P&L "
                  "that lies above zero, and above buy-and-hold's, is evidence of an edge that the seeds do not "
                  "explain.");
        paragraph("The performance profile shows, for every level, the share of members whose figure is above it (for "
                  "a loss: at or below it); a curve that lies above another everywhere is better for every threshold "
                  "one could pick. The deflated Sharpe ratio is the probability that the best member's true Sharpe is "
                  "above zero once the number of trials, their spread and the skewness and kurtosis of its daily P&L "
                  "are accounted for; below 0.95 it is not significant.");
    }

    const json& m_groups;
};

} // namespace

std::vector<double> profileShares(const std::vector<double>& values, const std::vector<double>& thresholds,
                                  bool higherIsBetter)
{
    std::vector<double> shares = stats::performanceProfile(values, thresholds); // share strictly above
    if (!higherIsBetter)
        for (double& v : shares) v = 1.0 - v; // at or below (NaN stays NaN)
    return shares;
}

nlohmann::json groupReportJson(const RunStore& runs, const std::vector<std::int64_t>& groupIds,
                               const ReportProgress& progress)
{
    if (groupIds.empty()) throw std::invalid_argument("no run groups to report");
    if (std::set<std::int64_t>(groupIds.begin(), groupIds.end()).size() != groupIds.size())
        throw std::invalid_argument("a run group is named twice");
    for (std::int64_t id : groupIds)
        if (!runs.group(id)) throw std::invalid_argument("no run group " + std::to_string(id));
    checkReportProgress(progress, 0.0);
    json groups = json::array();
    for (std::size_t i = 0; i < groupIds.size(); ++i) {
        const RunGroupInfo info = *runs.group(groupIds[i]);
        const GroupSummary summary = summarizeGroup(runs, info.id);
        json g = toJson(summary);
        g["uuid"] = info.uuid;
        g["created"] = formatUtc(info.createdNs);
        g["finished"] = info.finishedNs ? formatUtc(info.finishedNs) : "";
        const json config = json::parse(info.configJson, nullptr, /*allow_exceptions=*/false);
        g["config"] = config.is_discarded() ? json::object() : config;
        json results = json::array();
        for (const GroupMemberResults& m : summary.results)
            for (const ModelResults& r : m.summary.models) results.push_back(memberFigures(m, r));
        g["member_results"] = std::move(results);
        groups.push_back(std::move(g));
        checkReportProgress(progress, static_cast<double>(i + 1) / static_cast<double>(groupIds.size()));
    }
    return {{"kind", "group_report"}, {"groups", std::move(groups)}};
}

ReportDocument buildGroupReport(const nlohmann::json& report)
{
    return Builder(report).build();
}

std::string renderGroupReportCsv(const nlohmann::json& report)
{
    std::string out = "group,kind,member,seed,fold,run,model,measure,value\n";
    char buf[64];
    for (const json& g : report.at("groups")) {
        const std::string prefix = std::to_string(g.value("group_id", 0)) + ',' + g.value("kind", std::string()) + ',';
        for (const json& m : g.value("member_results", json::array()))
            for (const auto& [key, v] : m.items()) {
                if (key == "member" || key == "seed" || key == "fold" || key == "run_id" || key == "model") continue;
                if (!v.is_number()) continue;
                out += prefix + m.value("member", json(0)).dump() + ',' + m.value("seed", json(0)).dump() + ',' +
                       (m.value("fold", -1) >= 0 ? m["fold"].dump() : std::string()) + ',' +
                       m.value("run_id", json(0)).dump() + ',';
                appendCsvField(out, m.value("model", std::string()));
                out += ',' + key + ',';
                std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
                out += buf;
                out += '\n';
            }
    }
    return out;
}

void writeGroupReport(const std::string& databasePath, const std::vector<std::int64_t>& groupIds,
                      const std::string& path, const ReportProgress& progress)
{
    const ReportFormat format = reportFormatForPath(path);
    if (format == ReportFormat::Pdf)
        throw std::invalid_argument(
            "PDF reports are written by the Qt layer (exportGroupReport in ui/report_export.h); " + path);
    if (groupIds.empty()) throw std::invalid_argument("no run groups to report");
    checkReportProgress(progress, 0.0);
    BarStore store(databasePath);
    RunStore runs(store);
    const json report = groupReportJson(runs, groupIds, reportProgressPart(progress, 0.0, 0.6));
    std::string text;
    if (format == ReportFormat::Csv) text = renderGroupReportCsv(report);
    else if (format == ReportFormat::Json) text = report.dump(2) + "\n";
    else text = renderReportHtml(buildGroupReport(report), reportProgressPart(progress, 0.6, 0.9));
    checkReportProgress(progress, 0.9);
    writeTextFile(path, text);
    checkReportProgress(progress, 1.0);
}

} // namespace foxhunt
