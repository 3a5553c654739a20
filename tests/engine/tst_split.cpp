// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/split.h"

#include "engine/data/market_time.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace tst_split {

using namespace foxhunt;

namespace {

// 5-minute bars over whole ES sessions (18:00-17:00 ET) for the Monday-Friday
// trading days among `calendarDays` days from `firstDay`. Every fourth trading
// day closes early at 13:00 ET so that days differ in size.
std::vector<Bar> makeSessions(std::int64_t firstDay, int calendarDays)
{
    ZoneConverter ny("America/New_York");
    std::vector<Bar> bars;
    int tradingDayNumber = 0;
    for (std::int64_t day = firstDay; day < firstDay + calendarDays; ++day) {
        const int wd = weekdayFromDays(day);
        if (wd == 0 || wd == 6) continue;
        const std::int64_t open = *ny.localToUtc(day * kNsPerDay - 6 * 3600 * kNsPerSecond);
        const int minutes = (tradingDayNumber++ % 4 == 3) ? 19 * 60 : 1380; // 18:00 -> 13:00 or 17:00
        for (int m = 0; m < minutes; m += 5) {
            Bar b;
            b.tsEvent = open + std::int64_t(m) * kNsPerMinute;
            b.open = b.high = b.low = b.close = fromPoints(4800.0 + 0.25 * (m % 40));
            b.volume = 10;
            bars.push_back(b);
        }
    }
    return bars;
}

std::int64_t dayOf(EsCalendar& cal, const Bar& b)
{
    return cal.tradingDay(b.tsEvent);
}

// Checks what every split must satisfy; returns an empty string or what is wrong.
QString checkSplit(const std::vector<Bar>& bars, const WalkForwardSplit& s, bool coversAll)
{
    EsCalendar cal;
    if (s.trainIndex.begin != 0) return "train does not start at the first bar";
    if (s.trainIndex.end != s.validationIndex.begin || s.validationIndex.end != s.testIndex.begin)
        return "parts are not contiguous";
    if (coversAll && s.testIndex.end != bars.size()) return "test does not reach the last bar";
    if (s.trainBars != s.trainIndex.size() || s.validationBars != s.validationIndex.size() ||
        s.testBars != s.testIndex.size())
        return "bar counts disagree with index ranges";
    if (s.trainBars == 0 || s.validationBars == 0 || s.testBars == 0) return "a part is empty";
    if (!(s.train.toTs == s.validation.fromTs && s.validation.toTs == s.test.fromTs)) return "date ranges not adjacent";
    if (!(s.trainStartDay < s.validationStartDay && s.validationStartDay < s.testStartDay && s.testStartDay < s.endDay))
        return "days not ordered";
    struct Part {
        IndexRange index;
        DateRange range;
        std::int64_t fromDay, toDay;
    };
    const Part parts[] = {{s.trainIndex, s.train, s.trainStartDay, s.validationStartDay},
                          {s.validationIndex, s.validation, s.validationStartDay, s.testStartDay},
                          {s.testIndex, s.test, s.testStartDay, s.endDay}};
    for (const Part& p : parts) {
        // A part never cuts a session: the bars on either side of its start belong to different days.
        if (p.index.begin > 0 && dayOf(cal, bars[p.index.begin - 1]) == dayOf(cal, bars[p.index.begin]))
            return QString("boundary at bar %1 splits a trading day").arg(p.index.begin);
        for (std::size_t i = p.index.begin; i < p.index.end; ++i) {
            const std::int64_t d = dayOf(cal, bars[i]);
            if (d < p.fromDay || d >= p.toDay) return QString("bar %1 on day %2 is outside its part").arg(i).arg(d);
            if (!p.range.contains(bars[i].tsEvent)) return QString("bar %1 is outside its date range").arg(i);
        }
    }
    return {};
}

} // namespace

class TestSplit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sessionOpenIsSixPmEastern_data();
    void sessionOpenIsSixPmEastern();
    void byDates();
    void byDatesStartingOnAWeekend();
    void byDatesErrors_data();
    void byDatesErrors();
    void byFraction_data();
    void byFraction();
    void byFractionErrors_data();
    void byFractionErrors();
    void foldsExpandAndOrder_data();
    void foldsExpandAndOrder();
    void foldsErrors();
};

