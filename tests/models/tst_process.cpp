// SPDX-License-Identifier: GPL-3.0-or-later
// Process set-up: freed activations stay in the process (no page faults on the next step), and the
// BLAS behind LibTorch's FP32 products is named.

#include "models/process.h"
#include "tests/support/test_bundle.h"

#include <torch/torch.h>

#include <QTest>

#include <cstdlib>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tst_process {

using namespace foxhunt::models;

namespace {

long minorFaults()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

/// Minor page faults per training step of a small MLP (1024 -> 2048 -> 1024, batch 512: activations
/// of 2-4 MiB, the sizes of the seed models'), measured in a child process after three warm-up
/// steps; `prepare`: the child calls prepareProcess() first, as every executable does.
long faultsPerTrainStep(bool prepare)
{
    int pipeFds[2];
    if (pipe(pipeFds) != 0) return -1;
    const pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        close(pipeFds[0]);
        if (prepare) prepareProcess();
        torch::manual_seed(0);
        torch::nn::Sequential mlp(torch::nn::Linear(1024, 2048), torch::nn::ReLU(), torch::nn::Linear(2048, 1024));
        torch::optim::Adam adam(mlp->parameters(), torch::optim::AdamOptions(1e-3));
        const torch::Tensor x = torch::randn({512, 1024});
        auto step = [&] {
            adam.zero_grad();
            mlp->forward(x).pow(2).mean().backward();
            adam.step();
        };
        for (int i = 0; i < 3; ++i) step();
        const long before = minorFaults();
        constexpr int kSteps = 5;
        for (int i = 0; i < kSteps; ++i) step();
        const long perStep = (minorFaults() - before) / kSteps;
        const ssize_t written = write(pipeFds[1], &perStep, sizeof perStep);
        _exit(written == sizeof perStep ? 0 : 1);
    }
    close(pipeFds[1]);
    long perStep = -1;
    if (read(pipeFds[0], &perStep, sizeof perStep) != sizeof perStep) perStep = -1;
    close(pipeFds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? perStep : -1;
}

} // namespace

class TestProcess : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void freedTensorsAreNotFaultedInAgain()
    {
        // With glibc's defaults every step maps its activations afresh and faults their pages in
        // (blocks above the mmap threshold are unmapped on free, the heap above the trim threshold
        // trimmed); with the process set up they stay, and a step faults next to nothing.
        const long withDefaults = faultsPerTrainStep(false);
        const long prepared = faultsPerTrainStep(true);
        QVERIFY2(withDefaults > 1000, qPrintable(QString::number(withDefaults)));
        qInfo("minor faults per step: %ld with glibc defaults, %ld set up", withDefaults, prepared);
        QVERIFY2(prepared >= 0 && prepared < withDefaults / 5,
                 qPrintable(QString("%1 faults per step, %2 with glibc's defaults").arg(prepared).arg(withDefaults)));
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

    void setUpOnceAndKept()
    {
        QCOMPARE(processSetup().mallocKeepBytes, std::size_t{0});
        QCOMPARE(prepareProcess().mallocKeepBytes, kMallocKeepBytes);
        QCOMPARE(processSetup().mallocKeepBytes, kMallocKeepBytes);
        QCOMPARE(prepareProcess().mallocKeepBytes, kMallocKeepBytes); // idempotent
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
        const BlasInfo reference{"reference BLAS", "", ""};
        QCOMPARE(reference.summary(), std::string("reference BLAS"));
    }
};

} // namespace tst_process

FOXHUNT_TEST_GUILESS_MAIN(tst_process::TestProcess)
#include "tst_process.moc"
