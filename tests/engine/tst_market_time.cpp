// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/market_time.h"

#include "engine/data/bar.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <stdexcept>

namespace tst_market_time {

using namespace foxhunt;

namespace {

std::int64_t utc(int y, unsigned mo, unsigned d, int h, int mi, int s = 0)
{
    return daysFromCivil(y, mo, d) * kNsPerDay + std::int64_t(h) * 3600 * kNsPerSecond +
           std::int64_t(mi) * kNsPerMinute + std::int64_t(s) * kNsPerSecond;
}

// Local wall-clock time expressed as ns, the way ZoneConverter represents it.
std::int64_t local(int y, unsigned mo, unsigned d, int h, int mi)
{
    return utc(y, mo, d, h, mi);
}

} // namespace

class TestMarketTime : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void civilDates();
    void parseAndFormat_data();
    void parseAndFormat();
    void formatUtcCases();
    void offsets_data();
    void offsets();
    void localToUtcAroundDst();
    void cachedLookupsMatchFreshOnes();
    void unknownZoneThrows();
    void tradingDay_data();
    void tradingDay();
    void sessionClock_data();
    void sessionClock();
};

void TestMarketTime::civilDates()
{
    QCOMPARE(daysFromCivil(1970, 1, 1), std::int64_t(0));
    QCOMPARE(daysFromCivil(2000, 3, 1), std::int64_t(11017));
    QCOMPARE(weekdayFromDays(0), 4);                          // Thursday
    QCOMPARE(weekdayFromDays(daysFromCivil(2024, 3, 10)), 0); // Sunday
    for (std::int64_t d = -800; d < 30000; d += 37) {
        int y = 0;
        unsigned m = 0, day = 0;
        civilFromDays(d, y, m, day);
        QCOMPARE(daysFromCivil(y, m, day), d);
    }
}

void TestMarketTime::parseAndFormat_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("formatted");
    QTest::newRow("iso") << "2024-02-29" << true << "2024-02-29";
    QTest::newRow("compact") << "20240229" << true << "2024-02-29";
    QTest::newRow("not a leap year") << "2023-02-29" << false << "";
    QTest::newRow("month 13") << "2024-13-01" << false << "";
    QTest::newRow("day 0") << "2024-01-00" << false << "";
    QTest::newRow("slashes") << "2024/02/29" << false << "";
    QTest::newRow("letters") << "2024-0a-01" << false << "";
    QTest::newRow("short") << "2024-1-1" << false << "";
    QTest::newRow("empty") << "" << false << "";
}

void TestMarketTime::parseAndFormat()
{
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QFETCH(QString, formatted);
    const auto parsed = parseDate(text.toStdString());
    QCOMPARE(parsed.has_value(), valid);
    if (valid) QCOMPARE(QString::fromStdString(formatDate(*parsed)), formatted);
}

void TestMarketTime::formatUtcCases()
{
    QCOMPARE(QString::fromStdString(formatUtc(utc(2020, 12, 28, 0, 0))), QString("2020-12-28T00:00:00Z"));
    QCOMPARE(QString::fromStdString(formatUtc(utc(2024, 3, 10, 7, 5, 9) + 1500)),
             QString("2024-03-10T07:05:09.000001500Z"));
    QCOMPARE(QString::fromStdString(formatUtc(-kNsPerSecond)), QString("1969-12-31T23:59:59Z"));
}

void TestMarketTime::offsets_data()
{
    QTest::addColumn<qint64>("ts");
    QTest::addColumn<qint64>("offset");
    QTest::newRow("winter") << qint64(utc(2024, 1, 15, 12, 0)) << qint64(-18000);
    QTest::newRow("summer") << qint64(utc(2024, 7, 15, 12, 0)) << qint64(-14400);
    QTest::newRow("just before spring forward") << qint64(utc(2024, 3, 10, 6, 59)) << qint64(-18000);
    QTest::newRow("spring forward instant") << qint64(utc(2024, 3, 10, 7, 0)) << qint64(-14400);
    QTest::newRow("just before fall back") << qint64(utc(2024, 11, 3, 5, 59)) << qint64(-14400);
    QTest::newRow("fall back instant") << qint64(utc(2024, 11, 3, 6, 0)) << qint64(-18000);
}

