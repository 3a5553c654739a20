// SPDX-License-Identifier: GPL-3.0-or-later
// The group summary on hand-made stored evaluation documents with known figures: the members'
// aggregates, the probability of beating buy-and-hold, the deflated Sharpe ratio of the best
// member, the forecasters' losses; members without results and pending members.

#include "engine/report/group_report.h"
#include "engine/report/group_summary.h"
#include "engine/report/svg_chart.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tst_group_summary {

using namespace foxhunt;

class TestGroupSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void aggregatesOfKnownValues();
    void agentsAcrossMembers_data();
    void agentsAcrossMembers();
    void forecastersAcrossMembers();
    void foldsJoinTheirTestSegments();
    void intervalChartDrawsEachRow();
    void groupReportShowsEveryMember();
    void groupsAreCompared();

private:
    /// A finished member run of `group` with a dqn test document and a tft test document.
    std::int64_t member(RunStore& runs, std::int64_t group, std::int64_t seed, double sharpe, double pnl,
                        double drawdown, long long steps);
    QTemporaryDir m_dir;
    std::string m_path;
    int m_n = 0;
};

namespace {
constexpr double kBarsPerYear = 347760.0; // 252 days of 1380 one-minute bars
}

void TestGroupSummary::init()
{
    QVERIFY(m_dir.isValid());
    m_path = m_dir.filePath(QStringLiteral("group-%1.db").arg(++m_n)).toStdString();
}

std::int64_t TestGroupSummary::member(RunStore& runs, std::int64_t group, std::int64_t seed, double sharpe, double pnl,
                                      double drawdown, long long steps)
{
    const std::int64_t id = runs.createRun("seed " + std::to_string(seed),
                                           nlohmann::json{{"models", {"dqn", "tft"}}, {"seed", seed}}.dump(), {}, 0, 0,
                                           "{}");
    const nlohmann::json trading = {
        {"policy", {{"sharpe", sharpe}, {"pnl_usd", pnl}, {"max_drawdown_usd", drawdown}, {"steps", steps}}},
        {"flat", {{"sharpe", nullptr}, {"pnl_usd", 0.0}, {"max_drawdown_usd", 0.0}, {"steps", steps}}},
        {"buy_and_hold", {{"sharpe", 0.8}, {"pnl_usd", 250.0}, {"max_drawdown_usd", 900.0}, {"steps", steps}}},
        {"bars_per_year", kBarsPerYear},
        {"equity_usd", {0.0, pnl}}};
    runs.saveEvaluation(id, "dqn", "test", trading.dump());
    const double loss = 0.001 * static_cast<double>(seed);
    const nlohmann::json forecast = {
        {"model", {{"quantile_loss", loss}}},
        {"zero_return", {{"quantile_loss", 0.01}}},
        {"persistence", {{"quantile_loss", 0.02}}},
        {"climatology", {{"quantile_loss", 0.005}}},
        {"skill", {{"quantile_loss_vs_climatology", 1.0 - loss / 0.005}, {"crps_vs_climatology", 0.1}}},
        {"calibration", {{"observed", 0.7 + 0.02 * static_cast<double>(seed)}, {"nominal", 0.8}}},
        // Seed 1 forecasts better than its best baseline at 5 %, the others cannot be told apart.
        {"diebold_mariano", {{"valid", true}, {"p_value", seed == 1 ? 0.01 : 0.5}, {"mean_differential", -0.001}}}};
    runs.saveEvaluation(id, "tft", "test", forecast.dump());
    runs.setStatus(id, RunStatus::Finished);
    runs.addGroupMember(group, id, seed);
    return id;
}

void TestGroupSummary::aggregatesOfKnownValues()
{
    const MemberAggregate a = aggregateMembers({100.0, 200.0, 300.0, 1000.0});
    QCOMPARE(a.count, std::size_t(4));
    QCOMPARE(a.mean, 400.0);
    QCOMPARE(a.median, 250.0);
    QCOMPARE(a.iqm, 250.0); // the middle two of four
    for (const stats::Interval* ci : {&a.meanCi, &a.medianCi, &a.iqmCi}) {
        QVERIFY(ci->lower >= 100.0 && ci->upper <= 1000.0);
        QVERIFY(ci->lower <= ci->estimate && ci->estimate <= ci->upper);
        QVERIFY(ci->upper > ci->lower);
    }
    QCOMPARE(a.meanCi.estimate, 400.0);
    // Deterministic: the same values give the same interval.
    QCOMPARE(aggregateMembers({100.0, 200.0, 300.0, 1000.0}).meanCi.lower, a.meanCi.lower);
    const MemberAggregate none = aggregateMembers({});
    QCOMPARE(none.count, std::size_t(0));
    QVERIFY(std::isnan(none.mean) && std::isnan(none.iqmCi.lower));
}

