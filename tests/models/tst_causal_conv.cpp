// SPDX-License-Identifier: GPL-3.0-or-later
// The direct causal depthwise convolution against torch::conv1d: values and gradients; the fused
// convolution and SiLU of inference against the two operators, on every instruction set compiled;
// an int8 convolution's dequantized taps, derived once and again after its buffers change.

#include "models/kernel_isa.h"
#include "models/mamba2/causal_conv.h"
#include "models/precision/quantizable_conv.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

namespace tst_causal_conv {

using namespace foxhunt::models::mamba2;

namespace {

double relative_error(const torch::Tensor& a, const torch::Tensor& b)
{
    const double scale = std::max(b.abs().max().item<double>(), 1e-12);
    return (a - b).abs().max().item<double>() / scale;
}

// torch::conv1d with groups = C and padding K - 1, cut to the first L steps, in [B, L, C].
torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)
{
    return torch::conv1d(x.transpose(1, 2), weight.unsqueeze(1), bias, /*stride=*/1, /*padding=*/weight.size(1) - 1,
                         /*dilation=*/1, /*groups=*/x.size(2))
        .narrow(2, 0, x.size(1))
        .transpose(1, 2);
}

} // namespace

class TestCausalConv : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void matchesConv1d_data()
    {
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("taps");
        QTest::addColumn<bool>("strided");
        QTest::addColumn<bool>("doublePrecision");
        QTest::newRow("mamba sizes") << 60 << 1056 << 4 << true << false;
        QTest::newRow("shorter than the taps") << 2 << 7 << 4 << false << false;
        QTest::newRow("one tap") << 9 << 70 << 1 << true << false;
        QTest::newRow("double") << 13 << 130 << 3 << false << true;
    }

    void matchesConv1d()
    {
        QFETCH(int, length);
        QFETCH(int, channels);
        QFETCH(int, taps);
        QFETCH(bool, strided);
        QFETCH(bool, doublePrecision);
        torch::manual_seed(1);
        const auto type = doublePrecision ? torch::kDouble : torch::kFloat;
        // A slice of a wider tensor, as in_proj's output is split: rows strided, channels contiguous.
        auto wide = torch::randn({3, length, channels + (strided ? 5 : 0)}, type);
        auto x = wide.narrow(2, 0, channels).detach().requires_grad_(true);
        auto weight = torch::randn({channels, taps}, type).requires_grad_(true);
        auto bias = torch::randn({channels}, type).requires_grad_(true);
        auto w = torch::randn({3, length, channels}, type);

        auto ref = reference(x, weight, bias);
        auto ref_grads = torch::autograd::grad({(ref * w).sum()}, {x, weight, bias});
        auto got = causal_depthwise_conv1d(x, weight, bias);
        auto got_grads = torch::autograd::grad({(got * w).sum()}, {x, weight, bias});

        QCOMPARE(got.sizes(), ref.sizes());
        const double tol = doublePrecision ? 1e-12 : 1e-5;
        QVERIFY2(relative_error(got, ref) <= tol, qPrintable(QString::number(relative_error(got, ref))));
        const char* names[] = {"x", "weight", "bias"};
        for (size_t i = 0; i < 3; ++i) {
            const double err = relative_error(got_grads[i], ref_grads[i]);
            QVERIFY2(err <= tol, qPrintable(QStringLiteral("grad %1 rel err %2").arg(names[i]).arg(err)));
        }
    }

    void fusedSiluMatchesOperators_data()
    {
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("taps");
        QTest::addColumn<double>("scale");
        QTest::newRow("mamba sizes, strided rows") << 60 << 1056 << 4 << 4.0;
        QTest::newRow("shorter than the taps, 16-lane blocks and 5 more") << 2 << 37 << 4 << 4.0;
        QTest::newRow("one tap") << 9 << 7 << 1 << 4.0;
        QTest::newRow("sums beyond the exponential's range (|x| > 88)") << 20 << 40 << 4 << 100.0;
    }

    void fusedSiluMatchesOperators()
    {
        QFETCH(int, length);
        QFETCH(int, channels);
        QFETCH(int, taps);
        QFETCH(double, scale);
        torch::manual_seed(4);
        // Rows wider than the channels, as in_proj's output slices them; values large enough that
        // SiLU's both tails are reached (and, scaled up, the exponential's clamps).
        auto row = scale * torch::randn({3, length, channels + 9});
        auto x = row.narrow(2, 5, channels);
        auto weight = torch::randn({channels, taps});
        auto bias = torch::randn({channels});
        const auto expected = torch::silu(reference(x, weight, bias));
        torch::NoGradGuard ng;
        using foxhunt::models::KernelIsa;
        for (const KernelIsa isa : {KernelIsa::Avx512Vnni, KernelIsa::Avx2, KernelIsa::Generic}) {
            const KernelIsa before = foxhunt::models::cap_kernel_isa(isa);
            const auto got = causal_conv1d_silu(x, weight, bias);
            foxhunt::models::cap_kernel_isa(before);
            QCOMPARE(got.sizes(), expected.sizes());
            QVERIFY(torch::isfinite(got).all().item<bool>());
            const double err = relative_error(got, expected);
            QVERIFY2(err <= 1e-6, qPrintable(QStringLiteral("isa %1: %2").arg(static_cast<int>(isa)).arg(err)));
        }
    }

    void fusedSiluKeepsTheGraph()
    {
        // With a graph to keep, the two operators run, and the gradient reaches x.
        torch::manual_seed(5);
        auto x = torch::randn({2, 6, 20}).requires_grad_(true);
        auto weight = torch::randn({20, 4});
        auto bias = torch::randn({20});
        auto y = causal_conv1d_silu(x, weight, bias);
        QVERIFY(y.requires_grad());
        y.sum().backward();
        QVERIFY(x.grad().defined() && x.grad().abs().sum().item<double>() > 0);
    }

    void int8TapsAreDerivedOncePerChange()
    {
        // An inference copy's convolution hands the block its dequantized taps and bias: the same
        // values on every call without deriving them again, new ones once an int8 buffer changes.
        namespace mp = foxhunt::models::precision;
        torch::manual_seed(8);
        mp::QuantizableDepthwiseConv1d conv(mp::DepthwiseConv1dOptions(24, 4).padding(3));
        const auto floatTaps = conv->taps().detach().clone();
        const auto floatBias = conv->bias_values().detach().clone();
        conv->convert_to_int8();
        torch::NoGradGuard ng;
        const auto taps = conv->taps();
        const auto bias = conv->bias_values();
        QCOMPARE(taps.sizes(), torch::IntArrayRef({24, 4}));
        QVERIFY(torch::equal(taps, mp::dequantize_per_row(conv->weight_q)));
        QVERIFY(torch::equal(bias, mp::dequantize_per_tensor(conv->bias_q)));
        QVERIFY(relative_error(taps, floatTaps) < 0.02);
        QVERIFY(relative_error(bias, floatBias) < 0.02);
        QCOMPARE(conv->taps().data_ptr(), taps.data_ptr()); // from the cache
        QCOMPARE(conv->bias_values().data_ptr(), bias.data_ptr());
        // forward() convolves with the same taps.
        const auto x = torch::randn({2, 24, 9});
        QVERIFY(torch::allclose(conv(x), torch::conv1d(x, taps.unsqueeze(1), bias, 1, 3, 1, 24), 1e-5, 1e-6));
        // Written in place (as a load does): derived again.
        conv->weight_q.q.neg_();
        conv->bias_q.q.neg_();
        QVERIFY(torch::equal(conv->taps(), -taps));
        QVERIFY(torch::equal(conv->bias_values(), -bias));
    }

    void isCausal()
    {
        torch::manual_seed(2);
        auto x = torch::randn({2, 10, 8});
        auto weight = torch::randn({8, 4});
        auto bias = torch::randn({8});
        auto y = x.clone();
        y.narrow(1, 6, 4).normal_();
        auto a = causal_depthwise_conv1d(x, weight, bias);
        auto b = causal_depthwise_conv1d(y, weight, bias);
        QVERIFY(torch::equal(a.narrow(1, 0, 6), b.narrow(1, 0, 6)));
        QVERIFY(!torch::allclose(a.narrow(1, 6, 4), b.narrow(1, 6, 4)));
    }

    void rejectsBadShapes()
    {
        bool threw = false;
        try {
            causal_depthwise_conv1d(torch::randn({2, 5, 8}), torch::randn({7, 4}), torch::randn({8}));
        } catch (const c10::Error&) {
            threw = true;
        }
        QVERIFY(threw);
    }
};

} // namespace tst_causal_conv

FOXHUNT_TEST_APPLESS_MAIN(tst_causal_conv::TestCausalConv)
#include "tst_causal_conv.moc"
