// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/continuous.h"
#include "engine/data/market_time.h"
#include "tests/support/test_bundle.h"

#include <QTest>

namespace tst_continuous {

using namespace foxhunt;

namespace {

constexpr std::uint32_t kH = 1, kM = 2, kU = 3, kSpread = 9;

std::int64_t utc(int year, unsigned month, unsigned day, int hour, int minute)
{
    return daysFromCivil(year, month, day) * kNsPerDay + (hour * 60 + minute) * kNsPerMinute;
}

Bar bar(std::uint32_t id, std::int64_t ts, double close, std::uint64_t volume)
{
    Bar b;
    b.instrumentId = id;
    b.tsEvent = ts;
    b.open = fromPoints(close);
    b.high = fromPoints(close + 1.0);
    b.low = fromPoints(close - 1.0);
    b.close = fromPoints(close);
    b.volume = volume;
    return b;
}

const std::map<std::uint32_t, std::string> kSymbols = {
    {kH, "ESH1"}, {kM, "ESM1"}, {kU, "ESU1"}, {kSpread, "ESH1-ESM1"}};

// Three RTH bars a day (14:30, 15:00, 15:30 UTC = 09:30.. ET in March 2021,
// before the DST switch) on Mon 8, Tue 9 and Wed 10 March 2021.
// Day 1: ESH1 busiest. Day 2: ESM1 busiest (roll). Day 3: ESH1 busiest again
// (must not roll back). The spread is always the busiest of all (must be dropped).
// ESM1 has no bar at day-1 15:30, so the last common bar before the roll is 15:00.
std::vector<Bar> twoContractDays()
{
    std::vector<Bar> bars;
    const unsigned days[] = {8, 9, 10};
    const std::uint64_t hVolume[] = {1000, 300, 900};
    const std::uint64_t mVolume[] = {100, 800, 100};
    for (int d = 0; d < 3; ++d) {
        const int minutes[] = {30, 60, 90};
        for (int k = 0; k < 3; ++k) {
            const std::int64_t ts = utc(2021, 3, days[d], 14, minutes[k]);
            bars.push_back(bar(kH, ts, 3800.0 + d * 10 + k, hVolume[d]));
            if (!(d == 0 && k == 2)) bars.push_back(bar(kM, ts, 3790.0 + d * 10 + k * 0.5, mVolume[d]));
            bars.push_back(bar(kSpread, ts, 10.0, 50'000));
        }
    }
    return bars;
}

} // namespace

class TestContinuous : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void spreadSymbols_data()
    {
        QTest::addColumn<QString>("symbol");
        QTest::addColumn<bool>("spread");
        QTest::newRow("outright") << "ESH1" << false;
        QTest::newRow("calendar spread") << "ESH1-ESM1" << true;
        QTest::newRow("butterfly") << "ESH1-ESM1-ESU1" << true;
        QTest::newRow("user-defined") << "UD:1V: VT 0310" << true;
        QTest::newRow("continuous") << "ES.c.0" << false;
    }
    void spreadSymbols()
    {
        QFETCH(QString, symbol);
        QFETCH(bool, spread);
        QCOMPARE(isSpreadSymbol(symbol.toStdString()), spread);
    }

    void contractCodes_data()
    {
        QTest::addColumn<QString>("symbol");
        QTest::addColumn<int>("reference");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("root");
        QTest::addColumn<QString>("month");
        QTest::addColumn<int>("year");
        QTest::newRow("one digit, next year") << "ESH1" << 2020 << true << "ES"
                                              << "H" << 2021;
        QTest::newRow("one digit, same year") << "ESZ0" << 2020 << true << "ES"
                                              << "Z" << 2020;
        QTest::newRow("one digit, decade ahead") << "ESH0" << 2029 << true << "ES"
                                                 << "H" << 2030;
        QTest::newRow("one digit, last year") << "ESU9" << 2020 << true << "ES"
                                              << "U" << 2019;
        QTest::newRow("two digits") << "ESM21" << 2020 << true << "ES"
                                    << "M" << 2021;
        QTest::newRow("two digits, century") << "ESZ99" << 2001 << true << "ES"
                                             << "Z" << 1999;
        QTest::newRow("four digits") << "ESU2021" << 1990 << true << "ES"
                                     << "U" << 2021;
        QTest::newRow("micro root") << "MESH4" << 2024 << true << "MES"
                                    << "H" << 2024;
        QTest::newRow("no year") << "ES" << 2020 << false << ""
                                 << "" << 0;
        QTest::newRow("bad month") << "ESA1" << 2020 << false << ""
                                   << "" << 0;
        QTest::newRow("three digits") << "ESH201" << 2020 << false << ""
                                      << "" << 0;
        QTest::newRow("spread") << "ESH1-ESM1" << 2020 << false << ""
                                << "" << 0;
        QTest::newRow("no root") << "H1" << 2020 << false << ""
                                 << "" << 0;
    }
    void contractCodes()
    {
        QFETCH(QString, symbol);
        QFETCH(int, reference);
        QFETCH(bool, valid);
        const auto code = parseContractCode(symbol.toStdString(), reference);
        QCOMPARE(code.has_value(), valid);
        if (!valid) return;
        QFETCH(QString, root);
        QFETCH(QString, month);
        QFETCH(int, year);
        QCOMPARE(QString::fromStdString(code->root), root);
        QCOMPARE(QString(QChar(code->month)), month);
        QCOMPARE(code->year, year);
    }

    void expiryOrdering()
    {
        const auto z0 = parseContractCode("ESZ0", 2020);
        const auto h1 = parseContractCode("ESH1", 2020);
        const auto m1 = parseContractCode("ESM1", 2020);
        QVERIFY(z0 && h1 && m1);
        QVERIFY(z0->expiryKey() < h1->expiryKey());
        QVERIFY(h1->expiryKey() < m1->expiryKey());
    }

    void rollsByVolumeAndDropsSpreads()
    {
        const std::vector<Bar> bars = twoContractDays();
        const ContinuousSeries c = buildContinuous(bars, kSymbols);

        QCOMPARE(c.spreadBarsDropped, std::uint64_t{9});
        QCOMPARE(c.contracts, (std::vector<std::string>{"ESH1", "ESM1"}));
        QCOMPARE(c.bars.size(), std::size_t{9});
        for (const Bar& b : c.bars) QVERIFY(b.instrumentId != kSpread);
        // Day 1 from ESH1, days 2 and 3 from ESM1: no roll back on day 3.
        for (int i = 0; i < 3; ++i) QCOMPARE(c.bars[i].instrumentId, kH);
        for (int i = 3; i < 9; ++i) QCOMPARE(c.bars[i].instrumentId, kM);
        for (std::size_t i = 1; i < c.bars.size(); ++i) QVERIFY(c.bars[i].tsEvent > c.bars[i - 1].tsEvent);

        QCOMPARE(c.rolls.size(), std::size_t{1});
        const Roll& roll = c.rolls.front();
        QCOMPARE(QString::fromStdString(roll.fromSymbol), QString("ESH1"));
        QCOMPARE(QString::fromStdString(roll.toSymbol), QString("ESM1"));
        QCOMPARE(roll.ts, utc(2021, 3, 9, 14, 30));
        QCOMPARE(roll.tradingDay, daysFromCivil(2021, 3, 9));
        // Last common bar before the roll: day 1, 15:00 UTC (k = 1): 3790.5 - 3801.
        QCOMPARE(roll.priceGap, fromPoints(3790.5 - 3801.0));
    }

    void backAdjustShiftsEarlierBars()
    {
        const std::vector<Bar> bars = twoContractDays();
        const ContinuousSeries raw = buildContinuous(bars, kSymbols);
        ContinuousOptions options;
        options.backAdjust = true;
        const ContinuousSeries adjusted = buildContinuous(bars, kSymbols, options);
        QCOMPARE(adjusted.bars.size(), raw.bars.size());
        const std::int64_t gap = raw.rolls.front().priceGap;
        for (std::size_t i = 0; i < raw.bars.size(); ++i) {
            const std::int64_t shift = raw.bars[i].tsEvent < raw.rolls.front().ts ? gap : 0;
            QCOMPARE(adjusted.bars[i].open, raw.bars[i].open + shift);
            QCOMPARE(adjusted.bars[i].high, raw.bars[i].high + shift);
            QCOMPARE(adjusted.bars[i].low, raw.bars[i].low + shift);
            QCOMPARE(adjusted.bars[i].close, raw.bars[i].close + shift);
            QCOMPARE(adjusted.bars[i].close % kEsTick, std::int64_t{0});
        }
    }

    void cumulativeBackAdjustOverTwoRolls()
    {
        // ESH1 on day 1, ESM1 on day 2, ESU1 on day 3; one bar per contract per day.
        std::vector<Bar> bars;
        const unsigned days[] = {8, 9, 10};
        for (int d = 0; d < 3; ++d) {
            const std::int64_t ts = utc(2021, 3, days[d], 15, 0);
            bars.push_back(bar(kH, ts, 3800.0 + d, d == 0 ? 900 : 10));
            bars.push_back(bar(kM, ts, 3795.0 + d, d == 1 ? 900 : 20));
            bars.push_back(bar(kU, ts, 3792.0 + d, d == 2 ? 900 : 5));
        }
        ContinuousOptions options;
        options.backAdjust = true;
        const ContinuousSeries c = buildContinuous(bars, kSymbols, options);
        QCOMPARE(c.rolls.size(), std::size_t{2});
        QCOMPARE(c.rolls[0].priceGap, fromPoints(-5.0)); // ESM1 - ESH1 on day 1
        QCOMPARE(c.rolls[1].priceGap, fromPoints(-3.0)); // ESU1 - ESM1 on day 2
        QCOMPARE(c.bars.size(), std::size_t{3});
        QCOMPARE(c.bars[0].close, fromPoints(3800.0 - 5.0 - 3.0));
        QCOMPARE(c.bars[1].close, fromPoints(3796.0 - 3.0));
        QCOMPARE(c.bars[2].close, fromPoints(3794.0));
    }

    void noCommonBarGivesZeroGap()
    {
        std::vector<Bar> bars = {bar(kH, utc(2021, 3, 8, 15, 0), 3800.0, 500),
                                 bar(kM, utc(2021, 3, 9, 15, 0), 3790.0, 500)};
        const ContinuousSeries c = buildContinuous(bars, kSymbols);
        QCOMPARE(c.rolls.size(), std::size_t{1});
        QCOMPARE(c.rolls.front().priceGap, std::int64_t{0});
        QCOMPARE(c.bars.size(), std::size_t{2});
    }

    void unsortedInputIsOrdered()
    {
        std::vector<Bar> bars = twoContractDays();
        std::reverse(bars.begin(), bars.end());
        std::stable_sort(bars.begin(), bars.end(),
                         [](const Bar& a, const Bar& b) { return a.instrumentId < b.instrumentId; });
        const ContinuousSeries c = buildContinuous(bars, kSymbols);
        QCOMPARE(c.bars.size(), std::size_t{9});
        QCOMPARE(c.rolls.size(), std::size_t{1});
    }
};

} // namespace tst_continuous

FOXHUNT_TEST_APPLESS_MAIN(tst_continuous::TestContinuous)
#include "tst_continuous.moc"