void TestGroupSummary::agentsAcrossMembers_data()
{
    QTest::addColumn<long long>("steps");
    QTest::addColumn<double>("deflated");
    QTest::addColumn<bool>("significant");
    // Hand-computed: per-bar Sharpes s / sqrt(347760) for s = 0.5, 1, 1.5, 3; SR0 from their sample
    // variance and N = 4 = 0.00192708; normal returns (a two-point equity curve);
    // DSR = Phi((SR - SR0) sqrt(T - 1) / sqrt(1 + SR^2 / 2)).
    QTest::newRow("10k test bars") << 10'000LL << 0.6239976492 << false;
    QTest::newRow("4M test bars") << 4'000'000LL << 0.9999999999 << true;
}

void TestGroupSummary::agentsAcrossMembers()
{
    QFETCH(long long, steps);
    QFETCH(double, deflated);
    QFETCH(bool, significant);
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, "{}", {1, 2, 3, 4, 5});
    member(runs, g, 1, 0.5, 100.0, 400.0, steps);
    member(runs, g, 2, 1.0, 200.0, 300.0, steps);
    const std::int64_t best = member(runs, g, 3, 3.0, 1000.0, 100.0, steps);
    member(runs, g, 4, 1.5, 300.0, 200.0, steps);
    // Seed 5 never started.

    const GroupSummary s = summarizeGroup(runs, g);
    QCOMPARE(s.groupId, g);
    QCOMPARE(s.members.size(), std::size_t(5));
    QCOMPARE(s.members[4].status, std::string("pending"));
    QCOMPARE(s.members[2].runId, best);
    QCOMPARE(s.models.size(), std::size_t(2));
    const ModelGroupSummary& dqn = s.models[0];
    QCOMPARE(dqn.model, std::string("dqn"));
    QVERIFY(dqn.agent);
    QCOMPARE(dqn.policy.pnlUsd.count, std::size_t(4));
    QCOMPARE(dqn.policy.pnlUsd.mean, 400.0);
    QCOMPARE(dqn.policy.pnlUsd.median, 250.0);
    QCOMPARE(dqn.policy.pnlUsd.iqm, 250.0);
    QCOMPARE(dqn.policy.sharpe.mean, 1.5);
    QCOMPARE(dqn.policy.maxDrawdownUsd.median, 250.0);
    QCOMPARE(dqn.buyAndHold.pnlUsd.mean, 250.0);
    QCOMPARE(dqn.buyAndHold.pnlUsd.meanCi.lower, 250.0); // the same bars for every member
    QCOMPARE(dqn.buyAndHold.sharpe.median, 0.8);
    QCOMPARE(dqn.flat.pnlUsd.mean, 0.0);
    QCOMPARE(dqn.flat.sharpe.count, std::size_t(0)); // null Sharpe: no member has one
    // Two of four members beat buy-and-hold's 250 USD.
    QVERIFY(dqn.hasBeatsBuyHold);
    QCOMPARE(dqn.beatsBuyHold.estimate, 0.5);
    QVERIFY(dqn.beatsBuyHold.lower <= 0.5 && dqn.beatsBuyHold.upper >= 0.5);

    QVERIFY(dqn.hasBest);
    QCOMPARE(dqn.best.member, std::int64_t(3));
    QCOMPARE(dqn.best.runId, best);
    QCOMPARE(dqn.best.trials, std::size_t(4));
    QCOMPARE(dqn.best.input.observations, static_cast<std::size_t>(steps));
    QCOMPARE(dqn.best.input.kurtosis, 3.0);
    QVERIFY(std::abs(dqn.best.verdict.benchmark - 0.0019270812385679258) < 1e-12);
    QVERIFY2(std::abs(dqn.best.verdict.probability - deflated) < 1e-8,
             std::to_string(dqn.best.verdict.probability).c_str());
    QCOMPARE(dqn.best.verdict.significant, significant);

    const nlohmann::json j = toJson(s);
    QCOMPARE(j["models"]["dqn"]["best_member"]["verdict"].get<std::string>(),
             std::string(significant ? "significant" : "not significant"));
    QCOMPARE(j["models"]["dqn"]["test"]["policy"]["pnl_usd"]["iqm"].get<double>(), 250.0);
    QVERIFY(j["models"]["dqn"]["test"]["policy"]["pnl_usd"]["ci95"]["iqm"].size() == 2);
    QVERIFY(j["models"]["dqn"]["test"]["flat"]["sharpe"]["mean"].is_null());
    QCOMPARE(j["members"].size(), std::size_t(5));
}

