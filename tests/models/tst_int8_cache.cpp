// SPDX-License-Identifier: GPL-3.0-or-later
// Int8Linear's inference-time cache (decoded row scales, dequantized bias): the cached path must
// give the very bits that decoding afresh gives, and any change of the int8 buffers must reach it.

#include "models/agents/actor_critic.h"
#include "models/agents/q_network.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/precision/int8_linear.h"
#include "models/precision/quantize.h"
#include "models/tft/tft.h"
#include "tests/support/test_bundle.h"

#include <QTest>
#include <torch/torch.h>

#include <sstream>

namespace tst_int8_cache {

using namespace foxhunt::models;
using namespace foxhunt::models::precision;

namespace {

bool identical(const torch::Tensor& a, const torch::Tensor& b)
{
    return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && torch::equal(a, b);
}

// What forward() computed before the cache, decoding the scales and the bias on the spot.
torch::Tensor decodedAfresh(const Int8LinearImpl& l, const torch::Tensor& x)
{
    if (!l.options.activation_absmax())
        return torch::nn::functional::linear(x, dequantize_per_row(l.weight), l.dequantized_bias());
    const double sx = *l.options.activation_absmax() / 127.0;
    auto xq = torch::round(x / sx).clamp(-127, 127);
    auto y = torch::matmul(xq, l.weight.q.to(torch::kFloat).t()) * sx * l.weight.scale().unsqueeze(0);
    return l.has_bias() ? y + l.dequantized_bias() : y;
}

Int8Linear layer(std::uint64_t seed, bool bias, bool staticRange)
{
    torch::manual_seed(static_cast<int64_t>(seed));
    const auto w = torch::randn({24, 40}) * torch::linspace(0.01, 3.0, 24).unsqueeze(1);
    const auto b = bias ? torch::randn({24}) : torch::Tensor();
    auto opts = Int8LinearOptions().backend(Int8Backend::Dequantize);
    if (staticRange) opts.activation_absmax(3.0);
    return Int8Linear(w, b, opts);
}

} // namespace

class TestInt8Cache : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }

    void cachedEqualsDecodedAfresh_data()
    {
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("staticRange");
        QTest::newRow("dynamic, bias") << true << false;
        QTest::newRow("dynamic, no bias") << false << false;
        QTest::newRow("static, bias") << true << true;
        QTest::newRow("static, no bias") << false << true;
    }

    void cachedEqualsDecodedAfresh()
    {
        QFETCH(bool, bias);
        QFETCH(bool, staticRange);
        torch::NoGradGuard ng;
        Int8Linear l = layer(5, bias, staticRange);
        QCOMPARE(l->cache_bytes(), int64_t{0});
        const auto x = torch::randn({7, 40});
        const auto first = l->forward(x);
        QCOMPARE(l->cache_bytes(), int64_t{(bias ? 2 : 1) * 24 * 4});
        QVERIFY(identical(first, decodedAfresh(*l, x)));
        for (int call = 0; call < 3; ++call) QVERIFY(identical(l->forward(x), decodedAfresh(*l, x)));
        // A recurrence's repeated_forward uses the same cache.
        if (!staticRange) {
            const auto repeated = l->repeated_forward(torch::kFloat, c10::DeviceType::CPU);
            QVERIFY(identical(repeated(x), decodedAfresh(*l, x)));
        }
        // The stored footprint stays what is stored: the cache is reported beside it.
        int64_t buffers = 0;
        for (const auto& b : l->buffers()) buffers += b.numel() * b.element_size();
        QCOMPARE(l->weight_bytes(), buffers);
        QCOMPARE(module_bytes(*l), buffers);
    }

    void inPlaceRefreshReachesTheCache()
    {
        torch::NoGradGuard ng;
        Int8Linear l = layer(5, true, false);
        Int8Linear changed = layer(6, true, false);
        const auto x = torch::randn({3, 40});
        const auto before = l->forward(x);
        // copy_() into the buffers (as copy_state() or a load do) bumps their versions.
        copy_state(*changed, *l);
        const auto after = l->forward(x);
        QVERIFY(!identical(after, before));
        QVERIFY(identical(after, changed->forward(x)));
        QVERIFY(identical(after, decodedAfresh(*l, x)));
    }

    void replacedStorageReachesTheCache()
    {
        torch::NoGradGuard ng;
        Int8Linear l = layer(5, true, false);
        Int8Linear changed = layer(7, true, false);
        const auto x = torch::randn({3, 40});
        const auto before = l->forward(x);
        // set_data() (Module::to(), a load across devices) swaps the storage, not the version.
        l->weight.q.set_data(changed->weight.q.clone());
        l->weight.scale_code.set_data(changed->weight.scale_code.clone());
        l->weight.scale_max.set_data(changed->weight.scale_max.clone());
        l->bias.q.set_data(changed->bias.q.clone());
        l->bias.scale.set_data(changed->bias.scale.clone());
        const auto after = l->forward(x);
        QVERIFY(!identical(after, before));
        QVERIFY(identical(after, changed->forward(x)));
    }

    void loadedWeightsReachTheCache()
    {
        torch::NoGradGuard ng;
        Int8Linear l = layer(5, true, true);
        Int8Linear changed = layer(8, true, true);
        const auto x = torch::randn({3, 40});
        const auto before = l->forward(x);
        std::stringstream bytes;
        torch::save(changed, bytes);
        torch::load(l, bytes);
        QVERIFY(!identical(l->forward(x), before));
        QVERIFY(identical(l->forward(x), changed->forward(x)));
    }

    // The agents' INT8 copies: refreshed in place from FP32 weights that trained on, each
    // decision follows the new weights exactly as a copy made from scratch does.
    void agentCopyFollowsChangedFp32Weights()
    {
        torch::NoGradGuard ng;
        torch::manual_seed(3);
        QNetwork q(QNetworkOptions(12, 3).hidden({32, 32}).dueling(true));
        ActorCritic ac(ActorCriticOptions(12, 3).hidden({32, 32}));
        QNetwork q8 = quantize_for_inference(q);
        ActorCritic ac8 = quantize_for_inference(ac);
        const auto x = torch::randn({5, 12});
        const auto qBefore = q8->forward(x);
        const auto acBefore = ac8->forward(x).logits;
        QVERIFY(identical(q8->forward(x), qBefore)); // cached calls repeat the first, decoded afresh
        for (auto& p : q->parameters()) p.add_(torch::randn_like(p) * 0.1);
        for (auto& p : ac->parameters()) p.add_(torch::randn_like(p) * 0.1);
        QNetwork qFresh = quantize_for_inference(q);
        ActorCritic acFresh = quantize_for_inference(ac);
        copy_state(*qFresh, *q8);
        copy_state(*acFresh, *ac8);
        const auto qAfter = q8->forward(x);
        const auto acAfter = ac8->forward(x);
        QVERIFY(!identical(qAfter, qBefore));
        QVERIFY(!identical(acAfter.logits, acBefore));
        QVERIFY(identical(qAfter, qFresh->forward(x)));
        const auto acReference = acFresh->forward(x);
        QVERIFY(identical(acAfter.logits, acReference.logits));
        QVERIFY(identical(acAfter.value, acReference.value));
    }

    // The forecasters' own int8 tensors (Mamba-2's conv taps, the TFT's embedding tables) cache
    // their decoded scales alike.
    void forecasterCopiesFollowChangedFp32Weights_data()
    {
        QTest::addColumn<bool>("tft");
        QTest::newRow("mamba2") << false;
        QTest::newRow("tft") << true;
    }

    void forecasterCopiesFollowChangedFp32Weights()
    {
        QFETCH(bool, tft);
        torch::NoGradGuard ng;
        torch::manual_seed(4);
        const auto past = torch::randn({3, 12, 6});
        const auto future = torch::randn({3, 4, 2});
        mamba2::Mamba2Forecaster m(mamba2::Mamba2ForecasterOptions(6, 4, 3).known_features(2).d_model(32));
        tft::TemporalFusionTransformer t(tft::TftOptions(6, 2, 4, 3).hidden_size(16).dropout(0.0));
        torch::nn::Module& model = tft ? static_cast<torch::nn::Module&>(*t) : *m;
        model.eval();
        const auto run = [&](torch::nn::Module& net) {
            return tft ? net.as<tft::TemporalFusionTransformerImpl>()->forward(past, future).quantiles
                       : net.as<mamba2::Mamba2ForecasterImpl>()->forward(past, future);
        };
        const auto quantize = [&]() -> std::shared_ptr<torch::nn::Module> {
            if (tft) return quantize_for_inference(t).ptr();
            return quantize_for_inference(m).ptr();
        };
        auto copy = quantize();
        const auto before = run(*copy);
        QVERIFY(identical(run(*copy), before)); // cached calls repeat the first, decoded afresh
        for (auto& p : model.parameters()) p.add_(torch::randn_like(p) * 0.05);
        auto fresh = quantize();
        copy_state(*fresh, *copy);
        const auto after = run(*copy);
        QVERIFY(!identical(after, before));
        QVERIFY(identical(after, run(*fresh)));
    }

    void inferenceModeCallsGiveTheSameBits()
    {
        Int8Linear l = layer(9, true, false);
        const auto x = torch::randn({4, 40});
        torch::Tensor inside;
        {
            c10::InferenceMode guard;
            inside = l->forward(x);
        }
        torch::NoGradGuard ng;
        QVERIFY(identical(l->forward(x), inside));
        QVERIFY(identical(inside, decodedAfresh(*l, x)));
    }
};

} // namespace tst_int8_cache

FOXHUNT_TEST_APPLESS_MAIN(tst_int8_cache::TestInt8Cache)
#include "tst_int8_cache.moc"
