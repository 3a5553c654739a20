// SPDX-License-Identifier: GPL-3.0-or-later
// LossScaler against torch.amp.GradScaler's rules: scale, growth tracker and skips after each step.

#include "models/precision/loss_scaler.h"
#include "models/precision/mixed_precision.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace tst_loss_scaler {

using namespace foxhunt::models::precision;

namespace {

// Sets every gradient to `scale` (a gradient of 1 after unscaling), or inf/NaN in one element.
void set_scaled_grads(const std::vector<torch::Tensor>& params, double scale, QChar kind)
{
    for (const auto& p : params) p.mutable_grad() = torch::full_like(p, scale);
    torch::NoGradGuard ng;
    if (kind == QLatin1Char('i')) params.front().mutable_grad().view(-1)[0] = std::numeric_limits<float>::infinity();
    if (kind == QLatin1Char('n')) params.back().mutable_grad().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
}

} // namespace

class TestLossScaler : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void presets()
    {
        QVERIFY(!MixedPrecisionConfig::disabled().enabled);
        QVERIFY(!MixedPrecisionConfig::disabled().scales_loss());
        const auto ampere = MixedPrecisionConfig::for_ampere();
        QVERIFY(ampere.enabled);
        QCOMPARE(ampere.dtype, HalfType::BF16);
        QCOMPARE(ampere.loss_scale, 1.0);
        QVERIFY(!ampere.dynamic_loss_scale);
        QVERIFY(!ampere.scales_loss());
        const auto volta = MixedPrecisionConfig::for_volta_turing();
        QCOMPARE(volta.dtype, HalfType::F16);
        QCOMPARE(volta.loss_scale, 2048.0);
        QVERIFY(volta.dynamic_loss_scale);
        QVERIFY(volta.scales_loss());
        QCOMPARE(LossScaler(volta).current_scale(), 2048.0);
        QCOMPARE(LossScaler(ampere).current_scale(), 1.0);
        QCOMPARE(MixedPrecisionConfig{}.loss_scale, 1024.0);
        QCOMPARE(MixedPrecisionConfig{}.growth_factor, 2.0);
        QCOMPARE(MixedPrecisionConfig{}.backoff_factor, 0.5);
        QCOMPARE(MixedPrecisionConfig{}.growth_interval, int64_t{2000});
    }

    void validation()
    {
        const auto cpu = validate(MixedPrecisionConfig::for_volta_turing(), ComputeDevice::Cpu);
        QVERIFY(!cpu.ok);
        QVERIFY(QString::fromStdString(cpu.problem).contains(QLatin1String("CUDA")));
        QVERIFY(QString::fromStdString(cpu.suggestion).contains(QLatin1String("BF16")));
        QCOMPARE(cpu.usable.dtype, HalfType::BF16);
        QVERIFY(validate(cpu.usable, ComputeDevice::Cpu).ok);
        QVERIFY(validate(MixedPrecisionConfig::for_volta_turing(), ComputeDevice::Cuda).ok);
        QVERIFY(validate(MixedPrecisionConfig::disabled(), ComputeDevice::Cpu).ok);
        auto bad = MixedPrecisionConfig::for_volta_turing();
        bad.backoff_factor = 1.5;
        QVERIFY(!validate(bad, ComputeDevice::Cuda).ok);
        QCOMPARE(half_type_from_string("BFloat16"), HalfType::BF16);
        QCOMPARE(half_type_from_string("fp16"), HalfType::F16);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, half_type_from_string("int8"));
    }

    // Steps: 'c' clean, 'i' one inf gradient, 'n' one NaN gradient. Expected values after each
    // update() follow GradScaler: backoff and reset on overflow; grow and reset after `interval`
    // clean steps unless the grown scale would be inf; static scales never change.
    void rules_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("initial");
        QTest::addColumn<int>("interval");
        QTest::addColumn<QString>("steps");
        QTest::addColumn<QList<double>>("scales");
        QTest::addColumn<QList<int>>("trackers");
        QTest::addColumn<QList<int>>("skips");

        QTest::newRow("grows every 3 clean steps")
            << "f16" << 8.0 << 3 << "ccccccc" << QList<double>{8, 8, 16, 16, 16, 32, 32}
            << QList<int>{1, 2, 0, 1, 2, 0, 1} << QList<int>{0, 0, 0, 0, 0, 0, 0};
        QTest::newRow("overflow backs off and resets the tracker")
            << "f16" << 8.0 << 3 << "cciccc" << QList<double>{8, 8, 4, 4, 4, 8} << QList<int>{1, 2, 0, 1, 2, 0}
            << QList<int>{0, 0, 1, 1, 1, 1};
        QTest::newRow("repeated overflow halves each time")
            << "f16" << 8.0 << 3 << "iiin" << QList<double>{4, 2, 1, 0.5} << QList<int>{0, 0, 0, 0}
            << QList<int>{1, 2, 3, 4};
        QTest::newRow("NaN counts as overflow") << "f16" << 1024.0 << 2000 << "cnc" << QList<double>{1024, 512, 512}
                                                << QList<int>{1, 0, 1} << QList<int>{0, 1, 1};
        QTest::newRow("interval 1 grows every clean step") << "f16" << 1.0 << 1 << "ccic" << QList<double>{2, 4, 2, 4}
                                                           << QList<int>{0, 0, 0, 0} << QList<int>{0, 0, 1, 1};
        QTest::newRow("never grows to inf")
            << "f16" << std::ldexp(1.0, 127) << 1 << "cc" << QList<double>{std::ldexp(1.0, 127), std::ldexp(1.0, 127)}
            << QList<int>{0, 0} << QList<int>{0, 0};
        QTest::newRow("static scale skips but keeps its value")
            << "static" << 8.0 << 3 << "cicc" << QList<double>{8, 8, 8, 8} << QList<int>{0, 0, 0, 0}
            << QList<int>{0, 1, 1, 1};
        QTest::newRow("bf16 (for_ampere) neither scales nor checks")
            << "ampere" << 1.0 << 3 << "cic" << QList<double>{1, 1, 1} << QList<int>{0, 0, 0} << QList<int>{0, 0, 0};
        QTest::newRow("disabled neither scales nor checks")
            << "disabled" << 1.0 << 3 << "ic" << QList<double>{1, 1} << QList<int>{0, 0} << QList<int>{0, 0};
    }

    void rules()
    {
        QFETCH(QString, preset);
        QFETCH(double, initial);
        QFETCH(int, interval);
        QFETCH(QString, steps);
        QFETCH(QList<double>, scales);
        QFETCH(QList<int>, trackers);
        QFETCH(QList<int>, skips);

        MixedPrecisionConfig config = MixedPrecisionConfig::for_volta_turing();
        if (preset == QLatin1String("static")) config.dynamic_loss_scale = false;
        if (preset == QLatin1String("ampere")) config = MixedPrecisionConfig::for_ampere();
        if (preset == QLatin1String("disabled")) config = MixedPrecisionConfig::disabled();
        if (config.scales_loss()) config.loss_scale = initial;
        config.growth_interval = interval;
        LossScaler scaler(config);
        const bool checks = config.scales_loss();

        torch::manual_seed(3);
        torch::nn::Linear layer(3, 2);
        torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(0.1));
        for (qsizetype i = 0; i < steps.size(); ++i) {
            const QChar kind = steps.at(i);
            const double before_scale = scaler.current_scale();
            set_scaled_grads(layer->parameters(), before_scale, kind);
            const auto before = layer->weight.detach().clone();
            QCOMPARE(scaler.scale(torch::ones({})).item<double>(), before_scale);
            scaler.unscale(sgd);
            const bool stepped = scaler.step(sgd);
            scaler.update();
            const bool overflow = kind != QLatin1Char('c');
            QCOMPARE(stepped, !(overflow && checks));
            QCOMPARE(scaler.last_step_overflowed(), overflow && checks);
            QCOMPARE(scaler.current_scale(), scales.at(i));
            QCOMPARE(scaler.growth_tracker(), int64_t{trackers.at(i)});
            QCOMPARE(scaler.skipped_steps(), int64_t{skips.at(i)});
            if (!overflow) {
                // Unscaled gradient is exactly 1, so SGD moves every weight by -lr.
                QVERIFY(torch::allclose(layer->weight.detach(), before - 0.1, 1e-6, 1e-6));
            }
        }
    }

    void unscaleTwiceIsAnError()
    {
        LossScaler scaler(MixedPrecisionConfig::for_volta_turing());
        torch::nn::Linear layer(2, 2);
        torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(0.1));
        set_scaled_grads(layer->parameters(), 2048.0, QLatin1Char('c'));
        scaler.unscale(sgd);
        QVERIFY_THROWS_EXCEPTION(c10::Error, scaler.unscale(sgd));
        scaler.step(sgd);
        scaler.update();
        set_scaled_grads(layer->parameters(), 2048.0, QLatin1Char('c'));
        scaler.unscale(sgd); // allowed again after update()
        QVERIFY(torch::allclose(layer->weight.grad(), torch::ones_like(layer->weight)));
    }

    void infGradientLeavesWeightsAndOptimizerStateAlone()
    {
        torch::manual_seed(5);
        torch::nn::Linear layer(4, 3);
        torch::optim::AdamW adam(layer->parameters(), torch::optim::AdamWOptions(1e-2));
        LossScaler scaler(MixedPrecisionConfig::for_volta_turing());
        auto x = torch::randn({8, 4});
        auto train = [&](bool inject) {
            adam.zero_grad();
            scaler.scale(layer(x).pow(2).mean()).backward();
            if (inject) {
                torch::NoGradGuard ng;
                layer->bias.mutable_grad()[1] = std::numeric_limits<float>::infinity();
            }
            scaler.unscale(adam);
            const bool stepped = scaler.step(adam);
            scaler.update();
            return stepped;
        };
        QVERIFY(train(false)); // creates Adam's moments
        std::vector<torch::Tensor> weights, moments;
        for (const auto& p : layer->parameters()) weights.push_back(p.detach().clone());
        std::vector<int64_t> counts;
        for (const auto& [key, state] : adam.state()) {
            const auto& s = static_cast<const torch::optim::AdamWParamState&>(*state);
            moments.push_back(s.exp_avg().clone());
            moments.push_back(s.exp_avg_sq().clone());
            counts.push_back(s.step());
        }
        QVERIFY(!moments.empty());

        QVERIFY(!train(true));
        QCOMPARE(scaler.skipped_steps(), int64_t{1});
        QCOMPARE(scaler.current_scale(), 1024.0);
        const auto params = layer->parameters();
        for (size_t i = 0; i < params.size(); ++i) QVERIFY(torch::equal(params[i].detach(), weights[i]));
        size_t m = 0, c = 0;
        for (const auto& [key, state] : adam.state()) {
            const auto& s = static_cast<const torch::optim::AdamWParamState&>(*state);
            QVERIFY(torch::equal(s.exp_avg(), moments[m++]));
            QVERIFY(torch::equal(s.exp_avg_sq(), moments[m++]));
            QCOMPARE(s.step(), counts[c++]);
        }

        QVERIFY(train(false)); // and a clean step moves them again
        QVERIFY(!torch::equal(layer->weight.detach(), weights[0]));
    }

    void stateRoundTrip()
    {
        LossScaler a(MixedPrecisionConfig::for_volta_turing());
        torch::nn::Linear layer(2, 2);
        torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(0.1));
        set_scaled_grads(layer->parameters(), a.current_scale(), QLatin1Char('i'));
        a.step(sgd);
        a.update();
        LossScaler b(MixedPrecisionConfig::for_volta_turing());
        b.load_state(a.state());
        QCOMPARE(b.current_scale(), a.current_scale());
        QCOMPARE(b.skipped_steps(), int64_t{1});
    }
};

} // namespace tst_loss_scaler

FOXHUNT_TEST_APPLESS_MAIN(tst_loss_scaler::TestLossScaler)
#include "tst_loss_scaler.moc"
