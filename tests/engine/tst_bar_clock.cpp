// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/bar_clock.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace tst_bar_clock {

using namespace foxhunt;

namespace {

// 1-minute bars with distinct prices so that order mistakes show.
std::vector<Bar> makeBars(std::size_t n)
{
    std::vector<Bar> bars(n);
    const std::int64_t start = 1'704'927'600LL * kNsPerSecond; // 2024-01-10 23:00 UTC (18:00 ET)
    for (std::size_t i = 0; i < n; ++i) {
        Bar& b = bars[i];
        b.tsEvent = start + std::int64_t(i) * kNsPerMinute;
        b.open = fromPoints(4700.0 + 0.25 * double(i));
        b.close = b.open + kEsTick;
        b.high = b.close + kEsTick;
        b.low = b.open - kEsTick;
        b.volume = 100 + i;
    }
    return bars;
}

// Records delivered indexes and lets the test thread wait for a count without sleeping.
class Recorder {
public:
    void add(std::size_t index)
    {
        {
            std::lock_guard lock(m_mutex);
            m_indexes.push_back(index);
        }
        m_changed.notify_all();
    }
    // Hang guard only: a correct clock reaches the count at once.
    bool waitForCount(std::size_t n)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, std::chrono::seconds(60), [&] { return m_indexes.size() >= n; });
    }
    std::vector<std::size_t> indexes()
    {
        std::lock_guard lock(m_mutex);
        return m_indexes;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<std::size_t> m_indexes;
};

// A one-shot rendezvous: the worker announces it reached a bar and waits for the test to answer.
struct Handshake {
    std::promise<void> reached;
    std::promise<void> answered;
    std::shared_future<void> answer = answered.get_future().share();
};

bool finishes(std::future<ReplayStats>& f)
{
    return f.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
}

} // namespace

class TestBarClock : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void maxSpeedDeliversAllInOrder_data();
    void maxSpeedDeliversAllInOrder();
    void pausedStepsReleaseExactlyN_data();
    void pausedStepsReleaseExactlyN();
    void stepIgnoredWhenNotPaused();
    void stopMidwayThenRewindContinues();
    void stopBeforeRunDeliversNothing();
    void setSpeedZeroLetsRealTimeClockFinish_data();
    void setSpeedZeroLetsRealTimeClockFinish();
    void pacedReplayKeepsOrder();
    void deterministic();
    void rejectsBadArguments();
};

void TestBarClock::maxSpeedDeliversAllInOrder_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("start");
    QTest::newRow("empty") << 0 << 0;
    QTest::newRow("one") << 1 << 0;
    QTest::newRow("1000 from 0") << 1000 << 0;
    QTest::newRow("1000 from 250") << 1000 << 250;
    QTest::newRow("start at end") << 10 << 10;
}

void TestBarClock::maxSpeedDeliversAllInOrder()
{
    QFETCH(int, count);
    QFETCH(int, start);
    const auto bars = makeBars(std::size_t(count));
    BarClockOptions options;
    options.startIndex = std::size_t(start);
    BarClock clock(bars, options);
    QCOMPARE(clock.position(), std::size_t(start));

    std::vector<Bar> seen;
    std::vector<std::size_t> indexes;
    const ReplayStats stats = clock.run([&](const Bar& bar, std::size_t i) {
        seen.push_back(bar);
        indexes.push_back(i);
    });
    QCOMPARE(stats.barsReplayed, std::size_t(count - start));
    QVERIFY(!stats.stoppedEarly);
    QVERIFY(clock.finished());
    QCOMPARE(clock.position(), std::size_t(count));
    QCOMPARE(seen.size(), std::size_t(count - start));
    for (std::size_t k = 0; k < seen.size(); ++k) {
        QCOMPARE(indexes[k], std::size_t(start) + k);
        QVERIFY(seen[k] == bars[std::size_t(start) + k]);
    }
}

