// SPDX-License-Identifier: GPL-3.0-or-later
// Flat parameter storage: parameters and gradients become views of one buffer,
// Adam over that buffer follows torch::optim::Adam per parameter step for step
// (bias correction and eps included), and clipping sees the same norm.
#include "models/agents/grad_utils.h"
#include "models/agents/q_network.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

#include <limits>

namespace tst_grad_utils {

using namespace foxhunt::models;

namespace {

QNetwork makeNet(uint64_t seed)
{
    torch::manual_seed(seed);
    return QNetwork(QNetworkOptions(5, 3).hidden({16, 8}));
}

double maxAbsDiff(const QNetwork& a, const QNetwork& b)
{
    double m = 0.0;
    const auto pa = a->parameters();
    const auto pb = b->parameters();
    for (std::size_t i = 0; i < pa.size(); ++i) m = std::max(m, (pa[i] - pb[i]).abs().max().item<double>());
    return m;
}

} // namespace

class TestGradUtils : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void parametersAndGradsAreViews();
    void flatAdamMatchesTorchAdam_data();
    void flatAdamMatchesTorchAdam();
    void reflattenAfterLoad();
    void fusedAdamMatchesTorchAdam();
    void clipSaysWhetherItScaled();
};

void TestGradUtils::parametersAndGradsAreViews()
{
    QNetwork net = makeNet(1);
    const std::vector<float> before = [&] {
        std::vector<float> v;
        for (const auto& p : net->parameters())
            for (int64_t i = 0; i < p.numel(); ++i) v.push_back(p.reshape(-1)[i].item<float>());
        return v;
    }();
    FlatParameters flat;
    flatten_parameters(*net, flat, /*with_grads=*/true);
    QCOMPARE(flat.values.numel(), static_cast<int64_t>(before.size()));
    QCOMPARE(std::vector<float>(flat.values.data_ptr<float>(), flat.values.data_ptr<float>() + flat.values.numel()),
             before);
    // A backward lands in the flat gradient buffer.
    const torch::Tensor x = torch::randn({4, 5});
    net->forward(x).pow(2).sum().backward();
    double perParameter = 0.0;
    for (const auto& p : net->parameters()) perParameter += p.grad().pow(2).sum().item<double>();
    QVERIFY(perParameter > 0.0);
    QVERIFY(std::abs(flat.grads.pow(2).sum().item<double>() - perParameter) <= 1e-5 * perParameter);
    QVERIFY(flat.values.grad().is_same(flat.grads));
    // A second backward accumulates, as with per-parameter gradients.
    net->forward(x).pow(2).sum().backward();
    QVERIFY(std::abs(flat.grads.pow(2).sum().item<double>() - 4.0 * perParameter) <= 1e-5 * perParameter);
    // Writing the flat buffer writes the module's parameters.
    {
        torch::NoGradGuard guard;
        flat.values.fill_(0.25f);
    }
    for (const auto& p : net->parameters()) QCOMPARE(p.min().item<float>(), 0.25f);
}

void TestGradUtils::flatAdamMatchesTorchAdam_data()
{
    QTest::addColumn<double>("lr");
    QTest::addColumn<double>("eps");
    QTest::addColumn<double>("maxNorm");
    QTest::newRow("dqn defaults") << 1e-4 << 1e-8 << 10.0;
    QTest::newRow("large eps, tight clip") << 1e-2 << 1e-3 << 0.5;
}

void TestGradUtils::flatAdamMatchesTorchAdam()
{
    QFETCH(double, lr);
    QFETCH(double, eps);
    QFETCH(double, maxNorm);
    QNetwork reference = makeNet(2);
    QNetwork flatNet = makeNet(2);
    QCOMPARE(maxAbsDiff(reference, flatNet), 0.0);
    torch::optim::Adam perParameter(reference->parameters(), torch::optim::AdamOptions(lr).eps(eps));
    FlatParameters flat;
    flatten_parameters(*flatNet, flat, /*with_grads=*/true);
    const std::vector<torch::Tensor> flatList{flat.values};
    torch::optim::Adam fused(flatList, torch::optim::AdamOptions(lr).eps(eps));
    torch::manual_seed(3);
    for (int step = 0; step < 25; ++step) {
        const torch::Tensor x = torch::randn({8, 5});
        const torch::Tensor y = torch::randn({8, 3});
        zero_grad_set_to_none(perParameter);
        torch::mse_loss(reference->forward(x), y).backward();
        const double n1 = clip_grad_norm_f64(reference->parameters(), maxNorm);
        perParameter.step();

        flat.grads.zero_();
        torch::mse_loss(flatNet->forward(x), y).backward();
        const double n2 = clip_grad_norm_f64(flatList, maxNorm);
        fused.step();
        QVERIFY2(std::abs(n1 - n2) <= 1e-12 * std::max(1.0, n1),
                 qPrintable(QString("step %1: %2 vs %3").arg(step).arg(n1).arg(n2)));
        // Elementwise the two run the same float32 ops; only vector/scalar tails may round apart.
        QVERIFY2(maxAbsDiff(reference, flatNet) <= 1e-6, qPrintable(QString("step %1").arg(step)));
    }
    QVERIFY(maxAbsDiff(reference, makeNet(2)) > 1e-3); // the optimizer moved the weights
    // One state entry for the whole network.
    QCOMPARE(fused.state().size(), std::size_t(1));
    const auto& state = static_cast<torch::optim::AdamParamState&>(*fused.state().begin()->second);
    QCOMPARE(state.step(), int64_t(25));
    QCOMPARE(state.exp_avg().numel(), flat.values.numel());
}