void TestMarketTime::offsets()
{
    QFETCH(qint64, ts);
    QFETCH(qint64, offset);
    ZoneConverter ny;
    QCOMPARE(ny.name(), std::string("America/New_York"));
    QCOMPARE(ny.offsetSeconds(ts), offset);
    QCOMPARE(ny.utcToLocal(ts), ts + offset * kNsPerSecond);
}

void TestMarketTime::localToUtcAroundDst()
{
    ZoneConverter ny;
    // 02:30 on 2024-03-10 never happened in New York.
    QVERIFY(!ny.localToUtc(local(2024, 3, 10, 2, 30)).has_value());
    QCOMPARE(*ny.localToUtc(local(2024, 3, 10, 3, 0)), utc(2024, 3, 10, 7, 0));
    QCOMPARE(*ny.localToUtc(local(2024, 3, 10, 1, 59)), utc(2024, 3, 10, 6, 59));
    // 01:30 on 2024-11-03 happened twice: first in EDT, then in EST.
    QVERIFY(ny.isAmbiguous(local(2024, 11, 3, 1, 30)));
    QVERIFY(!ny.isAmbiguous(local(2024, 11, 3, 2, 30)));
    QCOMPARE(*ny.localToUtc(local(2024, 11, 3, 1, 30), AmbiguousTime::Earliest), utc(2024, 11, 3, 5, 30));
    QCOMPARE(*ny.localToUtc(local(2024, 11, 3, 1, 30), AmbiguousTime::Latest), utc(2024, 11, 3, 6, 30));
}

void TestMarketTime::cachedLookupsMatchFreshOnes()
{
    // One converter walked through two years (forwards, then backwards) must
    // agree with a fresh converter for every lookup: the period caches may
    // never answer for the wrong side of a DST change.
    ZoneConverter walker;
    const std::int64_t from = utc(2023, 12, 30, 0, 0);
    const std::int64_t to = utc(2025, 12, 30, 0, 0);
    const std::int64_t step = 17 * kNsPerMinute + 13 * kNsPerSecond;
    auto check = [&](std::int64_t t) {
        ZoneConverter fresh;
        const std::int64_t l = walker.utcToLocal(t);
        if (l != fresh.utcToLocal(t)) return false;
        const auto back = walker.localToUtc(l, AmbiguousTime::Earliest);
        const auto backFresh = fresh.localToUtc(l, AmbiguousTime::Earliest);
        return back == backFresh && back.has_value();
    };
    for (std::int64_t t = from; t < to; t += step * 7)
        QVERIFY2(check(t), qPrintable(QString::fromStdString(formatUtc(t))));
    for (std::int64_t t = to; t > from; t -= step * 5)
        QVERIFY2(check(t), qPrintable(QString::fromStdString(formatUtc(t))));
    // Dense around both 2024 changes, minute by minute.
    for (std::int64_t t = utc(2024, 3, 10, 4, 0); t < utc(2024, 3, 10, 10, 0); t += kNsPerMinute)
        QVERIFY2(check(t), qPrintable(QString::fromStdString(formatUtc(t))));
    for (std::int64_t t = utc(2024, 11, 3, 3, 0); t < utc(2024, 11, 3, 9, 0); t += kNsPerMinute) {
        ZoneConverter fresh;
        QCOMPARE(walker.utcToLocal(t), fresh.utcToLocal(t));
        const std::int64_t l = fresh.utcToLocal(t);
        QCOMPARE(walker.localToUtc(l, AmbiguousTime::Latest), fresh.localToUtc(l, AmbiguousTime::Latest));
    }
}

