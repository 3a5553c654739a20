// SPDX-License-Identifier: GPL-3.0-or-later
// The chunked SSD scan and the final-state shortcut against the sequential recurrence: values and
// gradients; the inference scan kernel (every instruction set it is compiled for) against it too.

#include "models/kernel_isa.h"
#include "models/mamba2/ssd.h"
#include "models/precision/autocast.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace tst_ssd {

using namespace foxhunt::models::mamba2;

namespace {

double relative_error(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(b.abs().max().item<double>(), 1e-12);
    return (a - b).abs().max().item<double>() / scale;
}

struct ScanInputs {
    torch::Tensor x, dt, A, B, C, h0;
};

ScanInputs make_inputs(int64_t batch, int64_t length, int64_t heads, int64_t head_dim, int64_t groups, int64_t state,
                       bool with_initial)
{
    ScanInputs in;
    in.x = torch::randn({batch, length, heads, head_dim}).requires_grad_(true);
    in.dt = torch::nn::functional::softplus(torch::randn({batch, length, heads}) - 2.0).detach().requires_grad_(true);
    in.A = (-torch::empty({heads}).uniform_(1.0, 16.0)).requires_grad_(true);
    in.B = torch::randn({batch, length, groups, state}).requires_grad_(true);
    in.C = torch::randn({batch, length, groups, state}).requires_grad_(true);
    if (with_initial) in.h0 = torch::randn({batch, heads, head_dim, state}).requires_grad_(true);
    return in;
}

} // namespace

