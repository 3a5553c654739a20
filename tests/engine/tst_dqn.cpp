// SPDX-License-Identifier: GPL-3.0-or-later
// DQN: target-network updates, determinism, exact checkpoint resume, and
// learning a planted edge well enough to beat the flat baseline out of sample.
#include "engine/agents/agent_runner.h"
#include "engine/agents/dqn.h"
#include "models/runtime.h"
#include "file_size_limit.h"
#include "planted_edge.h"
#include "tests/support/test_bundle.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <cmath>
#include <cstdio>

namespace tst_dqn {

using namespace foxhunt;
using namespace foxhunt::testing;

namespace {

DqnOptions smallOptions()
{
    DqnOptions o;
    o.hidden = {32, 32};
    o.learningRate = 1e-3;
    o.bufferSize = 5000;
    o.learningStarts = 100;
    o.batchSize = 32;
    o.trainFreq = 1;
    o.targetUpdateInterval = 50;
    o.totalTimesteps = 1000;
    o.seed = 11;
    return o;
}

std::vector<int> range(int begin, int end)
{
    std::vector<int> v;
    for (int i = begin; i < end; ++i) v.push_back(i);
    return v;
}

} // namespace

class TestDqn : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void targetUpdate_data();
    void targetUpdate();
    void epsilonSchedule();
    void deterministicUnderSeed_data();
    void deterministicUnderSeed();
    void checkpointResumesExactly_data();
    void checkpointResumesExactly();
    void checkpointOnAFullDiskFailsCleanly();
    void learnsPlantedEdge();
    void handWrittenMatchesAutograd_data();
    void handWrittenMatchesAutograd();
};

void TestDqn::targetUpdate_data()
{
    QTest::addColumn<double>("tau");
    QTest::newRow("hard") << 1.0;
    QTest::newRow("polyak 0.25") << 0.25;
}

void TestDqn::targetUpdate()
{
    QFETCH(double, tau);
    DqnOptions o = smallOptions();
    o.tau = tau;
    o.targetUpdateInterval = 1'000'000;
    Dqn dqn(3, 3, o);
    QCOMPARE(dqn.onlineParameters(), dqn.targetParameters());
    for (int i = 0; i < 64; ++i) {
        const std::array<float, 3> obs{float(i % 5), 1.0f, -1.0f};
        dqn.observe(obs, i % 3, (i % 3) - 1.0, obs, i % 7 == 0, false);
    }
    for (int i = 0; i < 5; ++i) dqn.update();
    const std::vector<float> online = dqn.onlineParameters();
    const std::vector<float> before = dqn.targetParameters();
    QVERIFY(online != before);
    dqn.updateTarget();
    const std::vector<float> after = dqn.targetParameters();
    for (std::size_t i = 0; i < online.size(); ++i) {
        const double expected = tau >= 1.0 ? online[i] : (1.0 - tau) * before[i] + tau * online[i];
        QVERIFY(std::abs(after[i] - expected) < 1e-6);
    }
    QCOMPARE(dqn.onlineParameters(), online);
}

void TestDqn::epsilonSchedule()
{
    DqnOptions o = smallOptions();
    o.totalTimesteps = 1000;
    o.explorationFraction = 0.1;
    o.learningStarts = 1'000'000;
    Dqn dqn(1, 2, o);
    QCOMPARE(dqn.epsilon(), 1.0);
    const std::array<float, 1> obs{0.0f};
    for (int i = 0; i < 50; ++i) dqn.observe(obs, 0, 0.0, obs, false, false);
    QVERIFY(std::abs(dqn.epsilon() - (1.0 + (0.05 - 1.0) * 0.5)) < 1e-12);
    for (int i = 0; i < 100; ++i) dqn.observe(obs, 0, 0.0, obs, false, false);
    QCOMPARE(dqn.epsilon(), 0.05);
    QCOMPARE(dqn.updates(), 0LL);
}

void TestDqn::deterministicUnderSeed_data()
{
    QTest::addColumn<bool>("prioritized");
    QTest::addColumn<int>("nSteps");
    QTest::addColumn<bool>("dueling");
    QTest::newRow("uniform") << false << 1 << false;
    QTest::newRow("per, 3-step, dueling") << true << 3 << true;
}

