// SPDX-License-Identifier: GPL-3.0-or-later
// `auto` mixed precision times FP32 and the candidate in turns: a change in the machine's load
// during the measurement must not decide the choice. The steps here are injected: each returns
// a time that is its own cost multiplied by a load that changes part-way through.
#include "engine/session/amp_auto.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <cmath>
#include <string>
#include <vector>

namespace tst_amp_auto {

using namespace foxhunt;
namespace mp = models::precision;

namespace {

mp::DeviceCapabilities bf16Cpu()
{
    mp::DeviceCapabilities c;
    c.device = mp::ComputeDevice::Cpu;
    c.cpu.avx2 = c.cpu.avx512f = c.cpu.avx512_bf16 = true;
    c.name = "test CPU";
    return c;
}

// A machine whose load is 1 for the first `calmSteps` steps (of either model) and `busyLoad`
// after that; `log` records which model ran each step.
struct SharedMachine {
    int calmSteps = 0;
    double busyLoad = 1.0;
    int steps = 0;
    std::string log;
    double load() { return steps++ < calmSteps ? 1.0 : busyLoad; }
};

foxhunt::detail::StepFactory steps(SharedMachine& m, double fp32Cost, double ampCost, int warmup, int rounds)
{
    foxhunt::detail::StepFactory f;
    f.warmup = warmup;
    f.rounds = rounds;
    f.make = [&m, fp32Cost, ampCost](const mp::MixedPrecisionConfig& c) -> foxhunt::detail::TimedStep {
        const bool amp = c.enabled;
        return [&m, amp, fp32Cost, ampCost] {
            m.log += amp ? 'b' : 'a';
            return (amp ? ampCost : fp32Cost) * m.load();
        };
    };
    return f;
}

} // namespace

class TestAmpAuto : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The load triples after the first third of the steps. Timed one after the other, FP32 would
    // run calm and BF16 busy, and a BF16 that is really 0.8x would look 2.4x slower. In turns,
    // each round's ratio is 0.8 whatever the load.
    void loadRiseDoesNotHideAFasterCandidate()
    {
        SharedMachine m;
        m.calmSteps = 12;
        m.busyLoad = 3.0;
        const mp::AmpChoice c = foxhunt::detail::chooseAmp(bf16Cpu(), steps(m, 10.0, 8.0, 2, 15));
        QVERIFY(c.measured);
        QVERIFY2(c.config.enabled, c.reason.c_str());
        QCOMPARE(c.amp_ms / c.fp32_ms, 0.8);
    }

    // The load falls to a third part-way: a BF16 that is really 1.1x slower must not look faster
    // because it ran in the calm part.
    void loadDropDoesNotFlatterASlowerCandidate()
    {
        SharedMachine m;
        m.calmSteps = 14;
        m.busyLoad = 1.0 / 3.0;
        const mp::AmpChoice c = foxhunt::detail::chooseAmp(bf16Cpu(), steps(m, 10.0, 11.0, 2, 15));
        QVERIFY(c.measured);
        QVERIFY2(!c.config.enabled, c.reason.c_str());
        QVERIFY(c.reason.find("FP32 kept") != std::string::npos);
        QVERIFY(std::abs(c.amp_ms / c.fp32_ms - 1.1) < 1e-12);
    }

    // Warm-up steps of both first, then rounds alternating the order: a b, b a, a b, ...
    void turnsAlternateTheOrder()
    {
        SharedMachine m;
        const auto f = steps(m, 10.0, 8.0, 2, 4);
        const auto t = foxhunt::detail::timeInTurns(f.make(mp::MixedPrecisionConfig::disabled()),
                                                    f.make(mp::MixedPrecisionConfig::for_ampere()), f.warmup, f.rounds);
        QCOMPARE(QString::fromStdString(m.log), QStringLiteral("abab"
                                                               "ab"
                                                               "ba"
                                                               "ab"
                                                               "ba"));
        QCOMPARE(t.rounds, 4);
        QCOMPARE(t.fp32_ms, 10.0);
        QCOMPARE(t.candidate_ms, 8.0);
    }

    // A device without a candidate is not measured at all.
    void noCandidateMeansNoMeasurement()
    {
        SharedMachine m;
        mp::DeviceCapabilities plain = bf16Cpu();
        plain.cpu.avx512_bf16 = false;
        const mp::AmpChoice c = foxhunt::detail::chooseAmp(plain, steps(m, 10.0, 1.0, 2, 5));
        QVERIFY(!c.measured);
        QVERIFY(!c.config.enabled);
        QVERIFY(m.log.empty());
    }
};

} // namespace tst_amp_auto

FOXHUNT_TEST_GUILESS_MAIN(tst_amp_auto::TestAmpAuto)
#include "tst_amp_auto.moc"
