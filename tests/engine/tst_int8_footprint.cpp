// SPDX-License-Identifier: GPL-3.0-or-later
// The INT8 inference copy's footprint at the sizes a session trains by default: for DQN, PPO,
// Mamba-2 and TFT, every parameter and buffer of the copy over the same of the FP32 model
// (Int8Evaluation::bytesRatio) must be at most 0.30, with the loss within 2 % of FP32.

#include "engine/replay/features.h"
#include "engine/session/training_session.h"
#include "models/runtime.h"
#include "tests/support/engine_metatypes.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace tst_int8_footprint {

using namespace foxhunt;

namespace {

constexpr double kBytesGoal = 0.30;
constexpr double kDegradationGoal = 0.02;

// The session's forecaster inputs: the observed market features and the clock features as known covariates.
ForecastData sessionLikeSeries(std::size_t rows)
{
    ForecastData d;
    d.rows = rows;
    d.cols = 5;
    d.knownCols = 4;
    std::mt19937_64 rng(11);
    std::normal_distribution<double> noise(0.0, 1e-3);
    double previous = 0.0;
    for (std::size_t t = 0; t < rows; ++t) {
        const double phase = 2.0 * std::numbers::pi * static_cast<double>(t % 45) / 45.0;
        const double r = 0.3 * previous + 6e-4 * std::sin(phase) + noise(rng);
        d.logReturns.push_back(r);
        for (double v : {r * 1e3, std::abs(r) * 1e3, noise(rng) * 1e3, std::sin(phase), std::abs(previous) * 1e3})
            d.features.push_back(static_cast<float>(v));
        for (double v : {std::sin(phase), std::cos(phase), static_cast<double>(t % 90) / 90.0, t % 2 == 0 ? 1.0 : 0.0})
            d.knownFuture.push_back(static_cast<float>(v));
        previous = r;
    }
    return d;
}

std::vector<float> observations(int count, int size, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(count * size));
    for (float& x : v) x = n(rng);
    return v;
}

} // namespace

class TestInt8Footprint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void defaultSizesMeetTheGoal_data();
    void defaultSizesMeetTheGoal();
};

void TestInt8Footprint::defaultSizesMeetTheGoal_data()
{
    QTest::addColumn<ModelKind>("kind");
    QTest::newRow("dqn") << ModelKind::Dqn;
    QTest::newRow("ppo") << ModelKind::Ppo;
    QTest::newRow("mamba2") << ModelKind::Mamba2;
    QTest::newRow("tft") << ModelKind::Tft;
}

void TestInt8Footprint::defaultSizesMeetTheGoal()
{
    QFETCH(ModelKind, kind);
    const SessionConfig defaults = SessionConfig::defaults();
    // What a session's agents see without the ensemble: one feature row, position and unrealised PnL.
    const int observationSize = defaults.env.window * static_cast<int>(kFeatureCount) + 2;
    const int actions = 2 * defaults.env.maxContracts + 1;
    AgentInt8Options agentOptions;
    agentOptions.samples = 512;
    agentOptions.latencyRepeats = 1;
    Int8Evaluation e;
    if (kind == ModelKind::Dqn) {
        Dqn dqn(observationSize, actions, defaults.dqn);
        const std::vector<float> obs = observations(513, observationSize, 3);
        for (int i = 0; i < 512; ++i) {
            const auto at = [&](int row) {
                return std::span<const float>(obs).subspan(static_cast<std::size_t>(row * observationSize),
                                                           static_cast<std::size_t>(observationSize));
            };
            dqn.observe(at(i), i % actions, std::sin(0.1 * i), at(i + 1), false, false);
        }
        e = dqn.evaluateInt8(agentOptions);
    } else if (kind == ModelKind::Ppo) {
        Ppo ppo(observationSize, actions, defaults.ppo);
        e = ppo.evaluateInt8(observations(512, observationSize, 4), agentOptions);
    } else {
        ForecasterConfig c = kind == ModelKind::Mamba2 ? defaults.mamba2 : defaults.tft;
        c.dropout = 0.0;
        ForecasterTrainer trainer(c, sessionLikeSeries(700), {59, 480}, {480, 690});
        for (int i = 0; i < 20; ++i) trainer.trainStep();
        Int8EvaluationOptions o;
        o.latencyRepeats = 1;
        e = trainer.evaluateInt8(o);
        QVERIFY2(e.degradation <= kDegradationGoal, qPrintable(QStringLiteral("loss degradation %1 (fp32 %2, int8 %3)")
                                                                   .arg(e.degradation)
                                                                   .arg(e.fp32Loss)
                                                                   .arg(e.int8Loss)));
    }
    qInfo("%s: fp32 %zu B, int8 %zu B, ratio %.4f, degradation %+.5f", toString(kind).c_str(), e.fp32Bytes, e.int8Bytes,
          e.bytesRatio, e.degradation);
    QVERIFY(e.fp32Bytes > 0);
    QCOMPARE(e.bytesRatio, static_cast<double>(e.int8Bytes) / static_cast<double>(e.fp32Bytes));
    QVERIFY2(e.bytesRatio <= kBytesGoal,
             qPrintable(QStringLiteral("INT8 / FP32 bytes %1 > %2").arg(e.bytesRatio).arg(kBytesGoal)));
    if (e.actionAgreement) QVERIFY(*e.actionAgreement >= 0.9);
}

} // namespace tst_int8_footprint

FOXHUNT_TEST_APPLESS_MAIN(tst_int8_footprint::TestInt8Footprint)
#include "tst_int8_footprint.moc"