void TestBarClock::pausedStepsReleaseExactlyN_data()
{
    QTest::addColumn<int>("steps");
    QTest::newRow("0") << 0;
    QTest::newRow("1") << 1;
    QTest::newRow("3") << 3;
    QTest::newRow("25") << 25;
}

void TestBarClock::pausedStepsReleaseExactlyN()
{
    QFETCH(int, steps);
    constexpr std::size_t kPauseAt = 9; // the test pauses while bar 9 is in the callback
    const auto bars = makeBars(100);
    BarClock clock(bars);
    Recorder recorder;
    Handshake hs;

    auto worker = std::async(std::launch::async, [&] {
        return clock.run([&](const Bar&, std::size_t i) {
            recorder.add(i);
            if (i == kPauseAt) {
                hs.reached.set_value();
                hs.answer.wait();
            }
        });
    });
    hs.reached.get_future().wait();
    clock.pause();
    hs.answered.set_value();
    QVERIFY(clock.paused());

    for (int s = 0; s < steps; ++s) clock.step();
    QVERIFY(recorder.waitForCount(kPauseAt + 1 + std::size_t(steps)));
    // The clock is now blocked again; stopping it must not let another bar through.
    clock.stop();
    QVERIFY(finishes(worker));
    const ReplayStats stats = worker.get();

    const auto indexes = recorder.indexes();
    QCOMPARE(indexes.size(), kPauseAt + 1 + std::size_t(steps));
    QCOMPARE(stats.barsReplayed, indexes.size());
    QVERIFY(stats.stoppedEarly);
    QCOMPARE(clock.position(), indexes.size());
    QVERIFY(!clock.finished());
    for (std::size_t k = 0; k < indexes.size(); ++k) QCOMPARE(indexes[k], k);
}

void TestBarClock::stepIgnoredWhenNotPaused()
{
    const auto bars = makeBars(50);
    BarClock clock(bars);
    clock.step();
    clock.step();
    clock.step(); // not paused: these must not bank releases
    clock.pause();
    Recorder recorder;
    auto worker = std::async(std::launch::async,
                             [&] { return clock.run([&](const Bar&, std::size_t i) { recorder.add(i); }); });
    clock.step();
    QVERIFY(recorder.waitForCount(1));
    clock.stop();
    QVERIFY(finishes(worker));
    QCOMPARE(worker.get().barsReplayed, std::size_t(1));
    QCOMPARE(recorder.indexes(), std::vector<std::size_t>{0});

    // resume() drops banked steps too.
    clock.rewind(0);
    clock.step();
    clock.step();
    clock.resume();
    std::size_t delivered = 0;
    QCOMPARE(clock.run([&](const Bar&, std::size_t) { ++delivered; }).barsReplayed, std::size_t(50));
    QCOMPARE(delivered, std::size_t(50));
}

void TestBarClock::stopMidwayThenRewindContinues()
{
    const auto bars = makeBars(100);
    BarClock clock(bars);
    Handshake hs;
    std::vector<std::size_t> first;
    auto worker = std::async(std::launch::async, [&] {
        return clock.run([&](const Bar&, std::size_t i) {
            first.push_back(i);
            if (i == 49) {
                hs.reached.set_value();
                hs.answer.wait();
            }
        });
    });
    hs.reached.get_future().wait();
    clock.stop(); // from this (another) thread, while bar 49 is being handled
    hs.answered.set_value();
    QVERIFY(finishes(worker));
    const ReplayStats stats = worker.get();
    QCOMPARE(stats.barsReplayed, std::size_t(50));
    QVERIFY(stats.stoppedEarly);
    QVERIFY(clock.stopRequested());
    QCOMPARE(clock.position(), std::size_t(50));
    QCOMPARE(first.size(), std::size_t(50));
    QCOMPARE(first.back(), std::size_t(49));

    clock.rewind(clock.position());
    std::vector<std::size_t> second;
    const ReplayStats rest = clock.run([&](const Bar&, std::size_t i) { second.push_back(i); });
    QCOMPARE(rest.barsReplayed, std::size_t(50));
    QVERIFY(!rest.stoppedEarly);
    QCOMPARE(second.front(), std::size_t(50));
    QCOMPARE(second.back(), std::size_t(99));
    QVERIFY(clock.finished());
}