void TestSplit::sessionOpenIsSixPmEastern_data()
{
    QTest::addColumn<qint64>("day");
    QTest::addColumn<QString>("open");
    QTest::newRow("winter") << qint64(daysFromCivil(2024, 3, 8)) << "2024-03-07T23:00:00Z";
    QTest::newRow("Monday after DST start") << qint64(daysFromCivil(2024, 3, 11)) << "2024-03-10T22:00:00Z";
    QTest::newRow("Monday after DST end") << qint64(daysFromCivil(2024, 11, 4)) << "2024-11-03T23:00:00Z";
}

void TestSplit::sessionOpenIsSixPmEastern()
{
    QFETCH(qint64, day);
    QFETCH(QString, open);
    QCOMPARE(QString::fromStdString(formatUtc(sessionOpenUtc(day))), open);
    EsCalendar cal;
    QCOMPARE(cal.tradingDay(sessionOpenUtc(day)), day);
    QCOMPARE(cal.tradingDay(sessionOpenUtc(day) - 1), day - 1);
}

void TestSplit::byDates()
{
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 21); // Mon 4 Mar .. Sun 24 Mar, over the DST change
    const std::int64_t validation = daysFromCivil(2024, 3, 11);
    const std::int64_t test = daysFromCivil(2024, 3, 18);
    const WalkForwardSplit s = splitByDates(bars, validation, test);
    QCOMPARE(checkSplit(bars, s, /*coversAll=*/true), QString());
    QCOMPARE(s.trainStartDay, daysFromCivil(2024, 3, 4));
    QCOMPARE(s.validationStartDay, validation);
    QCOMPARE(s.testStartDay, test);
    QCOMPARE(s.endDay, daysFromCivil(2024, 3, 23)); // the day after the last trading day (Fri 22)
    QCOMPARE(s.validation.fromTs, sessionOpenUtc(validation));
    QCOMPARE(QString::fromStdString(formatUtc(s.validation.fromTs)), QString("2024-03-10T22:00:00Z"));
    // Every fourth trading day is short: Thu 7 Mar and Wed 13 Mar fall in train and validation.
    const std::size_t full = 1380 / 5, shortDay = 19 * 60 / 5;
    QCOMPARE(s.trainBars, 4 * full + shortDay);
    QCOMPARE(s.validationBars, 4 * full + shortDay);
    QCOMPARE(s.testBars, bars.size() - 8 * full - 2 * shortDay);
}

void TestSplit::byDatesStartingOnAWeekend()
{
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 21);
    // Saturday as validation start: validation begins with Monday's session (opening Sunday 18:00 ET).
    const WalkForwardSplit sat = splitByDates(bars, daysFromCivil(2024, 3, 9), daysFromCivil(2024, 3, 16));
    const WalkForwardSplit mon = splitByDates(bars, daysFromCivil(2024, 3, 11), daysFromCivil(2024, 3, 18));
    QCOMPARE(sat.validationIndex, mon.validationIndex);
    QCOMPARE(sat.testIndex, mon.testIndex);
    QCOMPARE(checkSplit(bars, sat, true), QString());
}

void TestSplit::byDatesErrors_data()
{
    QTest::addColumn<qint64>("validation");
    QTest::addColumn<qint64>("test");
    QTest::addColumn<bool>("empty");
    QTest::addColumn<bool>("unordered");
    const qint64 mon11 = daysFromCivil(2024, 3, 11);
    QTest::newRow("validation after test") << mon11 + 7 << mon11 << false << false;
    QTest::newRow("validation equals test") << mon11 << mon11 << false << false;
    QTest::newRow("no training days") << qint64(daysFromCivil(2024, 3, 4)) << mon11 << false << false;
    QTest::newRow("no test days") << mon11 << qint64(daysFromCivil(2024, 4, 1)) << false << false;
    QTest::newRow("empty validation (a weekend)") << mon11 - 2 << mon11 << false << false;
    QTest::newRow("no bars") << mon11 << mon11 + 7 << true << false;
    QTest::newRow("out of order") << mon11 << mon11 + 7 << false << true;
}

void TestSplit::byDatesErrors()
{
    QFETCH(qint64, validation);
    QFETCH(qint64, test);
    QFETCH(bool, empty);
    QFETCH(bool, unordered);
    auto bars = empty ? std::vector<Bar>{} : makeSessions(daysFromCivil(2024, 3, 4), 21);
    if (unordered) std::swap(bars[100], bars[101]);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, splitByDates(bars, validation, test));
    try {
        splitByDates(bars, validation, test);
    } catch (const std::invalid_argument& e) {
        QVERIFY(QString(e.what()).startsWith("splitByDates: "));
    }
}

