// SPDX-License-Identifier: GPL-3.0-or-later
// DQN precision paths: BF16 autocast updates stay finite, a scaling config
// skips steps with inf/NaN gradients and leaves the weights alone, the loss
// scaler's state survives a checkpoint, the INT8 copy is measured against
// FP32, and the memory figures come from the real tensors.
#include "engine/agents/agent_runner.h"
#include "engine/agents/dqn.h"
#include "engine/precision/int8_evaluation_json.h"
#include "models/runtime.h"
#include "planted_edge.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <limits>

namespace tst_dqn_precision {

using namespace foxhunt;
using namespace foxhunt::testing;
namespace mp = foxhunt::models::precision;

namespace {

DqnOptions smallOptions()
{
    DqnOptions o;
    o.hidden = {32, 32};
    o.learningRate = 1e-3;
    o.bufferSize = 2000;
    o.learningStarts = 50;
    o.batchSize = 32;
    o.trainFreq = 1;
    o.targetUpdateInterval = 50;
    o.totalTimesteps = 1000;
    o.seed = 17;
    return o;
}

// BF16 autocast with a dynamic loss scale: the scaler checks every step (a CPU stand-in for FP16).
mp::MixedPrecisionConfig scalingBf16(int64_t growthInterval)
{
    mp::MixedPrecisionConfig c = mp::MixedPrecisionConfig::for_ampere();
    c.loss_scale = 1024.0;
    c.dynamic_loss_scale = true;
    c.growth_interval = growthInterval;
    return c;
}

void fill(Dqn& dqn, int count, float value)
{
    for (int i = 0; i < count; ++i) {
        const std::array<float, 4> obs{value, float(i % 5) * 0.1f, 1.0f, -1.0f};
        dqn.observe(obs, i % 3, (i % 3) - 1.0, obs, i % 7 == 0, false);
    }
}

} // namespace

class TestDqnPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void ampUpdatesStayFinite_data();
    void ampUpdatesStayFinite();
    void infGradientSkipsStep();
    void scalerStateSurvivesCheckpoint();
    void rejectsF16OnCpu();
    void int8Evaluation_data();
    void int8Evaluation();
    void runnerExposesInt8();
    void memoryBytesFromTensors();
};

void TestDqnPrecision::ampUpdatesStayFinite_data()
{
    QTest::addColumn<bool>("scaling");
    QTest::addColumn<bool>("prioritized");
    QTest::newRow("bf16 unscaled") << false << false;
    QTest::newRow("bf16 scaled, per") << true << true;
}

void TestDqnPrecision::ampUpdatesStayFinite()
{
    QFETCH(bool, scaling);
    QFETCH(bool, prioritized);
    const PlantedEdge data = makePlantedEdge(4, 5);
    DqnOptions o = smallOptions();
    o.prioritized = prioritized;
    o.mixedPrecision = scaling ? scalingBf16(2000) : mp::MixedPrecisionConfig::for_ampere();
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, o);
    const std::vector<float> before = runner.dqn()->onlineParameters();
    const TrainStats s = runner.train(200);
    QVERIFY(s.lastUpdate.has_value());
    QVERIFY(std::isfinite(s.lastUpdate->loss));
    QVERIFY(std::isfinite(s.lastUpdate->gradNorm));
    QVERIFY(s.lastUpdate->gradNorm > 0.0);
    QCOMPARE(s.lastUpdate->skippedSteps, 0LL);
    QCOMPARE(s.lastUpdate->lossScale, scaling ? 1024.0 : 1.0);
    const std::vector<float> after = runner.dqn()->onlineParameters();
    QVERIFY(after != before);
    for (float p : after) QVERIFY(std::isfinite(p));
}

void TestDqnPrecision::infGradientSkipsStep()
{
    DqnOptions o = smallOptions();
    o.learningStarts = 1'000'000; // fill only
    o.maxGradNorm = 10.0;
    o.mixedPrecision = scalingBf16(2000);
    Dqn dqn(4, 3, o);
    // An injected inf in every stored observation: the forward, the loss and every gradient are inf/NaN.
    fill(dqn, 64, std::numeric_limits<float>::infinity());
    const std::vector<float> online = dqn.onlineParameters();
    const ModelMemory memory = dqn.memoryBytes();
    DqnUpdateStats s;
    for (int i = 0; i < 3; ++i) s = dqn.update();
    QVERIFY(s.skipped);
    QCOMPARE(s.skippedSteps, 3LL);
    QCOMPARE(s.lossScale, 1024.0 / 8.0); // backed off by 0.5 per skipped step
    QVERIFY(!std::isfinite(s.gradNorm));
    QCOMPARE(dqn.onlineParameters(), online);
    QCOMPARE(dqn.memoryBytes().optimizerBytes, memory.optimizerBytes); // no Adam step, no state
    QCOMPARE(dqn.updates(), 3LL);
}

