// SPDX-License-Identifier: GPL-3.0-or-later
// Exact memory accounting: the counting CPU allocator, peak scopes, and the bytes of parameters,
// gradients and optimizer state.

#include "models/memory/memory_tracker.h"
#include "models/memory/tensor_bytes.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

#include <cstdint>
#include <thread>
#include <vector>

Q_DECLARE_METATYPE(c10::ScalarType)
Q_DECLARE_METATYPE(std::vector<std::int64_t>)

namespace tst_memory_tracker {

using namespace foxhunt::models;

namespace {

enum class OptimizerKind { Adam, AdamAmsgrad, AdamW, SgdMomentum, Sgd, RmsProp };

struct TwoLayers : torch::nn::Module {
    TwoLayers()
        : used(register_module("used", torch::nn::Linear(4, 3))),
          unused(register_module("unused", torch::nn::Linear(3, 2)))
    {
    }
    torch::nn::Linear used;
    torch::nn::Linear unused;
};

} // namespace

} // namespace tst_memory_tracker

Q_DECLARE_METATYPE(tst_memory_tracker::OptimizerKind)

namespace tst_memory_tracker {

class TestMemoryTracker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        torch::set_num_threads(1);
        QVERIFY(installCountingCpuAllocator());
        QVERIFY(countingCpuAllocatorInstalled());
        // A second call keeps the one wrapper (no double counting).
        QVERIFY(installCountingCpuAllocator());
    }

    void allocationRaisesLiveBytesExactly_data()
    {
        QTest::addColumn<c10::ScalarType>("dtype");
        QTest::addColumn<std::vector<std::int64_t>>("shape");
        QTest::addColumn<qulonglong>("bytes");
        QTest::newRow("float 1000") << c10::ScalarType::Float << std::vector<std::int64_t>{1000} << 4000ull;
        QTest::newRow("double 3x7") << c10::ScalarType::Double << std::vector<std::int64_t>{3, 7} << 168ull;
        QTest::newRow("int8 1") << c10::ScalarType::Char << std::vector<std::int64_t>{1} << 1ull;
        QTest::newRow("half 5x5") << c10::ScalarType::Half << std::vector<std::int64_t>{5, 5} << 50ull;
        QTest::newRow("long 2x3x4") << c10::ScalarType::Long << std::vector<std::int64_t>{2, 3, 4} << 192ull;
        QTest::newRow("empty") << c10::ScalarType::Float << std::vector<std::int64_t>{0, 8} << 0ull;
    }

    void allocationRaisesLiveBytesExactly()
    {
        QFETCH(c10::ScalarType, dtype);
        QFETCH(std::vector<std::int64_t>, shape);
        QFETCH(qulonglong, bytes);
        const MemoryCounters before = cpuMemoryCounters();
        {
            auto t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
            QCOMPARE(static_cast<qulonglong>(liveCpuBytes() - before.liveBytes), bytes);
            QCOMPARE(static_cast<qulonglong>(cpuMemoryCounters().allocations - before.allocations),
                     bytes > 0 ? 1ull : 0ull);
        }
        QCOMPARE(liveCpuBytes(), before.liveBytes);
        QCOMPARE(static_cast<qulonglong>(cpuMemoryCounters().frees - before.frees), bytes > 0 ? 1ull : 0ull);
    }

    void countedDataKeepsAlignment()
    {
        for (std::int64_t n : {1, 3, 17, 1000}) {
            auto t = torch::empty({n}, torch::kFloat);
            QCOMPARE(reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 64, std::uintptr_t{0});
        }
    }

    void resizeCountsTheNewStorage()
    {
        const std::size_t before = liveCpuBytes();
        auto t = torch::zeros({100}, torch::kFloat);
        t.resize_({300});
        QCOMPARE(liveCpuBytes() - before, std::size_t{1200});
        t = torch::Tensor();
        QCOMPARE(liveCpuBytes(), before);
    }

    void peakFollowsAndResets()
    {
        resetPeakCpuBytes();
        const std::size_t before = liveCpuBytes();
        QCOMPARE(peakCpuBytes(), before);
        {
            auto a = torch::empty({1000}, torch::kFloat);
            auto b = torch::empty({2000}, torch::kFloat);
        }
        {
            auto c = torch::empty({500}, torch::kDouble);
        }
        QCOMPARE(liveCpuBytes(), before);
        QCOMPARE(peakCpuBytes(), before + 12000);
        resetPeakCpuBytes();
        QCOMPARE(peakCpuBytes(), before);
    }

    void scopeMeasuresPeakAboveItsStart()
    {
        torch::NoGradGuard ng;
        auto held = torch::ones({256}, torch::kFloat); // allocated before: not part of the scope
        PeakMemoryScope scope;
        QCOMPARE(scope.startBytes(), liveCpuBytes());
        QCOMPARE(scope.peakAboveStart(), std::size_t{0});
        {
            // Unary ops: a Scalar operand would allocate a wrapped 0-dim tensor too.
            auto y = held.neg(); // 1024 bytes
            auto z = y.exp();    // 1024 more while y lives
        }
        auto w = held.to(torch::kDouble); // 2048, after the two above were freed
        QCOMPARE(scope.peakAboveStart(), std::size_t{2048});
        auto v = held.neg();
        QCOMPARE(scope.peakAboveStart(), std::size_t{3072});
    }

    void nestedScopeKeepsOuterPeak()
    {
        PeakMemoryScope outer;
        {
            auto big = torch::empty({4096}, torch::kFloat); // 16 KiB, freed before the inner scope
        }
        {
            PeakMemoryScope inner;
            auto small = torch::empty({16}, torch::kFloat);
            QCOMPARE(inner.peakAboveStart(), std::size_t{64});
        }
        QCOMPARE(outer.peakAboveStart(), std::size_t{16384});
    }

    void countsAcrossThreads()
    {
        const MemoryCounters before = cpuMemoryCounters();
        auto work = [](int seed) {
            std::vector<torch::Tensor> keep;
            for (int i = 0; i < 2000; ++i) {
                keep.push_back(torch::empty({1 + (i * 7 + seed) % 300}, torch::kFloat));
                if (keep.size() > 8) keep.erase(keep.begin());
            }
        };
        std::thread a(work, 1), b(work, 2);
        a.join();
        b.join();
        const MemoryCounters after = cpuMemoryCounters();
        QCOMPARE(after.liveBytes, before.liveBytes);
        QCOMPARE(after.allocations - before.allocations, after.frees - before.frees);
        QVERIFY(after.allocations - before.allocations >= 4000);
    }

    void linearWithOptimizerBytes_data()
    {
        QTest::addColumn<OptimizerKind>("kind");
        QTest::addColumn<qulonglong>("optimizerBytes");
        // Linear(4, 3): 12 + 3 floats = 60 bytes per full copy of the parameters.
        QTest::newRow("adam") << OptimizerKind::Adam << 120ull;
        QTest::newRow("adam amsgrad") << OptimizerKind::AdamAmsgrad << 180ull;
        QTest::newRow("adamw") << OptimizerKind::AdamW << 120ull;
        QTest::newRow("sgd momentum") << OptimizerKind::SgdMomentum << 60ull;
        QTest::newRow("sgd") << OptimizerKind::Sgd << 0ull;
        QTest::newRow("rmsprop") << OptimizerKind::RmsProp << 60ull;
    }

    void linearWithOptimizerBytes()
    {
        QFETCH(OptimizerKind, kind);
        QFETCH(qulonglong, optimizerBytes);
        torch::manual_seed(1);
        torch::nn::Linear layer(4, 3);
        std::unique_ptr<torch::optim::Optimizer> opt;
        switch (kind) {
        case OptimizerKind::Adam:
            opt = std::make_unique<torch::optim::Adam>(layer->parameters(), torch::optim::AdamOptions(1e-3));
            break;
        case OptimizerKind::AdamAmsgrad:
            opt = std::make_unique<torch::optim::Adam>(layer->parameters(),
                                                       torch::optim::AdamOptions(1e-3).amsgrad(true));
            break;
        case OptimizerKind::AdamW:
            opt = std::make_unique<torch::optim::AdamW>(layer->parameters(), torch::optim::AdamWOptions(1e-3));
            break;
        case OptimizerKind::SgdMomentum:
            opt = std::make_unique<torch::optim::SGD>(layer->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
            break;
        case OptimizerKind::Sgd:
            opt = std::make_unique<torch::optim::SGD>(layer->parameters(), torch::optim::SGDOptions(0.1));
            break;
        case OptimizerKind::RmsProp:
            opt = std::make_unique<torch::optim::RMSprop>(layer->parameters(), torch::optim::RMSpropOptions(1e-3));
            break;
        }
        QCOMPARE(parameter_bytes(*layer), std::size_t{60});
        QCOMPARE(gradient_bytes(*layer), std::size_t{0});
        QCOMPARE(optimizer_state_bytes(*opt), std::size_t{0});

        opt->zero_grad();
        layer(torch::randn({5, 4})).pow(2).mean().backward();
        opt->step();
        QCOMPARE(parameter_bytes(*layer), std::size_t{60});
        QCOMPARE(gradient_bytes(*layer), std::size_t{60});
        QCOMPARE(static_cast<qulonglong>(optimizer_state_bytes(*opt)), optimizerBytes);
    }

    void gradientBytesCountDefinedGradientsOnly()
    {
        TwoLayers m;
        QCOMPARE(parameter_bytes(m), std::size_t{(12 + 3 + 6 + 2) * 4});
        m.used(torch::randn({2, 4})).sum().backward();
        QVERIFY(!m.unused->weight.grad().defined());
        QCOMPARE(gradient_bytes(m), std::size_t{(12 + 3) * 4});
    }

    void doubleParametersCountEightBytes()
    {
        torch::nn::Linear layer(torch::nn::LinearOptions(10, 10).bias(false));
        layer->to(torch::kDouble);
        QCOMPARE(parameter_bytes(*layer), std::size_t{800});
    }

    void cudaWorkScopeAttributesOnlyOnCuda()
    {
        // On the CPU (or without allocator statistics) the scope measures nothing.
        CudaAttribution cpu;
        {
            CudaWorkScope scope(cpu, /*onCuda=*/false);
            auto t = torch::empty({1024}, torch::kFloat);
        }
        QCOMPARE(cpu.resident, std::int64_t{0});
        QCOMPARE(cpu.peak, std::size_t{0});
        if (!cudaMemoryStatsAvailable()) QSKIP("no CUDA allocator statistics in this build or machine");

        // Two models on one device: each is charged with what its own work keeps and peaks at.
        CudaAttribution a, b;
        torch::Tensor keptByA, keptByB;
        {
            CudaWorkScope scope(a, true);
            keptByA = torch::empty({1 << 20}, torch::TensorOptions(torch::kFloat).device(torch::kCUDA)); // 4 MiB kept
            auto transient = torch::empty({1 << 21}, torch::TensorOptions(torch::kFloat).device(torch::kCUDA)); // 8 MiB
        }
        {
            CudaWorkScope scope(b, true);
            keptByB = torch::empty({1 << 18}, torch::TensorOptions(torch::kFloat).device(torch::kCUDA)); // 1 MiB kept
            {
                PeakMemoryScope inner(MemoryDevice::Cuda); // an inner reset must not hide b's peak
            }
        }
        QCOMPARE(a.residentBytes(), std::size_t{4u << 20});
        QCOMPARE(a.peak, std::size_t{12u << 20});
        QCOMPARE(b.residentBytes(), std::size_t{1u << 20});
        QCOMPARE(b.peak, std::size_t{1u << 20});
        {
            CudaWorkScope scope(a, true);
            keptByA = torch::Tensor(); // a frees what it held
        }
        QCOMPARE(a.residentBytes(), std::size_t{0});
    }
};

} // namespace tst_memory_tracker

FOXHUNT_TEST_APPLESS_MAIN(tst_memory_tracker::TestMemoryTracker)
#include "tst_memory_tracker.moc"
