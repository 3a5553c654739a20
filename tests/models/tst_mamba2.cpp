// SPDX-License-Identifier: GPL-3.0-or-later
// Mamba-2 block and forecaster: initialisation, causality, step() == forward, forward_last() == the
// forward's last bar, seed sizes.

#include "models/kernel_isa.h"
#include "models/mamba2/mamba2_block.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/mamba2/rms_norm_gated.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

namespace tst_mamba2 {

using namespace foxhunt::models::mamba2;

namespace {

double relative_error(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(b.abs().max().item<double>(), 1e-12);
    return (a - b).abs().max().item<double>() / scale;
}

} // namespace

class TestMamba2 : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void initialisationFollowsReference()
    {
        torch::manual_seed(1);
        Mamba2Block block(Mamba2BlockOptions(64).head_dim(8)); // 16 heads
        torch::NoGradGuard ng;
        auto dt = torch::nn::functional::softplus(block->dt_bias);
        QCOMPARE(dt.size(0), int64_t{16});
        QVERIFY(dt.min().item<double>() >= 1e-3 * (1 - 1e-4));
        QVERIFY(dt.max().item<double>() <= 0.1 * (1 + 1e-4));
        auto a = block->A();
        QVERIFY(a.max().item<double>() <= -1.0 + 1e-5);
        QVERIFY(a.min().item<double>() >= -16.0 - 1e-4);
        QVERIFY(torch::equal(block->D, torch::ones({16})));
        // in_proj width = 2 d_inner + 2 G N + H.
        QCOMPARE(block->in_proj->weight.size(0), int64_t{2 * 128 + 2 * 16 + 16});
    }

    void chunkedBlockMatchesSequentialBlock_data()
    {
        QTest::addColumn<int>("ngroups");
        QTest::addColumn<int>("length");
        QTest::newRow("one group, 19 steps") << 1 << 19;
        QTest::newRow("two groups, 40 steps") << 2 << 40;
    }

    void chunkedBlockMatchesSequentialBlock()
    {
        QFETCH(int, ngroups);
        QFETCH(int, length);
        torch::manual_seed(2);
        Mamba2Block chunked(Mamba2BlockOptions(16).head_dim(8).ngroups(ngroups).chunk_size(8));
        Mamba2Block sequential(Mamba2BlockOptions(16).head_dim(8).ngroups(ngroups).sequential_scan(true));
        {
            torch::NoGradGuard ng;
            auto src = chunked->named_parameters();
            for (auto& p : sequential->named_parameters()) p.value().copy_(src[p.key()]);
        }
        auto u = torch::randn({3, length, 16});
        auto yc = chunked(u);
        auto ys = sequential(u);
        QVERIFY(relative_error(yc, ys) <= 1e-4);
        yc.pow(2).sum().backward();
        ys.pow(2).sum().backward();
        auto sp = sequential->named_parameters();
        for (auto& p : chunked->named_parameters())
            QVERIFY2(relative_error(p.value().grad(), sp[p.key()].grad()) <= 1e-4, p.key().c_str());
    }

    void inferenceScanMatchesTrainingPath_data()
    {
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("ngroups");
        QTest::addColumn<int>("dState");
        QTest::newRow("16-channel heads: vector lanes") << 16 << 1 << 16;
        QTest::newRow("4-channel heads, two groups: one channel at a time") << 4 << 2 << 16;
        QTest::newRow("12 states: the scan's scalar form, 88 conv channels") << 16 << 1 << 12;
    }

    void inferenceScanMatchesTrainingPath()
    {
        // Without a graph the block scans with the direct kernel; with one, the chunked matmul form.
        QFETCH(int, headDim);
        QFETCH(int, ngroups);
        QFETCH(int, dState);
        torch::manual_seed(8);
        Mamba2Block block(Mamba2BlockOptions(32).head_dim(headDim).ngroups(ngroups).d_state(dState).chunk_size(8));
        block->eval();
        auto u = torch::randn({3, 29, 32});
        Mamba2State graph_state, direct_state;
        auto with_graph = block->forward_with_state(u, graph_state);
        auto with_graph_last = block->forward_last(u);
        QVERIFY(with_graph.requires_grad());
        torch::NoGradGuard ng;
        auto direct = block->forward_with_state(u, direct_state);
        auto direct_last = block->forward_last(u);
        QVERIFY2(relative_error(direct, with_graph) <= 1e-5,
                 qPrintable(QString::number(relative_error(direct, with_graph))));
        QVERIFY(relative_error(direct_state.ssm, graph_state.ssm) <= 1e-5);
        QVERIFY(relative_error(direct_last, with_graph_last) <= 1e-5);
        QVERIFY(relative_error(direct_last, direct.select(1, 28)) <= 1e-5);
    }

