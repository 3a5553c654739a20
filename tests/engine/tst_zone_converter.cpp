// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/data/market_time.cpp: DST edges and that the caches never change an answer.

#include "engine/data/bar.h"
#include "engine/data/csv_reader.h"
#include "engine/data/market_time.h"
#include "tests/support/test_bundle.h"

#include <QTest>

namespace tst_zone_converter {

using namespace foxhunt;

namespace {
std::int64_t utc(const char* iso)
{
    return parseTextTimestamp(iso)->ns;
}
std::int64_t local(const char* naive)
{
    return parseTextTimestamp(naive)->ns;
}
} // namespace

class TestZoneConverter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void dstEdges_data();
    void dstEdges();
    void cachedMatchesFresh();
    void calendar();
    void dates();
};

void TestZoneConverter::dstEdges_data()
{
    QTest::addColumn<QString>("localTime");
    QTest::addColumn<bool>("exists");
    QTest::addColumn<bool>("ambiguous");
    QTest::addColumn<QString>("earliest");
    QTest::addColumn<QString>("latest");
    QTest::newRow("winter") << "2021-01-04 09:30:00" << true << false << "2021-01-04T14:30:00Z"
                            << "2021-01-04T14:30:00Z";
    QTest::newRow("spring gap") << "2021-03-14 02:30:00" << false << false << ""
                                << "";
    QTest::newRow("after spring") << "2021-03-14 03:00:00" << true << false << "2021-03-14T07:00:00Z"
                                  << "2021-03-14T07:00:00Z";
    QTest::newRow("fall back") << "2021-11-07 01:30:00" << true << true << "2021-11-07T05:30:00Z"
                               << "2021-11-07T06:30:00Z";
    QTest::newRow("after fall back") << "2021-11-07 02:00:00" << true << false << "2021-11-07T07:00:00Z"
                                     << "2021-11-07T07:00:00Z";
}

void TestZoneConverter::dstEdges()
{
    QFETCH(QString, localTime);
    QFETCH(bool, exists);
    QFETCH(bool, ambiguous);
    QFETCH(QString, earliest);
    QFETCH(QString, latest);
    ZoneConverter ny("America/New_York");
    const std::int64_t l = local(localTime.toStdString().c_str());
    QCOMPARE(ny.isAmbiguous(l), ambiguous);
    const auto e = ny.localToUtc(l, AmbiguousTime::Earliest);
    const auto t = ny.localToUtc(l, AmbiguousTime::Latest);
    QCOMPARE(e.has_value(), exists);
    if (!exists) return;
    QCOMPARE(*e, utc(earliest.toStdString().c_str()));
    QCOMPARE(*t, utc(latest.toStdString().c_str()));
    QCOMPARE(ny.utcToLocal(*e), l);
    QCOMPARE(ny.utcToLocal(*t), l);
}

void TestZoneConverter::cachedMatchesFresh()
{
    // One converter walks two years in 7-minute steps (cache hits), a fresh one per
    // sample answers without any cache; they must agree everywhere.
    ZoneConverter walker("America/New_York");
    const std::int64_t start = local("2020-01-01 00:00:00");
    const std::int64_t end = local("2022-01-01 00:00:00");
    int checked = 0;
    for (std::int64_t l = start; l < end; l += 7 * kNsPerMinute) {
        const auto a = walker.localToUtc(l);
        if ((l / kNsPerMinute) % 997 == 0 || (a && walker.utcToLocal(*a) != l)) {
            ZoneConverter fresh("America/New_York");
            QCOMPARE(a, fresh.localToUtc(l));
            ++checked;
        }
        if (a) QCOMPARE(walker.utcToLocal(*a), l);
    }
    QVERIFY(checked > 100);
    QCOMPARE(walker.offsetSeconds(utc("2021-07-01T00:00:00Z")), std::int64_t(-4 * 3600));
    QCOMPARE(walker.offsetSeconds(utc("2021-01-01T00:00:00Z")), std::int64_t(-5 * 3600));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ZoneConverter("Nowhere/Atlantis"));
}

void TestZoneConverter::calendar()
{
    EsCalendar cal;
    // Sunday 18:00 ET opens Monday's session.
    const std::int64_t sundayOpen = utc("2021-01-03T23:00:00Z");
    QCOMPARE(cal.tradingDay(sundayOpen), daysFromCivil(2021, 1, 4));
    QCOMPARE(cal.minutesSinceSessionOpen(sundayOpen), 0.0);
    QCOMPARE(cal.tradingDay(utc("2021-01-04T21:59:00Z")), daysFromCivil(2021, 1, 4));
    QVERIFY(cal.isRegularSession(utc("2021-07-06T13:30:00Z")));
    QVERIFY(!cal.isRegularSession(utc("2021-07-06T20:00:00Z")));
    QCOMPARE(cal.minuteOfDayEt(utc("2021-07-06T13:30:00Z")), 570.0);
}

void TestZoneConverter::dates()
{
    QCOMPARE(daysFromCivil(1970, 1, 1), std::int64_t(0));
    QCOMPARE(weekdayFromDays(daysFromCivil(2021, 1, 3)), 0);
    QCOMPARE(formatDate(daysFromCivil(2020, 2, 29)), std::string("2020-02-29"));
    QCOMPARE(parseDate("20201228"), std::optional<std::int64_t>(daysFromCivil(2020, 12, 28)));
    QVERIFY(!parseDate("2021-02-29"));
    QCOMPARE(formatUtc(1609113600000000000), std::string("2020-12-28T00:00:00Z"));
    QCOMPARE(formatUtc(1609113600000000001), std::string("2020-12-28T00:00:00.000000001Z"));
}

} // namespace tst_zone_converter

FOXHUNT_TEST_APPLESS_MAIN(tst_zone_converter::TestZoneConverter)
#include "tst_zone_converter.moc"
