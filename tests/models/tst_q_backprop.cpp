// SPDX-License-Identifier: GPL-3.0-or-later
// QNetworkBackprop: its forward equals QNetwork::forward and its hand-written backward equals
// autograd's gradients, for plain and dueling heads, with and without hidden layers, and it
// writes into flat gradient views after a Module::load() rebinds the parameters.
#include "models/agents/grad_utils.h"
#include "models/agents/q_backprop.h"
#include "models/agents/q_network.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <torch/torch.h>

namespace tst_q_backprop {

using namespace foxhunt::models;

namespace {

QNetwork makeNet(uint64_t seed, std::vector<int64_t> hidden, bool dueling)
{
    torch::manual_seed(seed);
    return QNetwork(QNetworkOptions(7, 4).hidden(std::move(hidden)).dueling(dueling));
}

std::vector<torch::Tensor> autogradGradients(QNetwork& net, const torch::Tensor& x, const torch::Tensor& gradQ)
{
    for (auto& p : net->parameters()) p.mutable_grad() = torch::Tensor();
    net->forward(x).backward(gradQ);
    std::vector<torch::Tensor> grads;
    for (const auto& p : net->parameters()) grads.push_back(p.grad().clone());
    return grads;
}

double maxAbsDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b)
{
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
    return m;
}

} // namespace

class TestQBackprop : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void matchesAutograd_data();
    void matchesAutograd();
    void writesFlatGradientsAfterLoad();
    void rejectsBadShapes();
};

void TestQBackprop::matchesAutograd_data()
{
    QTest::addColumn<bool>("dueling");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("batch");
    QTest::newRow("plain, 2 hidden, batch 32") << false << 2 << 32;
    QTest::newRow("dueling, 2 hidden, batch 32") << true << 2 << 32;
    QTest::newRow("plain, 3 hidden, batch 5") << false << 3 << 5;
    QTest::newRow("dueling, 1 hidden, batch 1") << true << 1 << 1;
    QTest::newRow("plain, no hidden, batch 9") << false << 0 << 9;
    QTest::newRow("dueling, no hidden, batch 9") << true << 0 << 9;
}

void TestQBackprop::matchesAutograd()
{
    QFETCH(bool, dueling);
    QFETCH(int, layers);
    QFETCH(int, batch);
    const std::vector<int64_t> widths{24, 16, 12};
    const std::vector<int64_t> hidden(widths.begin(), widths.begin() + layers);
    QNetwork net = makeNet(7, hidden, dueling);
    QNetworkBackprop prop(*net);
    torch::manual_seed(8);
    for (int trial = 0; trial < 3; ++trial) {
        const torch::Tensor x = torch::randn({batch, 7});
        const torch::Tensor gradQ = torch::randn({batch, 4});
        const std::vector<torch::Tensor> expected = autogradGradients(net, x, gradQ);
        // Garbage in the gradients: backward() must overwrite, not accumulate.
        for (auto& p : net->parameters()) p.mutable_grad() = torch::full_like(p, 123.0f);
        torch::Tensor q;
        {
            torch::NoGradGuard guard;
            q = net->forward(x);
        }
        QVERIFY(torch::allclose(prop.forward(x), q, /*rtol=*/0.0, /*atol=*/1e-6));
        prop.backward(gradQ);
        std::vector<torch::Tensor> got;
        for (const auto& p : net->parameters()) got.push_back(p.grad());
        const double diff = maxAbsDiff(got, expected);
        QVERIFY2(diff <= 1e-6, qPrintable(QString("trial %1: max |diff| %2").arg(trial).arg(diff)));
    }
}

void TestQBackprop::writesFlatGradientsAfterLoad()
{
    QNetwork saved = makeNet(1, {16, 8}, true);
    QNetwork net = makeNet(2, {16, 8}, true);
    FlatParameters flat;
    flatten_parameters(*net, flat, /*with_grads=*/true);
    QNetworkBackprop prop(*net); // bound before the load: must follow the rebinding
    QTemporaryDir dir;
    const std::string path = dir.filePath("q.pt").toStdString();
    torch::save(saved, path);
    torch::load(net, path);
    flatten_parameters(*net, flat, /*with_grads=*/true);
    torch::manual_seed(3);
    const torch::Tensor x = torch::randn({6, 7});
    const torch::Tensor gradQ = torch::randn({6, 4});
    QNetwork reference = makeNet(1, {16, 8}, true);
    const std::vector<torch::Tensor> expected = autogradGradients(reference, x, gradQ);
    prop.forward(x);
    prop.backward(gradQ);
    std::vector<torch::Tensor> flatViews;
    int64_t offset = 0;
    for (const auto& p : net->parameters()) {
        flatViews.push_back(flat.grads.narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
    }
    QVERIFY(maxAbsDiff(flatViews, expected) <= 1e-6);
}

void TestQBackprop::rejectsBadShapes()
{
    QNetwork net = makeNet(1, {8}, false);
    QNetworkBackprop prop(*net);
    QVERIFY_THROWS_EXCEPTION(c10::Error, prop.backward(torch::zeros({2, 4}))); // before any forward
    QVERIFY_THROWS_EXCEPTION(c10::Error, prop.forward(torch::zeros({2, 6})));
    QVERIFY_THROWS_EXCEPTION(c10::Error, prop.forward(torch::zeros({2, 7}, torch::kFloat64)));
    prop.forward(torch::zeros({2, 7}));
    QVERIFY_THROWS_EXCEPTION(c10::Error, prop.backward(torch::zeros({3, 4})));
}

} // namespace tst_q_backprop

FOXHUNT_TEST_APPLESS_MAIN(tst_q_backprop::TestQBackprop)
#include "tst_q_backprop.moc"
