// SPDX-License-Identifier: GPL-3.0-or-later
// The worker -> reader hand-off: notify exactly when the buffer turns non-empty,
// drain everything in order, bound memory, and lose nothing across threads.

#include "engine/telemetry/staging_buffer.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <thread>

namespace tst_staging_buffer {

using foxhunt::MetricBatch;
using foxhunt::MetricSample;
using foxhunt::StagingBuffer;

class TestStagingBuffer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void notifiesOnlyWhenTurningNonEmpty();
    void drainKeepsOrder();
    void capacityDropsNewest();
    void concurrentProducerLosesNothing();
};

namespace {
MetricSample sample(std::int64_t step)
{
    return {"dqn", "loss", step, 0, static_cast<double>(step)};
}
} // namespace

void TestStagingBuffer::notifiesOnlyWhenTurningNonEmpty()
{
    StagingBuffer b;
    QVERIFY(b.append(sample(1)));
    QVERIFY(!b.append(sample(2)));
    QVERIFY(!b.append(MetricBatch{sample(3)}));
    MetricBatch out;
    b.drain(out);
    QCOMPARE(out.size(), std::size_t(3));
    QVERIFY(b.append(MetricBatch{sample(4)}));
    QVERIFY(!b.append(MetricBatch{}));
}

void TestStagingBuffer::drainKeepsOrder()
{
    StagingBuffer b;
    for (int i = 0; i < 100; ++i) b.append(sample(i));
    MetricBatch out{sample(-1)};
    b.drain(out);
    QCOMPARE(out.size(), std::size_t(100));
    for (int i = 0; i < 100; ++i) QCOMPARE(out[static_cast<std::size_t>(i)].step, std::int64_t(i));
    QCOMPARE(b.size(), std::size_t(0));
}

void TestStagingBuffer::capacityDropsNewest()
{
    StagingBuffer b;
    b.setCapacity(10);
    MetricBatch batch;
    for (int i = 0; i < 15; ++i) batch.push_back(sample(i));
    b.append(std::move(batch));
    b.append(sample(99));
    QCOMPARE(b.size(), std::size_t(10));
    QCOMPARE(b.dropped(), std::size_t(6));
    MetricBatch out;
    b.drain(out);
    QCOMPARE(out.back().step, std::int64_t(9));
}

void TestStagingBuffer::concurrentProducerLosesNothing()
{
    StagingBuffer b;
    constexpr int kSamples = 200000;
    std::thread producer([&] {
        for (int i = 0; i < kSamples; i += 100) {
            MetricBatch batch;
            for (int k = 0; k < 100; ++k) batch.push_back(sample(i + k));
            b.append(std::move(batch));
        }
    });
    std::int64_t expected = 0;
    MetricBatch out;
    while (expected < kSamples) {
        b.drain(out);
        for (const MetricSample& s : out) QCOMPARE(s.step, expected++);
        if (out.empty()) std::this_thread::yield();
    }
    producer.join();
    QCOMPARE(expected, std::int64_t(kSamples));
}

} // namespace tst_staging_buffer

FOXHUNT_TEST_APPLESS_MAIN(tst_staging_buffer::TestStagingBuffer)
#include "tst_staging_buffer.moc"
