// SPDX-License-Identifier: GPL-3.0-or-later
// Temporal Fusion Transformer: building blocks, causality, selection weights, seed sizes.

#include "models/precision/int8_linear.h"
#include "models/precision/kernel_plan.h"
#include "models/precision/quantize.h"
#include "models/tft/fused_lstm.h"
#include "models/tft/inference_kernels.h"
#include "models/tft/gated_residual.h"
#include "models/tft/hashed_dropout.h"
#include "models/tft/interpretable_attention.h"
#include "models/tft/tft.h"
#include "models/tft/variable_selection.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <algorithm>
#include <limits>
#include <torch/torch.h>

namespace tst_tft {

using namespace foxhunt::models::tft;

class TestTft : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void gluGatesHalfByHalf()
    {
        torch::manual_seed(1);
        GatedLinearUnit glu(GatedLinearUnitOptions(3, 2));
        torch::NoGradGuard ng;
        auto x = torch::randn({4, 3});
        auto both = glu->fc(x);
        auto expected = both.narrow(1, 0, 2) * torch::sigmoid(both.narrow(1, 2, 2));
        QVERIFY(torch::allclose(glu(x), expected, 1e-6, 1e-6));
    }

    void grnUsesContextAndNormalises()
    {
        torch::manual_seed(2);
        GatedResidualNetwork grn(GatedResidualNetworkOptions(5, 8, 6).context_size(4));
        torch::NoGradGuard ng;
        auto x = torch::randn({3, 7, 5});
        auto c1 = torch::randn({3, 4});
        auto c2 = torch::randn({3, 4});
        auto y1 = grn(x, c1);
        QCOMPARE(y1.sizes(), torch::IntArrayRef({3, 7, 6}));
        QVERIFY(!torch::allclose(y1, grn(x, c2)));
        // Output of a LayerNorm with unit weight: zero mean per position.
        QVERIFY(y1.mean(-1).abs().max().item<double>() < 1e-5);
    }

    void groupedGrnsMatchTheLoop()
    {
        torch::manual_seed(8);
        std::vector<GatedResidualNetwork> owned;
        std::vector<GatedResidualNetworkImpl*> grns;
        for (int i = 0; i < 3; ++i) {
            owned.emplace_back(GatedResidualNetworkOptions(4, 6, 6).dropout(0.3));
            owned.back()->eval();
            grns.push_back(owned.back().get());
        }
        QVERIFY(groupable(grns));
        auto x = torch::randn({3, 2, 5, 4});
        auto grouped = grouped_forward(grns, x);
        std::vector<torch::Tensor> loop;
        for (size_t i = 0; i < grns.size(); ++i) loop.push_back(grns[i]->forward(x[static_cast<int64_t>(i)]));
        QCOMPARE(grouped.sizes(), torch::IntArrayRef({3, 2, 5, 6}));
        QVERIFY(torch::allclose(grouped, torch::stack(loop), 1e-5, 1e-6));
        // The gradients reach each GRN's own parameters, as the loop's do.
        auto weights = torch::randn({3, 2, 5, 6});
        (grouped * weights).sum().backward();
        std::vector<torch::Tensor> grads;
        for (auto* g : grns) grads.push_back(g->fc1->weight.grad().clone());
        for (auto* g : grns) g->zero_grad();
        (torch::stack(loop) * weights).sum().backward();
        for (size_t i = 0; i < grns.size(); ++i)
            QVERIFY(torch::allclose(grads[i], grns[i]->fc1->weight.grad(), 1e-5, 1e-6));
        // Different widths, or a context, keep the loop.
        GatedResidualNetwork other(GatedResidualNetworkOptions(4, 6, 5));
        grns.push_back(other.get());
        QVERIFY(!groupable(grns));
    }