void TestSplit::byFraction_data()
{
    QTest::addColumn<double>("train");
    QTest::addColumn<double>("validation");
    QTest::addColumn<int>("calendarDays");
    QTest::newRow("defaults 6 weeks") << 0.7 << 0.15 << 42;
    QTest::newRow("half and quarter") << 0.5 << 0.25 << 42;
    QTest::newRow("80/10/10") << 0.8 << 0.1 << 42;
    QTest::newRow("thirds") << 0.34 << 0.33 << 42;
    QTest::newRow("tiny validation, 3 days") << 0.4 << 0.01 << 3;
}

void TestSplit::byFraction()
{
    QFETCH(double, train);
    QFETCH(double, validation);
    QFETCH(int, calendarDays);
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), calendarDays);
    const WalkForwardSplit s = splitByFraction(bars, train, validation);
    QCOMPARE(checkSplit(bars, s, true), QString());
    // Snapped to the nearest day boundary: off by at most one day's bars (unless a
    // part had to grow to its minimum of one day).
    const double n = double(bars.size());
    const double oneDay = 1380.0 / 5.0;
    if (calendarDays > 3) {
        QVERIFY2(std::abs(double(s.trainBars) - train * n) <= oneDay / 2 + 1,
                 qPrintable(QString("train %1 bars for target %2").arg(s.trainBars).arg(train * n)));
        QVERIFY2(std::abs(double(s.trainBars + s.validationBars) - (train + validation) * n) <= oneDay / 2 + 1,
                 qPrintable(QString("train+validation %1 bars").arg(s.trainBars + s.validationBars)));
    }
    QCOMPARE(s.trainBars + s.validationBars + s.testBars, bars.size());
}

void TestSplit::byFractionErrors_data()
{
    QTest::addColumn<double>("train");
    QTest::addColumn<double>("validation");
    QTest::addColumn<int>("calendarDays");
    QTest::newRow("zero train") << 0.0 << 0.1 << 20;
    QTest::newRow("whole train") << 1.0 << 0.1 << 20;
    QTest::newRow("no room for test") << 0.7 << 0.3 << 20;
    QTest::newRow("zero validation") << 0.7 << 0.0 << 20;
    QTest::newRow("NaN") << std::nan("") << 0.1 << 20;
    QTest::newRow("two trading days") << 0.7 << 0.15 << 2;
}

void TestSplit::byFractionErrors()
{
    QFETCH(double, train);
    QFETCH(double, validation);
    QFETCH(int, calendarDays);
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), calendarDays);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, splitByFraction(bars, train, validation));
}

void TestSplit::foldsExpandAndOrder_data()
{
    QTest::addColumn<int>("folds");
    QTest::addColumn<double>("initial");
    QTest::newRow("1 fold") << 1 << 0.5;
    QTest::newRow("3 folds") << 3 << 0.5;
    QTest::newRow("5 folds, small start") << 5 << 0.25;
}

void TestSplit::foldsExpandAndOrder()
{
    QFETCH(int, folds);
    QFETCH(double, initial);
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 28); // 20 trading days
    const auto out = walkForwardFolds(bars, std::size_t(folds), initial);
    QCOMPARE(out.size(), std::size_t(folds));
    for (std::size_t k = 0; k < out.size(); ++k) {
        const WalkForwardSplit& s = out[k];
        QCOMPARE(checkSplit(bars, s, /*coversAll=*/k + 1 == out.size()), QString());
        if (k == 0) continue;
        const WalkForwardSplit& prev = out[k - 1];
        // Expanding: this fold trains on the previous fold's train and validation.
        QCOMPARE(s.trainIndex.begin, std::size_t(0));
        QCOMPARE(s.trainIndex.end, prev.validationIndex.end);
        QVERIFY(s.trainBars > prev.trainBars);
        QCOMPARE(s.validationIndex, prev.testIndex);
        QVERIFY(s.testIndex.begin >= prev.testIndex.end);
        QCOMPARE(s.train.fromTs, prev.train.fromTs);
        QVERIFY(s.validation.fromTs > prev.validation.fromTs);
    }
    QCOMPARE(out.back().testIndex.end, bars.size());
}

void TestSplit::foldsErrors()
{
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 28); // 20 trading days
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, walkForwardFolds(bars, 0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, walkForwardFolds(bars, 10, 0.5)); // 10 days left, 11 blocks
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, walkForwardFolds(bars, 2, 1.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, walkForwardFolds({}, 2));
    QCOMPARE(walkForwardFolds(bars, 9, 0.5).size(), std::size_t(9)); // exactly one day per block
}

} // namespace tst_split

FOXHUNT_TEST_APPLESS_MAIN(tst_split::TestSplit)
#include "tst_split.moc"
