// SPDX-License-Identifier: GPL-3.0-or-later
// ForecasterTrainer::memory(): exact parameter, gradient and optimizer bytes and the activation
// peak of the last step; a session stores them as grad_bytes, optimizer_bytes, activation_bytes.

#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "models/memory/memory_tracker.h"
#include "models/runtime.h"
#include "tests/support/engine_metatypes.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <random>

namespace tst_model_memory {

using namespace foxhunt;

namespace {

ForecastData randomSeries(std::size_t rows)
{
    std::mt19937_64 rng(3);
    std::normal_distribution<float> normal;
    ForecastData d;
    d.rows = rows;
    d.cols = 4;
    d.knownCols = 2;
    d.features.resize(rows * d.cols);
    for (float& f : d.features) f = normal(rng);
    d.knownFuture.resize(rows * d.knownCols);
    for (float& f : d.knownFuture) f = normal(rng);
    d.logReturns.resize(rows);
    for (double& r : d.logReturns) r = 1e-3 * normal(rng);
    return d;
}

} // namespace

class TestModelMemory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        models::setThreads(1);
        QVERIFY(m_dir.isValid());
    }

    void forecasterMemoryIsExact_data()
    {
        QTest::addColumn<ForecasterKind>("kind");
        QTest::newRow("mamba2") << ForecasterKind::Mamba2;
        QTest::newRow("tft") << ForecasterKind::Tft;
    }

    void forecasterMemoryIsExact()
    {
        QFETCH(ForecasterKind, kind);
        ForecasterConfig c;
        c.kind = kind;
        c.windowing.pastLength = 16;
        c.batchSize = 8;
        ForecasterTrainer trainer(c, randomSeries(200), IndexRange{15, 150}, IndexRange{150, 190});

        const ModelMemory fresh = trainer.memory();
        QCOMPARE(fresh.parameterBytes, trainer.parameterBytes());
        QCOMPARE(fresh.gradientBytes, std::size_t{0});
        QCOMPARE(fresh.optimizerBytes, std::size_t{0});
        QCOMPARE(fresh.activationPeakBytes, std::size_t{0});

        QVERIFY(models::installCountingCpuAllocator());
        trainer.trainStep();
        const ModelMemory first = trainer.memory();
        QCOMPARE(first.parameterBytes, fresh.parameterBytes);
        QVERIFY(first.gradientBytes > 0);
        QVERIFY(first.gradientBytes <= first.parameterBytes);
        // AdamW keeps two float moments for exactly the parameters that received a gradient.
        QCOMPARE(first.optimizerBytes, 2 * first.gradientBytes);
        // At least the [B, H, Q] float64 predictions the loss is computed from.
        QVERIFY(first.activationPeakBytes >= 8 * 5 * 3 * sizeof(double));

        trainer.trainStep();
        const ModelMemory second = trainer.memory();
        trainer.trainStep();
        const ModelMemory third = trainer.memory();
        // Same shapes every step: the same allocations, hence the same peak.
        QCOMPARE(third.activationPeakBytes, second.activationPeakBytes);
        QCOMPARE(third.gradientBytes, first.gradientBytes);
    }

    void sessionStoresMemoryMetrics()
    {
        SessionConfig c = SessionConfig::defaults();
        c.models = {ModelKind::Tft};
        c.steps = 3;
        c.seed = 5;
        c.checkpointEvery = 0;
        c.tft.windowing.pastLength = 16;
        c.tft.batchSize = 8;
        c.tft.evalBatchSize = 512;
        const std::string path = m_dir.filePath(QStringLiteral("memory.db")).toStdString();
        TrainingSession session(path, c);
        const SessionResult r = session.run();
        QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
        QVERIFY(models::countingCpuAllocatorInstalled());

        BarStore store(path);
        RunStore runs(store);
        auto first = [&](const char* metric) {
            const MetricBatch m = runs.metrics(r.runId, "tft", metric);
            return m.empty() ? -1.0 : m.front().value;
        };
        const double params = first("param_bytes");
        const double grads = first("grad_bytes");
        QVERIFY(params > 0);
        QVERIFY(grads > 0 && grads <= params);
        QCOMPARE(first("optimizer_bytes"), 2 * grads);
        QVERIFY(first("activation_bytes") > 0);
        // A run shorter than the sampling interval still reports its last step.
        const MetricBatch optimizer = runs.metrics(r.runId, "tft", "optimizer_bytes");
        QCOMPARE(optimizer.size(), std::size_t(2));
        QCOMPARE(optimizer.back().step, 3LL);
        QCOMPARE(optimizer.back().value, 2 * grads);
    }

    // Agents: activation_bytes beside grad_bytes and optimizer_bytes, measured once they learn
    // (the first sample, at step 1, precedes any update; the one at step 500 follows many).
    void sessionStoresAgentActivationBytes()
    {
        SessionConfig c = SessionConfig::defaults();
        c.models = {ModelKind::Dqn, ModelKind::Ppo};
        c.steps = 500;
        c.seed = 5;
        c.checkpointEvery = 0;
        c.fromDay = 19'730; // eight trading days of the synthetic default keep the evaluations short
        c.toDay = 19'739;
        c.dqn.learningStarts = 20;
        c.ppo.nSteps = 32;
        const std::string path = m_dir.filePath(QStringLiteral("agents.db")).toStdString();
        TrainingSession session(path, c);
        const SessionResult r = session.run();
        QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
        BarStore store(path);
        RunStore runs(store);
        for (const char* model : {"dqn", "ppo"}) {
            const MetricBatch m = runs.metrics(r.runId, model, "activation_bytes");
            QVERIFY2(m.size() >= 2, model);
            QCOMPARE(m.front().value, 0.0);
            QVERIFY2(m.back().value > 0.0, model);
            QVERIFY(runs.metrics(r.runId, model, "grad_bytes").back().value > 0.0);
        }
    }

private:
    QTemporaryDir m_dir;
};

} // namespace tst_model_memory

FOXHUNT_TEST_APPLESS_MAIN(tst_model_memory::TestModelMemory)
#include "tst_model_memory.moc"
