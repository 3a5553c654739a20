// SPDX-License-Identifier: GPL-3.0-or-later
// The hardware probe: /proc/cpuinfo texts of real machines parsed into features, cores and names.

#include "models/hardware/machine_probe.h"
#include "tests/support/test_bundle.h"

#include <QTest>

namespace tst_machine_probe {

using namespace foxhunt::models::hardware;

namespace {

// Two hardware threads of one core, as on this project's 2-core build machines (flags shortened).
const char* const kEpycAvx512 = R"(processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC 9R14
physical id	: 0
core id		: 0
cpu cores	: 1
flags		: fpu sse sse2 avx avx2 avx512f avx512dq avx_vnni avx512_bf16 avx512vbmi avx512_vnni avx512_bitalg

processor	: 1
vendor_id	: AuthenticAMD
model name	: AMD EPYC 9R14
physical id	: 0
core id		: 0
cpu cores	: 1
flags		: fpu sse sse2 avx avx2 avx512f avx512dq avx_vnni avx512_bf16 avx512vbmi avx512_vnni avx512_bitalg
)";

// An AVX2-only machine with two cores and no SMT.
const char* const kAvx2Only = R"(processor	: 0
model name	: Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz
physical id	: 0
core id		: 0
flags		: fpu sse sse2 avx avx2 fma

processor	: 1
model name	: Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz
physical id	: 0
core id		: 1
flags		: fpu sse sse2 avx avx2 fma
)";

// Sapphire Rapids: AMX tiles, one socket, SMT.
const char* const kSapphireRapids = R"(processor	: 0
model name	: Intel(R) Xeon(R) Platinum 8488C
physical id	: 0
core id		: 0
flags		: avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8 avx_vnni

processor	: 1
model name	: Intel(R) Xeon(R) Platinum 8488C
physical id	: 0
core id		: 0
flags		: avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8 avx_vnni
)";

// A container's view without topology fields.
const char* const kNoTopology = "processor : 0\nmodel name : QEMU Virtual CPU\nflags : sse2 avx2\n\nprocessor : 1\n"
                                "model name : QEMU Virtual CPU\nflags : sse2 avx2\n";

} // namespace

class TestMachineProbe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parsesCpuinfo_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("logical");
        QTest::addColumn<int>("physical");
        QTest::addColumn<QStringList>("features");
        QTest::addColumn<bool>("nativeBf16");
        QTest::addColumn<bool>("int8Dot");
        QTest::newRow("epyc avx512") << QString::fromLatin1(kEpycAvx512) << "AMD EPYC 9R14" << 2 << 1
                                     << QStringList{"avx2", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni"} << true
                                     << true;
        QTest::newRow("avx2 only") << QString::fromLatin1(kAvx2Only) << "Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz" << 2
                                   << 2 << QStringList{"avx2"} << false << false;
        QTest::newRow("amx") << QString::fromLatin1(kSapphireRapids) << "Intel(R) Xeon(R) Platinum 8488C" << 2 << 1
                             << QStringList{"avx2",     "avx512f",  "avx512_bf16", "avx512_vnni",
                                            "avx_vnni", "amx_bf16", "amx_int8"}
                             << true << true;
        QTest::newRow("no topology") << QString::fromLatin1(kNoTopology) << "QEMU Virtual CPU" << 2 << 2
                                     << QStringList{"avx2"} << false << false;
        QTest::newRow("empty") << QString() << "unknown CPU" << 0 << 0 << QStringList{} << false << false;
    }

    void parsesCpuinfo()
    {
        QFETCH(QString, text);
        QFETCH(QString, model);
        QFETCH(int, logical);
        QFETCH(int, physical);
        QFETCH(QStringList, features);
        QFETCH(bool, nativeBf16);
        QFETCH(bool, int8Dot);
        const std::string bytes = text.toStdString();
        const MachineInfo m = parse_cpuinfo(bytes);
        QCOMPARE(QString::fromStdString(m.cpu_model), model);
        QCOMPARE(m.logical_cpus, logical);
        QCOMPARE(m.physical_cores, physical);
        QStringList names;
        for (const auto& n : m.cpu.names()) names << QString::fromStdString(n);
        QCOMPARE(names, features);
        QCOMPARE(m.cpu.native_bf16(), nativeBf16);
        QCOMPARE(m.cpu.int8_dot_product(), int8Dot);
    }

    void summaryNamesTheFeaturesAndGpus()
    {
        MachineInfo m = parse_cpuinfo(kEpycAvx512);
        QCOMPARE(QString::fromStdString(m.summary()),
                 QStringLiteral(
                     "AMD EPYC 9R14, 1 core / 2 threads; AVX2, AVX-512, AVX512-BF16, AVX512-VNNI, AVX-VNNI; no GPU"));
        m.gpus.push_back({0, "NVIDIA H200", 9, 0, 150ull << 30});
        QVERIFY(
            QString::fromStdString(m.summary()).endsWith(QStringLiteral("cuda:0 NVIDIA H200 (compute 9.0, 150 GiB)")));
        QCOMPARE(find_gpu(m, 0)->capability(), std::string("9.0"));
        QVERIFY(find_gpu(m, 1) == nullptr);
    }

    void fingerprintSeparatesMachines()
    {
        const MachineInfo a = parse_cpuinfo(kEpycAvx512);
        const MachineInfo b = parse_cpuinfo(kAvx2Only);
        QCOMPARE(a.fingerprint(), parse_cpuinfo(kEpycAvx512).fingerprint());
        QVERIFY(a.fingerprint() != b.fingerprint());
        MachineInfo other = a;
        other.torch_version = "2.5.1";
        QVERIFY(a.fingerprint() != other.fingerprint());
    }

    void thisMachineIsRead()
    {
        const MachineInfo& m = this_machine();
        QVERIFY(m.logical_cpus >= 1);
        QVERIFY(m.physical_cores >= 1);
        QVERIFY(!m.torch_version.empty());
        QVERIFY(&m == &this_machine()); // read once
    }
};

} // namespace tst_machine_probe

FOXHUNT_TEST_APPLESS_MAIN(tst_machine_probe::TestMachineProbe)
#include "tst_machine_probe.moc"
