// SPDX-License-Identifier: GPL-3.0-or-later
// AutocastGuard: dtype of autocast ops, state restored on exit, nesting, CPU FP16 refused,
// forecasters under BF16 close to FP32 with FP32 master gradients.

#include "models/compat.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/precision/autocast.h"
#include "models/quantile_loss.h"
#include "models/tft/tft.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

namespace tst_autocast {

using namespace foxhunt::models;
using namespace foxhunt::models::precision;

namespace {

double relative_error(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(b.abs().max().item<double>(), 1e-12);
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>() / scale;
}

} // namespace

class TestAutocast : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void disabledConfigChangesNothing()
    {
        torch::nn::Linear layer(8, 4);
        AutocastGuard guard(MixedPrecisionConfig::disabled(), c10::DeviceType::CPU);
        QVERIFY(!guard.active());
        QVERIFY(!compat::autocast_enabled(c10::DeviceType::CPU));
        QCOMPARE(layer(torch::randn({2, 8})).scalar_type(), torch::kFloat);
    }

    void linearRunsInBf16AndStateIsRestored()
    {
        const auto before = compat::autocast_dtype(c10::DeviceType::CPU);
        torch::nn::Linear layer(8, 4);
        auto x = torch::randn({3, 8});
        {
            AutocastGuard guard(MixedPrecisionConfig::for_ampere(), c10::DeviceType::CPU);
            QVERIFY(guard.active());
            QVERIFY(compat::autocast_enabled(c10::DeviceType::CPU));
            QCOMPARE(layer(x).scalar_type(), torch::kBFloat16);
            QCOMPARE(torch::matmul(x, x.t()).scalar_type(), torch::kBFloat16);
            // Elementwise ops are not on the autocast list: they keep their input type.
            QCOMPARE((x + 1).scalar_type(), torch::kFloat);
        }
        QVERIFY(!compat::autocast_enabled(c10::DeviceType::CPU));
        QCOMPARE(compat::autocast_dtype(c10::DeviceType::CPU), before);
        QCOMPARE(layer(x).scalar_type(), torch::kFloat);
    }

    void nestedRegionsKeepTheOuterOneOn()
    {
        torch::nn::Linear layer(4, 4);
        auto x = torch::randn({2, 4});
        {
            AutocastGuard outer(MixedPrecisionConfig::for_ampere(), c10::DeviceType::CPU);
            {
                AutocastGuard inner(MixedPrecisionConfig::for_ampere(), c10::DeviceType::CPU);
                QCOMPARE(layer(x).scalar_type(), torch::kBFloat16);
            }
            QVERIFY(compat::autocast_enabled(c10::DeviceType::CPU));
            QCOMPARE(layer(x).scalar_type(), torch::kBFloat16);
        }
        QVERIFY(!compat::autocast_enabled(c10::DeviceType::CPU));
    }

    void cpuFp16IsRefusedWithASuggestion()
    {
        if (compat::kCpuAutocastSupportsHalf) QSKIP("this LibTorch supports FP16 autocast on the CPU");
        try {
            AutocastGuard guard(MixedPrecisionConfig::for_volta_turing(), c10::DeviceType::CPU);
            QFAIL("FP16 autocast on the CPU should be refused");
        } catch (const c10::Error& e) {
            QVERIFY(QString::fromStdString(e.what_without_backtrace()).contains(QLatin1String("BF16")));
        }
        QVERIFY(!compat::autocast_enabled(c10::DeviceType::CPU));
    }

    void cudaFp16Linear()
    {
        if (!torch::cuda::is_available()) QSKIP("no CUDA device");
        torch::nn::Linear layer(8, 8);
        layer->to(torch::kCUDA);
        AutocastGuard guard(MixedPrecisionConfig::for_volta_turing(), c10::DeviceType::CUDA);
        QCOMPARE(layer(torch::randn({2, 8}, torch::kCUDA)).scalar_type(), torch::kHalf);
    }

    void forecastersUnderBf16_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("mamba2") << "mamba2";
        QTest::newRow("tft") << "tft";
    }

    void forecastersUnderBf16()
    {
        QFETCH(QString, model);
        torch::manual_seed(11);
        const std::vector<double> quantiles{0.1, 0.5, 0.9};
        auto past = torch::randn({4, 24, 5});
        auto future = torch::randn({4, 3, 2});
        auto target = torch::randn({4, 3});
        std::shared_ptr<torch::nn::Module> module;
        std::function<torch::Tensor()> forward;
        if (model == QLatin1String("mamba2")) {
            mamba2::Mamba2Forecaster m(mamba2::Mamba2ForecasterOptions(5, 3, 3).known_features(2));
            module = m.ptr();
            forward = [m, past, future]() mutable { return m->forward(past, future); };
        } else {
            tft::TemporalFusionTransformer t(tft::TftOptions(5, 2, 3, 3).dropout(0.0));
            module = t.ptr();
            forward = [t, past, future]() mutable { return t->forward(past, future).quantiles; };
        }
        module->eval();
        const auto fp32 = forward().detach();
        torch::Tensor amp;
        {
            AutocastGuard guard(MixedPrecisionConfig::for_ampere(), c10::DeviceType::CPU);
            amp = forward();
        }
        QCOMPARE(amp.scalar_type(), torch::kBFloat16); // the output head is a linear
        QVERIFY(torch::isfinite(amp).all().item<bool>());
        const double err = relative_error(amp, fp32);
        QVERIFY2(err < 0.05, qPrintable(QStringLiteral("relative error %1").arg(err)));

        // The loss is computed outside autocast in float64; master gradients stay FP32.
        auto loss = quantile_loss(amp.to(torch::kDouble), target.to(torch::kDouble), quantiles);
        QCOMPARE(loss.scalar_type(), torch::kDouble);
        loss.backward();
        for (const auto& p : module->parameters()) {
            QCOMPARE(p.scalar_type(), torch::kFloat);
            if (p.grad().defined()) QCOMPARE(p.grad().scalar_type(), torch::kFloat);
        }
    }
};

} // namespace tst_autocast

FOXHUNT_TEST_APPLESS_MAIN(tst_autocast::TestAutocast)
#include "tst_autocast.moc"
