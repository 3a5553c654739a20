// SPDX-License-Identifier: GPL-3.0-or-later
// The trading environment's fills, costs and PnL on hand-worked bars, and the
// evaluation metrics on hand-worked series.
#include "engine/env/evaluation.h"
#include "engine/env/trading_env.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <cmath>

namespace tst_trading_env {

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
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(i);
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
    void evaluationAggregatesByTradingDay();
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
        if (r.tradeClosed) closed.push_back(r.closedTradePnlTicks);
        total += r.pnlTicks;
    }
    QVERIFY(env.done());
    QCOMPARE(env.position(), 0);
    QCOMPARE(closed.size(), trades.size());
    for (int i = 0; i < trades.size(); ++i) QVERIFY(std::abs(closed[i] - trades[i]) < 1e-9);
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
    // Two trading days of three steps each (days given out of order: booked by day, not by position).
    const std::vector<double> steps{10, -5, 20, -10, 4, 1};
    const std::vector<std::int64_t> days{19731, 19731, 19731, 19732, 19732, 19732};
    const std::vector<double> trades{30, -10, 5};
    const PerformanceMetrics m = computeMetrics(steps, days, trades, 6);
    QCOMPARE(m.pnlUsd, 20.0);
    QCOMPARE(m.pnlTicks, 1.6);
    QCOMPARE(m.dailyPnlUsd, (std::vector<double>{25.0, -5.0}));
    // Daily PnL 25, -5: mean 10, sample sd sqrt(450), times sqrt(252).
    QVERIFY(std::abs(m.sharpe - 7.483314773547883) < 1e-12);
    // Downside deviation of the days sqrt(25 / 2).
    QVERIFY(std::abs(m.sortino - 44.8998886412873) < 1e-12);
    // Per bar: mean 20 / 6 over the sample sd of the six steps, not annualised.
    QVERIFY(std::abs(m.sharpePerBar - 0.3107448781509132) < 1e-12);
    // Equity 10, 5, 25, 15, 19, 20: drawdown 10; Calmar 252 * 10 / 10.
    QCOMPARE(m.maxDrawdownUsd, 10.0);
    QVERIFY(std::abs(m.calmar - 252.0) < 1e-12);
    QCOMPARE(m.trades, 3);
    QVERIFY(std::abs(m.winRate - 2.0 / 3.0) < 1e-12);
    QCOMPARE(m.profitFactor, 3.5);
    QCOMPARE(m.turnover, 6LL);

    // The same steps with the second day first: the days still come out in calendar order.
    const std::vector<double> swapped{-10, 4, 1, 10, -5, 20};
    const std::vector<std::int64_t> swappedDays{19732, 19732, 19732, 19731, 19731, 19731};
    const PerformanceMetrics s = computeMetrics(swapped, swappedDays, trades, 6);
    QCOMPARE(s.dailyPnlUsd, (std::vector<double>{25.0, -5.0}));
    QCOMPARE(s.sharpe, m.sharpe);

    // One day has no Sharpe (no spread of daily returns); a day without a loss has no Sortino.
    const std::vector<std::int64_t> oneDay(steps.size(), 19731);
    const PerformanceMetrics single = computeMetrics(steps, oneDay, trades, 6);
    QVERIFY(std::isnan(single.sharpe));
    QVERIFY(std::isnan(single.sortino));
    QVERIFY(std::isfinite(single.sharpePerBar));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, computeMetrics(steps, std::vector<std::int64_t>(2, 0), trades, 6));
}

