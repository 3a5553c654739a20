// SPDX-License-Identifier: GPL-3.0-or-later
// PPO precision paths: BF16 autocast updates stay finite, a scaling config
// skips steps with inf/NaN gradients and leaves the weights alone, the loss
// scaler's state survives a checkpoint, the INT8 copy is measured against
// FP32, and the memory figures come from the real tensors.
#include "engine/agents/agent_runner.h"
#include "engine/agents/ppo.h"
#include "models/runtime.h"
#include "planted_edge.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <cmath>
#include <limits>

namespace tst_ppo_precision {

using namespace foxhunt;
using namespace foxhunt::testing;
namespace mp = foxhunt::models::precision;

namespace {

PpoOptions smallOptions()
{
    PpoOptions o;
    o.nSteps = 64;
    o.batchSize = 16;
    o.nEpochs = 3;
    o.hidden = {32, 32};
    o.seed = 23;
    return o;
}

mp::MixedPrecisionConfig scalingBf16(int64_t growthInterval)
{
    mp::MixedPrecisionConfig c = mp::MixedPrecisionConfig::for_ampere();
    c.loss_scale = 1024.0;
    c.dynamic_loss_scale = true;
    c.growth_interval = growthInterval;
    return c;
}

} // namespace

class TestPpoPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void ampUpdatesStayFinite_data();
    void ampUpdatesStayFinite();
    void infGradientSkipsStep();
    void scalerStateSurvivesCheckpoint();
    void int8Evaluation();
    void runnerExposesInt8();
    void memoryBytesFromTensors();
};

void TestPpoPrecision::ampUpdatesStayFinite_data()
{
    QTest::addColumn<bool>("scaling");
    QTest::addColumn<bool>("shared");
    QTest::newRow("bf16 unscaled") << false << false;
    QTest::newRow("bf16 scaled, shared trunk, value clip") << true << true;
}

void TestPpoPrecision::ampUpdatesStayFinite()
{
    QFETCH(bool, scaling);
    QFETCH(bool, shared);
    const PlantedEdge data = makePlantedEdge(4, 9);
    PpoOptions o = smallOptions();
    o.sharedNetwork = shared;
    o.clipRangeVf = shared ? 0.2 : 0.0;
    o.mixedPrecision = scaling ? scalingBf16(2000) : mp::MixedPrecisionConfig::for_ampere();
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, o);
    const std::vector<float> before = runner.ppo()->parameters();
    const TrainStats s = runner.train(130);
    QVERIFY(s.lastUpdate.has_value());
    for (double v : {s.lastUpdate->figure("policy_loss"), s.lastUpdate->figure("value_loss"),
                     s.lastUpdate->figure("entropy"), s.lastUpdate->figure("approx_kl"), s.lastUpdate->gradNorm})
        QVERIFY(std::isfinite(v));
    QVERIFY(s.lastUpdate->gradNorm > 0.0);
    QCOMPARE(s.lastUpdate->skippedSteps, 0LL);
    QCOMPARE(s.lastUpdate->lossScale, scaling ? 1024.0 : 1.0);
    const std::vector<float> after = runner.ppo()->parameters();
    QVERIFY(after != before);
    for (float p : after) QVERIFY(std::isfinite(p));
}

void TestPpoPrecision::infGradientSkipsStep()
{
    PpoOptions o = smallOptions();
    o.mixedPrecision = scalingBf16(2000);
    Ppo ppo(4, 3, o);
    const std::vector<float> before = ppo.parameters();
    // An injected inf in every observation: logits, values, losses and gradients are inf/NaN.
    const float inf = std::numeric_limits<float>::infinity();
    const std::array<float, 4> obs{inf, 0.5f, 1.0f, -1.0f};
    bool full = false;
    while (!full) full = ppo.store(obs, ppo.act(obs), 1.0, false, false, obs);
    const PpoUpdateStats s = ppo.update(obs);
    const long long minibatches = o.nEpochs * (o.nSteps / o.batchSize);
    QCOMPARE(s.skippedSteps, minibatches);
    QCOMPARE(s.lossScale, 1024.0 * std::pow(0.5, static_cast<double>(minibatches)));
    QCOMPARE(ppo.parameters(), before);
    QCOMPARE(ppo.memoryBytes().optimizerBytes, std::size_t(0));
}

