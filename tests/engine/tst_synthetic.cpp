// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/market_time.h"
#include "engine/data/synthetic.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <map>

namespace tst_synthetic {

using namespace foxhunt;

namespace {

SyntheticOptions smallOptions(int days = 10)
{
    SyntheticOptions options;
    options.tradingDays = days;
    return options;
}

// Mean close-to-close change in ticks of bars starting in [fromMinute, toMinute) ET.
double meanTicks(const std::vector<Bar>& bars, double fromMinute, double toMinute)
{
    EsCalendar calendar;
    double sum = 0;
    int n = 0;
    for (std::size_t i = 1; i < bars.size(); ++i) {
        const double m = calendar.minuteOfDayEt(bars[i].tsEvent);
        if (m < fromMinute || m >= toMinute) continue;
        sum += static_cast<double>(bars[i].close - bars[i - 1].close) / static_cast<double>(kEsTick);
        ++n;
    }
    return n ? sum / n : 0.0;
}

} // namespace

class TestSynthetic : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void deterministicPerSeed()
    {
        const auto a = generateSyntheticBars(smallOptions(3));
        const auto b = generateSyntheticBars(smallOptions(3));
        QVERIFY(!a.empty());
        QVERIFY(a == b);
        SyntheticOptions other = smallOptions(3);
        other.seed += 1;
        const auto c = generateSyntheticBars(other);
        QCOMPARE(c.size(), a.size());
        QVERIFY(a != c);
    }

    void firstSessionOpensSundayEvening()
    {
        // Monday 8 January 2024 is the first trading day: its session opens
        // Sunday 18:00 ET (23:00 UTC) at the start price.
        const auto bars = generateSyntheticBars(smallOptions(1));
        QCOMPARE(bars.size(), std::size_t{1380});
        QCOMPARE(bars.front().tsEvent, daysFromCivil(2024, 1, 7) * kNsPerDay + 23 * 3600 * kNsPerSecond);
        QCOMPARE(bars.front().open, fromPoints(4700.0));
    }

    void gridAndOhlc()
    {
        const auto bars = generateSyntheticBars(smallOptions());
        for (const Bar& b : bars) {
            QCOMPARE(b.open % kEsTick, std::int64_t{0});
            QCOMPARE(b.high % kEsTick, std::int64_t{0});
            QCOMPARE(b.low % kEsTick, std::int64_t{0});
            QCOMPARE(b.close % kEsTick, std::int64_t{0});
            QVERIFY(b.low > 0);
            QVERIFY(b.high >= std::max(b.open, b.close));
            QVERIFY(b.low <= std::min(b.open, b.close));
            QVERIFY(b.volume > 0);
        }
    }

    void sessions_data()
    {
        QTest::addColumn<int>("month");
        QTest::addColumn<int>("day");
        QTest::newRow("winter") << 1 << 8;
        QTest::newRow("across the March DST switch") << 3 << 4;
        QTest::newRow("across the November DST switch") << 10 << 28;
    }
    void sessions()
    {
        QFETCH(int, month);
        QFETCH(int, day);
        SyntheticOptions options = smallOptions(10);
        options.startMonth = static_cast<unsigned>(month);
        options.startDay = static_cast<unsigned>(day);
        const auto bars = generateSyntheticBars(options);
        EsCalendar calendar;
        std::map<std::int64_t, int> perDay;
        int dailyBreaks = 0, weekends = 0;
        for (std::size_t i = 0; i < bars.size(); ++i) {
            const std::int64_t tradingDay = calendar.tradingDay(bars[i].tsEvent);
            ++perDay[tradingDay];
            const int weekday = weekdayFromDays(tradingDay);
            QVERIFY2(weekday >= 1 && weekday <= 5, "sessions close Monday to Friday only");
            const double m = calendar.minuteOfDayEt(bars[i].tsEvent);
            QVERIFY2(!(m >= 17 * 60 && m < 18 * 60), "no bars in the 17:00-18:00 ET break");
            if (i == 0) continue;
            const std::int64_t step = (bars[i].tsEvent - bars[i - 1].tsEvent) / kNsPerMinute;
            if (step == 1) continue;
            if (step == 61) ++dailyBreaks;
            // A weekend spans 2 days + 61 minutes of UTC, an hour less or more over a DST switch.
            else if (step == 2 * 1440 + 61 || step == 2 * 1440 + 1 || step == 2 * 1440 + 121) ++weekends;
            else QFAIL(qPrintable(QString("unexpected step of %1 minutes").arg(step)));
            QCOMPARE(calendar.minutesSinceSessionOpen(bars[i].tsEvent), 0.0);
        }
        QCOMPARE(perDay.size(), std::size_t{10});
        for (const auto& [d, count] : perDay) QCOMPARE(count, 1380);
        QCOMPARE(dailyBreaks + weekends, 9);
        QVERIFY(weekends >= 1);
    }