    void blockIsCausal()
    {
        torch::manual_seed(3);
        Mamba2Block block(Mamba2BlockOptions(16).head_dim(8).chunk_size(4));
        torch::NoGradGuard ng;
        auto u = torch::randn({2, 12, 16});
        auto v = u.clone();
        v.narrow(1, 7, 5).normal_();
        auto a = block(u);
        auto b = block(v);
        QVERIFY(torch::allclose(a.narrow(1, 0, 7), b.narrow(1, 0, 7), 1e-6, 1e-6));
        QVERIFY(!torch::allclose(a.narrow(1, 7, 5), b.narrow(1, 7, 5), 1e-3, 1e-3));
    }

    void blockStepMatchesForward()
    {
        torch::manual_seed(4);
        Mamba2Block block(Mamba2BlockOptions(16).head_dim(4).ngroups(2).chunk_size(4));
        torch::NoGradGuard ng;
        const int64_t length = 11;
        auto u = torch::randn({2, length, 16});
        Mamba2State full_state;
        auto full = block->forward_with_state(u, full_state);
        auto state = block->initial_state(2);
        for (int64_t t = 0; t < length; ++t) {
            auto y = block->step(u.select(1, t), state);
            QVERIFY2(relative_error(y, full.select(1, t)) <= 1e-4, qPrintable(QString::number(t)));
        }
        QVERIFY(relative_error(state.ssm, full_state.ssm) <= 1e-4);
        QVERIFY(relative_error(state.conv, full_state.conv) <= 1e-6);
        // Continuing from the forward's state equals stepping the whole way.
        auto next = torch::randn({2, 16});
        auto s2 = full_state;
        QVERIFY(relative_error(block->step(next, s2), block->step(next, state)) <= 1e-4);
    }

    void forwardLastMatchesForward_data()
    {
        QTest::addColumn<int>("ngroups");
        QTest::addColumn<bool>("training");
        QTest::newRow("one group, training") << 1 << true;
        QTest::newRow("two groups, training") << 2 << true;
        QTest::newRow("one group, eval") << 1 << false;
    }

    void forwardLastMatchesForward()
    {
        QFETCH(int, ngroups);
        QFETCH(bool, training);
        torch::manual_seed(12);
        Mamba2Block block(Mamba2BlockOptions(16).head_dim(4).ngroups(ngroups).chunk_size(8));
        block->train(training);
        auto u = torch::randn({3, 21, 16}).requires_grad_(true);
        auto w = torch::randn({3, 16});
        auto full = block(u).select(1, 20);
        auto full_grads = torch::autograd::grad({(full * w).sum()}, {u, block->in_proj->weight, block->A_log});
        auto last = block->forward_last(u);
        auto last_grads = torch::autograd::grad({(last * w).sum()}, {u, block->in_proj->weight, block->A_log});
        QCOMPARE(last.sizes(), torch::IntArrayRef({3, 16}));
        QVERIFY2(relative_error(last, full) <= 1e-5, qPrintable(QString::number(relative_error(last, full))));
        const char* names[] = {"u", "in_proj.weight", "A_log"};
        for (size_t i = 0; i < full_grads.size(); ++i)
            QVERIFY2(relative_error(last_grads[i], full_grads[i]) <= 1e-4, names[i]);
    }

    void forecasterStepMatchesForward()
    {
        torch::manual_seed(5);
        Mamba2Forecaster model(Mamba2ForecasterOptions(/*n_features=*/6, /*horizon=*/5, /*n_quantiles=*/3)
                                   .known_features(2)
                                   .d_model(16)
                                   .head_dim(8)
                                   .chunk_size(8));
        torch::NoGradGuard ng;
        auto x = torch::randn({3, 20, 6});
        auto known = torch::randn({3, 5, 2});
        auto full = model(x, known);
        QCOMPARE(full.sizes(), torch::IntArrayRef({3, 5, 3}));
        auto state = model->initial_state(3);
        torch::Tensor out;
        for (int64_t t = 0; t < 20; ++t) out = model->step(x.select(1, t), known, state);
        QVERIFY(relative_error(out, full) <= 1e-4);
    }

