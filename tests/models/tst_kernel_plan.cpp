// SPDX-License-Identifier: GPL-3.0-or-later
// Kernel choice by measurement: with injected timings the plan serves the fastest accurate backend
// per layer and shape, reuses cached timings, and a choice by hand wins; with the real timer the
// served copy's output stays within the measured error.

#include "models/precision/kernel_plan.h"
#include "models/precision/quantizable.h"
#include "models/precision/quantize.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

#include <map>

namespace tst_kernel_plan {

using namespace foxhunt::models::precision;

// Two layers: 64 -> 256 -> 8.
struct TwoLayerImpl : torch::nn::Module {
    struct Options { };
    explicit TwoLayerImpl(Options o = {}) : options(o)
    {
        a = register_module("a", QuantizableLinear(64, 256));
        b = register_module("b", QuantizableLinear(256, 8));
    }
    torch::Tensor forward(const torch::Tensor& x) { return b(torch::relu(a(x))); }
    Options options;
    QuantizableLinear a{nullptr}, b{nullptr};
};
TORCH_MODULE(TwoLayer);

// Timings by rule: OneDnn is fast from 32 rows on, Float fast below; Dequantize never wins.
std::vector<KernelTiming> fakeTimings(const KernelShape& s, const torch::Device&, const std::vector<Int8Backend>& c)
{
    std::vector<KernelTiming> t;
    for (Int8Backend b : c) {
        double us = 100.0;
        if (b == Int8Backend::Float) us = s.rows >= 32 ? 50.0 : 5.0;
        if (b == Int8Backend::OneDnn) us = s.rows >= 32 ? 10.0 : 30.0;
        t.push_back({b, us, b == Int8Backend::OneDnn ? 0.012 : 0.004});
    }
    if (std::find(c.begin(), c.end(), Int8Backend::OneDnn) == c.end())
        t.push_back({Int8Backend::OneDnn, s.rows >= 32 ? 10.0 : 30.0, 0.012});
    return t;
}

struct MapCache : KernelTimingCache {
    std::map<std::string, std::vector<KernelTiming>> entries;
    int finds = 0, stores = 0;
    std::optional<std::vector<KernelTiming>> find(const std::string& m, const std::string& d,
                                                  const KernelShape& s) override
    {
        ++finds;
        auto it = entries.find(m + d + s.key());
        if (it == entries.end()) return std::nullopt;
        return it->second;
    }
    void store(const std::string& m, const std::string& d, const KernelShape& s,
               const std::vector<KernelTiming>& t) override
    {
        ++stores;
        entries[m + d + s.key()] = t;
    }
};

TwoLayer quantizedModel()
{
    torch::manual_seed(3);
    TwoLayer m;
    m->eval();
    return quantize_for_inference(m);
}

class TestKernelPlan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void chooseFastestAccurate_data()
    {
        QTest::addColumn<double>("maxError");
        QTest::addColumn<int>("exclude");
        QTest::addColumn<int>("expected");
        QTest::newRow("fastest") << 0.05 << -1 << int(Int8Backend::OneDnn);
        QTest::newRow("too inaccurate") << 0.01 << -1 << int(Int8Backend::Float);
        QTest::newRow("excluded") << 0.05 << int(Int8Backend::OneDnn) << int(Int8Backend::Float);
        QTest::newRow("nothing qualifies") << 0.001 << -1 << int(Int8Backend::Float);
    }

    void chooseFastestAccurate()
    {
        QFETCH(double, maxError);
        QFETCH(int, exclude);
        QFETCH(int, expected);
        const std::vector<KernelTiming> t{{Int8Backend::Float, 40.0, 0.004},
                                          {Int8Backend::Dequantize, 45.0, 0.004},
                                          {Int8Backend::OneDnn, 9.0, 0.02}};
        std::vector<Int8Backend> ex;
        if (exclude >= 0) ex.push_back(static_cast<Int8Backend>(exclude));
        QCOMPARE(int(choose_backend(t, maxError, ex)), expected);
    }

    void chooseBlockKernel()
    {
        const std::vector<BlockTiming> t{
            {"layers", 900.0, 0.0}, {"fused-fp32", 300.0, 0.002}, {"fused-int8", 200.0, 0.03}};
        QCOMPARE(choose_block_kernel(t, 0.05), std::string("fused-int8"));
        QCOMPARE(choose_block_kernel(t, 0.01), std::string("fused-fp32")); // too inaccurate
        QCOMPARE(choose_block_kernel({{"layers", 100.0, 0.0}, {"fused-fp32", 300.0, 0.0}}, 0.05),
                 std::string("layers")); // slower
        QCOMPARE(choose_block_kernel({}, 0.05), std::string("layers"));
    }