    void regularSessionIsBusier()
    {
        const auto bars = generateSyntheticBars(smallOptions());
        EsCalendar calendar;
        double rth = 0, overnight = 0;
        int nRth = 0, nOvernight = 0;
        double openHour = 0, midday = 0;
        for (const Bar& b : bars) {
            const double m = calendar.minuteOfDayEt(b.tsEvent);
            const auto v = static_cast<double>(b.volume);
            if (calendar.isRegularSession(b.tsEvent)) {
                rth += v;
                ++nRth;
            } else if (m < 8 * 60 || m >= 18 * 60) {
                overnight += v;
                ++nOvernight;
            }
            if (m >= 9 * 60 + 30 && m < 9 * 60 + 45) openHour += v;
            if (m >= 12 * 60 && m < 12 * 60 + 15) midday += v;
        }
        QVERIFY(nRth > 0 && nOvernight > 0);
        QVERIFY(rth / nRth > 2.0 * overnight / nOvernight);
        QVERIFY2(openHour > 1.5 * midday, "U shape: the open is busier than midday");
    }

    void plantedDriftIsVisible()
    {
        SyntheticOptions plain = smallOptions(40);
        SyntheticOptions planted = plain;
        planted.plantedDriftTicks = 2.0;
        const auto a = generateSyntheticBars(plain);
        const auto b = generateSyntheticBars(planted);
        const double firstHour = meanTicks(b, 9 * 60 + 30, 10 * 60 + 30);
        const double lastHour = meanTicks(b, 15 * 60, 16 * 60);
        QVERIFY2(firstHour - meanTicks(a, 9 * 60 + 30, 10 * 60 + 30) > 1.5, qPrintable(QString::number(firstHour)));
        QVERIFY2(lastHour - meanTicks(a, 15 * 60, 16 * 60) < -1.5, qPrintable(QString::number(lastHour)));
        QVERIFY(firstHour > 1.0);
        QVERIFY(lastHour < -1.0);
    }

    void volatilityClusters()
    {
        // Between 00:00 and 03:00 ET the intraday profile is flat, so when the
        // realised variance of one 15-minute block predicts the next one's,
        // that comes from volatility clustering alone.
        const auto bars = generateSyntheticBars(smallOptions(20));
        EsCalendar calendar;
        std::map<std::pair<std::int64_t, int>, double> blocks; // (trading day, block) -> sum of r^2
        for (std::size_t i = 1; i < bars.size(); ++i) {
            const double m = calendar.minuteOfDayEt(bars[i].tsEvent);
            if (m >= 3 * 60) continue;
            const double r = static_cast<double>(bars[i].close - bars[i - 1].close) / static_cast<double>(kEsTick);
            blocks[{calendar.tradingDay(bars[i].tsEvent), static_cast<int>(m) / 15}] += r * r;
        }
        std::vector<std::pair<double, double>> pairs;
        for (const auto& [key, variance] : blocks) {
            const auto next = blocks.find({key.first, key.second + 1});
            if (next != blocks.end()) pairs.emplace_back(variance, next->second);
        }
        QCOMPARE(pairs.size(), std::size_t{20 * 11});
        double meanA = 0, meanB = 0;
        for (const auto& [a, b] : pairs) {
            meanA += a;
            meanB += b;
        }
        meanA /= static_cast<double>(pairs.size());
        meanB /= static_cast<double>(pairs.size());
        double cov = 0, varA = 0, varB = 0;
        for (const auto& [a, b] : pairs) {
            cov += (a - meanA) * (b - meanB);
            varA += (a - meanA) * (a - meanA);
            varB += (b - meanB) * (b - meanB);
        }
        const double correlation = cov / std::sqrt(varA * varB);
        QVERIFY2(correlation > 0.2, qPrintable(QString::number(correlation)));
    }

    void badOptionsAreRejected()
    {
        SyntheticOptions options;
        options.intervalNs = 7 * kNsPerMinute;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, generateSyntheticBars(options));
        options = SyntheticOptions{};
        options.tradingDays = 0;
        QVERIFY(generateSyntheticBars(options).empty());
    }

    void fiveMinuteBars()
    {
        SyntheticOptions options = smallOptions(2);
        options.intervalNs = 5 * kNsPerMinute;
        QCOMPARE(generateSyntheticBars(options).size(), std::size_t{2 * 276});
    }
};

} // namespace tst_synthetic

FOXHUNT_TEST_APPLESS_MAIN(tst_synthetic::TestSynthetic)
#include "tst_synthetic.moc"