void TestDqnPrecision::scalerStateSurvivesCheckpoint()
{
    const PlantedEdge data = makePlantedEdge(4, 6);
    DqnOptions o = smallOptions();
    o.mixedPrecision = scalingBf16(/*growthInterval=*/3);
    QTemporaryDir dir;
    const std::string path = dir.filePath("dqn_amp.pt").toStdString();

    TradingEnv envA(data.bars, data.features, kFeatures, data.days);
    AgentRunner a(envA, {}, o);
    a.train(60); // 10 clean updates: the scale grew three times
    QCOMPARE(a.dqn()->lossScale(), 1024.0 * 8.0);
    a.save(path);
    const TrainStats restA = a.train(40);

    TradingEnv envB(data.bars, data.features, kFeatures, data.days);
    AgentRunner b(envB, {}, o);
    QCOMPARE(b.dqn()->lossScale(), 1024.0);
    b.load(path);
    QCOMPARE(b.dqn()->lossScale(), 1024.0 * 8.0);
    const TrainStats restB = b.train(40);
    QVERIFY(restA.lastUpdate && restB.lastUpdate);
    QCOMPARE(restB.lastUpdate->lossScale, restA.lastUpdate->lossScale);
    QCOMPARE(restB.lastUpdate->loss, restA.lastUpdate->loss);
    QCOMPARE(b.dqn()->onlineParameters(), a.dqn()->onlineParameters());
}

void TestDqnPrecision::rejectsF16OnCpu()
{
    DqnOptions o = smallOptions();
    o.mixedPrecision = mp::MixedPrecisionConfig::for_volta_turing();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Dqn(4, 3, o));
}

void TestDqnPrecision::int8Evaluation_data()
{
    QTest::addColumn<int>("calibration");
    QTest::newRow("dynamic ranges") << 0;
    QTest::newRow("static, 64 samples") << 64;
}

void TestDqnPrecision::int8Evaluation()
{
    QFETCH(int, calibration);
    const PlantedEdge data = makePlantedEdge(4, 7);
    DqnOptions o = smallOptions();
    o.hidden = {64, 64};
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, o);
    runner.train(150);
    AgentInt8Options io;
    io.samples = 100;
    io.calibrationSamples = static_cast<std::size_t>(calibration);
    io.latencyRepeats = 5;
    const Int8Evaluation e = runner.dqn()->evaluateInt8(io);
    QCOMPARE(e.quantizedLayers, 3);
    QCOMPARE(e.evaluatedSamples, std::size_t(100));
    QCOMPARE(e.staticActivations, calibration > 0);
    QCOMPARE(e.calibrationSamples, std::size_t(calibration));
    QVERIFY(e.fp32Loss > 0.0 && std::isfinite(e.fp32Loss));
    QVERIFY(std::isfinite(e.int8Loss));
    QCOMPARE(e.degradation, (e.int8Loss - e.fp32Loss) / e.fp32Loss);
    QVERIFY(std::abs(e.degradation) < 0.25);
    QVERIFY(e.actionAgreement.has_value());
    QVERIFY(*e.actionAgreement >= 0.8 && *e.actionAgreement <= 1.0);
    QVERIFY(e.int8Bytes > 0 && e.int8Bytes < e.fp32Bytes);
    QVERIFY(e.bytesRatio < 0.5);
    QVERIFY(!e.backend.empty());
    QCOMPARE(e.int8Batch1.count, std::size_t(5));
    QVERIFY(e.fp32Batch32.p50 > 0.0 && e.int8Batch32.p99 >= e.int8Batch32.p50);
    const nlohmann::json j = toJson(e);
    QCOMPARE(j.at("quantized_layers").get<int>(), 3);
    QCOMPARE(j.at("action_agreement").get<double>(), *e.actionAgreement);
    QCOMPARE(j.at("latency").at("int8_b32").at("p50_ms").get<double>(), e.int8Batch32.p50 / 1000.0);
    // An untrained model on an empty buffer has nothing to measure on.
    Dqn empty(4, 3, smallOptions());
    QVERIFY_THROWS_EXCEPTION(std::logic_error, empty.evaluateInt8());
}

void TestDqnPrecision::runnerExposesInt8()
{
    const PlantedEdge data = makePlantedEdge(3, 8);
    DqnOptions o = smallOptions();
    TradingEnv env(data.bars, data.features, kFeatures, data.days);
    AgentRunner runner(env, {}, o);
    runner.train(120);
    AgentInt8Options options;
    options.samples = 64;
    options.latencyRepeats = 3;
    const Int8Evaluation e = runner.evaluateInt8(options);
    QVERIFY(e.actionAgreement.has_value());
    // The INT8 copy's greedy actions agree with FP32 on most observations of the data.
    int agree = 0;
    int total = 0;
    env.reset(0);
    while (!env.done()) {
        const std::span<const float> obs = env.observation();
        agree += runner.int8GreedyAction(obs) == runner.greedyAction(obs);
        ++total;
        env.step(0);
    }
    QVERIFY(total > 0);
    QVERIFY2(agree * 10 >= total * 8, qPrintable(QString("%1 of %2").arg(agree).arg(total)));
}

void TestDqnPrecision::memoryBytesFromTensors()
{
    DqnOptions o = smallOptions();
    o.learningStarts = 1'000'000;
    Dqn dqn(4, 3, o);
    // 4 -> 32 -> 32 -> 3: (4*32 + 32) + (32*32 + 32) + (32*3 + 3) floats per network.
    const std::size_t params = ((4 * 32 + 32) + (32 * 32 + 32) + (32 * 3 + 3)) * sizeof(float);
    ModelMemory m = dqn.memoryBytes();
    QCOMPARE(m.parameterBytes, 2 * params);
    QCOMPARE(m.gradientBytes, params);
    QCOMPARE(m.optimizerBytes, std::size_t(0));
    fill(dqn, 40, 0.5f);
    dqn.update();
    m = dqn.memoryBytes();
    QCOMPARE(m.optimizerBytes, 2 * params); // exp_avg and exp_avg_sq
}

} // namespace tst_dqn_precision

FOXHUNT_TEST_APPLESS_MAIN(tst_dqn_precision::TestDqnPrecision)
#include "tst_dqn_precision.moc"
