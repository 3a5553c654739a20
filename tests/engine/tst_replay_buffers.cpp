// SPDX-License-Identifier: GPL-3.0-or-later
// Uniform replay, n-step folding, the sum-tree and prioritized sampling.
#include "engine/agents/prioritized_replay.h"
#include "engine/agents/replay_buffer.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <array>
#include <cmath>

namespace tst_replay_buffers {

using namespace foxhunt;

class TestReplayBuffers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void ringBufferOverwritesOldest();
    void nStepReturns();
    void sumTreeFind();
    void prioritizedProportions_data();
    void prioritizedProportions();
    void importanceWeights();
};

void TestReplayBuffers::ringBufferOverwritesOldest()
{
    ReplayBuffer buffer(3, 2);
    for (int i = 0; i < 5; ++i) {
        const std::array<float, 2> o{float(i), float(i)};
        const std::array<float, 2> n{float(i + 1), float(i + 1)};
        buffer.add(o, i % 3, float(i), n, i == 4, 0.99f);
    }
    QCOMPARE(buffer.size(), std::size_t(3));
    const ReplayStorage& s = buffer.storage();
    // Slots hold transitions 3, 4, 2 (5 writes into 3 slots).
    QCOMPARE(s.rewards, (std::vector<float>{3, 4, 2}));
    QCOMPARE(s.terminated, (std::vector<float>{0, 1, 0}));
    std::mt19937_64 rng(1);
    ReplayBatch batch;
    batch.resize(64, 2);
    buffer.sample(rng, batch);
    for (std::size_t b = 0; b < 64; ++b) {
        QVERIFY(batch.indices[b] < 3);
        QCOMPARE(batch.rewards[b], s.rewards[batch.indices[b]]);
        QCOMPARE(batch.observations[2 * b], s.rewards[batch.indices[b]]);
        QCOMPARE(batch.nextObservations[2 * b + 1], s.rewards[batch.indices[b]] + 1.0f);
        QCOMPARE(batch.weights[b], 1.0f);
    }
}

void TestReplayBuffers::nStepReturns()
{
    // gamma 0.5, n 3, rewards 1..5, terminal after the 5th step.
    NStepAccumulator acc(3, 0.5);
    struct Out {
        float obs, reward, next, discount;
        bool terminal;
    };
    std::vector<Out> out;
    for (int i = 1; i <= 5; ++i) {
        const std::array<float, 1> o{float(i)};
        const std::array<float, 1> n{float(i + 1)};
        acc.push(o, 0, float(i), n, i == 5, false,
                 [&](std::span<const float> so, int, float r, std::span<const float> sn, bool t, float disc) {
                     out.push_back({so[0], r, sn[0], disc, t});
                 });
        QCOMPARE(out.size(), std::size_t(i < 3 ? 0 : (i < 5 ? i - 2 : 5)));
    }
    // 1 + 0.5*2 + 0.25*3; 2 + 1.5 + 1; then the flush: 3 + 2 + 1.25, 4 + 2.5, 5.
    const std::vector<Out> expected{{1, 2.75f, 4, 0.125f, false},
                                    {2, 4.5f, 5, 0.125f, false},
                                    {3, 6.25f, 6, 0.125f, true},
                                    {4, 6.5f, 6, 0.25f, true},
                                    {5, 5.0f, 6, 0.5f, true}};
    for (std::size_t k = 0; k < expected.size(); ++k) {
        QCOMPARE(out[k].obs, expected[k].obs);
        QCOMPARE(out[k].reward, expected[k].reward);
        QCOMPARE(out[k].next, expected[k].next);
        QCOMPARE(out[k].discount, expected[k].discount);
        QCOMPARE(out[k].terminal, expected[k].terminal);
    }
    QVERIFY(acc.pending().empty());
}

void TestReplayBuffers::sumTreeFind()
{
    SumTree tree(5);
    const double v[5] = {1, 0, 2, 3, 4};
    for (int i = 0; i < 5; ++i) tree.set(std::size_t(i), v[i]);
    QCOMPARE(tree.total(), 10.0);
    QCOMPARE(tree.minimum(), 0.0);
    QCOMPARE(tree.find(0.0), std::size_t(0));
    QCOMPARE(tree.find(0.999), std::size_t(0));
    QCOMPARE(tree.find(1.0), std::size_t(2));
    QCOMPARE(tree.find(2.999), std::size_t(2));
    QCOMPARE(tree.find(3.0), std::size_t(3));
    QCOMPARE(tree.find(6.0), std::size_t(4));
    QCOMPARE(tree.find(9.999), std::size_t(4));
    tree.set(1, 0.5);
    QCOMPARE(tree.minimum(), 0.5);
    QCOMPARE(tree.find(1.25), std::size_t(1));
}

