// SPDX-License-Identifier: GPL-3.0-or-later
// A run group answers "is there an edge?" the way the README says: five DQN seeds trained on the
// planted-edge series give a test P&L whose 95 % interval lies above 0, and on a driftless random
// walk (no costs, so every policy's expected P&L is 0) the interval includes 0 and the best seed's
// deflated Sharpe is not significant. The members are stored as a real group in a real store and
// summarised by summarizeGroup, as `foxhunt-cli train --seeds` does.
#include "engine/agents/agent_runner.h"
#include "engine/env/evaluation.h"
#include "engine/report/group_summary.h"
#include "engine/session/session_json.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "planted_edge.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <numeric>
#include <vector>

namespace tst_group_edge {

using namespace foxhunt;
using namespace foxhunt::testing;

namespace {

std::vector<int> range(int begin, int end)
{
    std::vector<int> v(static_cast<std::size_t>(end - begin));
    std::iota(v.begin(), v.end(), begin);
    return v;
}

// Trains seeds 1..5 on `data` (days 0-23), evaluates each on days 24-31 and stores them as one
// seeds group; returns its summary for the DQN.
ModelGroupSummary trainGroup(const QString& dbPath, const PlantedEdge& data, const TradingEnvOptions& env)
{
    BarStore bars(dbPath.toStdString());
    RunStore runs(bars);
    const std::vector<std::int64_t> seeds{1, 2, 3, 4, 5};
    const std::string config = R"({"models":["dqn"]})";
    const std::int64_t group = runs.createGroup(GroupKind::Seeds, config, seeds);
    for (std::int64_t seed : seeds) {
        TradingEnv e(data.bars, data.features, kFeatures, data.days, env);
        const DqnOptions o = plantedEdgeDqnOptions(static_cast<std::uint64_t>(seed));
        AgentRunner runner(e, range(0, 24), o);
        runner.train(o.totalTimesteps);
        const EvaluationReport test = runner.evaluate(range(24, 32));
        const std::int64_t run = runs.createRun("seed " + std::to_string(seed), config, {}, 0, 0, "{}");
        runs.saveEvaluation(run, "dqn", "test", toJson(test).dump());
        runs.setStatus(run, RunStatus::Finished);
        runs.addGroupMember(group, run, seed);
    }
    runs.setGroupStatus(group, RunStatus::Finished);
    const GroupSummary summary = summarizeGroup(runs, group);
    if (summary.models.size() != 1) throw std::runtime_error("expected one model in the group summary");
    return summary.models.front();
}

} // namespace

class TestGroupEdge : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void plantedEdgeIsFound()
    {
        const ModelGroupSummary dqn = trainGroup(m_dir.filePath(QStringLiteral("planted.db")),
                                                 makePlantedEdge(32, 2024), {});
        const MemberAggregate& pnl = dqn.policy.pnlUsd;
        std::printf(
            "planted edge: test P&L mean %.1f [%.1f, %.1f], IQM %.1f [%.1f, %.1f] over %zu seeds; best DSR %.3f\n",
            pnl.mean, pnl.meanCi.lower, pnl.meanCi.upper, pnl.iqm, pnl.iqmCi.lower, pnl.iqmCi.upper, pnl.count,
            dqn.best.verdict.probability);
        QCOMPARE(pnl.count, std::size_t{5});
        QVERIFY2(pnl.meanCi.lower > 0.0, "the 95 % interval of the mean test P&L excludes 0");
        QVERIFY2(pnl.iqmCi.lower > 0.0, "the 95 % interval of the IQM test P&L excludes 0");
        QVERIFY(dqn.hasBeatsBuyHold && dqn.beatsBuyHold.estimate > 0.5);
    }

    void randomWalkHasNone()
    {
        TradingEnvOptions free;
        free.commissionPerContract = 0.0;
        free.slippageTicks = 0.0;
        const ModelGroupSummary dqn = trainGroup(m_dir.filePath(QStringLiteral("walk.db")),
                                                 makePlantedEdge(32, 2024, /*withEdge=*/false), free);
        const MemberAggregate& pnl = dqn.policy.pnlUsd;
        std::printf("random walk: test P&L mean %.1f [%.1f, %.1f] over %zu seeds; best DSR %.3f (%s)\n", pnl.mean,
                    pnl.meanCi.lower, pnl.meanCi.upper, pnl.count, dqn.best.verdict.probability,
                    dqn.best.verdict.significant ? "significant" : "not significant");
        QCOMPARE(pnl.count, std::size_t{5});
        QVERIFY2(pnl.meanCi.lower <= 0.0 && pnl.meanCi.upper >= 0.0,
                 "the 95 % interval of the mean test P&L includes 0");
        QVERIFY(dqn.hasBest);
        QVERIFY2(!dqn.best.verdict.significant, "the best seed's deflated Sharpe is not significant");
    }

private:
    QTemporaryDir m_dir;
};

} // namespace tst_group_edge

FOXHUNT_TEST_GUILESS_MAIN(tst_group_edge::TestGroupEdge)
#include "tst_group_edge.moc"
