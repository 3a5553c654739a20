// SPDX-License-Identifier: GPL-3.0-or-later
// PPO: GAE against hand-computed values, KL early stop, determinism, exact
// checkpoint resume, and learning a planted edge out of sample.
#include "engine/agents/agent_runner.h"
#include "engine/agents/ppo.h"
#include "engine/agents/rollout_buffer.h"
#include "models/runtime.h"
#include "planted_edge.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdio>

namespace tst_ppo {

using namespace foxhunt;
using namespace foxhunt::testing;

namespace {

PpoOptions smallOptions()
{
    PpoOptions o;
    o.nSteps = 64;
    o.batchSize = 16;
    o.nEpochs = 3;
    o.hidden = {32, 32};
    o.seed = 21;
    return o;
}

std::vector<int> range(int begin, int end)
{
    std::vector<int> v;
    for (int i = begin; i < end; ++i) v.push_back(i);
    return v;
}

} // namespace

class TestPpo : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void gaeByHand_data();
    void gaeByHand();
    void policyOutputShapes();
    void klEarlyStop();
    void deterministicUnderSeed();
    void checkpointResumesExactly();
    void learnsPlantedEdge();
};

void TestPpo::gaeByHand_data()
{
    QTest::addColumn<QList<float>>("rewards");
    QTest::addColumn<QList<float>>("values");
    QTest::addColumn<QList<int>>("terminated");
    QTest::addColumn<QList<int>>("truncated");
    QTest::addColumn<QList<float>>("bootstrap");
    QTest::addColumn<float>("lastValue");
    QTest::addColumn<double>("gamma");
    QTest::addColumn<double>("lambda");
    QTest::addColumn<QList<float>>("advantages");
    // gamma = lambda = 0.5. Step 3 truncated: 4 + 0.5*4 - 2 = 4.
    // Step 2: 3 + 0.5*2 - 1.5 = 2.5, + 0.25*4 = 3.5. Step 1 terminal: 2 - 1 = 1.
    // Step 0: 1 + 0.5*1 - 0.5 = 1, + 0.25*1 = 1.25.
    QTest::newRow("terminal and truncation")
        << QList<float>{1, 2, 3, 4} << QList<float>{0.5f, 1, 1.5f, 2} << QList<int>{0, 1, 0, 0}
        << QList<int>{0, 0, 0, 1} << QList<float>{0, 0, 0, 4} << 10.0f << 0.5 << 0.5 << QList<float>{1.25f, 1, 3.5f, 4};
    // No episode end: the last step bootstraps from lastValue = 2.
    // Step 1: 1 + 0.5*2 = 2; step 0: 1 + 0.5*0 - 0 = 1, + 0.5*1*2 = 2.
    QTest::newRow("bootstrap at rollout end")
        << QList<float>{1, 1} << QList<float>{0, 0} << QList<int>{0, 0} << QList<int>{0, 0} << QList<float>{0, 0}
        << 2.0f << 0.5 << 1.0 << QList<float>{2, 2};
    // lambda = 0 is one-step TD: r + gamma V' - V.
    QTest::newRow("lambda 0") << QList<float>{1, -1, 2} << QList<float>{1, 2, 3} << QList<int>{0, 0, 1}
                              << QList<int>{0, 0, 0} << QList<float>{0, 0, 0} << 100.0f << 0.9 << 0.0
                              << QList<float>{1.8f, -0.3f, -1.0f};
}

void TestPpo::gaeByHand()
{
    QFETCH(QList<float>, rewards);
    QFETCH(QList<float>, values);
    QFETCH(QList<int>, terminated);
    QFETCH(QList<int>, truncated);
    QFETCH(QList<float>, bootstrap);
    QFETCH(float, lastValue);
    QFETCH(double, gamma);
    QFETCH(double, lambda);
    QFETCH(QList<float>, advantages);
    std::vector<std::uint8_t> term(terminated.begin(), terminated.end());
    std::vector<std::uint8_t> trunc(truncated.begin(), truncated.end());
    const std::vector<float> r(rewards.begin(), rewards.end());
    const std::vector<float> v(values.begin(), values.end());
    const std::vector<float> b(bootstrap.begin(), bootstrap.end());
    const GaeResult gae = computeGae(r, v, term, trunc, b, lastValue, gamma, lambda);
    for (qsizetype i = 0; i < advantages.size(); ++i) {
        QVERIFY2(std::abs(gae.advantages[std::size_t(i)] - advantages[i]) < 1e-6,
                 qPrintable(QString("step %1: %2").arg(i).arg(gae.advantages[std::size_t(i)])));
        QVERIFY(std::abs(gae.returns[std::size_t(i)] - (advantages[i] + values[i])) < 1e-6);
    }
}

void TestPpo::policyOutputShapes()
{
    Ppo ppo(4, 3, smallOptions());
    const std::vector<float> obs{0.1f, -0.2f, 0.3f, 0.0f};
    const std::vector<float> p = ppo.probabilities(obs);
    QCOMPARE(p.size(), std::size_t(3));
    double sum = 0.0;
    for (float x : p) sum += x;
    QVERIFY(std::abs(sum - 1.0) < 1e-6);
    // Policy head gain 0.01: the initial policy is close to uniform.
    for (float x : p) QVERIFY(std::abs(x - 1.0f / 3) < 0.02);
    const PpoAction a = ppo.act(obs);
    QVERIFY(a.action >= 0 && a.action < 3);
    QVERIFY(std::abs(a.logProb - std::log(p[std::size_t(a.action)])) < 1e-5);
    QCOMPARE(a.value, ppo.value(obs));
}