void TestPpoPrecision::scalerStateSurvivesCheckpoint()
{
    const PlantedEdge data = makePlantedEdge(4, 10);
    PpoOptions o = smallOptions();
    o.mixedPrecision = scalingBf16(/*growthInterval=*/5);
    QTemporaryDir dir;
    const std::string path = dir.filePath("ppo_amp.pt").toStdString();

    TradingEnv envA(data.bars, data.features, kFeatures, data.days);
    AgentRunner a(envA, {}, o);
    a.train(150); // two updates of 12 clean minibatch steps: the scale grew four times
    QCOMPARE(a.ppo()->lossScale(), 1024.0 * 16.0);
    a.save(path);
    const TrainStats restA = a.train(120);

    TradingEnv envB(data.bars, data.features, kFeatures, data.days);
    AgentRunner b(envB, {}, o);
    b.load(path);
    QCOMPARE(b.ppo()->lossScale(), 1024.0 * 16.0);
    const TrainStats restB = b.train(120);
    QVERIFY(restA.lastUpdate && restB.lastUpdate);
    QCOMPARE(restB.lastUpdate->lossScale, restA.lastUpdate->lossScale);
    QCOMPARE(restB.lastUpdate->figure("policy_loss"), restA.lastUpdate->figure("policy_loss"));
    QCOMPARE(b.ppo()->parameters(), a.ppo()->parameters());
}

void TestPpoPrecision::int8Evaluation()
{
    const PlantedEdge data = makePlantedEdge(4, 11);
    PpoOptions o = smallOptions();
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, o);
    runner.train(130);
    AgentInt8Options io;
    io.latencyRepeats = 5;
    const Int8Evaluation e = runner.evaluateInt8(io); // the last rollout: 64 observations
    QCOMPARE(e.evaluatedSamples, std::size_t(64));
    QCOMPARE(e.quantizedLayers, 6);           // two trunks of two layers and two heads
    QVERIFY(e.fp32Loss > 0.0);                // the FP32 policy's entropy
    QVERIFY(e.int8Loss >= e.fp32Loss - 1e-9); // cross-entropy is never below the entropy
    QVERIFY(e.degradation < 0.1);
    QVERIFY(e.actionAgreement.has_value() && *e.actionAgreement >= 0.8);
    QVERIFY(e.bytesRatio < 0.5);
    QCOMPARE(e.fp32Batch32.count, std::size_t(5));

    // Explicit observations, with a static activation range from the first 8.
    std::vector<float> rows;
    env.reset(1);
    for (int i = 0; i < 20; ++i) {
        const auto obs = env.observation();
        rows.insert(rows.end(), obs.begin(), obs.end());
        env.step(i % 3);
    }
    io.calibrationSamples = 8;
    const Int8Evaluation s = runner.ppo()->evaluateInt8(rows, io);
    QCOMPARE(s.evaluatedSamples, std::size_t(20));
    QVERIFY(s.staticActivations);
    QCOMPARE(s.calibrationSamples, std::size_t(8));
    QVERIFY(std::isfinite(s.int8Loss));
    rows.pop_back();
    QVERIFY_THROWS_EXCEPTION(std::logic_error, runner.ppo()->evaluateInt8(rows, io));
}

void TestPpoPrecision::runnerExposesInt8()
{
    const PlantedEdge data = makePlantedEdge(3, 12);
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, smallOptions());
    runner.train(70);
    int agree = 0;
    int total = 0;
    env.reset(0);
    while (!env.done()) {
        const std::span<const float> obs = env.observation();
        agree += runner.int8GreedyAction(obs) == runner.greedyAction(obs);
        ++total;
        env.step(1);
    }
    QVERIFY(total > 0);
    QVERIFY2(agree * 10 >= total * 8, qPrintable(QString("%1 of %2").arg(agree).arg(total)));
}

void TestPpoPrecision::memoryBytesFromTensors()
{
    Ppo ppo(4, 3, smallOptions());
    // Two trunks 4 -> 32 -> 32, a policy head 32 -> 3 and a value head 32 -> 1.
    const std::size_t trunk = (4 * 32 + 32) + (32 * 32 + 32);
    const std::size_t params = (2 * trunk + (32 * 3 + 3) + (32 + 1)) * sizeof(float);
    ModelMemory m = ppo.memoryBytes();
    QCOMPARE(m.parameterBytes, params);
    QCOMPARE(m.gradientBytes, std::size_t(0));
    QCOMPARE(m.optimizerBytes, std::size_t(0));
    const std::array<float, 4> obs{0.1f, 0.5f, 1.0f, -1.0f};
    bool full = false;
    while (!full) full = ppo.store(obs, ppo.act(obs), 1.0, false, false, obs);
    ppo.update(obs);
    m = ppo.memoryBytes();
    QCOMPARE(m.gradientBytes, params);
    QCOMPARE(m.optimizerBytes, 2 * params);
}

} // namespace tst_ppo_precision

FOXHUNT_TEST_APPLESS_MAIN(tst_ppo_precision::TestPpoPrecision)
#include "tst_ppo_precision.moc"
