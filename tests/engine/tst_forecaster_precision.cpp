// SPDX-License-Identifier: GPL-3.0-or-later
// ForecasterTrainer with mixed precision (BF16 autocast on the CPU, loss-scale telemetry) and
// the INT8 evaluation against FP32.

#include "engine/bench/cyclic_series.h"
#include "engine/forecast/forecaster_trainer.h"
#include "tests/support/engine_metatypes.h"
#include "tests/support/test_bundle.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <torch/torch.h>

#include <cmath>
#include <numbers>
#include <random>

namespace QTest {
template <>
char* toString(const foxhunt::InferenceWeights& w)
{
    return qstrdup(w == foxhunt::InferenceWeights::Int8 ? "Int8" : "Fp32");
}
} // namespace QTest

namespace tst_forecaster_precision {

using namespace foxhunt;
using foxhunt::models::precision::HalfType;
using foxhunt::models::precision::MixedPrecisionConfig;

namespace {

ForecastData series(std::size_t rows)
{
    return cyclicSeries(rows);
}

ForecasterConfig config(ForecasterKind kind, MixedPrecisionConfig mp)
{
    ForecasterConfig c;
    c.kind = kind;
    c.windowing = {/*pastLength=*/16, /*horizon=*/3};
    c.batchSize = 16;
    c.learningRate = 3e-3;
    c.warmupSteps = 2;
    c.totalSteps = 50;
    c.dModel = 16;
    c.layers = 1;
    c.dState = 8;
    c.headDim = 8;
    c.chunkSize = 8;
    c.hiddenSize = 16;
    c.embeddingSize = 4;
    c.heads = 2;
    c.dropout = 0.0;
    c.mixedPrecision = mp;
    return c;
}

constexpr IndexRange kTrain{15, 300};
constexpr IndexRange kValidation{300, 380};

} // namespace

class TestForecasterPrecision : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void bf16TrainsLikeFp32_data()
    {
        QTest::addColumn<ForecasterKind>("kind");
        QTest::newRow("mamba2") << ForecasterKind::Mamba2;
        QTest::newRow("tft") << ForecasterKind::Tft;
    }

    void bf16TrainsLikeFp32()
    {
        QFETCH(ForecasterKind, kind);
        ForecasterTrainer fp32(config(kind, MixedPrecisionConfig::disabled()), series(400), kTrain, kValidation);
        ForecasterTrainer amp(config(kind, MixedPrecisionConfig::for_ampere()), series(400), kTrain, kValidation);
        for (int i = 0; i < 6; ++i) {
            const auto a = fp32.trainStep();
            const auto b = amp.trainStep();
            QVERIFY(std::isfinite(b.loss) && std::isfinite(b.gradNorm));
            QCOMPARE(b.lossScale, 1.0);
            QVERIFY(!b.skipped);
            QCOMPARE(b.skippedSteps, int64_t{0});
            QVERIFY(b.stepSeconds > 0.0);
            if (i == 0) {
                // Same weights, same batch: BF16 rounding moves the loss and norm only slightly.
                QVERIFY2(std::abs(b.loss - a.loss) <= 0.05 * a.loss, qPrintable(QString::number(b.loss - a.loss)));
                QVERIFY2(std::abs(b.gradNorm - a.gradNorm) <= 0.1 * a.gradNorm,
                         qPrintable(QString::number(b.gradNorm - a.gradNorm)));
            }
        }
    }

    void dynamicScaleGrowsAndNormIsUnscaled()
    {
        auto scaled = MixedPrecisionConfig::for_ampere();
        scaled.loss_scale = 1024.0;
        scaled.dynamic_loss_scale = true;
        scaled.growth_interval = 3;
        ForecasterTrainer plain(config(ForecasterKind::Mamba2, MixedPrecisionConfig::for_ampere()), series(400), kTrain,
                                kValidation);
        ForecasterTrainer trainer(config(ForecasterKind::Mamba2, scaled), series(400), kTrain, kValidation);
        const std::vector<double> expected{1024, 1024, 2048, 2048, 2048, 4096};
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const auto reference = plain.trainStep();
            const auto s = trainer.trainStep();
            QCOMPARE(s.lossScale, expected[i]);
            QCOMPARE(s.skippedSteps, int64_t{0});
            if (i == 0) QVERIFY(std::abs(s.gradNorm - reference.gradNorm) <= 1e-3 * reference.gradNorm);
        }