void TestGroupSummary::forecastersAcrossMembers()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, "{}", {1, 2, 3});
    for (std::int64_t seed : {1, 2, 3}) member(runs, g, seed, 1.0, 100.0, 50.0, 1000);
    const GroupSummary s = summarizeGroup(runs, g);
    const ModelGroupSummary& tft = s.models[1];
    QCOMPARE(tft.model, std::string("tft"));
    QVERIFY(!tft.agent && !tft.hasBest);
    QCOMPARE(tft.quantileLoss.count, std::size_t(3));
    QVERIFY(std::abs(tft.quantileLoss.mean - 0.002) < 1e-15);
    QVERIFY(std::abs(tft.quantileLoss.median - 0.002) < 1e-15);
    QCOMPARE(tft.zeroReturnLoss.mean, 0.01);
    QCOMPARE(tft.persistenceLoss.iqm, 0.02);
    QCOMPARE(tft.climatologyLoss.mean, 0.005);
    QCOMPARE(tft.skillQuantileLoss.count, std::size_t(3));
    QVERIFY(std::abs(tft.skillQuantileLoss.median - 0.6) < 1e-12); // 1 - 0.002 / 0.005
    QVERIFY(std::abs(tft.coverageObserved.mean - 0.74) < 1e-12);
    QCOMPARE(tft.coverageNominal, 0.8);
    QVERIFY(tft.hasBeatsClimatology);
    QCOMPARE(tft.beatsClimatology.estimate, 1.0); // every member's loss is below climatology's
    QCOMPARE(tft.dmTested, std::size_t(3));
    QCOMPARE(tft.dmBetter, std::size_t(1));
    QCOMPARE(tft.dmWorse, std::size_t(0));
    const nlohmann::json j = toJson(s).at("models").at("tft");
    QCOMPARE(j.at("test").at("diebold_mariano").at("better").get<int>(), 1);
    QCOMPARE(j.at("test").at("calibration").at("nominal").get<double>(), 0.8);
    QCOMPARE(j.at("p_beats_climatology").at("estimate").get<double>(), 1.0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, summarizeGroup(runs, g + 1));
}

