// SPDX-License-Identifier: GPL-3.0-or-later
// Precision choices from the device: the `auto` preset table (seed 000), validate() against the
// device's capabilities, and the measured AMP decision with injected timings.

#include "models/precision/mixed_precision.h"
#include "tests/support/test_bundle.h"

#include <QTest>

Q_DECLARE_METATYPE(foxhunt::models::precision::MixedPrecisionConfig)

namespace tst_mixed_precision {

using namespace foxhunt::models::precision;
namespace hw = foxhunt::models::hardware;

namespace {

DeviceCapabilities cuda(int major, int minor)
{
    DeviceCapabilities c;
    c.device = ComputeDevice::Cuda;
    c.cuda_major = major;
    c.cuda_minor = minor;
    c.name = "test GPU";
    return c;
}

DeviceCapabilities cpu(bool avx512Bf16, bool amxBf16 = false)
{
    DeviceCapabilities c;
    c.device = ComputeDevice::Cpu;
    c.cpu.avx2 = true;
    c.cpu.avx512f = avx512Bf16;
    c.cpu.avx512_bf16 = avx512Bf16;
    c.cpu.amx_bf16 = amxBf16;
    c.name = "test CPU";
    return c;
}

} // namespace

class TestMixedPrecision : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Seed 000: Ampere and newer BF16 (scale 1, static); Volta/Turing FP16 (2048, dynamic); older
    // GPUs and CPUs without native BF16 FP32.
    void autoPresetTable_data()
    {
        QTest::addColumn<int>("device"); // 0 CPU, 1 CUDA
        QTest::addColumn<int>("major");
        QTest::addColumn<int>("minor");
        QTest::addColumn<bool>("avx512Bf16");
        QTest::addColumn<bool>("amxBf16");
        QTest::addColumn<MixedPrecisionConfig>("expected");
        QTest::addColumn<QString>("reasonMentions");
        QTest::newRow("H100 9.0") << 1 << 9 << 0 << false << false << MixedPrecisionConfig::for_ampere() << "9.0";
        QTest::newRow("A100 8.0") << 1 << 8 << 0 << false << false << MixedPrecisionConfig::for_ampere() << "BF16";
        QTest::newRow("RTX 3090 8.6") << 1 << 8 << 6 << false << false << MixedPrecisionConfig::for_ampere() << "8.6";
        QTest::newRow("T4 7.5") << 1 << 7 << 5 << false << false << MixedPrecisionConfig::for_volta_turing() << "FP16";
        QTest::newRow("V100 7.0") << 1 << 7 << 0 << false << false << MixedPrecisionConfig::for_volta_turing()
                                  << "2048";
        QTest::newRow("P100 6.0") << 1 << 6 << 0 << false << false << MixedPrecisionConfig::disabled() << "FP32";
        QTest::newRow("cpu avx512_bf16") << 0 << 0 << 0 << true << false << MixedPrecisionConfig::for_ampere()
                                         << "AVX512-BF16";
        QTest::newRow("cpu amx") << 0 << 0 << 0 << false << true << MixedPrecisionConfig::for_ampere() << "AMX-BF16";
        QTest::newRow("cpu avx2 only") << 0 << 0 << 0 << false << false << MixedPrecisionConfig::disabled()
                                       << "no native BF16";
    }

    void autoPresetTable()
    {
        QFETCH(int, device);
        QFETCH(int, major);
        QFETCH(int, minor);
        QFETCH(bool, avx512Bf16);
        QFETCH(bool, amxBf16);
        QFETCH(MixedPrecisionConfig, expected);
        QFETCH(QString, reasonMentions);
        const DeviceCapabilities caps = device == 1 ? cuda(major, minor) : cpu(avx512Bf16, amxBf16);
        const AmpCandidate c = auto_amp_candidate(caps);
        QVERIFY(c.config == expected);
        QVERIFY2(QString::fromStdString(c.reason).contains(reasonMentions), c.reason.c_str());
        // Whatever auto starts from must pass validate() on the same device.
        QVERIFY(validate(c.config, caps).ok);
    }