void TestMarketTime::unknownZoneThrows()
{
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ZoneConverter("Mars/Olympus_Mons"));
}

void TestMarketTime::tradingDay_data()
{
    QTest::addColumn<qint64>("ts");
    QTest::addColumn<QString>("day");
    QTest::newRow("Tue 16:59 EST") << qint64(utc(2024, 3, 5, 21, 59)) << "2024-03-05";
    QTest::newRow("Tue 18:00 EST opens Wed") << qint64(utc(2024, 3, 5, 23, 0)) << "2024-03-06";
    QTest::newRow("Tue 23:59 EST") << qint64(utc(2024, 3, 6, 4, 59)) << "2024-03-06";
    QTest::newRow("Wed 00:00 EST") << qint64(utc(2024, 3, 6, 5, 0)) << "2024-03-06";
    QTest::newRow("Fri 16:59 EST") << qint64(utc(2024, 3, 8, 21, 59)) << "2024-03-08";
    QTest::newRow("Sun 18:00 EDT opens Mon (DST day)") << qint64(utc(2024, 3, 10, 22, 0)) << "2024-03-11";
    QTest::newRow("Sun 17:59 EDT") << qint64(utc(2024, 3, 10, 21, 59)) << "2024-03-10";
    QTest::newRow("Sun 18:00 EST opens Mon (fall back day)") << qint64(utc(2024, 11, 3, 23, 0)) << "2024-11-04";
    QTest::newRow("Sun 17:59 EST") << qint64(utc(2024, 11, 3, 22, 59)) << "2024-11-03";
}

void TestMarketTime::tradingDay()
{
    QFETCH(qint64, ts);
    QFETCH(QString, day);
    EsCalendar cal;
    QCOMPARE(QString::fromStdString(formatDate(cal.tradingDay(ts))), day);
}

void TestMarketTime::sessionClock_data()
{
    QTest::addColumn<qint64>("ts");
    QTest::addColumn<double>("minuteOfDay");
    QTest::addColumn<double>("sinceOpen");
    QTest::addColumn<bool>("regular");
    QTest::newRow("09:29 EST") << qint64(utc(2024, 1, 9, 14, 29)) << 569.0 << 929.0 << false;
    QTest::newRow("09:30 EST") << qint64(utc(2024, 1, 9, 14, 30)) << 570.0 << 930.0 << true;
    QTest::newRow("15:59:30 EDT") << qint64(utc(2024, 7, 9, 19, 59, 30)) << 959.5 << 1319.5 << true;
    QTest::newRow("16:00 EDT") << qint64(utc(2024, 7, 9, 20, 0)) << 960.0 << 1320.0 << false;
    QTest::newRow("18:00 EDT") << qint64(utc(2024, 7, 9, 22, 0)) << 1080.0 << 0.0 << false;
    QTest::newRow("16:59 EDT") << qint64(utc(2024, 7, 9, 20, 59)) << 1019.0 << 1379.0 << false;
    QTest::newRow("03:00 EDT on DST day") << qint64(utc(2024, 3, 10, 7, 0)) << 180.0 << 540.0 << false;
    QTest::newRow("01:59 EST on DST day") << qint64(utc(2024, 3, 10, 6, 59)) << 119.0 << 479.0 << false;
}

void TestMarketTime::sessionClock()
{
    QFETCH(qint64, ts);
    QFETCH(double, minuteOfDay);
    QFETCH(double, sinceOpen);
    QFETCH(bool, regular);
    EsCalendar cal;
    QCOMPARE(cal.minuteOfDayEt(ts), minuteOfDay);
    QCOMPARE(cal.minutesSinceSessionOpen(ts), sinceOpen);
    QCOMPARE(cal.isRegularSession(ts), regular);
}

} // namespace tst_market_time

FOXHUNT_TEST_APPLESS_MAIN(tst_market_time::TestMarketTime)
#include "tst_market_time.moc"