void TestTradingEnv::evaluationBaselines()
{
    const std::vector<Bar> bars = handBars();
    TradingEnv env(bars, indexFeature(5), 1, {{0, 3}, {2, 5}});
    const EvaluationReport report = evaluatePolicy(env, [](std::span<const float>) { return 2; });
    QCOMPARE(report.episodes, 2);
    // Both episodes lie in one trading day (2024-01-08), so they make one daily return.
    QCOMPARE(report.tradingDays, (std::vector<std::int64_t>{19730}));
    QCOMPARE(report.policy.dailyPnlUsd.size(), std::size_t(1));
    QVERIFY(std::abs(report.policy.dailyPnlUsd[0] - report.policy.pnlUsd) < 1e-9);
    // Day 1: buy at open 401, marked to the exit close 402: +1 - 2 x 1.18 = -1.36 ticks.
    // Day 2: buy at open 403, exit at close 405: +2 - 2.36 = -0.36 ticks.
    QVERIFY(std::abs(report.policy.pnlTicks - (-1.72)) < 1e-9);
    QCOMPARE(report.policy.pnlTicks, report.buyAndHold.pnlTicks);
    QCOMPARE(report.policy.trades, 2);
    QCOMPARE(report.policy.turnover, 4LL);
    QCOMPARE(report.policy.winRate, 0.0);
    QCOMPARE(report.flat.pnlUsd, 0.0);
    QCOMPARE(report.flat.trades, 0);
    QVERIFY(std::isnan(report.flat.sharpe)); // no spread: undefined, not 0
    QCOMPARE(report.policyEquityUsd.size(), std::size_t(4));
    QVERIFY(std::abs(report.policyEquityUsd.back() - (-1.72 * 12.5)) < 1e-9);
}

void TestTradingEnv::evaluationAggregatesByTradingDay()
{
    // 16:57-16:59 ET close trading day 2024-01-08; 18:00-18:02 ET open 2024-01-09: two days of three bars.
    const std::int64_t base = 1704751020LL * kNsPerSecond; // 2024-01-08 21:57 UTC
    const double oc[6][2] = {{100.00, 100.25}, {100.50, 101.00}, {101.00, 100.50},
                             {100.75, 101.50}, {101.25, 100.75}, {100.50, 102.00}};
    std::vector<Bar> bars;
    for (int i = 0; i < 6; ++i) {
        Bar b;
        b.tsEvent = base + (i < 3 ? i : 60 + i) * kNsPerMinute;
        b.open = fromPoints(oc[i][0]);
        b.close = fromPoints(oc[i][1]);
        b.high = std::max(b.open, b.close);
        b.low = std::min(b.open, b.close);
        b.volume = 100;
        bars.push_back(b);
    }
    const auto days = episodesByTradingDay(bars);
    QCOMPARE(days, (std::vector<EpisodeRange>{{0, 3}, {3, 6}}));
    for (const auto& episodes : {days, splitIntoWindows(days, 2)}) {
        TradingEnv env(bars, indexFeature(6), 1, episodes);
        const EvaluationReport report = evaluatePolicy(env, [](std::span<const float>) { return 2; });
        QCOMPARE(report.tradingDays, (std::vector<std::int64_t>{19730, 19731}));
        for (const PerformanceMetrics* m : {&report.policy, &report.flat, &report.buyAndHold}) {
            QCOMPARE(m->dailyPnlUsd.size(), std::size_t(2));
            QVERIFY(std::abs(m->dailyPnlUsd[0] + m->dailyPnlUsd[1] - m->pnlUsd) < 1e-9);
        }
        // Day one's PnL is the equity after its steps; Sharpe is of the two daily PnLs, times sqrt(252).
        const std::size_t dayOneSteps = episodes[0].end - episodes[0].begin -
                                        1; // 2 for the day, 1 for a window of 2 bars
        QVERIFY(std::abs(report.policy.dailyPnlUsd[0] - report.policyEquityUsd[dayOneSteps - 1]) < 1e-9);
        const std::vector<double>& d = report.policy.dailyPnlUsd;
        const double mean = (d[0] + d[1]) / 2.0;
        const double sd = std::sqrt((d[0] - mean) * (d[0] - mean) + (d[1] - mean) * (d[1] - mean));
        QVERIFY(std::abs(report.policy.sharpe - mean / sd * std::sqrt(252.0)) < 1e-9);
        QVERIFY(std::isnan(report.flat.sharpe));
    }
}

} // namespace tst_trading_env

FOXHUNT_TEST_APPLESS_MAIN(tst_trading_env::TestTradingEnv)
#include "tst_trading_env.moc"