    void fusedLstmMatchesLibTorch()
    {
        torch::manual_seed(10);
        torch::nn::LSTM reference(torch::nn::LSTMOptions(5, 6).batch_first(true));
        auto x = torch::randn({3, 7, 5}, torch::requires_grad());
        auto h0 = torch::randn({3, 6}, torch::requires_grad());
        auto c0 = torch::randn({3, 6}, torch::requires_grad());
        auto p = reference->named_parameters(/*recurse=*/false);
        auto fused = fused_lstm(x, h0, c0, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]);
        auto [out, state] = reference->forward(x, std::make_tuple(h0.unsqueeze(0), c0.unsqueeze(0)));
        QVERIFY(torch::allclose(fused.output, out, 1e-5, 1e-6));
        QVERIFY(torch::allclose(fused.h_n, std::get<0>(state)[0], 1e-5, 1e-6));
        QVERIFY(torch::allclose(fused.c_n, std::get<1>(state)[0], 1e-5, 1e-6));
        // Gradients through the output and both final states, against autograd through at::lstm.
        auto wo = torch::randn({3, 7, 6});
        auto wh = torch::randn({3, 6});
        auto wc = torch::randn({3, 6});
        auto grads = [&](const torch::Tensor& o, const torch::Tensor& h, const torch::Tensor& c) {
            std::vector<torch::Tensor> inputs{x, h0, c0};
            for (auto& kv : p) inputs.push_back(kv.value());
            return torch::autograd::grad({(o * wo).sum() + (h * wh).sum() + (c * wc).sum()}, inputs);
        };
        auto a = grads(fused.output, fused.h_n, fused.c_n);
        auto b = grads(out, std::get<0>(state)[0], std::get<1>(state)[0]);
        for (size_t i = 0; i < a.size(); ++i)
            QVERIFY2(torch::allclose(a[i], b[i], 1e-4, 1e-5), qPrintable(QString::number(i)));
    }

    // Without autograd fused_lstm() runs the recurrence kernel (hidden 16, 32, 64), on every
    // instruction set this CPU has; hidden 12 keeps the autograd function.
    void lstmRecurrenceMatchesLibTorch_data()
    {
        QTest::addColumn<int>("hidden");
        QTest::newRow("16") << 16;
        QTest::newRow("32") << 32;
        QTest::newRow("64") << 64;
        QTest::newRow("12: no kernel") << 12;
    }

    void lstmRecurrenceMatchesLibTorch()
    {
        QFETCH(int, hidden);
        torch::manual_seed(12);
        torch::NoGradGuard no_grad;
        torch::nn::LSTM reference(torch::nn::LSTMOptions(7, hidden).batch_first(true));
        // Batch 5: the kernel's groups of 4 (hidden 16) or 2 (hidden 32) rows and a row left over.
        const auto x = torch::randn({5, 11, 7});
        const auto h0 = torch::randn({5, hidden});
        const auto c0 = torch::randn({5, hidden});
        auto p = reference->named_parameters(/*recurse=*/false);
        auto [out, state] = reference->forward(x, std::make_tuple(h0.unsqueeze(0), c0.unsqueeze(0)));
        QCOMPARE(lstm_recurrence_supports(hidden), hidden != 12);
        for (const FusedIsa isa : {FusedIsa::Avx512Vnni, FusedIsa::Avx2, FusedIsa::Generic}) {
            const FusedIsa before = cap_fused_selection_isa(isa);
            const auto fused = fused_lstm(x, h0, c0, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"],
                                          p["bias_hh_l0"]);
            cap_fused_selection_isa(before);
            QVERIFY(torch::allclose(fused.output, out, 1e-5, 1e-5));
            QVERIFY(torch::allclose(fused.h_n, std::get<0>(state)[0], 1e-5, 1e-5));
            QVERIFY(torch::allclose(fused.c_n, std::get<1>(state)[0], 1e-5, 1e-5));
        }
    }

    // An int8 copy whose LSTM input projection is planned in oneDNN and the hidden one in float
    // runs the recurrence kernel without autograd; with autograd, the step loop. Same outputs.
    void int8LstmRecurrenceMatchesTheStepLoop()
    {
        namespace mp = foxhunt::models::precision;
        if (!mp::onednn_quantized_available()) QSKIP("this LibTorch has no oneDNN quantized engine");
        torch::manual_seed(23);
        TemporalFusionTransformer tft(TftOptions(5, 2, 3, 3).hidden_size(16).n_heads(4));
        tft->eval();
        mp::QuantizeOptions q;
        q.backend = mp::Int8Backend::Dequantize;
        auto int8 = mp::quantize_for_inference(tft, q);
        const auto x = torch::randn({4, 12, 5});
        const auto k = torch::randn({4, 3, 2});
        // Injected timings: oneDNN fastest from 40 rows (the input projection: 48), float below (the
        // hidden one: 4 rows a step).
        mp::KernelPlanOptions o;
        o.timer = [](const mp::KernelShape& shape, const torch::Device&, const std::vector<mp::Int8Backend>& c) {
            std::vector<mp::KernelTiming> t;
            for (const auto b : c)
                t.push_back({b, (b == mp::Int8Backend::OneDnn) == (shape.rows >= 40) ? 1.0 : 2.0, 0.0});
            return t;
        };
        mp::plan_int8_kernels(
            *int8, [&] { int8->forward(x, k); }, o);
        const auto loop = int8->forward(x, k).quantiles.detach();
        torch::Tensor kernel;
        {
            torch::NoGradGuard no_grad;
            kernel = int8->forward(x, k).quantiles;
        }
        QVERIFY((kernel - loop).norm().item<double>() / loop.norm().item<double>() < 2e-3);
    }

    void hashedDropoutKeepsRateAndScale()
    {
        auto x = torch::ones({200000});
        torch::manual_seed(9);
        auto a = hashed_dropout(x, 0.3, /*training=*/true);
        torch::manual_seed(9);
        auto b = hashed_dropout(x, 0.3, /*training=*/true);
        QVERIFY(torch::equal(a, b));
        const double dropped = (a == 0).to(torch::kDouble).mean().item<double>();
        QVERIFY2(std::abs(dropped - 0.3) < 0.005, qPrintable(QString::number(dropped)));
        QVERIFY(torch::allclose(a.masked_select(a != 0), torch::full({1}, 1.0 / 0.7), 1e-6, 1e-6));
        QVERIFY(!torch::equal(a, hashed_dropout(x, 0.3, /*training=*/true)));
        QVERIFY(torch::equal(hashed_dropout(x, 0.3, /*training=*/false), x));
    }

    void selectionWeightsSumToOne_data()
    {
        QTest::addColumn<int>("variables");
        QTest::addColumn<bool>("temporal");
        QTest::newRow("one variable") << 1 << true;
        QTest::newRow("five temporal") << 5 << true;
        QTest::newRow("three static") << 3 << false;
    }

    void selectionWeightsSumToOne()
    {
        QFETCH(int, variables);
        QFETCH(bool, temporal);
        torch::manual_seed(3);
        VariableSelectionNetwork vsn(VariableSelectionNetworkOptions(variables, 12).context_size(12));
        auto x = temporal ? torch::randn({4, 9, variables}) : torch::randn({4, variables});
        auto out = vsn(x, torch::randn({4, 12}));
        QCOMPARE(out.output.size(-1), int64_t{12});
        QCOMPARE(out.weights.size(-1), int64_t{variables});
        QVERIFY(torch::allclose(out.weights.sum(-1), torch::ones_like(out.weights.sum(-1)), 1e-5, 1e-6));
        QVERIFY(out.weights.min().item<double>() >= 0.0);
    }

    void fusedSelectionMatchesTheLayers_data()
    {
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("embedding");
        QTest::addColumn<int>("rows");
        QTest::newRow("hidden 16, a tail of 5 rows") << 16 << 8 << 37;
        QTest::newRow("hidden 32, seed-like") << 32 << 8 << 160;
        QTest::newRow("hidden 64") << 64 << 8 << 16;
        QTest::newRow("embedding as wide as hidden: no skip layer") << 16 << 16 << 21;
        QTest::newRow("embedding 1: the weights' GRN has no skip layer") << 16 << 1 << 20;
        QTest::newRow("hidden 12: not fused") << 12 << 8 << 20;
    }

    // Eval mode without autograd takes the fused kernel (where the width allows); with autograd on,
    // the same module goes layer by layer. Both must agree, and follow the weights when they change.
    void fusedSelectionMatchesTheLayers()
    {
        QFETCH(int, hidden);
        QFETCH(int, embedding);
        QFETCH(int, rows);
        torch::manual_seed(21);
        VariableSelectionNetwork vsn(
            VariableSelectionNetworkOptions(7, hidden).embedding_size(embedding).context_size(hidden));
        vsn->eval();
        QCOMPARE(fused_selection_supports(hidden), hidden != 12);
        QCOMPARE(vsn->block_kernel_for(rows), std::string("fused-fp32"));
        const auto x = torch::randn({rows, 7});
        const auto context = torch::randn({rows, hidden});
        const auto layers = [&] { return vsn(x, context).output.detach(); };
        const auto fused = [&] {
            torch::NoGradGuard no_grad;
            return vsn(x, context).output;
        };
        QVERIFY(torch::allclose(fused(), layers(), 1e-5, 1e-5));
        // Calibrating layers see their inputs: the weights' GRN's first layer is not folded away then.
        vsn->flattened_grn->fc1->set_observing(true);
        QCOMPARE(vsn->block_kernel_for(rows), std::string("layers"));
        fused();
        QVERIFY(vsn->flattened_grn->fc1->observed_absmax() > 0.0);
        vsn->flattened_grn->fc1->set_observing(false);
        // Every instruction set this CPU has computes the same (AVX2 and plain x86-64 where it has AVX512).
        for (const FusedIsa isa : {FusedIsa::Avx2, FusedIsa::Generic}) {
            const FusedIsa before = cap_fused_selection_isa(isa);
            const auto y = fused();
            cap_fused_selection_isa(before);
            QVERIFY(torch::allclose(y, layers(), 1e-5, 1e-5));
        }
        // 3-d input [B, T, V] with a [B, C] context, as the encoder sees it.
        const auto x3 = torch::randn({3, rows, 7});
        const auto c3 = torch::randn({3, hidden});
        torch::Tensor fused3;
        {
            torch::NoGradGuard no_grad;
            fused3 = vsn(x3, c3).output;
        }
        QVERIFY(torch::allclose(fused3, vsn(x3, c3).output.detach(), 1e-5, 1e-5));
        // A weight written in place (an optimiser step) is packed again.
        {
            torch::NoGradGuard no_grad;
            auto& g = *vsn->variable_grns[3]->as<GatedResidualNetworkImpl>();
            g.fc2->weight.mul_(-1.5);
            g.gate_norm->norm->bias.add_(0.25);
        }
        QVERIFY(torch::allclose(fused(), layers(), 1e-5, 1e-5));
    }

    void int8SelectionIsPlannedByMeasurement()
    {
        torch::manual_seed(22);
        VariableSelectionNetwork vsn(VariableSelectionNetworkOptions(6, 32).context_size(32));
        vsn->eval();
        const auto x = torch::randn({4, 25, 6});
        const auto context = torch::randn({4, 32});
        torch::Tensor reference;
        {
            torch::NoGradGuard no_grad;
            reference = vsn(x, context).output;
        }
        foxhunt::models::precision::QuantizeOptions q;
        q.backend = foxhunt::models::precision::Int8Backend::Dequantize;
        auto int8 = foxhunt::models::precision::quantize_for_inference(vsn, q);
        // Before a plan the int8 copy goes layer by layer.
        QCOMPARE(int8->block_kernel_for(100), std::string("layers"));
        const auto plan = foxhunt::models::precision::plan_int8_kernels(*int8, [&] {
            int8(x, context);
            int8(x.narrow(0, 0, 1), context.narrow(0, 0, 1));
        });
        QCOMPARE(plan.blocks.size(), size_t{2}); // 100 and 25 rows
        for (const auto& b : plan.blocks) {
            QCOMPARE(b.block, std::string(""));
            QVERIFY(b.rows == 100 || b.rows == 25);
            QCOMPARE(b.timings.front().kernel, std::string("layers"));
            QCOMPARE(b.timings.size(), size_t{fused_selection_int8_available() ? 3u : 2u});
            for (const auto& t : b.timings) {
                QVERIFY2(t.micros > 0.0, t.kernel.c_str());
                QVERIFY2(t.relative_error < 0.02, t.kernel.c_str()); // int8 rounding, not a wrong kernel
            }
            QCOMPARE(b.kernel, foxhunt::models::precision::choose_block_kernel(b.timings, 0.05));
        }
        QCOMPARE(int8->block_kernel_for(100), plan.blocks.front().kernel);
        torch::NoGradGuard no_grad;
        const auto y = int8(x, context).output;
        QVERIFY((y - reference).norm().item<double>() / reference.norm().item<double>() < 0.02);
        // A kernel by name; fused-int8 falls back to fused-fp32 where the CPU lacks VNNI (as one
        // capped at AVX2 does).
        int8->set_block_plan({{100, "fused-int8"}});
        QCOMPARE(int8->block_kernel_for(90),
                 std::string(fused_selection_int8_available() ? "fused-int8" : "fused-fp32"));
        QVERIFY((int8(x, context).output - reference).norm().item<double>() / reference.norm().item<double>() < 0.02);
        const FusedIsa before = cap_fused_selection_isa(FusedIsa::Avx2);
        QVERIFY(!fused_selection_int8_available());
        QCOMPARE(int8->block_kernel_for(90), std::string("fused-fp32"));
        const auto capped = int8(x, context).output;
        cap_fused_selection_isa(before);
        QVERIFY((capped - reference).norm().item<double>() / reference.norm().item<double>() < 0.02);
        QVERIFY_THROWS_EXCEPTION(c10::Error, int8->set_block_plan({{100, "fused-int4"}}));
    }

    // The table kernel on a hand-made table: linear between the two nearest knots, clamped at both
    // ends (a NaN input reads the first knot), weighted per variable, on every instruction set.
    void tableSelectionInterpolatesAndClamps()
    {
        constexpr int64_t kVariables = 2, kKnots = 3, kHidden = 16;
        auto values = torch::empty({kVariables, kKnots, kHidden});
        for (int64_t v = 0; v < kVariables; ++v)
            for (int64_t k = 0; k < kKnots; ++k)
                for (int64_t c = 0; c < kHidden; ++c)
                    values[v][k][c] = static_cast<double>(10 * v + k * (v == 0 ? 1 : -2)) +
                                      0.1 * static_cast<double>(c);
        const auto half = values.to(torch::kHalf).contiguous();
        const auto exact = half.to(torch::kFloat);                       // the expectation from the stored values
        const std::vector<float> low{-1.0f, 0.0f}, inv_step{1.0f, 4.0f}; // v0 knots at -1, 0, 1; v1 at 0, .25, .5
        SelectionTableView table;
        table.variables = kVariables;
        table.hidden = kHidden;
        table.knots = kKnots;
        table.values = reinterpret_cast<const std::uint16_t*>(half.data_ptr<at::Half>());
        table.low = low.data();
        table.inv_step = inv_step.data();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        // rows: inside both ranges, on knots, below and above, NaN.
        const std::vector<float> x{-0.25f, 0.375f, 1.0f, 0.0f, -7.0f, 9.0f, nan, 0.5f};
        const std::vector<float> w{0.25f, 0.75f, 1.0f, 0.5f, 0.5f, 0.5f, 0.3f, 0.7f};
        // Expected positions (knot index, fraction) per row and variable.
        const std::vector<std::pair<int64_t, float>> at{{0, 0.75f}, {1, 0.5f}, {1, 1.0f}, {0, 0.0f},
                                                        {0, 0.0f},  {1, 1.0f}, {0, 0.0f}, {1, 1.0f}};
        auto expected = torch::zeros({4, kHidden});
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t v = 0; v < kVariables; ++v) {
                const auto [k, f] = at[static_cast<size_t>(r * kVariables + v)];
                expected[r] += w[static_cast<size_t>(r * kVariables + v)] *
                               (exact[v][k] * (1.0f - f) + exact[v][k + 1] * f);
            }
        for (const FusedIsa isa : {FusedIsa::Avx512Vnni, FusedIsa::Avx2, FusedIsa::Generic}) {
            const FusedIsa before = cap_fused_selection_isa(isa);
            auto out = torch::full({4, kHidden}, -1.0f);
            table_selection(table, x.data(), w.data(), out.data_ptr<float>(), 4);
            cap_fused_selection_isa(before);
            QVERIFY2(torch::allclose(out, expected, 1e-5, 1e-5), std::to_string(static_cast<int>(isa)).c_str());
        }
        table.knots = 1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 table_selection(table, x.data(), w.data(), std::vector<float>(64).data(), 4));
    }

    // fused_grn() against GatedResidualNetwork layer by layer: with a skip layer and a context
    // per sample (odd widths, a tail block), without either, then with the softmax.
    void fusedGrnMatchesTheLayers()
    {
        torch::manual_seed(24);
        const auto floats = [](const torch::Tensor& t) {
            const auto c = t.detach().to(torch::kFloat).contiguous();
            return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
        };
        const auto relative = [](const torch::Tensor& y, const torch::Tensor& to) {
            return (y - to).norm().item<double>() / to.norm().item<double>();
        };
        const auto pack = [&](GatedResidualNetworkImpl& g) {
            FusedDenseGrn d;
            d.in = g.options.input_size();
            d.hidden = g.options.hidden_size();
            d.out = g.options.output_size();
            d.w1 = floats(g.fc1->weight);
            d.b1 = floats(g.fc1->bias);
            d.w2 = floats(g.fc2->weight);
            d.b2 = floats(g.fc2->bias);
            d.wg = floats(g.gate_norm->glu->fc->weight);
            d.bg = floats(g.gate_norm->glu->fc->bias);
            if (g.skip) {
                d.ws = floats(g.skip->weight);
                d.bs = floats(g.skip->bias);
            }
            d.gamma = floats(g.gate_norm->norm->weight);
            d.beta = floats(g.gate_norm->norm->bias);
            return d;
        };
        GatedResidualNetwork with(GatedResidualNetworkOptions(12, 9, 7).context_size(5));
        GatedResidualNetwork plain(GatedResidualNetworkOptions(8, 8, 8));
        for (auto* g : {with.get(), plain.get()}) {
            g->eval();
            torch::NoGradGuard no_grad;
            g->gate_norm->norm->weight.uniform_(0.5, 1.5); // not the identity affine
            g->gate_norm->norm->bias.uniform_(-0.5, 0.5);
        }
        const auto x = torch::randn({3, 13, 12});
        const auto context = torch::randn({3, 5});
        const auto x8 = torch::randn({21, 8});
        // With autograd on, the modules go layer by layer.
        const auto expected_with = with(x, context).reshape({39, 7}).detach();
        const auto expected_plain = plain(x8).detach();
        torch::NoGradGuard no_grad;
        const auto projected = with->context_proj(context).contiguous();
        // Without it, a float model's GRN runs fused_grn() itself.
        QCOMPARE(with->block_kernel_for(39), std::string("fused-fp32"));
        QVERIFY(torch::allclose(with(x, context).reshape({39, 7}), expected_with, 1e-5, 1e-5));
        QVERIFY(torch::allclose(plain(x8), expected_plain, 1e-5, 1e-5));
        {
            // A weight changed in place is packed again.
            GatedResidualNetwork changed(GatedResidualNetworkOptions(8, 8, 8));
            changed->eval();
            changed(x8); // packed
            changed->fc2->weight.mul_(-2.0);
            changed->gate_norm->norm->bias.add_(0.5);
            torch::Tensor layers;
            {
                torch::AutoGradMode grad(true);
                layers = changed(x8).detach();
            }
            QVERIFY(torch::allclose(changed(x8), layers, 1e-5, 1e-5));
        }
        auto d_with = pack(*with);
        auto d_plain = pack(*plain);
        for (const FusedIsa isa : {FusedIsa::Avx512Vnni, FusedIsa::Avx2, FusedIsa::Generic}) {
            const FusedIsa before = cap_fused_selection_isa(isa);
            auto a = torch::empty({39, 7});
            fused_grn(d_with, x.contiguous().data_ptr<float>(), projected.data_ptr<float>(), 13, nullptr,
                      a.data_ptr<float>(), 39);
            auto b = torch::empty({21, 8});
            fused_grn(d_plain, x8.data_ptr<float>(), nullptr, 1, nullptr, b.data_ptr<float>(), 21);
            d_plain.softmax = true;
            auto c = torch::empty({21, 8});
            fused_grn(d_plain, x8.data_ptr<float>(), nullptr, 1, nullptr, c.data_ptr<float>(), 21);
            d_plain.softmax = false;
            cap_fused_selection_isa(before);
            const std::string at = std::to_string(static_cast<int>(isa));
            QVERIFY2(torch::allclose(a, expected_with, 1e-5, 1e-5), at.c_str());
            QVERIFY2(torch::allclose(b, expected_plain, 1e-5, 1e-5), at.c_str());
            QVERIFY2(torch::allclose(c, torch::softmax(expected_plain, -1), 1e-5, 1e-6), at.c_str());
        }
        {
            // Widths in multiples of 16 move rows in and out in 16 x 16 blocks transposed in
            // registers (39 rows: a last block of 7), the context rows too.
            GatedResidualNetwork wide(GatedResidualNetworkOptions(32, 16, 32).context_size(5));
            GateAddNorm wide_gate(GateAddNormOptions(16, 32));
            wide->eval();
            wide_gate->eval();
            wide->gate_norm->norm->bias.uniform_(-0.5, 0.5);
            const auto xw = torch::randn({3, 13, 32});
            const auto gw = torch::randn({3, 13, 16});
            torch::Tensor expected_wide, expected_wide_gate;
            {
                torch::AutoGradMode layers(true);
                expected_wide = wide(xw, context).detach();
                expected_wide_gate = wide_gate(gw, xw).detach();
            }
            QCOMPARE(wide->block_kernel_for(39), std::string("fused-fp32"));
            for (const FusedIsa isa : {FusedIsa::Avx512Vnni, FusedIsa::Avx2, FusedIsa::Generic}) {
                const FusedIsa before = cap_fused_selection_isa(isa);
                const auto y = wide(xw, context);
                const auto z = wide_gate(gw, xw);
                cap_fused_selection_isa(before);
                const std::string at = "wide " + std::to_string(static_cast<int>(isa));
                QVERIFY2(torch::allclose(y, expected_wide, 1e-5, 1e-5), at.c_str());
                QVERIFY2(torch::allclose(z, expected_wide_gate, 1e-5, 1e-5), at.c_str());
            }
            namespace mp = foxhunt::models::precision;
            auto wide8 = mp::quantize_for_inference(wide);
            wide8->set_block_plan({{39, "fused-int8"}});
            QVERIFY2(relative(wide8(xw, context), expected_wide) < 0.03,
                     std::to_string(relative(wide8(xw, context), expected_wide)).c_str());
        }
        QVERIFY(!fused_grn_supports(200, 8, 8));

        // A GateAddNorm: the GLU straight on x, its residual given.
        GateAddNorm gate(GateAddNormOptions(6, 8));
        gate->eval();
        const auto gx = torch::randn({2, 7, 6});
        const auto skip = torch::randn({2, 7, 8});
        torch::Tensor expected_gate;
        {
            torch::AutoGradMode layers(true);
            expected_gate = gate(gx, skip).detach();
        }
        QCOMPARE(gate->block_kernel_for(14), std::string("fused-fp32"));
        QVERIFY(torch::allclose(gate(gx, skip), expected_gate, 1e-5, 1e-5));

        // An int8 copy goes layer by layer until its plan has timed both ways.
        namespace mp = foxhunt::models::precision;
        auto int8 = mp::quantize_for_inference(with);
        QCOMPARE(int8->block_kernel_for(39), std::string("layers"));
        const auto plan = mp::plan_int8_kernels(*int8, [&] { int8(x, context); });
        QCOMPARE(plan.blocks.size(), size_t{1}); // the GRN, not its gate (which it fuses itself)
        QCOMPARE(plan.blocks.front().rows, int64_t{39});
        QCOMPARE(plan.blocks.front().timings.size(), size_t{2});
        QCOMPARE(plan.blocks.front().timings.back().kernel, std::string("fused-fp32"));
        QVERIFY(plan.blocks.front().timings.back().relative_error < 0.02);
        QCOMPARE(int8->block_kernel_for(39), plan.blocks.front().kernel);
        int8->set_block_plan({{39, "fused-fp32"}});
        QVERIFY(relative(int8(x, context).reshape({39, 7}), expected_with) < 0.02);
        QVERIFY_THROWS_EXCEPTION(c10::Error, int8->set_block_plan({{39, "table"}}));

        // Widths in multiples of 4: with AVX512-VNNI its int8 weights can run fused too.
        GatedResidualNetwork even(GatedResidualNetworkOptions(12, 8, 12).context_size(5));
        even->eval();
        const auto expected_even = [&] {
            torch::AutoGradMode layers(true);
            return even(x, context).detach();
        }();
        auto int8_even = mp::quantize_for_inference(even);
        const auto even_plan = mp::plan_int8_kernels(*int8_even, [&] { int8_even(x, context); });
        QCOMPARE(even_plan.blocks.front().timings.size(), size_t{fused_grn_int8_supports(12, 8, 12) ? 3u : 2u});
        int8_even->set_block_plan({{39, "fused-int8"}});
        QCOMPARE(int8_even->block_kernel_for(39),
                 std::string(fused_grn_int8_supports(12, 8, 12) ? "fused-int8" : "fused-fp32"));
        QVERIFY2(relative(int8_even(x, context), expected_even) < 0.03,
                 std::to_string(relative(int8_even(x, context), expected_even)).c_str());
        {
            const FusedIsa before = cap_fused_selection_isa(FusedIsa::Avx2); // no VNNI: the float kernel
            QCOMPARE(int8_even->block_kernel_for(39), std::string("fused-fp32"));
            QVERIFY(relative(int8_even(x, context), expected_even) < 0.03);
            cap_fused_selection_isa(before);
        }
        auto int8_gate = mp::quantize_for_inference(gate);
        int8_gate->set_block_plan({{14, "fused-int8"}});
        QVERIFY(relative(int8_gate(gx, skip), expected_gate) < 0.03); // 6 inputs: not a multiple of 4, fused float
        QCOMPARE(int8_gate->block_kernel_for(14), std::string("fused-fp32"));
        d_plain.in = 7; // no skip layer needs in == out
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fused_grn(d_plain, x8.data_ptr<float>(), nullptr, 1, nullptr,
                                                                  std::vector<float>(200).data(), 21));
    }

    void calibratedInt8CopyTabulatesItsGrns_data()
    {
        QTest::addColumn<int>("hidden");
        QTest::newRow("hidden 16") << 16;
        QTest::newRow("hidden 32") << 32;
        QTest::newRow("hidden 64") << 64;
    }

    // An int8 copy made with calibration keeps each variable's input range; the plan tabulates the
    // GRNs over it and times the table beside the other kernels; a copy served by the table keeps
    // no variable GRNs, one that never uses it drops the table; without calibration there is none.
    void calibratedInt8CopyTabulatesItsGrns()
    {
        QFETCH(int, hidden);
        namespace mp = foxhunt::models::precision;
        torch::manual_seed(23);
        constexpr int64_t kVariables = 5;
        VariableSelectionNetwork vsn(VariableSelectionNetworkOptions(kVariables, hidden).context_size(hidden));
        vsn->eval();
        // Each variable in its own range.
        const auto spread = torch::tensor({1.0f, 1.5f, 0.5f, 1.0f, 2.0f});
        const auto shift = torch::tensor({0.0f, -1.0f, 2.0f, 0.5f, -1.0f});
        const auto inputs = [&](int64_t batch, int64_t steps) {
            return (torch::rand({batch, steps, kVariables}) * 2.0 - 1.0) * spread + shift;
        };
        const auto calibration = inputs(8, 40);
        const auto x = inputs(4, 25) * 0.9; // inside the calibrated range
        const auto context = torch::randn({4, hidden});
        torch::Tensor reference;
        {
            torch::NoGradGuard no_grad;
            reference = vsn(x, context).output;
        }
        const auto relative = [](const torch::Tensor& y, const torch::Tensor& to) {
            return (y - to).norm().item<double>() / to.norm().item<double>();
        };
        mp::QuantizeOptions q;
        q.calibrate = [&](torch::nn::Module& m) {
            m.as<VariableSelectionNetworkImpl>()->forward(calibration, torch::randn({8, hidden}));
        };
        auto plain = mp::quantize_for_inference(vsn);
        auto int8 = mp::quantize_for_inference(vsn, q);
        QVERIFY(!plain->can_tabulate());
        QVERIFY(int8->can_tabulate());
        QVERIFY(!int8->has_table()); // tabulated when a plan first needs it: the unplanned copy holds the range only
        QCOMPARE(mp::module_bytes(*int8), mp::module_bytes(*plain) + 2 * kVariables * 4);
        const auto flat = calibration.reshape({-1, kVariables});
        QVERIFY(torch::equal(int8->selection_range[0], std::get<0>(flat.min(0))));
        QVERIFY(torch::equal(int8->selection_range[1], std::get<0>(flat.max(0))));

        const auto plan = mp::plan_int8_kernels(*int8, [&] { int8(x, context); });
        QCOMPARE(plan.blocks.size(), size_t{1});
        const auto& timings = plan.blocks.front().timings;
        QCOMPARE(timings.back().kernel, std::string("table"));
        QVERIFY2(timings.back().relative_error < 0.02, std::to_string(timings.back().relative_error).c_str());
        // The plan released what it does not serve.
        if (plan.blocks.front().kernel == "table") {
            QVERIFY(!int8->variable_grns);
            QVERIFY(int8->has_table());
            QVERIFY(plan.released_bytes > 0);
        } else {
            QVERIFY(!int8->can_tabulate() && !int8->has_table());
        }

        torch::NoGradGuard no_grad;
        int8 = mp::quantize_for_inference(vsn, q);
        int8->set_block_plan({{100, "table"}});
        QCOMPARE(int8->block_kernel_for(100), std::string("table"));
        const auto tabled = int8(x, context).output;
        QVERIFY2(relative(tabled, reference) < 0.02, std::to_string(relative(tabled, reference)).c_str());
        const int64_t knots = int8->table_knots();
        QVERIFY2(knots >= 9 && knots <= 257, std::to_string(knots).c_str());
        QCOMPARE(int8->selection_table.sizes(), (std::vector<int64_t>{kVariables, knots, hidden}));
        {
            // The knots hold the GRNs' outputs (int8 weights dequantized, half precision).
            const int64_t v = 1;
            const auto low = int8->selection_range[0][v], high = int8->selection_range[1][v];
            const auto at = low + torch::arange(knots, torch::kFloat) * (high - low) / static_cast<double>(knots - 1);
            const auto embedded = at.unsqueeze(1) * vsn->embedding_weight[v] + vsn->embedding_bias[v];
            torch::AutoGradMode layers(true); // the float GRN layer by layer
            const auto grn = vsn->variable_grns[v]->as<GatedResidualNetworkImpl>()->forward(embedded).detach();
            const double error = relative(int8->selection_table[v].to(torch::kFloat), grn);
            QVERIFY2(error < 0.02, std::to_string(error).c_str());
        }
        for (const FusedIsa isa : {FusedIsa::Avx2, FusedIsa::Generic}) {
            const FusedIsa before = cap_fused_selection_isa(isa);
            const auto y = int8(x, context).output;
            cap_fused_selection_isa(before);
            QVERIFY(torch::allclose(y, tabled, 1e-5, 1e-5));
        }
        // Far outside the range the table reads its ends (tableSelectionInterpolatesAndClamps).
        auto beyond = x.clone();
        beyond.select(-1, 4).fill_(100.0);
        QVERIFY(torch::isfinite(int8(beyond, context).output).all().item<bool>());

        // Served by the table at every row count: the variable GRNs go, the output stays.
        const int64_t before = mp::module_bytes(*int8);
        const int64_t freed = int8->release_unplanned();
        QVERIFY(freed > 0);
        QVERIFY(!int8->variable_grns);
        QCOMPARE(mp::module_bytes(*int8), before - freed);
        QVERIFY(torch::equal(int8(x, context).output, tabled));
        {
            torch::AutoGradMode grad(true); // no autograd to give, and no layers left to give it
            QVERIFY(torch::equal(int8(x, context).output, tabled));
        }
        QCOMPARE(int8->time_block_kernels(100).size(), size_t{1});

        // A plan that never uses the table drops the range (and the table, had it been made).
        auto other = mp::quantize_for_inference(vsn, q);
        other->set_block_plan({{100, "fused-fp32"}});
        QCOMPARE(other->release_unplanned(), 2 * kVariables * int64_t{4});
        QVERIFY(!other->can_tabulate());
        QVERIFY(other->variable_grns);
        other->set_block_plan({{100, "table"}});
        QCOMPARE(other->block_kernel_for(100), std::string("layers"));

        // Without calibration: no table, none timed.
        const auto untabled = mp::plan_int8_kernels(*plain, [&] { plain(x, context); });
        for (const auto& t : untabled.blocks.front().timings) QVERIFY(t.kernel != "table");
        QCOMPARE(untabled.released_bytes, int64_t{0});

        // Ranges so wide that the knots the tolerance asks for would outweigh the GRNs: no table.
        mp::QuantizeOptions wide;
        wide.calibrate = [&](torch::nn::Module& m) {
            m.as<VariableSelectionNetworkImpl>()->forward(calibration * 1000.0, torch::randn({8, hidden}));
        };
        auto heavy = mp::quantize_for_inference(vsn, wide);
        QVERIFY(heavy->can_tabulate());
        const auto heavy_plan = mp::plan_int8_kernels(*heavy, [&] { heavy(x * 1000.0, context); });
        for (const auto& t : heavy_plan.blocks.front().timings) QVERIFY(t.kernel != "table");
        QVERIFY(!heavy->has_table() && !heavy->can_tabulate());
        heavy->set_block_plan({{100, "table"}});
        QVERIFY(torch::isfinite(heavy(x * 1000.0, context).output).all().item<bool>()); // layer by layer instead
    }

    // A selection network keeps one set of tensors: the table everywhere when it wins where the
    // most rows are served, else nowhere (injected timings).
    void selectionPlanKeepsOneRepresentation()
    {
        VariableSelectionNetwork vsn(VariableSelectionNetworkOptions(3, 16));
        using T = std::vector<foxhunt::models::precision::BlockTiming>;
        const std::vector<int64_t> rows{3200, 100, 5};
        const T big{{"layers", 900.0, 0.0}, {"fused-int8", 300.0, 0.002}, {"table", 100.0, 0.003}};
        const T small{{"layers", 90.0, 0.0}, {"fused-int8", 9.0, 0.002}, {"table", 12.0, 0.003}};
        const T inaccurate{{"layers", 90.0, 0.0}, {"fused-fp32", 30.0, 0.0}, {"table", 10.0, 0.2}};
        QCOMPARE(vsn->choose_block_kernels(rows, {big, small, small}, 0.05),
                 (std::vector<std::string>{"table", "table", "table"}));
        QCOMPARE(vsn->choose_block_kernels(rows, {big, inaccurate, small}, 0.05),
                 (std::vector<std::string>{"table", "fused-fp32", "table"}));
        const T slow_table{{"layers", 900.0, 0.0}, {"fused-int8", 300.0, 0.002}, {"table", 400.0, 0.003}};
        const T fast_table{{"layers", 90.0, 0.0}, {"fused-int8", 9.0, 0.002}, {"table", 5.0, 0.003}};
        QCOMPARE(vsn->choose_block_kernels(rows, {slow_table, fast_table, fast_table}, 0.05),
                 (std::vector<std::string>{"fused-int8", "fused-int8", "fused-int8"}));
        QVERIFY(vsn->choose_block_kernels({}, {}, 0.05).empty());
    }

    void maskFillIsFiniteInHalf()
    {
        QCOMPARE(lowest_finite(torch::kHalf), -65504.0);
        auto scores = torch::zeros({1, 2, 3}, torch::kHalf);
        auto filled = scores.masked_fill(causal_mask(2, 3, torch::kCPU), lowest_finite(torch::kHalf));
        QVERIFY(torch::isfinite(filled).all().item<bool>());
        auto attn = torch::softmax(filled.to(torch::kFloat), -1);
        QCOMPARE(attn[0][0][2].item<float>(), 0.0f);
        QVERIFY(std::abs(attn[0][0][0].item<float>() - 0.5f) < 1e-6f);
    }

    void attentionSharesValuesAndMasks()
    {
        torch::manual_seed(4);
        InterpretableMultiHeadAttention mha(InterpretableMultiHeadAttentionOptions(8, 2));
        torch::NoGradGuard ng;
        auto kv = torch::randn({2, 6, 8});
        auto q = kv.narrow(1, 3, 3);
        auto out = mha(q, kv, kv, causal_mask(3, 6, torch::kCPU));
        QCOMPARE(out.attention.sizes(), torch::IntArrayRef({2, 2, 3, 6}));
        // Query 0 (position 3) must not see positions 4, 5.
        QCOMPARE(out.attention.select(2, 0).narrow(-1, 4, 2).abs().max().item<float>(), 0.0f);
        QVERIFY(torch::allclose(out.attention.sum(-1), torch::ones({2, 2, 3}), 1e-5, 1e-6));
        QCOMPARE(mha->v_layer->weight.size(0), int64_t{4});
    }

    // At inference self-attention runs folded (folded_attention()) and other calls head by head
    // (attention_head()): the same outputs and weights as the layers with autograd on, hidden keys at
    // exactly zero, on every instruction set. Width 16 and 32 take the in-register transpose, 12 the
    // element-wise one; 21 keys leave a partial block of 16.
    void attentionKernelMatchesTheLayers()
    {
        for (const int64_t width : {16, 32, 12}) {
            torch::manual_seed(5);
            InterpretableMultiHeadAttention mha(InterpretableMultiHeadAttentionOptions(width, 4));
            mha->eval();
            const auto kv = torch::randn({3, 21, width});
            const auto q = kv.narrow(1, 16, 5);
            auto mask = causal_mask(5, 21, torch::kCPU);
            mask[2].fill_(true); // a query that sees nothing: even weights, as softmax over equal scores
            const auto expected = mha(q, kv, kv, mask);
            torch::NoGradGuard no_grad;
            QCOMPARE(mha->block_kernel_for(63), std::string("folded"));
            for (const FusedIsa isa : {FusedIsa::Avx512Vnni, FusedIsa::Avx2, FusedIsa::Generic}) {
                const FusedIsa before = cap_fused_selection_isa(isa);
                const auto folded = mha(q, kv, kv, mask);
                const auto by_head = mha(q, kv, kv.clone(), mask); // keys and values apart: head by head
                cap_fused_selection_isa(before);
                for (const auto* out : {&folded, &by_head}) {
                    const std::string at = "width " + std::to_string(width) + (out == &folded ? " folded" : " heads");
                    QVERIFY2(torch::allclose(out->output, expected.output.detach(), 1e-5, 1e-6), at.c_str());
                    QVERIFY2(torch::allclose(out->attention, expected.attention.detach(), 1e-5, 1e-6), at.c_str());
                    QCOMPARE(out->attention.select(2, 0).narrow(-1, 17, 4).abs().max().item<float>(), 0.0f);
                    QVERIFY(
                        torch::allclose(out->attention.select(2, 2), torch::full({3, 4, 21}, 1.0 / 21), 1e-6, 1e-7));
                }
            }
        }
    }

    // An int8 copy runs head by head until its plan has timed both ways at the shape it served;
    // the folded query weights come from the int8 ones and follow them when they change.
    void attentionInt8CopyFoldsByMeasurement()
    {
        namespace mp = foxhunt::models::precision;
        torch::manual_seed(8);
        InterpretableMultiHeadAttention mha(InterpretableMultiHeadAttentionOptions(16, 4));
        mha->eval();
        const auto kv = torch::randn({4, 30, 16});
        const auto q = kv.narrow(1, 25, 5);
        const auto mask = causal_mask(5, 30, torch::kCPU);
        torch::NoGradGuard no_grad;
        const auto expected = mha(q, kv, kv, mask);
        auto int8 = mp::quantize_for_inference(mha);
        QCOMPARE(int8->block_kernel_for(120), std::string("layers"));
        const auto plan = mp::plan_int8_kernels(*int8, [&] { int8(q, kv, kv, mask); });
        QCOMPARE(plan.blocks.size(), size_t{1});
        QCOMPARE(plan.blocks.front().rows, int64_t{120}); // batch x keys
        QCOMPARE(plan.blocks.front().timings.size(), size_t{2});
        QCOMPARE(plan.blocks.front().timings.back().kernel, std::string("folded"));
        QVERIFY(plan.blocks.front().timings.back().relative_error < 0.02);
        QCOMPARE(int8->block_kernel_for(120), plan.blocks.front().kernel);
        // The value layer's kernel is timed at the keys' rows (head by head) and the queries' (folded).
        std::vector<int64_t> value_rows;
        for (const auto& k : plan.layers)
            if (k.layer == "v_layer.int8") value_rows.push_back(k.shape.rows);
        std::sort(value_rows.begin(), value_rows.end());
        QCOMPARE(value_rows, (std::vector<int64_t>{20, 120}));
        for (const char* kernel : {"layers", "folded"}) {
            int8->set_block_plan({{120, kernel}});
            const auto out = int8(q, kv, kv, mask);
            const double error = (out.output - expected.output).norm().item<double>() /
                                 expected.output.norm().item<double>();
            QVERIFY2(error < 0.03, (std::string(kernel) + " " + std::to_string(error)).c_str());
            QVERIFY(torch::allclose(out.attention.sum(-1), torch::ones({4, 4, 5}), 1e-5, 1e-6));
        }
        // A changed int8 key weight moves the folded scores (the fold is made again), as it moves the layers'.
        const auto before = int8(q, kv, kv, mask).attention;
        int8->k_layers->ptr<mp::QuantizableLinearImpl>(0)->int8->weight.q.neg_();
        const auto after = int8(q, kv, kv, mask).attention;
        QVERIFY(!torch::allclose(before.select(1, 0), after.select(1, 0), 1e-3, 1e-3));
        int8->set_block_plan({{120, "layers"}});
        const auto layers_after = int8(q, kv, kv, mask).attention;
        QVERIFY((layers_after - after).norm().item<double>() / after.norm().item<double>() < 0.03);
        QVERIFY_THROWS_EXCEPTION(c10::Error, int8->set_block_plan({{120, "fused-fp32"}}));
        QVERIFY_THROWS_EXCEPTION(c10::Error, int8->time_block_kernels(7)); // no call of 7 key rows seen
    }

    void tftIsCausalAndInterpretable()
    {
        torch::manual_seed(5);
        TemporalFusionTransformer tft(TftOptions(/*n_past=*/4, /*n_future=*/2, /*horizon=*/5, /*n_quantiles=*/3)
                                          .n_static(2)
                                          .hidden_size(16)
                                          .n_heads(4)
                                          .dropout(0.0));
        tft->eval();
        torch::NoGradGuard ng;
        auto past = torch::randn({3, 12, 4});
        auto future = torch::randn({3, 5, 2});
        auto statics = torch::randn({3, 2});
        auto a = tft(past, future, statics);
        QCOMPARE(a.quantiles.sizes(), torch::IntArrayRef({3, 5, 3}));
        QCOMPARE(a.attention.sizes(), torch::IntArrayRef({3, 4, 5, 17}));
        QCOMPARE(a.encoder_importances.sizes(), torch::IntArrayRef({3, 4}));
        QCOMPARE(a.decoder_importances.sizes(), torch::IntArrayRef({3, 2}));
        QCOMPARE(a.static_importances.sizes(), torch::IntArrayRef({3, 2}));
        for (const auto& w : {a.encoder_importances, a.decoder_importances, a.static_importances})
            QVERIFY(torch::allclose(w.sum(-1), torch::ones({3}), 1e-5, 1e-6));

        // Change the known future from decoder step 3 on: steps 0..2 must not move.
        auto changed = future.clone();
        changed.narrow(1, 3, 2).normal_();
        auto b = tft(past, changed, statics);
        QVERIFY(torch::allclose(a.quantiles.narrow(1, 0, 3), b.quantiles.narrow(1, 0, 3), 1e-6, 1e-6));
        QVERIFY(!torch::allclose(a.quantiles.narrow(1, 3, 2), b.quantiles.narrow(1, 3, 2), 1e-4, 1e-4));
        // Attention from decoder step i to later decoder positions is exactly zero.
        for (int64_t i = 0; i < 5; ++i) {
            const int64_t later = 5 - 1 - i;
            if (later > 0)
                QCOMPARE(a.attention.select(2, i).narrow(-1, 12 + i + 1, later).abs().max().item<float>(), 0.0f);
        }
        // The static covariates reach the output through the contexts.
        auto c = tft(past, future, torch::randn({3, 2}));
        QVERIFY(!torch::allclose(a.quantiles, c.quantiles, 1e-4, 1e-4));
    }

    void tftWithoutStaticsOrKnownFuture()
    {
        torch::manual_seed(6);
        TemporalFusionTransformer tft(TftOptions(3, 0, 4, 3).hidden_size(8).n_heads(2));
        auto out = tft(torch::randn({2, 6, 3}), torch::zeros({2, 4, 0}));
        QCOMPARE(out.quantiles.sizes(), torch::IntArrayRef({2, 4, 3}));
        QCOMPARE(out.static_importances.size(1), int64_t{0});
        out.quantiles.sum().backward();
        QVERIFY(tft->output_layer->weight.grad().defined());
    }

    void seedConfigurationRunsForwardBackward()
    {
        // Seed sizes: batch 32, sequence 100.
        torch::manual_seed(7);
        TemporalFusionTransformer tft(
            TftOptions(/*n_past=*/18, /*n_future=*/2, /*horizon=*/5, /*n_quantiles=*/3).n_static(2).hidden_size(32));
        auto out = tft(torch::randn({32, 100, 18}), torch::randn({32, 5, 2}), torch::randn({32, 2}));
        QCOMPARE(out.quantiles.sizes(), torch::IntArrayRef({32, 5, 3}));
        QCOMPARE(out.attention.sizes(), torch::IntArrayRef({32, 4, 5, 105}));
        out.quantiles.pow(2).mean().backward();
        QVERIFY(torch::isfinite(tft->lstm_encoder->parameters()[0].grad()).all().item<bool>());
        QVERIFY(tft->attention->v_layer->weight.grad().abs().sum().item<double>() > 0.0);
    }

    void rejectsWrongShapes()
    {
        TemporalFusionTransformer tft(TftOptions(3, 1, 4, 3).hidden_size(8).n_heads(2));
        bool threw = false;
        try {
            tft(torch::randn({2, 6, 3}), torch::randn({2, 3, 1}));
        } catch (const c10::Error&) {
            threw = true;
        }
        QVERIFY(threw);
    }
};

} // namespace tst_tft

FOXHUNT_TEST_APPLESS_MAIN(tst_tft::TestTft)
#include "tst_tft.moc"
