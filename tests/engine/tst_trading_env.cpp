// SPDX-License-Identifier: GPL-3.0-or-later
// The trading environment's fills, costs and PnL on hand-worked bars, and the
// evaluation metrics on hand-worked series.
#include "engine/env/evaluation.h"
#include "engine/env/trading_env.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace foxhunt;

namespace {

// Five one-minute bars of one session (prices in index points: O, C; H/L span them).
std::vector<Bar> handBars()
{
    const double oc[5][2] = {{100.00, 100.00}, {100.25, 101.00}, {101.00, 100.50}, {100.75, 100.75}, {100.50, 101.25}};
    std::vector<Bar> bars;
    const std::int64_t t0 = 1704744000LL * kNsPerSecond; // 2024-01-08 20:00 UTC
    for (int i = 0; i < 5; ++i) {
        Bar b;
        b.tsEvent = t0 + i * kNsPerMinute;
        b.open = fromPoints(oc[i][0]);
        b.close = fromPoints(oc[i][1]);
        b.high = std::max(b.open, b.close);
        b.low = std::min(b.open, b.close);
        b.volume = 100;
        bars.push_back(b);
    }
    return bars;
}

std::vector<float> indexFeature(std::size_t n)
{
    std::vector<float> f(n);
    for (std::size_t i = 0; i < n; ++i)
        f[i] = static_cast<float>(i);
    return f;
}

} // namespace

class TestTradingEnv : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void handWorkedFills_data();
    void handWorkedFills();
    void observationWindowAndPosition();
    void extraObservationSourceFollowsTheBar();
    void differentialSharpeAndPenalty();
    void episodesFromCalendar();
    void rejectsBadInputs();
    void metricsByHand();
    void evaluationBaselines();
};

void TestTradingEnv::handWorkedFills_data()
{
    QTest::addColumn<int>("timing");
    QTest::addColumn<QList<double>>("pnl");
    QTest::addColumn<QList<double>>("trades");
    // Actions: long, long, short, short; forced exit after the 4th decision.
    // Cost per contract per side = 1 tick slippage + 2.25/12.5 = 1.18 ticks.
    // Next open: buy 401 (+1 slip), mark 404 -> +3 - 1.18; 404->402: -2;
    // 402->403 +1, flip at 403 costs 2.36; 403->402 +1, 402->405 -3, exit 1.18.
    QTest::newRow("next-open") << int(FillTiming::NextOpen) << QList<double>{1.82, -2.0, -1.36, -3.18}
                               << QList<double>{-0.36, -4.36};
    // Same close: buy 400, mark 404: +4 - 1.18; -2; flip at 402 (2.36), 402->403 -1;
    // 403->405 -2 and exit 1.18.
    QTest::newRow("same-close") << int(FillTiming::SameClose) << QList<double>{2.82, -2.0, -3.36, -3.18}
                                << QList<double>{-0.36, -5.36};
}

void TestTradingEnv::handWorkedFills()
{
    QFETCH(int, timing);
    QFETCH(QList<double>, pnl);
    QFETCH(QList<double>, trades);
    const std::vector<Bar> bars = handBars();
    TradingEnvOptions options;
    options.fillTiming = static_cast<FillTiming>(timing);
    TradingEnv env(bars, indexFeature(5), 1, {{0, 5}}, options);
    QCOMPARE(env.actionCount(), 3);
    env.reset(0);
    const int actions[4] = {2, 2, 0, 0};
    const int traded[4] = {1, 0, 2, 1};
    QList<double> closed;
    double total = 0.0;
    for (int i = 0; i < 4; ++i) {
        QVERIFY(!env.done());
        const StepResult r = env.step(actions[i]);
        QVERIFY2(std::abs(r.pnlTicks - pnl[i]) < 1e-9, qPrintable(QString("step %1: %2").arg(i).arg(r.pnlTicks)));
        QCOMPARE(r.reward, r.pnlTicks);
        QCOMPARE(r.contractsTraded, traded[i]);
        QVERIFY(std::abs(r.costTicks - traded[i] * 1.18) < 1e-9);
        QCOMPARE(r.terminated, i == 3);
        if (r.tradeClosed)
            closed.push_back(r.closedTradePnlTicks);
        total += r.pnlTicks;
    }
    QVERIFY(env.done());
    QCOMPARE(env.position(), 0);
    QCOMPARE(closed.size(), trades.size());
    for (int i = 0; i < trades.size(); ++i)
        QVERIFY(std::abs(closed[i] - trades[i]) < 1e-9);
    QVERIFY(std::abs(env.state().equityTicks - total) < 1e-9);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, env.step(1));
}