void TestDqn::deterministicUnderSeed()
{
    QFETCH(bool, prioritized);
    QFETCH(int, nSteps);
    QFETCH(bool, dueling);
    const PlantedEdge data = makePlantedEdge(4, 5);
    DqnOptions o = smallOptions();
    o.prioritized = prioritized;
    o.nSteps = nSteps;
    o.dueling = dueling;
    std::vector<double> losses[2];
    std::vector<float> params[2];
    for (int run = 0; run < 2; ++run) {
        TradingEnv env(data.bars, data.features, kFeatures, data.days);
        AgentRunner runner(env, {}, o);
        for (int k = 0; k < 10; ++k) {
            const TrainStats s = runner.train(40);
            QVERIFY(s.lastUpdate.has_value() || s.envSteps <= o.learningStarts);
            if (s.lastUpdate) {
                losses[run].push_back(s.lastUpdate->loss);
                losses[run].push_back(s.lastUpdate->gradNorm);
                QVERIFY(std::isfinite(s.lastUpdate->loss));
                QVERIFY(s.lastUpdate->gradNorm > 0.0);
            }
        }
        params[run] = runner.dqn()->onlineParameters();
    }
    QVERIFY(!losses[0].empty());
    QCOMPARE(losses[0], losses[1]);
    QCOMPARE(params[0], params[1]);
}

void TestDqn::checkpointResumesExactly_data()
{
    QTest::addColumn<bool>("prioritized");
    QTest::addColumn<int>("nSteps");
    QTest::newRow("uniform") << false << 1;
    QTest::newRow("per, 3-step") << true << 3;
}

void TestDqn::checkpointResumesExactly()
{
    QFETCH(bool, prioritized);
    QFETCH(int, nSteps);
    const PlantedEdge data = makePlantedEdge(4, 6);
    DqnOptions o = smallOptions();
    o.prioritized = prioritized;
    o.nSteps = nSteps;
    o.tau = 0.5;
    QTemporaryDir dir;
    const std::string path = dir.filePath("dqn.pt").toStdString();

    TradingEnv envA(data.bars, data.features, kFeatures, data.days);
    AgentRunner a(envA, {}, o);
    a.train(217); // mid-episode, with pending n-step transitions
    a.save(path);
    const std::vector<float> savedOnline = a.dqn()->onlineParameters();
    const std::vector<float> savedTarget = a.dqn()->targetParameters();
    const TrainStats restA = a.train(150);

    TradingEnv envB(data.bars, data.features, kFeatures, data.days);
    AgentRunner b(envB, {}, o);
    b.load(path);
    QCOMPARE(b.dqn()->envSteps(), 217LL);
    QCOMPARE(b.dqn()->onlineParameters(), savedOnline);
    QCOMPARE(b.dqn()->targetParameters(), savedTarget);
    const TrainStats restB = b.train(150);

    QVERIFY(restA.lastUpdate.has_value() && restB.lastUpdate.has_value());
    QCOMPARE(restB.lastUpdate->loss, restA.lastUpdate->loss);
    QCOMPARE(restB.lastUpdate->figure("td_error"), restA.lastUpdate->figure("td_error"));
    QCOMPARE(b.dqn()->onlineParameters(), a.dqn()->onlineParameters());
    QCOMPARE(b.dqn()->targetParameters(), a.dqn()->targetParameters());
    QCOMPARE(envB.state().equityTicks, envA.state().equityTicks);
}

void TestDqn::checkpointOnAFullDiskFailsCleanly()
{
    // LibTorch's file writer ends the archive in a destructor, where a full disk
    // terminated the process. Now it is an error, and no partial file is left.
    const PlantedEdge data = makePlantedEdge(4, 6);
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner agent(env, {}, smallOptions());
    agent.train(150);
    QTemporaryDir dir;
    const std::string path = dir.filePath("dqn.pt").toStdString();
    {
        FileSizeLimit full(4096);
        QVERIFY(full.active());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, agent.save(path));
    }
    QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
    agent.save(path); // with room again, the same checkpoint writes
    QVERIFY(QFileInfo(QString::fromStdString(path)).size() > 4096);
}