    void validateAgainstTheDevice()
    {
        // BF16 on a pre-Ampere GPU is refused, with FP16 offered on Volta/Turing and FP32 below.
        const PrecisionCheck turing = validate(MixedPrecisionConfig::for_ampere(), cuda(7, 5));
        QVERIFY(!turing.ok);
        QVERIFY2(QString::fromStdString(turing.problem).contains(QStringLiteral("8.0")), turing.problem.c_str());
        QVERIFY(turing.usable == MixedPrecisionConfig::for_volta_turing());
        const PrecisionCheck pascal = validate(MixedPrecisionConfig::for_ampere(), cuda(6, 1));
        QVERIFY(!pascal.ok);
        QVERIFY(pascal.usable == MixedPrecisionConfig::disabled());
        QVERIFY(validate(MixedPrecisionConfig::for_ampere(), cuda(8, 0)).ok);
        QVERIFY(validate(MixedPrecisionConfig::for_volta_turing(), cuda(7, 0)).ok);
        // On a CPU BF16 runs anywhere, but without native BF16 it says it will be slower.
        const PrecisionCheck slow = validate(MixedPrecisionConfig::for_ampere(), cpu(false));
        QVERIFY(slow.ok);
        QVERIFY2(QString::fromStdString(slow.suggestion).contains(QStringLiteral("slower")), slow.suggestion.c_str());
        const PrecisionCheck fast = validate(MixedPrecisionConfig::for_ampere(), cpu(true));
        QVERIFY(fast.ok);
        QVERIFY2(fast.suggestion.empty(), fast.suggestion.c_str());
        // The hint for a bad scale names the presets' own scales.
        MixedPrecisionConfig bad = MixedPrecisionConfig::for_volta_turing();
        bad.loss_scale = -1.0;
        const PrecisionCheck badScale = validate(bad, cuda(8, 0));
        QVERIFY(!badScale.ok);
        QVERIFY2(QString::fromStdString(badScale.suggestion).contains(QStringLiteral("2048")),
                 badScale.suggestion.c_str());
        QVERIFY(!QString::fromStdString(badScale.suggestion).contains(QStringLiteral("1024")));
    }

    // The measured decision: the candidate only when it takes at most kAmpMustWin of FP32's step.
    void ampDecision_data()
    {
        QTest::addColumn<double>("fp32");
        QTest::addColumn<double>("amp");
        QTest::addColumn<bool>("chosen");
        QTest::newRow("0.42x") << 440.0 << 185.0 << true;
        QTest::newRow("0.95x exactly") << 100.0 << 95.0 << true;
        QTest::newRow("0.97x: noise") << 100.0 << 97.0 << false;
        QTest::newRow("1.3x: slower") << 56.0 << 74.0 << false;
        QTest::newRow("2.2x: batch 32 DQN") << 0.42 << 0.9 << false;
    }

    void ampDecision()
    {
        QFETCH(double, fp32);
        QFETCH(double, amp);
        QFETCH(bool, chosen);
        const AmpCandidate candidate = auto_amp_candidate(cpu(true));
        const AmpChoice c = decide_amp(candidate, fp32, amp);
        QVERIFY(c.measured);
        QCOMPARE(c.fp32_ms, fp32);
        QCOMPARE(c.amp_ms, amp);
        QCOMPARE(c.config.enabled, chosen);
        if (chosen) QVERIFY(c.config == MixedPrecisionConfig::for_ampere());
        QVERIFY2(QString::fromStdString(c.reason).contains(chosen ? QStringLiteral("BF16 chosen")
                                                                  : QStringLiteral("FP32 kept")),
                 c.reason.c_str());
    }

    void noCandidateMeasuresNothing()
    {
        const AmpChoice c = decide_amp(auto_amp_candidate(cpu(false)), 100.0, 10.0);
        QVERIFY(!c.measured);
        QVERIFY(!c.config.enabled);
        QVERIFY2(QString::fromStdString(c.reason).contains(QStringLiteral("no native BF16")), c.reason.c_str());
    }

    void capabilitiesOfThisMachine()
    {
        const hw::MachineInfo& m = hw::this_machine();
        const DeviceCapabilities caps = capabilities_of(ComputeDevice::Cpu);
        QVERIFY(caps.cpu == m.cpu);
        QCOMPARE(caps.name, m.cpu_model);
        // A CUDA index this machine lacks reads as compute capability 0.0.
        const DeviceCapabilities none = capabilities_of(m, ComputeDevice::Cuda, 99);
        QCOMPARE(none.cuda_major, 0);
    }
};

} // namespace tst_mixed_precision

FOXHUNT_TEST_APPLESS_MAIN(tst_mixed_precision::TestMixedPrecision)
#include "tst_mixed_precision.moc"
