// SPDX-License-Identifier: GPL-3.0-or-later
// Process set-up: freed activations stay in the process (no page faults on the next step), and the
// BLAS behind LibTorch's FP32 products is named.

#include "models/process.h"

#include <torch/torch.h>

#include <QtTest/QtTest>

#include <cstdlib>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace foxhunt::models;

namespace {

long minorFaults()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

constexpr std::int64_t kFloats = std::int64_t{12} << 20; // 48 MiB, like a large activation
constexpr long kPages = (kFloats * 4) / 4096;

/// Minor page faults of one "training step": three 48 MiB tensors made, written and freed.
long faultsOfOneStep()
{
    const long before = minorFaults();
    for (int i = 0; i < 3; ++i) {
        torch::Tensor t = torch::empty({kFloats});
        t.fill_(1.0F);
    }
    return minorFaults() - before;
}

} // namespace

class TestProcess : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void freedTensorsAreNotFaultedInAgain()
    {
        QCOMPARE(processSetup().mallocKeepBytes, std::size_t{0});
        faultsOfOneStep();
        const long withDefaults = faultsOfOneStep();
        // glibc unmaps every block above its mmap threshold on free: each step faults every page in again.
        QVERIFY2(withDefaults > kPages, qPrintable(QString::number(withDefaults)));

        const ProcessSetup setup = prepareProcess();
        QCOMPARE(setup.mallocKeepBytes, kMallocKeepBytes);
        QCOMPARE(processSetup().mallocKeepBytes, kMallocKeepBytes);
        faultsOfOneStep(); // the first step after the change still maps its pages once
        const long kept = faultsOfOneStep();
        QVERIFY2(kept < kPages / 20, qPrintable(QString("%1 faults, %2 before").arg(kept).arg(withDefaults)));
        QCOMPARE(prepareProcess().mallocKeepBytes, kMallocKeepBytes); // idempotent
    }

    void defaultMallocCanBeKept()
    {
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            setenv("FOXHUNT_MALLOC", "default", 1);
            _exit(prepareProcess().mallocKeepBytes == 0 ? 0 : 1);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
    }

    void blasIsNamed()
    {
        const BlasInfo blas = blasInfo();
        QVERIFY(!blas.library.empty());
        const std::string summary = blas.summary();
        QVERIFY(!summary.empty());
        if (blas.library.rfind("OpenBLAS", 0) == 0) {
            QVERIFY2(!blas.kernels.empty(), blas.library.c_str());
            QVERIFY(summary.find(blas.kernels + " kernels") != std::string::npos);
            const char* forced = std::getenv("OPENBLAS_CORETYPE");
            QCOMPARE(blas.forcedBy.empty(), !(forced && *forced));
        }
        BlasInfo forced{"OpenBLAS 0.3.21 DYNAMIC_ARCH", "Haswell", "OPENBLAS_CORETYPE=Haswell"};
        QCOMPARE(forced.summary(), std::string("OpenBLAS, Haswell kernels (forced by OPENBLAS_CORETYPE=Haswell)"));
        QCOMPARE(BlasInfo{"reference BLAS", "", ""}.summary(), std::string("reference BLAS"));
    }
};

QTEST_GUILESS_MAIN(TestProcess)
#include "tst_process.moc"