    void forecasterIsDeterministicUnderSeed()
    {
        auto build = [] {
            torch::manual_seed(9);
            return Mamba2Forecaster(Mamba2ForecasterOptions(4, 5, 3).d_model(16).head_dim(8));
        };
        auto a = build();
        auto b = build();
        torch::NoGradGuard ng;
        auto x = torch::randn({2, 10, 4});
        QVERIFY(torch::equal(a(x), b(x)));
    }

    // Without a graph (inference, the INT8 copy) the gated RMS norm takes a shorter path: it must
    // give what the graph path gives, gated or not, over one group or several, and leave x alone.
    void gatedNormWithoutGraphMatchesGraphPath_data()
    {
        QTest::addColumn<int>("groupSize");
        QTest::addColumn<bool>("gated");
        QTest::newRow("whole dim, gated") << 0 << true;
        QTest::newRow("6 groups, gated") << 16 << true;
        QTest::newRow("whole dim, no gate") << 0 << false;
        QTest::newRow("groups of 24: 16-lane blocks and 8 more") << 24 << true;
        QTest::newRow("groups of 24, no gate") << 24 << false;
    }
    void gatedNormWithoutGraphMatchesGraphPath()
    {
        QFETCH(int, groupSize);
        QFETCH(bool, gated);
        torch::manual_seed(7);
        foxhunt::models::mamba2::RmsNormGated norm(
            foxhunt::models::mamba2::RmsNormGatedOptions(96).group_size(groupSize));
        {
            torch::NoGradGuard ng;
            norm->weight.uniform_(0.5, 1.5); // not all ones, so that the weight's place shows
        }
        auto x = torch::randn({3, 5, 96});
        auto z = gated ? torch::randn({3, 5, 96}) : torch::Tensor();
        const auto xBefore = x.clone();
        const auto withGraph = norm(x.requires_grad_(), z).detach();
        x.requires_grad_(false);
        // Float32, gated or not: one pass per row, on every instruction set compiled.
        using foxhunt::models::KernelIsa;
        for (const KernelIsa isa : {KernelIsa::Avx512Vnni, KernelIsa::Avx2, KernelIsa::Generic}) {
            const KernelIsa before = foxhunt::models::cap_kernel_isa(isa);
            torch::Tensor withoutGraph;
            {
                torch::NoGradGuard ng;
                withoutGraph = norm(x, z);
            }
            foxhunt::models::cap_kernel_isa(before);
            QVERIFY2(torch::allclose(withoutGraph, withGraph, 1e-5, 1e-6),
                     qPrintable(QString::number(static_cast<int>(isa))));
            QVERIFY(torch::equal(x, xBefore));
        }
    }

    void seedConfigurationRunsForwardBackward()
    {
        // Seed sizes: batch 8, sequence 60, d_inner 1024 (d_model 512, expand 2), d_state 16.
        torch::manual_seed(6);
        Mamba2Forecaster model(Mamba2ForecasterOptions(/*n_features=*/16, /*horizon=*/5, /*n_quantiles=*/3)
                                   .d_model(512)
                                   .expand(2)
                                   .d_state(16)
                                   .head_dim(64)
                                   .n_layers(1)
                                   .chunk_size(32));
        auto x = torch::randn({8, 60, 16});
        auto q = model(x);
        QCOMPARE(q.sizes(), torch::IntArrayRef({8, 5, 3}));
        q.pow(2).mean().backward();
        auto block = model->blocks->ptr<Mamba2BlockImpl>(0);
        QCOMPARE(block->d_inner(), int64_t{1024});
        QVERIFY(block->A_log.grad().defined());
        QVERIFY(torch::isfinite(block->in_proj->weight.grad()).all().item<bool>());
        QVERIFY(block->dt_bias.grad().abs().sum().item<double>() > 0.0);
    }
};

} // namespace tst_mamba2

FOXHUNT_TEST_APPLESS_MAIN(tst_mamba2::TestMamba2)
#include "tst_mamba2.moc"