void TestGroupSummary::foldsJoinTheirTestSegments()
{
    // Two seeds x two folds; seed 2's second fold never ran. Each fold's test curve starts at 0:
    // joined, seed 1's second segment starts where its first ended.
    BarStore bars(m_path);
    RunStore runs(bars);
    FoldPlan plan;
    plan.folds = 2;
    plan.window = FoldWindow::Expanding;
    plan.validationShare = 0.2;
    const std::int64_t d0 = 19'730;
    for (std::int64_t seed : {1, 2})
        for (std::size_t k = 0; k < 2; ++k) {
            FoldDays f;
            f.fold = k;
            f.trainFrom = d0;
            f.trainTo = d0 + 3 + 5 * std::int64_t(k);
            f.validationFrom = f.validationTo = f.trainTo + 1;
            f.testFrom = f.validationTo + 1;
            f.testTo = f.testFrom + 4;
            f.trainDays = 4 + 5 * k;
            f.validationDays = 1;
            f.testDays = 5;
            plan.members.push_back({seed, f, {f.trainFrom, f.testTo, 0.5, 0.1}});
        }
    const std::int64_t g = runs.createGroup(GroupKind::Folds, nlohmann::json{{"walk_forward", toJson(plan)}}.dump(),
                                            {0, 1, 2, 3});
    const auto fold = [&](std::int64_t member, double pnl, double sharpe, const std::vector<double>& curve) {
        const std::int64_t id = runs.createRun("m" + std::to_string(member), R"({"models": ["dqn"]})", {}, 0, 0, "{}");
        const nlohmann::json trading = {
            {"policy", {{"sharpe", sharpe}, {"pnl_usd", pnl}, {"max_drawdown_usd", 10.0}, {"steps", 100}}},
            {"flat", {{"sharpe", nullptr}, {"pnl_usd", 0.0}, {"max_drawdown_usd", 0.0}, {"steps", 100}}},
            {"buy_and_hold", {{"sharpe", 0.8}, {"pnl_usd", 60.0}, {"max_drawdown_usd", 90.0}, {"steps", 100}}},
            {"bars_per_year", kBarsPerYear},
            {"equity_usd", curve}};
        runs.saveEvaluation(id, "dqn", "test", trading.dump());
        runs.setStatus(id, RunStatus::Finished);
        runs.addGroupMember(g, id, member);
        return id;
    };
    const std::int64_t first = fold(0, 100.0, 2.0, {0.0, 50.0, 100.0});
    fold(1, -30.0, -1.0, {0.0, -30.0});
    fold(2, 20.0, 0.5, {0.0, 20.0});

    const GroupSummary s = summarizeGroup(runs, g);
    QCOMPARE(s.kind, std::string("folds"));
    QVERIFY(s.folds.has_value());
    QCOMPARE(s.members.size(), std::size_t(4));
    QCOMPARE(s.members[1].seed, std::int64_t(1));
    QCOMPARE(s.members[1].fold, std::int64_t(1));
    QCOMPARE(s.members[3].status, std::string("pending"));
    const ModelGroupSummary& dqn = s.models.at(0);
    QVERIFY(dqn.hasWalkForward);
    const WalkForwardSummary& w = dqn.walkForward;
    QCOMPARE(w.rows.size(), std::size_t(4));
    QCOMPARE(w.rows[0].runId, first);
    QCOMPARE(w.rows[0].pnlUsd, 100.0);
    QCOMPARE(w.rows[0].testFrom, plan.members[0].days.testFrom);
    QCOMPARE(w.rows[3].runId, std::int64_t(0));
    QVERIFY(std::isnan(w.rows[3].pnlUsd));
    QCOMPARE(w.joined.size(), std::size_t(2));
    QCOMPARE(w.joined[0].seed, std::int64_t(1));
    QVERIFY(w.joined[0].complete);
    QCOMPARE(w.joined[0].equityUsd, (std::vector<double>{0.0, 50.0, 100.0, 100.0, 70.0}));
    QCOMPARE(w.joined[0].foldStarts, (std::vector<std::size_t>{0, 3}));
    QCOMPARE(w.joined[0].pnlUsd, 70.0);
    QCOMPARE(w.joined[0].buyHoldPnlUsd, 120.0);
    QVERIFY(!w.joined[1].complete);
    QCOMPARE(w.joined[1].foldsJoined, std::size_t(1));
    QCOMPARE(w.joined[1].pnlUsd, 20.0);
    // Over folds: fold 0 has two seeds, fold 1 one, so the three values are one stratum.
    QCOMPARE(w.policy.pnlUsd.count, std::size_t(3));
    QCOMPARE(w.policy.pnlUsd.mean, 30.0);
    QCOMPARE(w.foldsCompared, std::size_t(3));
    QCOMPARE(w.foldsBeatingBuyHold, std::size_t(1));
    const nlohmann::json j = toJson(s);
    QCOMPARE(j.at("walk_forward").at("members").size(), std::size_t(4));
    QCOMPARE(j.at("models").at("dqn").at("walk_forward").at("out_of_sample").at(0).at("equity_usd").size(),
             std::size_t(5));
    QCOMPARE(j["members"][2].at("fold").get<int>(), 0);
}