void TestTradingEnv::observationWindowAndPosition()
{
    const std::vector<Bar> bars = handBars();
    TradingEnvOptions options;
    options.window = 2;
    options.extraObservationSize = 1;
    TradingEnv env(bars, indexFeature(5), 1, {{0, 5}}, options);
    QCOMPARE(env.observationSize(), 2 + 2 + 1);
    auto obs = env.reset(0);
    // Row before bar 0 is zero padding; no position.
    QCOMPARE(std::vector<float>(obs.begin(), obs.end()), (std::vector<float>{0, 0, 0, 0, 0}));
    const float extra[1] = {7.5f};
    env.setExtraObservation(extra);
    QCOMPARE(env.observation()[4], 7.5f);
    env.step(2);
    obs = env.observation();
    // Bars 0 and 1 only (never bar 2): long 1 at 402 ticks, close 404 -> +2 ticks / 100.
    QCOMPARE(obs[0], 0.0f);
    QCOMPARE(obs[1], 1.0f);
    QCOMPARE(obs[2], 1.0f);
    QVERIFY(std::abs(obs[3] - 0.02f) < 1e-7);
    QCOMPARE(obs[4], 7.5f);
    env.step(0);
    obs = env.observation();
    QCOMPARE(obs[1], 2.0f);
    QCOMPARE(obs[2], -1.0f);
    // Short entered at 404 - 1 slip = 403; close 402 -> +1 tick (flip filled at open 404).
    QVERIFY(std::abs(obs[3] - 0.01f) < 1e-7);
}

void TestTradingEnv::extraObservationSourceFollowsTheBar()
{
    const std::vector<Bar> bars = handBars();
    TradingEnvOptions options;
    options.extraObservationSize = 2;
    TradingEnv env(bars, indexFeature(5), 1, {{0, 5}}, options);
    std::vector<std::size_t> asked;
    env.setExtraObservationSource([&](std::size_t bar, std::span<float> out) {
        asked.push_back(bar);
        out[0] = static_cast<float>(bar) * 10.0f;
        out[1] = -1.0f;
    });
    auto obs = env.reset(0);
    QCOMPARE(obs[3], 0.0f);
    QCOMPARE(obs[4], -1.0f);
    env.step(1);
    // The observation after a step (a stored next-observation) carries the new bar's values.
    QCOMPARE(env.observation()[3], 10.0f);
    const TradingEnvState saved = env.state();
    env.step(1);
    QCOMPARE(env.observation()[3], 20.0f);
    env.restoreState(saved);
    QCOMPARE(env.observation()[3], 10.0f);
    QCOMPARE(asked, (std::vector<std::size_t>{0, 1, 2, 1}));
    env.setExtraObservationSource({});
    env.step(1);
    QCOMPARE(env.observation()[3], 10.0f); // off again: the last values stay
}

void TestTradingEnv::differentialSharpeAndPenalty()
{
    const std::vector<Bar> bars = handBars();
    TradingEnvOptions options;
    options.reward = RewardKind::DifferentialSharpe;
    options.dsrEta = 0.5;
    options.positionChangePenaltyTicks = 0.5;
    TradingEnv env(bars, indexFeature(5), 1, {{0, 5}}, options);
    env.reset(0);
    // R1 = 1.82, moments start at 0: variance 0 -> D = 0; penalty 0.5 for 1 contract.
    StepResult r = env.step(2);
    QVERIFY(std::abs(r.reward - (-0.5)) < 1e-12);
    // A = 0.91, B = 1.6562; R2 = -2: D = (B dA - A dB / 2) / (B - A^2)^1.5 = -7.810771645936...
    r = env.step(2);
    QVERIFY2(std::abs(r.reward - (-7.810771645936481)) < 1e-9, qPrintable(QString::number(r.reward, 'g', 17)));
    QCOMPARE(r.pnlTicks, -2.0);
}