void TestBarClock::stopBeforeRunDeliversNothing()
{
    const auto bars = makeBars(10);
    BarClock clock(bars);
    clock.stop();
    std::size_t delivered = 0;
    const ReplayStats stats = clock.run([&](const Bar&, std::size_t) { ++delivered; });
    QCOMPARE(delivered, std::size_t(0));
    QCOMPARE(stats.barsReplayed, std::size_t(0));
    QVERIFY(stats.stoppedEarly);
}

void TestBarClock::setSpeedZeroLetsRealTimeClockFinish_data()
{
    QTest::addColumn<bool>("startPaused");
    QTest::newRow("paused") << true;
    QTest::newRow("waiting for the next bar") << false;
}

void TestBarClock::setSpeedZeroLetsRealTimeClockFinish()
{
    QFETCH(bool, startPaused);
    const auto bars = makeBars(200);
    BarClockOptions options;
    options.speed = 1.0;                     // real time: a minute per bar
    options.maxWaitNs = 3600 * kNsPerSecond; // so only the speed change can end this quickly
    options.startPaused = startPaused;
    BarClock clock(bars, options);
    Handshake hs;
    std::vector<std::size_t> indexes;
    auto worker = std::async(std::launch::async, [&] {
        return clock.run([&](const Bar&, std::size_t i) {
            indexes.push_back(i);
            if (i == 0) hs.reached.set_value();
        });
    });
    if (!startPaused) hs.reached.get_future().wait(); // bar 0 went at once; bar 1 is a minute away
    clock.setSpeed(0.0);
    QCOMPARE(clock.speed(), 0.0);
    if (startPaused) clock.resume();
    QVERIFY(finishes(worker));
    const ReplayStats stats = worker.get();
    QCOMPARE(stats.barsReplayed, bars.size());
    QVERIFY(!stats.stoppedEarly);
    QVERIFY(clock.finished());
    for (std::size_t k = 0; k < indexes.size(); ++k) QCOMPARE(indexes[k], k);
}

void TestBarClock::pacedReplayKeepsOrder()
{
    // 60 000 x real time: a millisecond per 1-minute bar, so the paced path runs for real.
    const auto bars = makeBars(20);
    BarClockOptions options;
    options.speed = 60'000.0;
    BarClock clock(bars, options);
    std::vector<std::size_t> indexes;
    const ReplayStats stats = clock.run([&](const Bar&, std::size_t i) { indexes.push_back(i); });
    QCOMPARE(stats.barsReplayed, bars.size());
    for (std::size_t k = 0; k < indexes.size(); ++k) QCOMPARE(indexes[k], k);
}

void TestBarClock::deterministic()
{
    const auto bars = makeBars(5000);
    auto replay = [&] {
        BarClock clock(bars);
        std::vector<std::pair<std::size_t, std::int64_t>> stream;
        clock.run([&](const Bar& bar, std::size_t i) { stream.emplace_back(i, bar.close); });
        return stream;
    };
    const auto a = replay();
    const auto b = replay();
    QCOMPARE(a.size(), bars.size());
    QVERIFY(a == b);
}

void TestBarClock::rejectsBadArguments()
{
    const auto bars = makeBars(5);
    BarClockOptions negative;
    negative.speed = -1.0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BarClock(bars, negative));
    BarClockOptions past;
    past.startIndex = 6;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BarClock(bars, past));
    BarClock clock(bars);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, clock.setSpeed(std::nan("")));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, clock.setSpeed(-2.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, clock.rewind(6));
    QCOMPARE(clock.speed(), 0.0);
}

} // namespace tst_bar_clock

FOXHUNT_TEST_APPLESS_MAIN(tst_bar_clock::TestBarClock)
#include "tst_bar_clock.moc"