namespace {

std::size_t occurrences(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

const ReportBlock* headingWithId(const ReportDocument& d, const std::string& id)
{
    for (const ReportBlock& b : d.blocks)
        if (b.kind == ReportBlockKind::Heading && b.id == id) return &b;
    return nullptr;
}

/// The blocks from the heading `id` up to the next heading of level 2 or above.
std::vector<ReportBlock> section(const ReportDocument& d, const std::string& id)
{
    std::vector<ReportBlock> out;
    bool in = false;
    for (const ReportBlock& b : d.blocks) {
        if (b.kind == ReportBlockKind::Heading && b.level <= 2) in = b.id == id;
        if (in) out.push_back(b);
    }
    return out;
}

} // namespace

void TestGroupSummary::intervalChartDrawsEachRow()
{
    SvgChartOptions o;
    o.title = "Test P&L";
    const std::string svg = renderSvgIntervalChart({{"dqn IQM", 100.0, -50.0, 250.0, "#1f77b4"},
                                                    {"buy and hold IQM", 20.0, 10.0, 30.0, "#d62728"},
                                                    {"flat IQM", std::nan(""), std::nan(""), std::nan(""), "#777"}},
                                                   o);
    QCOMPARE(occurrences(svg, "class=\"interval\""), std::size_t(2));
    QCOMPARE(occurrences(svg, "class=\"estimate\""), std::size_t(2));
    QCOMPARE(occurrences(svg, "no data"), std::size_t(1));        // the flat row
    QCOMPARE(occurrences(svg, "class=\"zero\""), std::size_t(1)); // -50 .. 250 spans zero
    QVERIFY(svg.find("100 [-50, 250]") != std::string::npos);
    // All above zero: no zero line.
    const std::string positive = renderSvgIntervalChart({{"a", 5.0, 4.0, 6.0, "#000"}}, o);
    QCOMPARE(occurrences(positive, "class=\"zero\""), std::size_t(0));
    QVERIFY(svgIntervalChartHeight(3, o) > svgIntervalChartHeight(1, o));
}

void TestGroupSummary::groupReportShowsEveryMember()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, R"({"models": ["dqn", "tft"], "steps": 500})",
                                            {1, 2, 3, 4, 5});
    const double pnl[] = {300.0, -100.0, 500.0, 700.0};
    for (std::int64_t seed : {1, 2, 3, 4})
        member(runs, g, seed, 0.5 * static_cast<double>(seed), pnl[seed - 1], 50.0, 10'000);
    // Member 5 never started.

    const nlohmann::json report = groupReportJson(runs, {g});
    QCOMPARE(report.at("groups").size(), std::size_t(1));
    const nlohmann::json& group = report["groups"][0];
    QCOMPARE(group.at("member_results").size(), std::size_t(8)); // 4 runs x (dqn, tft)
    QCOMPARE(group.at("config").at("steps").get<int>(), 500);
    QCOMPARE(group["member_results"][2].at("test_pnl_usd").get<double>(), -100.0);
    QCOMPARE(group["member_results"][2].at("seed").get<int>(), 2);

    const ReportDocument d = buildGroupReport(report);
    const std::string id = std::to_string(g);
    for (const std::string& s : {std::string("header"), "group-" + id + "-dqn", "group-" + id + "-tft",
                                 "group-" + id + "-members", std::string("reading")})
        QVERIFY2(headingWithId(d, s), s.c_str());
    QVERIFY(!headingWithId(d, "comparison")); // one group: nothing to compare
    // The unfinished member is called out.
    QVERIFY(std::any_of(d.blocks.begin(), d.blocks.end(), [](const ReportBlock& b) {
        return b.kind == ReportBlockKind::Warning && b.text.find("1 member(s) did not finish") != std::string::npos;
    }));

    // DQN: the aggregates of the four members beside the baselines, two interval plots and the profile.
    const std::vector<ReportBlock> dqn = section(d, "group-" + id + "-dqn");
    const auto charts = std::count_if(dqn.begin(), dqn.end(),
                                      [](const ReportBlock& b) { return b.kind == ReportBlockKind::Chart; });
    QCOMPARE(charts, 3);
    const auto table = std::find_if(dqn.begin(), dqn.end(),
                                    [](const ReportBlock& b) { return b.kind == ReportBlockKind::Table; });
    QVERIFY(table != dqn.end());
    QCOMPARE(table->rows.size(), std::size_t(9)); // P&L, Sharpe, drawdown x (dqn, buy and hold, flat)
    QCOMPARE(table->rows[0][1], std::string("4"));
    // IQM of {-100, 300, 500, 700}: the middle two, 400; the mean 350.
    QVERIFY2(table->rows[0][2].rfind("400 [", 0) == 0, table->rows[0][2].c_str());
    QVERIFY2(table->rows[0][4].rfind("350 [", 0) == 0, table->rows[0][4].c_str());
    QCOMPARE(table->rows[1][2].substr(0, 3), std::string("250")); // buy and hold: 250 for every member
    // The profile: the share of members above (for a loss: at or below) each level.
    QCOMPARE(profileShares({300.0, -100.0, 500.0, 700.0}, {-200.0, -100.0, 0.0, 300.0, 600.0, 800.0}, true),
             (std::vector<double>{1.0, 0.75, 0.75, 0.5, 0.25, 0.0}));
    QCOMPARE(profileShares({300.0, -100.0, 500.0, 700.0}, {-200.0, -100.0, 0.0, 300.0, 600.0, 800.0}, false),
             (std::vector<double>{0.0, 0.25, 0.25, 0.5, 0.75, 1.0}));
    const auto profile = std::find_if(dqn.begin(), dqn.end(), [](const ReportBlock& b) {
        return b.kind == ReportBlockKind::Chart && b.text.find("performance profile") != std::string::npos;
    });
    QVERIFY(profile != dqn.end());
    const std::vector<ReportBlock> tft = section(d, "group-" + id + "-tft");
    // The TFT: its losses beside the three baselines, its skill against climatology and its profile.
    QCOMPARE(
        std::count_if(tft.begin(), tft.end(), [](const ReportBlock& b) { return b.kind == ReportBlockKind::Chart; }),
        3);

    // The members table lists the pending member too.
    const std::vector<ReportBlock> members = section(d, "group-" + id + "-members");
    const auto list = std::find_if(members.begin(), members.end(),
                                   [](const ReportBlock& b) { return b.kind == ReportBlockKind::Table; });
    QVERIFY(list != members.end());
    QCOMPARE(list->rows.size(), std::size_t(5));
    QCOMPARE(list->rows[4][4], std::string("pending"));

    // CSV: one line per member, model and figure the member has.
    const std::string csv = renderGroupReportCsv(report);
    QVERIFY(csv.rfind("group,kind,member,seed,fold,run,model,measure,value\n", 0) == 0);
    QVERIFY(csv.find(id + ",seeds,2,2,,") != std::string::npos);
    QVERIFY(csv.find(",dqn,test_pnl_usd,-100\n") != std::string::npos);
    QCOMPARE(occurrences(csv, ",test_pnl_usd,"), std::size_t(4));

    // HTML through the same writer as run reports; unknown and repeated groups are refused.
    const std::string html = m_dir.filePath(QStringLiteral("group.html")).toStdString();
    writeGroupReport(m_path, {g}, html);
    std::ifstream in(html);
    std::stringstream text;
    text << in.rdbuf();
    QVERIFY(text.str().find("<section id=\"group-" + id + "-dqn\">") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupReportJson(runs, {g + 7}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupReportJson(runs, {g, g}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupReportJson(runs, {}));
}

void TestGroupSummary::groupsAreCompared()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t a = runs.createGroup(GroupKind::Seeds, "{}", {1, 2, 3});
    for (std::int64_t seed : {1, 2, 3}) member(runs, a, seed, 1.0, 100.0 * static_cast<double>(seed), 50.0, 1000);
    const std::int64_t b = runs.createGroup(GroupKind::Seeds, "{}", {1, 2, 3});
    for (std::int64_t seed : {1, 2, 3}) member(runs, b, seed, -1.0, -100.0 * static_cast<double>(seed), 50.0, 1000);

    const ReportDocument d = buildGroupReport(groupReportJson(runs, {a, b}));
    QVERIFY(d.title.find("compared") != std::string::npos);
    const std::vector<ReportBlock> cmp = section(d, "comparison");
    QVERIFY(!cmp.empty());
    std::vector<const ReportBlock*> tables;
    for (const ReportBlock& x : cmp)
        if (x.kind == ReportBlockKind::Table) tables.push_back(&x);
    QCOMPARE(tables.size(), std::size_t(2)); // dqn and tft
    QCOMPARE(tables[0]->rows.size(), std::size_t(2));
    QVERIFY(tables[0]->rows[0][0].find("group " + std::to_string(a)) == 0);
    QVERIFY2(tables[0]->rows[0][2].rfind("200 [", 0) == 0, tables[0]->rows[0][2].c_str());
    QVERIFY2(tables[0]->rows[1][2].rfind("-200 [", 0) == 0, tables[0]->rows[1][2].c_str());
    // Each group keeps its own sections.
    QVERIFY(headingWithId(d, "group-" + std::to_string(a) + "-dqn"));
    QVERIFY(headingWithId(d, "group-" + std::to_string(b) + "-dqn"));
}

} // namespace tst_group_summary

FOXHUNT_TEST_APPLESS_MAIN(tst_group_summary::TestGroupSummary)
#include "tst_group_summary.moc"