void TestTradingEnv::episodesFromCalendar()
{
    // 21:58, 21:59 UTC = 16:58, 16:59 ET close day D; 23:00 UTC = 18:00 ET opens day D+1.
    const std::int64_t base = 1704751080LL * kNsPerSecond; // 2024-01-08 21:58 UTC
    std::vector<Bar> bars(5);
    bars[0].tsEvent = base;
    bars[1].tsEvent = base + kNsPerMinute;
    bars[2].tsEvent = base + 62 * kNsPerMinute;
    bars[3].tsEvent = base + 63 * kNsPerMinute;
    bars[4].tsEvent = base + 64 * kNsPerMinute;
    const auto days = episodesByTradingDay(bars);
    QCOMPARE(days, (std::vector<EpisodeRange>{{0, 2}, {2, 5}}));
    QCOMPARE(splitIntoWindows({{0, 7}}, 3), (std::vector<EpisodeRange>{{0, 3}, {3, 6}}));
    QCOMPARE(splitIntoWindows({{0, 8}}, 3), (std::vector<EpisodeRange>{{0, 3}, {3, 6}, {6, 8}}));
}

void TestTradingEnv::rejectsBadInputs()
{
    const std::vector<Bar> bars = handBars();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TradingEnv(bars, indexFeature(4), 1, {{0, 5}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TradingEnv(bars, indexFeature(5), 1, {{0, 6}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TradingEnv(bars, indexFeature(5), 1, {{3, 4}}));
    TradingEnv env(bars, indexFeature(5), 1, {{0, 5}});
    env.reset(0);
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, env.step(3));
}

void TestTradingEnv::metricsByHand()
{
    const std::vector<double> steps{10, -5, 20, -10};
    const std::vector<double> trades{30, -10, 5};
    const PerformanceMetrics m = computeMetrics(steps, trades, 6, 4.0);
    QCOMPARE(m.pnlUsd, 15.0);
    QCOMPARE(m.pnlTicks, 1.2);
    // mean 3.75, population sd sqrt(142.1875), sqrt(4) = 2.
    QVERIFY(std::abs(m.sharpe - 0.628970902033151) < 1e-12);
    // downside deviation sqrt((25 + 100) / 4).
    QVERIFY(std::abs(m.sortino - 1.3416407864998738) < 1e-12);
    QCOMPARE(m.maxDrawdownUsd, 10.0);
    QCOMPARE(m.calmar, 1.5);
    QCOMPARE(m.trades, 3);
    QVERIFY(std::abs(m.winRate - 2.0 / 3.0) < 1e-12);
    QCOMPARE(m.profitFactor, 3.5);
    QCOMPARE(m.turnover, 6LL);
}

void TestTradingEnv::evaluationBaselines()
{
    const std::vector<Bar> bars = handBars();
    TradingEnv env(bars, indexFeature(5), 1, {{0, 3}, {2, 5}});
    const EvaluationReport report = evaluatePolicy(env, [](std::span<const float>) { return 2; });
    QCOMPARE(report.episodes, 2);
    QCOMPARE(report.barsPerYear, 252.0 * 2);
    // Day 1: buy at open 401, marked to the exit close 402: +1 - 2 x 1.18 = -1.36 ticks.
    // Day 2: buy at open 403, exit at close 405: +2 - 2.36 = -0.36 ticks.
    QVERIFY(std::abs(report.policy.pnlTicks - (-1.72)) < 1e-9);
    QCOMPARE(report.policy.pnlTicks, report.buyAndHold.pnlTicks);
    QCOMPARE(report.policy.trades, 2);
    QCOMPARE(report.policy.turnover, 4LL);
    QCOMPARE(report.policy.winRate, 0.0);
    QCOMPARE(report.flat.pnlUsd, 0.0);
    QCOMPARE(report.flat.trades, 0);
    QCOMPARE(report.flat.sharpe, 0.0);
    QCOMPARE(report.policyEquityUsd.size(), std::size_t(4));
    QVERIFY(std::abs(report.policyEquityUsd.back() - (-1.72 * 12.5)) < 1e-9);
}

QTEST_APPLESS_MAIN(TestTradingEnv)
#include "tst_trading_env.moc"