    void planPerLayerAndRows()
    {
        TwoLayer q = quantizedModel();
        MapCache cache;
        KernelPlanOptions o;
        o.timer = fakeTimings;
        o.cache = &cache;
        o.machine = "test machine";
        int timerCalls = 0;
        o.timer = [&](const KernelShape& s, const torch::Device& d, const std::vector<Int8Backend>& c) {
            ++timerCalls;
            return fakeTimings(s, d, c);
        };
        const auto x1 = torch::randn({1, 64}), x64 = torch::randn({64, 64});
        const KernelPlan plan = plan_int8_kernels(
            *q,
            [&] {
                q->forward(x1);
                q->forward(x64);
            },
            o);
        // 2 layers x 2 row counts, each a distinct shape.
        QCOMPARE(int(plan.layers.size()), 4);
        QCOMPARE(plan.measured_shapes, 4);
        QCOMPARE(timerCalls, 4);
        QCOMPARE(cache.stores, 4);
        for (const LayerKernel& k : plan.layers) {
            const Int8Backend expected = k.shape.rows >= 32 ? Int8Backend::OneDnn : Int8Backend::Float;
            QCOMPARE(int(k.backend), int(expected));
            QVERIFY(!k.timings.empty());
        }
        // The plan is applied: each layer serves by rows.
        QCOMPARE(int(q->a->int8->backend_for(1, c10::DeviceType::CPU)), int(Int8Backend::Float));
        QCOMPARE(int(q->a->int8->backend_for(64, c10::DeviceType::CPU)), int(Int8Backend::OneDnn));
        QCOMPARE(int(q->a->int8->backend_for(40, c10::DeviceType::CPU)), int(Int8Backend::OneDnn));
        QCOMPARE(QString::fromStdString(plan.summary()), QStringLiteral("fp32 2, onednn 2"));

        // Once per machine and shape: a second copy is planned from the cache, timing nothing.
        TwoLayer again = quantizedModel();
        const KernelPlan second = plan_int8_kernels(
            *again,
            [&] {
                again->forward(x1);
                again->forward(x64);
            },
            o);
        QCOMPARE(timerCalls, 4);
        QCOMPARE(second.cached_shapes, 4);
        QCOMPARE(second.measured_shapes, 0);
        QVERIFY(second.layers.front().cached);
        // Another machine measures afresh.
        o.machine = "another machine";
        plan_int8_kernels(
            *again, [&] { again->forward(x1); }, o);
        QCOMPARE(timerCalls, 6);
    }

    void handChoiceWins()
    {
        TwoLayer q = quantizedModel();
        KernelPlanOptions o;
        o.backend = Int8Backend::Dequantize;
        o.timer = [](const KernelShape&, const torch::Device&,
                     const std::vector<Int8Backend>&) -> std::vector<KernelTiming> {
            throw std::logic_error("a choice by hand measures nothing");
        };
        const KernelPlan plan = plan_int8_kernels(
            *q,
            [&] {
                q->forward(torch::randn({64, 64}));
            },
            o);
        QVERIFY(plan.by_hand);
        QCOMPARE(plan.measured_shapes, 0);
        for (const LayerKernel& k : plan.layers) QCOMPARE(int(k.backend), int(Int8Backend::Dequantize));
    }

    // Real timings on this machine: whatever the plan chose, the copy computes what the float
    // model does within the per-layer bound, and a Float or Dequantize choice is exact to the
    // int8 weights.
    void realTimerKeepsAccuracy()
    {
        torch::manual_seed(3);
        TwoLayer m;
        m->eval();
        TwoLayer q = quantize_for_inference(m);
        const auto x = torch::randn({32, 64});
        const KernelPlan plan = plan_int8_kernels(*q, [&] {
            q->forward(x);
            q->forward(x.narrow(0, 0, 1));
        });
        QCOMPARE(int(plan.layers.size()), 4);
        for (const LayerKernel& k : plan.layers) {
            QVERIFY(!k.timings.empty());
            for (const KernelTiming& t : k.timings) QVERIFY(t.micros > 0.0);
        }
        torch::NoGradGuard ng;
        const auto ref = m->forward(x);
        const double err = ((q->forward(x) - ref).norm() / ref.norm()).item<double>();
        QVERIFY2(err < 0.05, qPrintable(QString::number(err)));
    }

    void floatBackendIsTheDequantizedWeight()
    {
        torch::manual_seed(1);
        const auto w = torch::randn({16, 8}), b = torch::randn({16});
        Int8Linear l(w, b);
        const auto x = torch::randn({4, 8});
        l->set_plan({{4, Int8Backend::Dequantize}});
        const auto deq = l->forward(x);
        l->set_plan({{4, Int8Backend::Float}});
        QCOMPARE(l->cache_bytes() >= 0, true);
        const auto fl = l->forward(x);
        QVERIFY(torch::allclose(deq, fl, 1e-6, 1e-6));
        QVERIFY(l->cache_bytes() >= 16 * 8 * 4);                                       // the float weight is counted
        QVERIFY_THROWS_EXCEPTION(c10::Error, l->set_plan({{4, Int8Backend::Static}})); // no calibrated range
    }
};

} // namespace tst_kernel_plan

FOXHUNT_TEST_APPLESS_MAIN(tst_kernel_plan::TestKernelPlan)
#include "tst_kernel_plan.moc"