void TestReplayBuffers::prioritizedProportions_data()
{
    QTest::addColumn<double>("alpha");
    QTest::newRow("alpha=1") << 1.0;
    QTest::newRow("alpha=0.5") << 0.5;
    QTest::newRow("alpha=0 (uniform)") << 0.0;
}

void TestReplayBuffers::prioritizedProportions()
{
    QFETCH(double, alpha);
    PrioritizedReplayBuffer buffer(4, 1, {alpha, 1e-6});
    for (int i = 0; i < 4; ++i) {
        const std::array<float, 1> o{float(i)};
        buffer.add(o, 0, 0.0f, o, false, 1.0f);
    }
    const std::array<std::size_t, 4> idx{0, 1, 2, 3};
    const std::array<float, 4> td{1.0f, 2.0f, 3.0f, 4.0f};
    buffer.updatePriorities(idx, td);
    double expected[4];
    double norm = 0.0;
    for (int i = 0; i < 4; ++i) norm += expected[i] = std::pow(td[std::size_t(i)] + 1e-6, alpha);
    for (int i = 0; i < 4; ++i) {
        expected[i] /= norm;
        QVERIFY(std::abs(buffer.probability(std::size_t(i)) - expected[i]) < 1e-12);
    }
    std::mt19937_64 rng(7);
    ReplayBatch batch;
    batch.resize(10, 1);
    std::array<int, 4> counts{};
    const int rounds = 4000;
    for (int r = 0; r < rounds; ++r) {
        buffer.sample(rng, 0.4, batch);
        for (std::size_t i : batch.indices) ++counts[i];
    }
    // Pearson chi-square, 3 degrees of freedom: 16.27 is the 0.1% critical value.
    const double total = rounds * 10.0;
    double chi2 = 0.0;
    for (int i = 0; i < 4; ++i) {
        const double e = expected[i] * total;
        chi2 += (counts[std::size_t(i)] - e) * (counts[std::size_t(i)] - e) / e;
    }
    QVERIFY2(chi2 < 16.27, qPrintable(QString("chi2 = %1").arg(chi2)));
}

void TestReplayBuffers::importanceWeights()
{
    PrioritizedReplayBuffer buffer(4, 1, {1.0, 1e-6});
    for (int i = 0; i < 4; ++i) {
        const std::array<float, 1> o{float(i)};
        buffer.add(o, 0, 0.0f, o, false, 1.0f);
    }
    // New transitions get the max priority seen (1 at start).
    for (int i = 0; i < 4; ++i) QCOMPARE(buffer.probability(std::size_t(i)), 0.25);
    const std::array<std::size_t, 4> idx{0, 1, 2, 3};
    const std::array<float, 4> td{1.0f, 2.0f, 3.0f, 4.0f};
    buffer.updatePriorities(idx, td);
    QVERIFY(std::abs(buffer.maxPriority() - 4.000001) < 1e-9);
    std::mt19937_64 rng(3);
    ReplayBatch batch;
    batch.resize(200, 1);
    buffer.sample(rng, 0.5, batch);
    // w_i = (N P_i)^-beta / (N P_min)^-beta = (p_i / p_min)^-0.5.
    for (std::size_t b = 0; b < batch.indices.size(); ++b) {
        const double p = td[batch.indices[b]] + 1e-6;
        const double w = std::pow(p / (1.0 + 1e-6), -0.5);
        QVERIFY(std::abs(batch.weights[b] - w) < 1e-6);
        QCOMPARE(batch.observations[b], float(batch.indices[b]));
    }
    // A newly added transition takes the max priority.
    const std::array<float, 1> o{9.0f};
    PrioritizedReplayBuffer grown(5, 1, {1.0, 1e-6});
    for (int i = 0; i < 4; ++i) grown.add(o, 0, 0.0f, o, false, 1.0f);
    grown.updatePriorities(idx, td);
    grown.add(o, 0, 0.0f, o, false, 1.0f);
    QVERIFY(std::abs(grown.tree().get(4) - 4.000001) < 1e-9);
}

} // namespace tst_replay_buffers

FOXHUNT_TEST_APPLESS_MAIN(tst_replay_buffers::TestReplayBuffers)
#include "tst_replay_buffers.moc"