        const QString path = QDir::temp().filePath(QStringLiteral("foxhunt_precision_ckpt.pt"));
        trainer.saveCheckpoint(path.toStdString());
        ForecasterTrainer resumed(config(ForecasterKind::Mamba2, scaled), series(400), kTrain, kValidation);
        resumed.loadCheckpoint(path.toStdString());
        QFile::remove(path);
        const auto a = trainer.trainStep();
        const auto b = resumed.trainStep();
        QCOMPARE(b.lossScale, a.lossScale);
        QCOMPARE(b.loss, a.loss);
    }

    void cpuFp16IsRejectedWithSuggestion()
    {
        try {
            ForecasterTrainer t(config(ForecasterKind::Mamba2, MixedPrecisionConfig::for_volta_turing()), series(400),
                                kTrain, kValidation);
            QFAIL("FP16 on the CPU must be rejected");
        } catch (const std::invalid_argument& e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QLatin1String("BF16")));
        }
    }

    void int8Evaluation_data()
    {
        QTest::addColumn<ForecasterKind>("kind");
        QTest::addColumn<int>("calibration");
        QTest::newRow("mamba2 dynamic") << ForecasterKind::Mamba2 << 0;
        QTest::newRow("tft calibrated") << ForecasterKind::Tft << 64;
    }

    void int8Evaluation()
    {
        QFETCH(ForecasterKind, kind);
        QFETCH(int, calibration);
        ForecasterTrainer trainer(config(kind, MixedPrecisionConfig::disabled()), series(400), kTrain, kValidation);
        for (int i = 0; i < 5; ++i) trainer.trainStep();
        const auto before = trainer.evaluate().model.quantileLoss;
        Int8EvaluationOptions opts;
        opts.calibrationSamples = static_cast<std::size_t>(calibration);
        opts.latencyRepeats = 5;
        const auto e = trainer.evaluateInt8(opts);
        QVERIFY(e.quantizedLayers > 0);
        QVERIFY(!e.backend.empty());
        QVERIFY(std::isfinite(e.fp32Loss) && e.fp32Loss > 0.0);
        QVERIFY(std::isfinite(e.int8Loss) && e.int8Loss > 0.0);
        QCOMPARE(e.degradation, (e.int8Loss - e.fp32Loss) / e.fp32Loss);
        QVERIFY2(!e.flagged, qPrintable(QStringLiteral("degradation %1").arg(e.degradation)));
        QVERIFY(e.int8Bytes < e.fp32Bytes);
        QCOMPARE(e.bytesRatio, static_cast<double>(e.int8Bytes) / static_cast<double>(e.fp32Bytes));
        for (const auto& p : {e.fp32Batch1, e.int8Batch1, e.fp32Batch32, e.int8Batch32}) {
            QVERIFY(p.p50 > 0.0);
            QVERIFY(p.p50 <= p.p95 && p.p95 <= p.p99);
        }
        // The float model is untouched and keeps training.
        QCOMPARE(trainer.evaluate().model.quantileLoss, before);
        QVERIFY(std::isfinite(trainer.trainStep().loss));
    }

    void int8CopyServesPredictions_data()
    {
        QTest::addColumn<ForecasterKind>("kind");
        QTest::newRow("mamba2") << ForecasterKind::Mamba2;
        QTest::newRow("tft") << ForecasterKind::Tft;
    }

    // With INT8 serving on, predictions come from the copy the last refresh kept: FP32 before the
    // first one, then the copy (close to FP32 but not equal), unchanged by training until the next refresh.
    void int8CopyServesPredictions()
    {
        QFETCH(ForecasterKind, kind);
        ForecasterTrainer trainer(config(kind, MixedPrecisionConfig::disabled()), series(400), kTrain, kValidation);
        for (int i = 0; i < 5; ++i) trainer.trainStep();
        const std::size_t anchor = 320;
        const std::vector<double> fp32 = trainer.predict(anchor);
        QCOMPARE(trainer.lastInferenceWeights(), InferenceWeights::Fp32);

        trainer.setInferenceWeights(InferenceWeights::Int8);
        QVERIFY(!trainer.hasInt8Copy());
        QCOMPARE(trainer.predict(anchor), fp32);
        QCOMPARE(trainer.lastInferenceWeights(), InferenceWeights::Fp32);

        trainer.refreshInt8();
        QVERIFY(trainer.hasInt8Copy());
        const std::vector<double> int8 = trainer.predict(anchor);
        QCOMPARE(trainer.lastInferenceWeights(), InferenceWeights::Int8);
        QCOMPARE(int8.size(), fp32.size());
        double diff = 0.0, scale = 0.0;
        for (std::size_t i = 0; i < fp32.size(); ++i) {
            diff = std::max(diff, std::abs(int8[i] - fp32[i]));
            scale = std::max(scale, std::abs(fp32[i]));
        }
        QVERIFY2(diff > 0.0, "the INT8 copy answered exactly like FP32");
        QVERIFY2(diff < 0.05 * scale, qPrintable(QStringLiteral("INT8 forecast off by %1 of %2").arg(diff).arg(scale)));
        const std::size_t h = trainer.config().windowing.horizon;
        const std::size_t q = trainer.config().quantiles.size();
        const std::vector<double> medians = trainer.predictMedians({anchor, anchor + 1});
        for (std::size_t k = 0; k < h; ++k) QCOMPARE(medians[k], int8[k * q + trainer.quantileIndex(0.5)]);

        // Training moves FP32 only; the kept copy answers the same until it is refreshed.
        trainer.trainStep();
        QCOMPARE(trainer.predict(anchor), int8);
        trainer.setInferenceWeights(InferenceWeights::Fp32);
        QVERIFY(trainer.predict(anchor) != fp32);
        trainer.setInferenceWeights(InferenceWeights::Int8);
        trainer.refreshInt8();
        QVERIFY(trainer.predict(anchor) != int8);

        // A checkpoint load drops the copy: FP32 serves until the next refresh.
        const QString path = QDir::temp().filePath(QStringLiteral("foxhunt_int8_serving_ckpt.pt"));
        trainer.saveCheckpoint(path.toStdString());
        trainer.loadCheckpoint(path.toStdString());
        QFile::remove(path);
        QVERIFY(!trainer.hasInt8Copy());
        trainer.predict(anchor);
        QCOMPARE(trainer.lastInferenceWeights(), InferenceWeights::Fp32);
    }
};

} // namespace tst_forecaster_precision

FOXHUNT_TEST_APPLESS_MAIN(tst_forecaster_precision::TestForecasterPrecision)
#include "tst_forecaster_precision.moc"
