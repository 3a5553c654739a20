// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/data/cme_holidays.cpp against published CME/NYSE holiday calendars.

#include "engine/data/cme_holidays.h"
#include "engine/data/market_time.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <string>

namespace tst_cme_holidays {

using namespace foxhunt;

namespace {

std::int64_t day(const char* iso)
{
    return *parseDate(iso);
}

} // namespace

class TestCmeHolidays : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void easter_data();
    void easter();
    void knownDates_data();
    void knownDates();
    void wholeYear2022();
    void countsPerYear();
};

void TestCmeHolidays::easter_data()
{
    QTest::addColumn<int>("year");
    QTest::addColumn<QString>("date");
    QTest::newRow("2024") << 2024 << "2024-03-31";
    QTest::newRow("2019, late") << 2019 << "2019-04-21";
    QTest::newRow("2008, early") << 2008 << "2008-03-23";
    QTest::newRow("2000") << 2000 << "2000-04-23";
    QTest::newRow("2038, latest possible") << 2038 << "2038-04-25";
    QTest::newRow("1818, earliest possible") << 1818 << "1818-03-22";
}

void TestCmeHolidays::easter()
{
    QFETCH(int, year);
    QFETCH(QString, date);
    QCOMPARE(formatDate(easterSunday(year)), date.toStdString());
}

void TestCmeHolidays::knownDates_data()
{
    QTest::addColumn<QString>("date");
    QTest::addColumn<QString>("name"); // empty: a trading day
    QTest::newRow("Good Friday 2024") << "2024-03-29"
                                      << "Good Friday";
    QTest::newRow("Thanksgiving 2023") << "2023-11-23"
                                       << "Thanksgiving Day";
    QTest::newRow("Juneteenth 2022, Sunday, observed Monday") << "2022-06-20"
                                                              << "Juneteenth";
    QTest::newRow("Juneteenth 2022 itself") << "2022-06-19"
                                            << "";
    QTest::newRow("Juneteenth 2021, before the rule") << "2021-06-18"
                                                      << "";
    QTest::newRow("Juneteenth 2026, Friday") << "2026-06-19"
                                             << "Juneteenth";
    QTest::newRow("Independence Day 2021, Sunday") << "2021-07-05"
                                                   << "Independence Day";
    QTest::newRow("Independence Day 2026, Saturday") << "2026-07-03"
                                                     << "Independence Day";
    QTest::newRow("Christmas 2021, Saturday") << "2021-12-24"
                                              << "Christmas Day";
    QTest::newRow("New Year 2022, Saturday: not moved back") << "2021-12-31"
                                                             << "";
    QTest::newRow("New Year 2023, Sunday") << "2023-01-02"
                                           << "New Year's Day";
    QTest::newRow("MLK 2026") << "2026-01-19"
                              << "Martin Luther King Jr. Day";
    QTest::newRow("MLK before 1998") << "1997-01-20"
                                     << "";
    QTest::newRow("Presidents' Day 2024") << "2024-02-19"
                                          << "Presidents' Day";
    QTest::newRow("Memorial Day 2024, last Monday") << "2024-05-27"
                                                    << "Memorial Day";
    QTest::newRow("Memorial Day 2021, May 31") << "2021-05-31"
                                               << "Memorial Day";
    QTest::newRow("Labor Day 2025") << "2025-09-01"
                                    << "Labor Day";
    QTest::newRow("Thanksgiving 2017") << "2017-11-23"
                                       << "Thanksgiving Day";
    QTest::newRow("day after Thanksgiving trades") << "2023-11-24"
                                                   << "";
    QTest::newRow("Easter Monday trades") << "2024-04-01"
                                          << "";
}

void TestCmeHolidays::knownDates()
{
    QFETCH(QString, date);
    QFETCH(QString, name);
    const auto h = cmeEquityHoliday(day(date.toStdString().c_str()));
    QCOMPARE(h.has_value(), !name.isEmpty());
    if (h) QCOMPARE(std::string(h->name), name.toStdString());
}

void TestCmeHolidays::wholeYear2022()
{
    const std::vector<std::string> expected = {"2022-01-17", "2022-02-21", "2022-04-15", "2022-05-30", "2022-06-20",
                                               "2022-07-04", "2022-09-05", "2022-11-24", "2022-12-26"};
    std::vector<std::string> got;
    for (const CmeHoliday& h : cmeEquityHolidays(2022)) got.push_back(formatDate(h.day));
    QCOMPARE(got, expected);
}

void TestCmeHolidays::countsPerYear()
{
    for (int year = 1990; year <= 2100; ++year) {
        const auto list = cmeEquityHolidays(year);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const int w = weekdayFromDays(list[i].day);
            QVERIFY2(w >= 1 && w <= 5, formatDate(list[i].day).c_str());
            if (i) QVERIFY(list[i].day > list[i - 1].day);
            int y = 0;
            unsigned m = 0, d = 0;
            civilFromDays(list[i].day, y, m, d);
            QCOMPARE(y, year);
        }
        const std::size_t missing = (weekdayFromDays(daysFromCivil(year, 1, 1)) == 6 ? 1 : 0) + (year < 1998 ? 1 : 0) +
                                    (year < 2022 ? 1 : 0);
        QCOMPARE(list.size(), 10 - missing);
    }
}

} // namespace tst_cme_holidays

FOXHUNT_TEST_APPLESS_MAIN(tst_cme_holidays::TestCmeHolidays)
#include "tst_cme_holidays.moc"