class TestSsd : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void segsumMatchesHandComputed()
    {
        auto a = torch::tensor({1.0f, 2.0f, 3.0f});
        auto s = segsum(a);
        const float inf = std::numeric_limits<float>::infinity();
        auto expected = torch::tensor({0.0f, -inf, -inf, 2.0f, 0.0f, -inf, 5.0f, 3.0f, 0.0f}).view({3, 3});
        QVERIFY(torch::equal(s, expected));
    }

    void chunkedMatchesSequential_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("state");
        QTest::addColumn<int>("chunk");
        QTest::addColumn<bool>("initial");
        QTest::newRow("single-head exact chunks") << 1 << 16 << 1 << 4 << 1 << 8 << 4 << false;
        QTest::newRow("batch2 length not multiple") << 2 << 13 << 4 << 3 << 2 << 5 << 4 << false;
        QTest::newRow("ngroups3 six heads") << 3 << 37 << 6 << 8 << 3 << 16 << 8 << true;
        QTest::newRow("groups equal heads") << 2 << 21 << 4 << 2 << 4 << 3 << 5 << true;
        QTest::newRow("shorter than chunk") << 2 << 5 << 2 << 4 << 1 << 4 << 16 << false;
        QTest::newRow("seed length 60 chunk 16") << 2 << 60 << 4 << 8 << 2 << 16 << 16 << true;
    }

    void chunkedMatchesSequential()
    {
        QFETCH(int, batch);
        QFETCH(int, length);
        QFETCH(int, heads);
        QFETCH(int, headDim);
        QFETCH(int, groups);
        QFETCH(int, state);
        QFETCH(int, chunk);
        QFETCH(bool, initial);
        torch::manual_seed(7);
        auto in = make_inputs(batch, length, heads, headDim, groups, state, initial);
        auto wy = torch::randn({batch, length, heads, headDim});
        auto ws = torch::randn({batch, heads, headDim, state});

        std::vector<torch::Tensor> leaves{in.x, in.dt, in.A, in.B, in.C};
        if (initial) leaves.push_back(in.h0);

        auto ref = ssd_sequential(in.x, in.dt, in.A, in.B, in.C, in.h0);
        auto ref_grads = torch::autograd::grad({(ref.y * wy).sum() + (ref.final_state * ws).sum()}, leaves);
        auto chk = ssd_chunked(in.x, in.dt, in.A, in.B, in.C, chunk, in.h0);
        auto chk_grads = torch::autograd::grad({(chk.y * wy).sum() + (chk.final_state * ws).sum()}, leaves);

        QCOMPARE(chk.y.sizes(), ref.y.sizes());
        QCOMPARE(chk.final_state.sizes(), ref.final_state.sizes());
        QVERIFY2(relative_error(chk.y, ref.y) <= 1e-4, qPrintable(QString::number(relative_error(chk.y, ref.y))));
        QVERIFY(relative_error(chk.final_state, ref.final_state) <= 1e-4);
        const char* names[] = {"x", "dt", "A", "B", "C", "h0"};
        for (size_t i = 0; i < leaves.size(); ++i) {
            QVERIFY(torch::isfinite(chk_grads[i]).all().item<bool>());
            const double err = relative_error(chk_grads[i], ref_grads[i]);
            QVERIFY2(err <= 1e-4, qPrintable(QStringLiteral("grad %1 rel err %2").arg(names[i]).arg(err)));
        }
    }

    void finalStateMatchesSequential_data()
    {
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("length");
        QTest::addColumn<bool>("initial");
        QTest::newRow("one group, 60 steps") << 1 << 60 << false;
        QTest::newRow("two groups, 37 steps, initial state") << 2 << 37 << true;
        QTest::newRow("one step") << 1 << 1 << true;
    }

    void finalStateMatchesSequential()
    {
        QFETCH(int, groups);
        QFETCH(int, length);
        QFETCH(bool, initial);
        torch::manual_seed(11);
        auto in = make_inputs(2, length, 4, 8, groups, 16, initial);
        auto ws = torch::randn({2, 4, 8, 16});
        std::vector<torch::Tensor> leaves{in.x, in.dt, in.A, in.B};
        if (initial) leaves.push_back(in.h0);

        auto ref = ssd_sequential(in.x, in.dt, in.A, in.B, in.C, in.h0).final_state;
        auto ref_grads = torch::autograd::grad({(ref * ws).sum()}, leaves);
        auto got = ssd_final_state(in.x, in.dt, in.A, in.B, in.h0);
        auto got_grads = torch::autograd::grad({(got * ws).sum()}, leaves);

        QCOMPARE(got.sizes(), ref.sizes());
        QVERIFY2(relative_error(got, ref) <= 1e-4, qPrintable(QString::number(relative_error(got, ref))));
        const char* names[] = {"x", "dt", "A", "B", "h0"};
        for (size_t i = 0; i < leaves.size(); ++i) {
            const double err = relative_error(got_grads[i], ref_grads[i]);
            QVERIFY2(err <= 1e-4, qPrintable(QStringLiteral("grad %1 rel err %2").arg(names[i]).arg(err)));
        }
    }

    void directScanMatchesSequential_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("state");
        QTest::addColumn<bool>("initial");
        // 16-channel lanes with 8, 16 or 32 state registers; lanes plus channels left over; any size.
        QTest::newRow("seed head: 64 channels, 16 states") << 2 << 60 << 4 << 64 << 1 << 16 << true;
        QTest::newRow("40 channels, 8 states, 2 groups") << 2 << 23 << 4 << 40 << 2 << 8 << false;
        QTest::newRow("16 channels, 32 states") << 1 << 17 << 2 << 16 << 1 << 32 << true;
        QTest::newRow("5 channels, 5 states, 3 groups") << 3 << 13 << 6 << 5 << 3 << 5 << true;
        QTest::newRow("one step") << 2 << 1 << 2 << 16 << 2 << 16 << true;
    }

    void directScanMatchesSequential()
    {
        QFETCH(int, batch);
        QFETCH(int, length);
        QFETCH(int, heads);
        QFETCH(int, headDim);
        QFETCH(int, groups);
        QFETCH(int, state);
        QFETCH(bool, initial);
        torch::manual_seed(21);
        auto in = make_inputs(batch, length, heads, headDim, groups, state, initial);
        torch::NoGradGuard ng;
        auto D = torch::randn({heads});
        // x, B and C as the block passes them: slices of one wider row (strided, channels contiguous).
        const int64_t width = heads * headDim + 2 * groups * state;
        auto row = torch::randn({batch, length, width + 3});
        row.narrow(2, 1, heads * headDim).copy_(in.x.reshape({batch, length, heads * headDim}));
        row.narrow(2, 1 + heads * headDim, groups * state).copy_(in.B.reshape({batch, length, groups * state}));
        row.narrow(2, 1 + heads * headDim + groups * state, groups * state)
            .copy_(in.C.reshape({batch, length, groups * state}));
        auto x = row.narrow(2, 1, heads * headDim).view({batch, length, heads, headDim});
        auto B = row.narrow(2, 1 + heads * headDim, groups * state).view({batch, length, groups, state});
        auto C =
            row.narrow(2, 1 + heads * headDim + groups * state, groups * state).view({batch, length, groups, state});
        QVERIFY(!x.is_contiguous());
        QVERIFY(ssd_scan_applies(x, in.dt, in.A, B, C));

        auto ref = ssd_sequential(in.x, in.dt, in.A, in.B, in.C, in.h0);
        auto ref_y = ref.y + in.x * D.view({1, 1, heads, 1});
        using foxhunt::models::KernelIsa;
        for (const KernelIsa isa : {KernelIsa::Avx512Vnni, KernelIsa::Avx2, KernelIsa::Generic}) {
            const KernelIsa before = foxhunt::models::cap_kernel_isa(isa);
            auto got = ssd_scan(x, in.dt, in.A, B, C, D, in.h0);
            auto last = ssd_scan(x, in.dt, in.A, B, C, {}, in.h0, /*outputs=*/false);
            foxhunt::models::cap_kernel_isa(before);
            const QString where = QStringLiteral("isa %1").arg(static_cast<int>(isa));
            QCOMPARE(got.y.sizes(), ref.y.sizes());
            QVERIFY2(relative_error(got.y, ref_y) <= 1e-5,
                     qPrintable(where + QStringLiteral(" y %1").arg(relative_error(got.y, ref_y))));
            QVERIFY2(relative_error(got.final_state, ref.final_state) <= 1e-5, qPrintable(where));
            QVERIFY(!last.y.defined());
            QVERIFY2(relative_error(last.final_state, ref.final_state) <= 1e-5, qPrintable(where));
        }
    }

    void directScanIsForInferenceOnly()
    {
        torch::manual_seed(5);
        auto in = make_inputs(1, 6, 2, 16, 1, 16, false); // every operand requires a gradient
        QVERIFY(!ssd_scan_applies(in.x, in.dt, in.A, in.B, in.C));
        bool threw = false;
        try {
            ssd_scan(in.x, in.dt, in.A, in.B, in.C);
        } catch (const c10::Error&) {
            threw = true;
        }
        QVERIFY(threw);
        {
            torch::NoGradGuard ng;
            QVERIFY(ssd_scan_applies(in.x, in.dt, in.A, in.B, in.C));
            QVERIFY(!ssd_scan_applies(in.x.to(torch::kDouble), in.dt, in.A, in.B, in.C));
        }
    }

    void chunkSizeDoesNotChangeResult()
    {
        torch::manual_seed(3);
        auto in = make_inputs(2, 50, 4, 4, 2, 8, false);
        torch::NoGradGuard ng;
        auto a = ssd_chunked(in.x, in.dt, in.A, in.B, in.C, 7);
        auto b = ssd_chunked(in.x, in.dt, in.A, in.B, in.C, 64);
        QVERIFY(relative_error(a.y, b.y) <= 1e-4);
        QVERIFY(relative_error(a.final_state, b.final_state) <= 1e-4);
    }

    void decayScalesWholeState()
    {
        // One head, one step from a known state: h1 = exp(dt*A) h0 + dt x B^T, y = h1 C.
        auto x = torch::tensor({2.0f}).view({1, 1, 1, 1});
        auto dt = torch::tensor({0.5f}).view({1, 1, 1});
        auto A = torch::tensor({-2.0f});
        auto B = torch::tensor({1.0f, 3.0f}).view({1, 1, 1, 2});
        auto C = torch::tensor({1.0f, -1.0f}).view({1, 1, 1, 2});
        auto h0 = torch::tensor({4.0f, 8.0f}).view({1, 1, 1, 2});
        auto r = ssd_sequential(x, dt, A, B, C, h0);
        const float decay = std::exp(-1.0f);
        const float h1a = decay * 4.0f + 0.5f * 2.0f * 1.0f;
        const float h1b = decay * 8.0f + 0.5f * 2.0f * 3.0f;
        QVERIFY(std::abs(r.final_state[0][0][0][0].item<float>() - h1a) < 1e-5f);
        QVERIFY(std::abs(r.final_state[0][0][0][1].item<float>() - h1b) < 1e-5f);
        QVERIFY(std::abs(r.y.flatten()[0].item<float>() - (h1a - h1b)) < 1e-5f);
        auto c = ssd_chunked(x, dt, A, B, C, 4, h0);
        QVERIFY(relative_error(c.y, r.y) <= 1e-5);
    }

    void decaysStayFp32UnderAutocast()
    {
        // With x = 0 the state after the scan is h0 decayed alone, exp(sum_t dt_t A) h0: under BF16
        // autocast the log-decay sums must still be float (in BF16 the decay is off by ~|sum| / 256).
        torch::manual_seed(11);
        const int64_t batch = 2, length = 40, heads = 4, head_dim = 3, state = 5;
        auto x = torch::zeros({batch, length, heads, head_dim});
        auto dt = torch::nn::functional::softplus(torch::randn({batch, length, heads}) - 2.0);
        auto A = -torch::empty({heads}).uniform_(1.0, 16.0);
        auto B = torch::randn({batch, length, 1, state});
        auto C = torch::randn({batch, length, 1, state});
        auto h0 = torch::randn({batch, heads, head_dim, state});
        auto total = (dt.to(torch::kDouble) * A.to(torch::kDouble)).sum(1); // [B, H]
        auto expected = torch::exp(total).view({batch, heads, 1, 1}) * h0.to(torch::kDouble);
        QVERIFY(total.max().item<double>() < -1.0); // decays large enough for BF16 sums to miss
        foxhunt::models::precision::MixedPrecisionConfig bf16;
        bf16.enabled = true;
        bf16.dtype = foxhunt::models::precision::HalfType::BF16;
        foxhunt::models::precision::AutocastGuard autocast(bf16, c10::DeviceType::CPU);
        QVERIFY(autocast.active());
        const auto chunked = ssd_chunked(x, dt, A, B, C, /*chunk_size=*/16, h0).final_state;
        const auto shortcut = ssd_final_state(x, dt, A, B, h0);
        QVERIFY2(relative_error(chunked.to(torch::kDouble), expected) <= 1e-5,
                 std::to_string(relative_error(chunked.to(torch::kDouble), expected)).c_str());
        QVERIFY2(relative_error(shortcut.to(torch::kDouble), expected) <= 1e-5,
                 std::to_string(relative_error(shortcut.to(torch::kDouble), expected)).c_str());
    }

    void rejectsBadShapes()
    {
        auto x = torch::randn({1, 4, 3, 2});
        auto dt = torch::rand({1, 4, 3});
        auto A = -torch::ones({3});
        auto B = torch::randn({1, 4, 2, 5}); // 3 heads are not a multiple of 2 groups
        bool threw = false;
        try {
            ssd_chunked(x, dt, A, B, B, 2);
        } catch (const c10::Error&) {
            threw = true;
        }
        QVERIFY(threw);
        threw = false;
        try {
            ssd_sequential(x, dt.transpose(1, 2), A, B.narrow(2, 0, 1), B.narrow(2, 0, 1));
        } catch (const c10::Error&) {
            threw = true;
        }
        QVERIFY(threw);
    }
};

} // namespace tst_ssd

FOXHUNT_TEST_APPLESS_MAIN(tst_ssd::TestSsd)
#include "tst_ssd.moc"