void TestDqn::learnsPlantedEdge()
{
    const PlantedEdge data = makePlantedEdge(32, 2024);
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    const DqnOptions o = plantedEdgeDqnOptions(3);
    AgentRunner runner(env, range(0, 24), o);
    runner.train(o.totalTimesteps);
    const EvaluationReport report = runner.evaluate(range(24, 32));
    const double perDay = report.policy.pnlTicks / report.episodes;
    std::printf("DQN held-out: %.1f ticks/day (flat %.1f, buy-and-hold %.1f), sharpe %.2f, trades %d\n", perDay,
                report.flat.pnlTicks / report.episodes, report.buyAndHold.pnlTicks / report.episodes,
                report.policy.sharpe, report.policy.trades);
    QCOMPARE(report.flat.pnlTicks, 0.0);
    // The planted edge is worth about 35 ticks a day net of costs; demand a clear share of it.
    QVERIFY2(perDay > 12.0, qPrintable(QString("DQN made %1 ticks/day on held-out days").arg(perDay)));
    QVERIFY(report.policy.pnlTicks > report.buyAndHold.pnlTicks);
}

void TestDqn::handWrittenMatchesAutograd_data()
{
    QTest::addColumn<bool>("dueling");
    QTest::addColumn<bool>("prioritized");
    QTest::addColumn<bool>("doubleQ");
    QTest::addColumn<double>("maxGradNorm");
    QTest::newRow("plain") << false << false << true << 10.0;
    QTest::newRow("dueling") << true << false << true << 10.0;
    QTest::newRow("prioritized, dueling") << true << true << true << 10.0;
    QTest::newRow("max target, clipped") << false << false << false << 0.01;
}

// One update with the hand-written backward against one through autograd, from the same state
// and the same sampled batch: the same loss, statistics and parameters after the Adam step.
void TestDqn::handWrittenMatchesAutograd()
{
    QFETCH(bool, dueling);
    QFETCH(bool, prioritized);
    QFETCH(bool, doubleQ);
    QFETCH(double, maxGradNorm);
    DqnOptions o = smallOptions();
    o.learningStarts = 1'000'000; // fill only
    o.dueling = dueling;
    o.prioritized = prioritized;
    o.doubleQ = doubleQ;
    o.maxGradNorm = maxGradNorm;
    o.huberDelta = 0.5; // both Huber branches occur
    DqnOptions autogradOptions = o;
    autogradOptions.gradients = DqnGradients::Autograd;
    Dqn fast(3, 3, o);
    Dqn reference(3, 3, autogradOptions);
    for (Dqn* dqn : {&fast, &reference}) {
        for (int i = 0; i < 200; ++i) {
            const std::array<float, 3> obs{float(i % 5) * 0.3f, float(i % 7) - 3.0f, -1.0f};
            const std::array<float, 3> next{float((i + 1) % 5) * 0.3f, float(i % 3), 0.5f};
            dqn->observe(obs, i % 3, (i % 4) - 1.5, next, i % 11 == 0, false);
        }
        dqn->updateTarget();
    }
    for (int step = 0; step < 5; ++step) {
        const DqnUpdateStats a = fast.update();
        const DqnUpdateStats b = reference.update();
        QVERIFY(b.loss > 0.0);
        QVERIFY2(std::abs(a.loss - b.loss) <= 1e-6, qPrintable(QString("%1 vs %2").arg(a.loss).arg(b.loss)));
        QVERIFY(std::abs(a.gradNorm - b.gradNorm) <= 1e-6 * std::max(1.0, b.gradNorm));
        QVERIFY(std::abs(a.qMean - b.qMean) <= 1e-6);
        QVERIFY(std::abs(a.tdErrorMean - b.tdErrorMean) <= 1e-6);
        const std::vector<float> pa = fast.onlineParameters();
        const std::vector<float> pb = reference.onlineParameters();
        QCOMPARE(pa.size(), pb.size());
        double diff = 0.0;
        for (std::size_t i = 0; i < pa.size(); ++i) diff = std::max(diff, static_cast<double>(std::abs(pa[i] - pb[i])));
        QVERIFY2(diff <= 1e-6, qPrintable(QString("step %1: max |diff| %2").arg(step).arg(diff)));
    }
    QVERIFY(fast.onlineParameters() != fast.targetParameters()); // the steps moved the weights
}

} // namespace tst_dqn

FOXHUNT_TEST_APPLESS_MAIN(tst_dqn::TestDqn)
#include "tst_dqn.moc"