void TestGradUtils::reflattenAfterLoad()
{
    QNetwork a = makeNet(4);
    QNetwork b = makeNet(5);
    FlatParameters flat;
    flatten_parameters(*b, flat, /*with_grads=*/true);
    const torch::Tensor buffer = flat.values;
    QTemporaryDir dir;
    const std::string path = dir.filePath("net.pt").toStdString();
    torch::save(a, path);
    torch::load(b, path); // rebinds b's parameters to the loaded storage
    flatten_parameters(*b, flat, /*with_grads=*/true);
    QVERIFY(flat.values.is_same(buffer)); // same buffer: an optimizer holding it keeps working
    QCOMPARE(maxAbsDiff(a, b), 0.0);
    {
        torch::NoGradGuard guard;
        flat.values.zero_();
    }
    for (const auto& p : b->parameters()) QCOMPARE(p.abs().max().item<float>(), 0.0f);
}

// adam_step_fused against torch::optim::Adam::step on the same flat buffer and gradients, and
// their checkpoints interchangeable: the fused state loads into a stock Adam that carries on.
void TestGradUtils::fusedAdamMatchesTorchAdam()
{
    QNetwork stockNet = makeNet(6);
    QNetwork fusedNet = makeNet(6);
    FlatParameters stockFlat, fusedFlat;
    flatten_parameters(*stockNet, stockFlat, /*with_grads=*/true);
    flatten_parameters(*fusedNet, fusedFlat, /*with_grads=*/true);
    const auto options = torch::optim::AdamOptions(1e-2).eps(1e-6);
    torch::optim::Adam stock(std::vector<torch::Tensor>{stockFlat.values}, options);
    torch::optim::Adam fused(std::vector<torch::Tensor>{fusedFlat.values}, options);
    torch::manual_seed(9);
    const auto stepBoth = [&](torch::optim::Adam& second) {
        const torch::Tensor x = torch::randn({8, 5});
        const torch::Tensor y = torch::randn({8, 3});
        stockFlat.grads.zero_();
        torch::mse_loss(stockNet->forward(x), y).backward();
        stock.step();
        fusedFlat.grads.zero_();
        torch::mse_loss(fusedNet->forward(x), y).backward();
        if (&second == &fused) adam_step_fused(fused);
        else second.step();
    };
    for (int step = 0; step < 30; ++step) {
        stepBoth(fused);
        const double diff = (stockFlat.values - fusedFlat.values).abs().max().item<double>();
        QVERIFY2(diff <= 1e-6, qPrintable(QString("step %1: max |diff| %2").arg(step).arg(diff)));
    }
    QVERIFY(maxAbsDiff(fusedNet, makeNet(6)) > 1e-3); // the steps moved the weights
    QCOMPARE(fused.state().size(), std::size_t(1));
    const auto& state = static_cast<torch::optim::AdamParamState&>(*fused.state().begin()->second);
    const auto& stockState = static_cast<torch::optim::AdamParamState&>(*stock.state().begin()->second);
    QCOMPARE(state.step(), int64_t(30));
    QVERIFY((state.exp_avg_sq() - stockState.exp_avg_sq()).abs().max().item<double>() <= 1e-9);

    QTemporaryDir dir;
    const std::string path = dir.filePath("adam.pt").toStdString();
    torch::save(fused, path);
    torch::optim::Adam resumed(std::vector<torch::Tensor>{fusedFlat.values}, options);
    torch::load(resumed, path);
    for (int step = 0; step < 5; ++step) stepBoth(resumed);
    QCOMPARE(static_cast<torch::optim::AdamParamState&>(*resumed.state().begin()->second).step(), int64_t(35));
    QVERIFY((stockFlat.values - fusedFlat.values).abs().max().item<double>() <= 1e-6);
}

void TestGradUtils::clipSaysWhetherItScaled()
{
    // Gradients (3, 4): global norm 5.
    torch::Tensor p = torch::zeros({2}, torch::requires_grad());
    p.mutable_grad() = torch::tensor({3.0f, 4.0f});
    bool clipped = true;
    QCOMPARE(clip_grad_norm_f64({p}, 10.0, &clipped), 5.0);
    QVERIFY(!clipped);
    QCOMPARE(p.grad()[1].item<float>(), 4.0f);
    QCOMPARE(clip_grad_norm_f64({p}, 1.0, &clipped), 5.0);
    QVERIFY(clipped);
    QVERIFY(std::abs(grad_norm_f64({p}) - 1.0) < 1e-5);
    // No limit, or a norm that is not finite: never scaled.
    QVERIFY(std::abs(clip_grad_norm_f64({p}, 0.0, &clipped) - 1.0) < 1e-5);
    QVERIFY(!clipped);
    p.mutable_grad()[0] = std::numeric_limits<float>::infinity();
    clip_grad_norm_f64({p}, 1.0, &clipped);
    QVERIFY(!clipped);
}

} // namespace tst_grad_utils

FOXHUNT_TEST_APPLESS_MAIN(tst_grad_utils::TestGradUtils)
#include "tst_grad_utils.moc"