void TestPpo::klEarlyStop()
{
    const PlantedEdge data = makePlantedEdge(4, 8);
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    PpoOptions o = smallOptions();
    o.learningRate = 0.05;
    o.nEpochs = 10;
    o.targetKl = 1e-4;
    AgentRunner runner(env, {}, o);
    const TrainStats s = runner.train(o.nSteps);
    QVERIFY(s.lastUpdate.has_value());
    QVERIFY(runner.ppo()->lastUpdate()->earlyStopped);
    QVERIFY(runner.ppo()->lastUpdate()->epochs < o.nEpochs);
    QVERIFY(s.lastUpdate->figure("approx_kl") > 0.0);

    TradingEnv env2(data.bars, data.features, kFeatures, data.days);
    o.targetKl = 0.0;
    AgentRunner free(env2, {}, o);
    const TrainStats f = free.train(o.nSteps);
    QVERIFY(!free.ppo()->lastUpdate()->earlyStopped);
    QCOMPARE(free.ppo()->lastUpdate()->epochs, o.nEpochs);
    QVERIFY(f.lastUpdate->figure("clip_fraction") > 0.0);
    QVERIFY(f.lastUpdate->gradNorm > 0.0);
    QVERIFY(f.lastUpdate->figure("entropy") > 0.0 && f.lastUpdate->figure("entropy") <= std::log(3.0) + 1e-6);
}

void TestPpo::deterministicUnderSeed()
{
    const PlantedEdge data = makePlantedEdge(4, 9);
    std::vector<double> stats[2];
    std::vector<float> params[2];
    for (int run = 0; run < 2; ++run) {
        TradingEnv env(data.bars, data.features, kFeatures, data.days);
        PpoOptions o = smallOptions();
        o.clipRangeVf = 0.2;
        o.entCoef = 0.01;
        AgentRunner runner(env, {}, o);
        for (int k = 0; k < 4; ++k) {
            const TrainStats s = runner.train(o.nSteps);
            QVERIFY(s.lastUpdate.has_value());
            stats[run].insert(stats[run].end(),
                              {s.lastUpdate->figure("policy_loss"), s.lastUpdate->figure("value_loss"),
                               s.lastUpdate->figure("entropy"), s.lastUpdate->figure("approx_kl"),
                               s.lastUpdate->gradNorm, s.lastUpdate->figure("explained_variance")});
        }
        params[run] = runner.ppo()->parameters();
    }
    QCOMPARE(stats[0], stats[1]);
    QCOMPARE(params[0], params[1]);
}

void TestPpo::checkpointResumesExactly()
{
    const PlantedEdge data = makePlantedEdge(4, 10);
    const PpoOptions o = smallOptions();
    QTemporaryDir dir;
    const std::string path = dir.filePath("ppo.pt").toStdString();

    TradingEnv envA(data.bars, data.features, kFeatures, data.days);
    AgentRunner a(envA, {}, o);
    a.train(150); // two updates and a partial rollout, mid-episode
    a.save(path);
    const std::vector<float> saved = a.ppo()->parameters();
    const TrainStats restA = a.train(120);

    TradingEnv envB(data.bars, data.features, kFeatures, data.days);
    AgentRunner b(envB, {}, o);
    b.load(path);
    QCOMPARE(b.ppo()->parameters(), saved);
    QCOMPARE(b.ppo()->envSteps(), 150LL);
    const TrainStats restB = b.train(120);
    QVERIFY(restA.lastUpdate.has_value() && restB.lastUpdate.has_value());
    QCOMPARE(restB.lastUpdate->figure("policy_loss"), restA.lastUpdate->figure("policy_loss"));
    QCOMPARE(restB.lastUpdate->figure("value_loss"), restA.lastUpdate->figure("value_loss"));
    QCOMPARE(b.ppo()->parameters(), a.ppo()->parameters());
    QCOMPARE(envB.state().equityTicks, envA.state().equityTicks);
}

void TestPpo::learnsPlantedEdge()
{
    const PlantedEdge data = makePlantedEdge(32, 2024);
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    PpoOptions o;
    o.nSteps = 512;
    o.batchSize = 64;
    o.nEpochs = 10;
    o.learningRate = 1e-3;
    o.gamma = 0.9;
    o.entCoef = 0.01;
    o.seed = 4;
    AgentRunner runner(env, range(0, 24), o);
    runner.train(40 * o.nSteps);
    const EvaluationReport report = runner.evaluate(range(24, 32));
    const double perDay = report.policy.pnlTicks / report.episodes;
    std::printf("PPO held-out: %.1f ticks/day (flat %.1f, buy-and-hold %.1f), sharpe %.2f, trades %d\n", perDay,
                report.flat.pnlTicks / report.episodes, report.buyAndHold.pnlTicks / report.episodes,
                report.policy.sharpe, report.policy.trades);
    QCOMPARE(report.flat.pnlTicks, 0.0);
    QVERIFY2(perDay > 12.0, qPrintable(QString("PPO made %1 ticks/day on held-out days").arg(perDay)));
    QVERIFY(report.policy.pnlTicks > report.buyAndHold.pnlTicks);
}

} // namespace tst_ppo

FOXHUNT_TEST_APPLESS_MAIN(tst_ppo::TestPpo)
#include "tst_ppo.moc"
