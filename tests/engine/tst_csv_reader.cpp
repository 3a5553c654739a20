// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/data/csv_reader.cpp and the CSV paths of engine/data/reader.cpp.

#include "engine/data/csv_reader.h"
#include "engine/data/import_error.h"
#include "engine/data/market_time.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <filesystem>
#include <limits>
#include <string>

namespace tst_csv_reader {

using namespace foxhunt;

namespace {

std::int64_t utc(const char* iso)
{
    const auto ts = parseTextTimestamp(iso);
    if (!ts || !ts->exact) throw std::runtime_error(std::string("bad test timestamp ") + iso);
    return ts->ns;
}

std::int64_t px(const char* text)
{
    return *parseFixedPoint(text);
}

} // namespace

class TestCsvReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realOneMinute();
    void realFiveMinuteIb();
    void fixedPoint_data();
    void fixedPoint();
    void timestampFormats_data();
    void timestampFormats();
    void separateDateAndTime();
    void fallBackHour();
    void springForwardGapRejected();
    void malformed_data();
    void malformed();
    void lineEndingsAndExtras();
    void symbolColumn();
    void doubledQuotes();
    void fallbackLayoutsInDateTimeColumns();
    void overrides();
    void outOfRangeWithFormatAndColumns();
    void databentoCsvUndefinedPrice();
    void databentoCsv_data();
    void databentoCsv();
    void detection();
};

void TestCsvReader::realOneMinute()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv");
    const ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv");
    QCOMPARE(toString(f.format), toString(FileFormat::Csv));
    QCOMPARE(f.bars.size(), std::size_t(15214));
    QCOMPARE(f.lines.front(), std::uint64_t(2));
    QCOMPARE(f.lines.back(), std::uint64_t(15215));
    // 2026-01-25 18:00 ET (EST) = 23:00 UTC; last 2026-02-09 18:33 ET.
    QCOMPARE(f.bars.front().tsEvent, utc("2026-01-25T23:00:00Z"));
    QCOMPARE(f.bars.back().tsEvent, utc("2026-02-09T23:33:00Z"));
    QCOMPARE(f.bars.front().open, px("6904"));
    QCOMPARE(f.bars.front().low, px("6879"));
    QCOMPARE(f.bars.front().volume, std::uint64_t(4145));
    QCOMPARE(f.bars[1].low, px("6884.75"));
    QCOMPARE(f.defaultSymbol, std::string("ES"));
    QVERIFY(f.symbols.empty());
    QCOMPARE(f.intervalNs, std::int64_t(0));
}

void TestCsvReader::realFiveMinuteIb()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    const ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    QCOMPARE(toString(f.format), toString(FileFormat::Csv));
    QCOMPARE(f.bars.size(), std::size_t(25033));
    QCOMPARE(f.lines.back(), std::uint64_t(25034));
    // 2016-09-09 09:30 EDT = 13:30 UTC; 2017-11-09 16:55 EST = 21:55 UTC.
    QCOMPARE(f.bars.front().tsEvent, utc("2016-09-09T13:30:00Z"));
    QCOMPARE(f.bars.back().tsEvent, utc("2017-11-09T21:55:00Z"));
    QCOMPARE(f.bars.front().open, px("2157.25"));
    QCOMPARE(f.bars.front().high, px("2158"));
    QCOMPARE(f.bars.front().volume, std::uint64_t(71545));
}

void TestCsvReader::fixedPoint_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("value");
    QTest::newRow("integer") << "2427" << true << qint64(2'427'000'000'000);
    QTest::newRow("one decimal") << "6904.0" << true << qint64(6'904'000'000'000);
    QTest::newRow("quarter") << "6884.75" << true << qint64(6'884'750'000'000);
    QTest::newRow("three decimals") << "2424.85" << true << qint64(2'424'850'000'000);
    QTest::newRow("exact, no double rounding") << "0.1" << true << qint64(100'000'000);
    QTest::newRow("nine decimals") << "3702.750000001" << true << qint64(3'702'750'000'001);
    QTest::newRow("tenth decimal rounds up") << "1.0000000005" << true << qint64(1'000'000'001);
    QTest::newRow("tenth decimal rounds down") << "1.0000000004" << true << qint64(1'000'000'000);
    QTest::newRow("negative") << "-0.25" << true << qint64(-250'000'000);
    QTest::newRow("leading dot") << ".5" << true << qint64(500'000'000);
    QTest::newRow("trailing dot") << "5." << true << qint64(5'000'000'000);
    QTest::newRow("largest") << "9223372036.854775807" << true << qint64(9'223'372'036'854'775'807);
    QTest::newRow("overflow") << "9223372036.854775808" << false << qint64(0);
    QTest::newRow("too many digits") << "123456789012" << false << qint64(0);
    QTest::newRow("empty") << "" << false << qint64(0);
    QTest::newRow("letters") << "abc" << false << qint64(0);
    QTest::newRow("exponent") << "1e3" << false << qint64(0);
    QTest::newRow("two dots") << "1.2.3" << false << qint64(0);
    QTest::newRow("sign only") << "-" << false << qint64(0);
}

void TestCsvReader::fixedPoint()
{
    QFETCH(QString, text);
    QFETCH(bool, ok);
    QFETCH(qint64, value);
    const std::string s = text.toStdString();
    const auto v = parseFixedPoint(s);
    QCOMPARE(v.has_value(), ok);
    if (ok) QCOMPARE(*v, std::int64_t(value));
}

void TestCsvReader::timestampFormats_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expectedUtc");
    QTest::newRow("naive seconds, EST") << "2021-01-04 09:30:00"
                                        << "2021-01-04T14:30:00Z";
    QTest::newRow("naive seconds, EDT") << "2021-07-06 09:30:00"
                                        << "2021-07-06T13:30:00Z";
    QTest::newRow("naive without seconds") << "2021-01-04 09:30"
                                           << "2021-01-04T14:30:00Z";
    QTest::newRow("naive fraction") << "2021-01-04 09:30:00.250"
                                    << "2021-01-04T14:30:00.25Z";
    QTest::newRow("ISO T naive") << "2021-01-04T09:30:00"
                                 << "2021-01-04T14:30:00Z";
    QTest::newRow("ISO Z") << "2021-01-04T09:30:00Z"
                           << "2021-01-04T09:30:00Z";
    QTest::newRow("ISO Z nanos") << "2020-12-28T00:00:00.000000001Z"
                                 << "2020-12-28T00:00:00.000000001Z";
    QTest::newRow("ISO offset") << "2021-01-04T09:30:00-05:00"
                                << "2021-01-04T14:30:00Z";
    QTest::newRow("ISO offset no colon") << "2021-01-04T09:30:00+0100"
                                         << "2021-01-04T08:30:00Z";
    QTest::newRow("IB two spaces") << "20160909  09:30:00"
                                   << "2016-09-09T13:30:00Z";
    QTest::newRow("IB one space") << "20160909 09:30:00"
                                  << "2016-09-09T13:30:00Z";
    QTest::newRow("US date") << "01/04/2021"
                             << "2021-01-04T05:00:00Z";
    QTest::newRow("US date time") << "01/04/2021 09:30"
                                  << "2021-01-04T14:30:00Z";
    QTest::newRow("US date time seconds") << "1/4/2021 09:30:15"
                                          << "2021-01-04T14:30:15Z";
    QTest::newRow("US date 12h clock") << "01/04/2021 01:30:00 PM"
                                       << "2021-01-04T18:30:00Z";
    QTest::newRow("bare ISO date") << "2021-07-06"
                                   << "2021-07-06T04:00:00Z";
    QTest::newRow("epoch seconds") << "1609459200"
                                   << "2021-01-01T00:00:00Z";
    QTest::newRow("epoch ms") << "1609459200000"
                              << "2021-01-01T00:00:00Z";
    QTest::newRow("epoch ns") << "1609459200000000000"
                              << "2021-01-01T00:00:00Z";
    // Issue 21.6: layouts outside the fast path go to date::parse instead of failing.
    QTest::newRow("space before offset") << "2021-01-04 09:30:00 +01:00"
                                         << "2021-01-04T08:30:00Z";
    QTest::newRow("T, fraction, space, offset") << "2021-01-04T09:30:00.5 -0500"
                                                << "2021-01-04T14:30:00.5Z";
    QTest::newRow("ISO minutes, space, offset") << "2021-01-04 09:30 +01:00"
                                                << "2021-01-04T08:30:00Z";
    QTest::newRow("UTC abbreviation") << "2021-01-04 09:30:00 UTC"
                                      << "2021-01-04T09:30:00Z";
    QTest::newRow("space Z") << "2021-01-04T09:30:00 Z"
                             << "2021-01-04T09:30:00Z";
    QTest::newRow("ISO basic") << "20210104T093000"
                               << "2021-01-04T14:30:00Z";
    QTest::newRow("European date time") << "04.01.2021 09:30"
                                        << "2021-01-04T14:30:00Z";
    QTest::newRow("European date") << "06.07.2021"
                                   << "2021-07-06T04:00:00Z";
    QTest::newRow("US two-digit year") << "01/04/21 09:30"
                                       << "2021-01-04T14:30:00Z";
    QTest::newRow("day-month name") << "04-Jan-2021 09:30:00"
                                    << "2021-01-04T14:30:00Z";
    QTest::newRow("day month name") << "4 Jan 2021 09:30:00"
                                    << "2021-01-04T14:30:00Z";
    QTest::newRow("ctime") << "Mon Jan  4 09:30:00 2021"
                           << "2021-01-04T14:30:00Z";
}

void TestCsvReader::timestampFormats()
{
    QFETCH(QString, text);
    QFETCH(QString, expectedUtc);
    const std::string csv = "timestamp,open,high,low,close,volume\n" + text.toStdString() + ",1,2,0.5,1.5,10\n";
    const ParsedFile f = readBarBuffer("t.csv", csv);
    QCOMPARE(f.bars.size(), std::size_t(1));
    QCOMPARE(f.bars[0].tsEvent, utc(expectedUtc.toStdString().c_str()));
    QCOMPARE(f.bars[0].low, std::int64_t(500'000'000));
}

void TestCsvReader::separateDateAndTime()
{
    const ParsedFile f = readBarBuffer("dt.csv", "Date,Time,Open,High,Low,Close,Volume\n"
                                                 "01/04/2021,09:30,1,2,1,2,5\n"
                                                 "01/04/2021,09:31:00,1,2,1,2,5\n");
    QCOMPARE(f.bars.size(), std::size_t(2));
    QCOMPARE(f.bars[0].tsEvent, utc("2021-01-04T14:30:00Z"));
    QCOMPARE(f.bars[1].tsEvent, utc("2021-01-04T14:31:00Z"));

    const ParsedFile daily = readBarBuffer("d.csv", "date,open,high,low,close,volume\n2021-07-06,1,2,1,2,5\n");
    QCOMPARE(daily.bars[0].tsEvent, utc("2021-07-06T04:00:00Z"));
}

void TestCsvReader::fallBackHour()
{
    // 2020-11-01: 01:00-01:59 ET occurs twice; the second pass must move forward.
    const ParsedFile f = readBarBuffer("fb.csv", "timestamp,open,high,low,close,volume\n"
                                                 "2020-11-01 00:30:00,1,1,1,1,1\n"
                                                 "2020-11-01 01:00:00,1,1,1,1,1\n"
                                                 "2020-11-01 01:30:00,1,1,1,1,1\n"
                                                 "2020-11-01 01:00:00,1,1,1,1,1\n"
                                                 "2020-11-01 01:30:00,1,1,1,1,1\n"
                                                 "2020-11-01 02:00:00,1,1,1,1,1\n");
    const char* expected[] = {"2020-11-01T04:30:00Z", "2020-11-01T05:00:00Z", "2020-11-01T05:30:00Z",
                              "2020-11-01T06:00:00Z", "2020-11-01T06:30:00Z", "2020-11-01T07:00:00Z"};
    QCOMPARE(f.bars.size(), std::size_t(6));
    for (std::size_t i = 0; i < 6; ++i) QCOMPARE(f.bars[i].tsEvent, utc(expected[i]));

    // A lone ambiguous time takes the earlier (daylight) offset.
    const ParsedFile lone = readBarBuffer("lone.csv", "timestamp,open,high,low,close,volume\n"
                                                      "2020-11-01 01:15:00,1,1,1,1,1\n");
    QCOMPARE(lone.bars[0].tsEvent, utc("2020-11-01T05:15:00Z"));
}

void TestCsvReader::springForwardGapRejected()
{
    try {
        readBarBuffer("sf.csv", "timestamp,open,high,low,close,volume\n"
                                "2021-03-14 01:59:00,1,1,1,1,1\n"
                                "2021-03-14 02:30:00,1,1,1,1,1\n");
        QFAIL("a nonexistent local time must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(3));
        QVERIFY2(e.reason().find("does not exist") != std::string::npos, e.what());
    }
    // The same wall time is fine in a zone without DST.
    ReadOptions utcZone;
    utcZone.timeZone = "UTC";
    const ParsedFile f = readBarBuffer(
        "sf.csv", "timestamp,open,high,low,close,volume\n2021-03-14 02:30:00,1,1,1,1,1\n", utcZone);
    QCOMPARE(f.bars[0].tsEvent, utc("2021-03-14T02:30:00Z"));
}

void TestCsvReader::doubledQuotes()
{
    // Issue 21.6: RFC 4180's "" inside a quoted field is one quote; the field used to end there.
    const ParsedFile f = readBarBuffer("dq.csv", "timestamp,symbol,open,high,low,close,volume\n"
                                                 "2021-01-04 09:30:00,\"ES \"\"front\"\", H1\",1,2,0.5,1.5,10\n"
                                                 "2021-01-04 09:31:00,\"\"\"\",1,2,0.5,1.5,11\n"
                                                 "2021-01-04 09:32:00,\"a\"\"\"\"b\"\"\",1,2,0.5,1.5,12\n");
    QCOMPARE(f.bars.size(), std::size_t(3));
    QCOMPARE(f.symbols.at(f.bars[0].instrumentId), std::string("ES \"front\", H1"));
    QCOMPARE(f.symbols.at(f.bars[1].instrumentId), std::string("\""));
    QCOMPARE(f.symbols.at(f.bars[2].instrumentId), std::string("a\"\"b\""));
    QCOMPARE(f.bars[0].volume, std::uint64_t(10));
    QCOMPARE(f.bars[2].volume, std::uint64_t(12));
    QCOMPARE(f.bars[2].close, px("1.5"));

    try {
        readBarBuffer("dq.csv", "timestamp,symbol,open,high,low,close,volume\n"
                                "2021-01-04 09:30:00,\"ES \"\"front,1,2,0.5,1.5,10\n");
        QFAIL("an unterminated quote was accepted");
    } catch (const ImportError& e) {
        QVERIFY2(std::string(e.what()).find("dq.csv:2: unterminated quote") != std::string::npos, e.what());
    }
}

void TestCsvReader::fallbackLayoutsInDateTimeColumns()
{
    const ParsedFile f = readBarBuffer("eu.csv", "Date,Time,Open,High,Low,Close,Volume\n"
                                                 "04.01.2021,09:30,1,2,1,2,5\n"
                                                 "04-Jan-2021,09:31:00,1,2,1,2,5\n");
    QCOMPARE(f.bars.size(), std::size_t(2));
    QCOMPARE(f.bars[0].tsEvent, utc("2021-01-04T14:30:00Z"));
    QCOMPARE(f.bars[1].tsEvent, utc("2021-01-04T14:31:00Z"));
    const ParsedFile daily = readBarBuffer("d.csv", "date,open,high,low,close,volume\n06.07.2021,1,2,1,2,5\n");
    QCOMPARE(daily.bars[0].tsEvent, utc("2021-07-06T04:00:00Z"));
    QVERIFY(parseTextTimestamp("2021-01-04 09:30:00 +01:00"));
    QCOMPARE(parseTextTimestamp("2021-01-04 09:30:00 +01:00")->ns, utc("2021-01-04T08:30:00Z"));
    QVERIFY(parseTextTimestamp("2021-01-04 09:30:00 +01:00")->exact);
    QVERIFY(!parseTextTimestamp("04.01.2021 09:30")->exact);
    QVERIFY(!parseTextTimestamp("yesterday"));
}

void TestCsvReader::malformed_data()
{
    QTest::addColumn<QString>("csv");
    QTest::addColumn<quint64>("line");
    QTest::addColumn<QString>("reason");
    const QString header = "timestamp,open,high,low,close,volume\n";
    const QString good = "2021-01-04 09:30:00,1,2,0.5,1.5,10\n";
    QTest::newRow("non-numeric price") << header + good + "2021-01-04 09:31:00,1,abc,0.5,1.5,10\n"
                                       << quint64(3) << "bad high price 'abc'";
    QTest::newRow("missing column") << header + good + good + "2021-01-04 09:32:00,1,2,0.5\n"
                                    << quint64(4) << "missing column 'close'";
    QTest::newRow("empty price") << header + "2021-01-04 09:30:00,,2,0.5,1.5,10\n" << quint64(2) << "bad open price ''";
    QTest::newRow("bad timestamp") << header + "2021-13-04 09:30:00,1,2,0.5,1.5,10\n" << quint64(2) << "bad timestamp";
    QTest::newRow("no timestamp at all") << header + good + "sometime soon,1,2,0.5,1.5,10\n"
                                         << quint64(3) << "bad timestamp 'sometime soon'";
    QTest::newRow("EST abbreviation is a guess") << header + "2021-01-04 09:30:00 EST,1,2,0.5,1.5,10\n"
                                                 << quint64(2) << "bad timestamp";
    QTest::newRow("31 February, day-month name") << header + "31-Feb-2021 09:30:00,1,2,0.5,1.5,10\n"
                                                 << quint64(2) << "bad timestamp";
    QTest::newRow("bad volume") << header + "2021-01-04 09:30:00,1,2,0.5,1.5,ten\n" << quint64(2) << "bad volume 'ten'";
    QTest::newRow("fractional volume") << header + "2021-01-04 09:30:00,1,2,0.5,1.5,1.5\n"
                                       << quint64(2) << "bad volume '1.5'";
    // Issue 18.5 and 18.12: values past what int64 holds used to wrap (2300 became 1715, 9999
    // "1816-03-30 ... out of order"), epoch 0 and 1700 were stored, volumes past int64 went negative.
    const QString range = "is outside the accepted range (1970-01-02 to 2262-03-31 UTC)";
    QTest::newRow("year 2300") << header + good + "2300-01-04 09:31:00,1,2,0.5,1.5,10\n"
                               << quint64(3) << "timestamp '2300-01-04 09:31:00' " + range;
    QTest::newRow("year 9999") << header + good + "9999-12-31 23:59:00,1,2,0.5,1.5,10\n"
                               << quint64(3) << "timestamp '9999-12-31 23:59:00' " + range;
    QTest::newRow("year 9999 UTC") << header + good + "9999-12-31T23:59:00Z,1,2,0.5,1.5,10\n" << quint64(3) << range;
    QTest::newRow("2262-04-11, naive") << header + good + "2262-04-11 20:00:00,1,2,0.5,1.5,10\n" << quint64(3) << range;
    QTest::newRow("epoch 0 ISO") << header + "1970-01-01T00:00:00Z,1,2,0.5,1.5,10\n" << quint64(2) << range;
    QTest::newRow("epoch 0 seconds") << header + "0000000000,1,2,0.5,1.5,10\n" << quint64(2) << range;
    QTest::newRow("epoch ms after 2262") << header + "9999999999999,1,2,0.5,1.5,10\n" << quint64(2) << range;
    QTest::newRow("year 1700") << header + "1700-01-04 09:30:00,1,2,0.5,1.5,10\n"
                               << quint64(2) << "timestamp '1700-01-04 09:30:00' " + range;
    QTest::newRow("volume 2^63") << header + good + "2021-01-04 09:31:00,1,2,0.5,1.5,9223372036854775808\n"
                                 << quint64(3) << "volume '9223372036854775808' cannot be real";
    QTest::newRow("volume of 20 digits") << header + "2021-01-04 09:30:00,1,2,0.5,1.5,99999999999999999999\n"
                                         << quint64(2) << "volume '99999999999999999999' cannot be real";
    // Issue 18.5: rows with more fields than the header, even a 10 MB seventh one, were accepted.
    QTest::newRow("extra field") << header + good + "2021-01-04 09:31:00,1,2,0.5,1.5,10,x\n"
                                 << quint64(3) << "row has 7 fields, the header names 6";
    QTest::newRow("extra empty fields") << header + good + good + "2021-01-04 09:32:00,1,2,0.5,1.5,10,,\n"
                                        << quint64(4) << "row has 8 fields, the header names 6";
    QTest::newRow("10 MB seventh field") << header + good + "2021-01-04 09:31:00,1,2,0.5,1.5,10," +
                                                QString(10 << 20, 'x') + "\n"
                                         << quint64(3) << "line of 10485795 bytes is longer than the 65536 allowed";
    QTest::newRow("long price field") << header + "2021-01-04 09:30:00,1" + QString(70000, '0') + ",2,0.5,1.5,10\n"
                                      << quint64(2) << "longer than the 65536 allowed";
    QTest::newRow("long header") << "timestamp,open,high,low,close,volume," + QString(70000, 'h') + "\n" + good
                                 << quint64(1) << "longer than the 65536 allowed";
    QTest::newRow("no close column") << "timestamp,open,high,low,volume\n" + good << quint64(1) << "no close column";
    QTest::newRow("no time column") << "when,open,high,low,close,volume\n" + good << quint64(1)
                                    << "no timestamp column";
}

void TestCsvReader::malformed()
{
    QFETCH(QString, csv);
    QFETCH(quint64, line);
    QFETCH(QString, reason);
    ReadOptions opts;
    opts.format = FileFormat::Csv;
    try {
        readBarBuffer("bad.csv", csv.toStdString(), opts);
        QFAIL("malformed input must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.file(), std::string("bad.csv"));
        QCOMPARE(e.line(), std::uint64_t(line));
        QVERIFY2(e.reason().find(reason.toStdString()) != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).rfind("bad.csv:" + std::to_string(line) + ": ", 0) == 0, e.what());
    }
}

void TestCsvReader::lineEndingsAndExtras()
{
    const ParsedFile f = readBarBuffer("crlf.csv", "\xEF\xBB\xBF"
                                                   "Date/Time,Open,High,Low,Close,Volume,Count,WAP\r\n"
                                                   "20160909  09:30:00,2157.25,2158,2155.5,2156,71545,7487,2156.6\r\n"
                                                   "20160909  09:35:00,2156,2156.5,2154.5,2155,38523,4796,2155.375\r\n"
                                                   "\r\n"
                                                   "\r\n");
    QCOMPARE(f.bars.size(), std::size_t(2));
    QCOMPARE(f.lines, (std::vector<std::uint64_t>{2, 3}));
    QCOMPARE(f.bars[1].close, px("2155"));
    QCOMPARE(f.bars[1].volume, std::uint64_t(38523));

    // A quoted delimiter in a column the reader does not use is one field, not two.
    const ParsedFile quoted = readBarBuffer("q.csv", "timestamp,open,high,low,close,volume,note\n"
                                                     "2021-01-04 09:30:00,1,2,0.5,1.5,10,\"a,b\"\n"
                                                     "2021-01-04 09:31:00,1,2,0.5,1.5,10,\n");
    QCOMPARE(quoted.bars.size(), std::size_t(2));

    const ParsedFile semi = readBarBuffer("semi.csv", "TIMESTAMP;OPEN;HIGH;LOW;CLOSE;VOLUME\n"
                                                      "2021-01-04 09:30:00;1;2;0.5;1.5;10");
    QCOMPARE(semi.bars.size(), std::size_t(1));
    QCOMPARE(semi.bars[0].close, px("1.5"));
}

void TestCsvReader::symbolColumn()
{
    const ParsedFile f = readBarBuffer("sym.csv", "timestamp,symbol,open,high,low,close,volume\n"
                                                  "2021-01-04 09:30:00,ESH1,1,2,1,2,5\n"
                                                  "2021-01-04 09:30:00,ESM1,1,2,1,2,5\n"
                                                  "2021-01-04 09:31:00,ESH1,1,2,1,2,5\n");
    QCOMPARE(f.bars.size(), std::size_t(3));
    QCOMPARE(f.symbols.size(), std::size_t(2));
    QCOMPARE(f.symbols.at(f.bars[0].instrumentId), std::string("ESH1"));
    QCOMPARE(f.symbols.at(f.bars[1].instrumentId), std::string("ESM1"));
    QCOMPARE(f.bars[2].instrumentId, f.bars[0].instrumentId);
}

void TestCsvReader::overrides()
{
    ReadOptions opts;
    opts.csv.timestampColumn = "Zeit";
    opts.csv.openColumn = "Eroeffnung";
    opts.csv.highColumn = "Hoch";
    opts.csv.lowColumn = "Tief";
    opts.csv.closeColumn = "Schluss";
    opts.csv.volumeColumn = "Umsatz";
    opts.csv.timestampFormat = "%d.%m.%Y %H:%M";
    opts.csv.delimiter = '|';
    opts.timeZone = "Europe/Berlin";
    opts.format = FileFormat::Csv;
    const ParsedFile f = readBarBuffer("de.csv",
                                       "Zeit|Eroeffnung|Hoch|Tief|Schluss|Umsatz\n04.01.2021 15:30|1|2|1|2|7\n", opts);
    QCOMPARE(f.bars.size(), std::size_t(1));
    QCOMPARE(f.bars[0].tsEvent, utc("2021-01-04T14:30:00Z"));
    QCOMPARE(f.bars[0].volume, std::uint64_t(7));

    ReadOptions split;
    split.csv.dateColumn = "Tag";
    split.csv.timeColumn = "Uhrzeit";
    split.csv.delimiter = '\t';
    const ParsedFile g = readBarBuffer("split.tsv",
                                       "Tag\tUhrzeit\topen\thigh\tlow\tclose\tvolume\n"
                                       "2021-07-06\t09:30:00\t1\t2\t1\t2\t3\n",
                                       split);
    QCOMPARE(g.bars.size(), std::size_t(1));
    QCOMPARE(g.bars[0].tsEvent, utc("2021-07-06T13:30:00Z"));

    opts.csv.closeColumn = "Nope";
    QVERIFY_THROWS_EXCEPTION(ImportError, readBarBuffer("de.csv", "Zeit|Eroeffnung|Hoch|Tief|Schluss|Umsatz\n", opts));
}

void TestCsvReader::outOfRangeWithFormatAndColumns()
{
    ReadOptions opts;
    opts.csv.timestampFormat = "%Y%m%d %H:%M:%S";
    try {
        readBarBuffer("f.csv", "timestamp,open,high,low,close,volume\n23000104 09:30:00,1,2,0.5,1.5,10\n", opts);
        QFAIL("a year-2300 row must be refused");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(2));
        QVERIFY2(e.reason().find("'23000104 09:30:00' is outside the accepted range") != std::string::npos, e.what());
    }
    try {
        readBarBuffer("dt.csv",
                      "Date,Time,Open,High,Low,Close,Volume\n01/04/2021,09:30,1,2,1,2,5\n01/04/2300,09:31,1,2,1,2,5\n");
        QFAIL("a year-2300 row must be refused");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(3));
        QVERIFY2(e.reason().find("'01/04/2300 09:31' is outside the accepted range") != std::string::npos, e.what());
    }
    // The public parser saturates instead of wrapping.
    QCOMPARE(parseTextTimestamp("2300-01-01T00:00:00Z")->ns, std::numeric_limits<std::int64_t>::max());
    QCOMPARE(parseTextTimestamp("1000-01-01 00:00")->ns, std::numeric_limits<std::int64_t>::min());
}

void TestCsvReader::databentoCsvUndefinedPrice()
{
    // Databento writes its undefined price as INT64_MAX in raw CSV; validation names it.
    ParsedFile f = readBarBuffer("u.csv",
                                 "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol\n"
                                 "1609113600000000000,33,1,5482,3702750000000,9223372036854775807,"
                                 "3702500000000,3704750000000,306,ESH1\n");
    try {
        validateBars(f);
        QFAIL("Databento's undefined price must be refused");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(2));
        QVERIFY2(e.reason().find("undefined high price") != std::string::npos, e.what());
    }
}

void TestCsvReader::databentoCsv_data()
{
    QTest::addColumn<QString>("csv");
    const QString header = "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol\n";
    QTest::newRow("raw")
        << header + "1609113600000000000,33,1,5482,3702750000000,3704750000000,3702500000000,3704750000000,306,ESH1\n"
                    "1609113660000000000,33,1,5482,3704750000000,3705000000000,3704000000000,3704000000000,214,ESH1\n";
    QTest::newRow("pretty")
        << header + "2020-12-28T00:00:00.000000000Z,33,1,5482,3702.750000000,3704.750000000,3702.500000000,"
                    "3704.750000000,306,ESH1\n"
                    "2020-12-28T00:01:00.000000000Z,33,1,5482,3704.750000000,3705.000000000,3704.000000000,"
                    "3704.000000000,214,ESH1\n";
}

void TestCsvReader::databentoCsv()
{
    QFETCH(QString, csv);
    const ParsedFile f = readBarBuffer("db.csv", csv.toStdString());
    QCOMPARE(toString(f.format), toString(FileFormat::DatabentoCsv));
    QCOMPARE(f.bars.size(), std::size_t(2));
    QCOMPARE(f.intervalNs, kNsPerMinute);
    QCOMPARE(f.symbols.at(5482), std::string("ESH1"));
    QCOMPARE(f.bars[0].instrumentId, std::uint32_t(5482));
    QCOMPARE(f.bars[0].tsEvent, std::int64_t(1609113600000000000));
    QCOMPARE(f.bars[0].open, px("3702.75"));
    QCOMPARE(f.bars[0].low, px("3702.5"));
    QCOMPARE(f.bars[1].high, px("3705"));
    QCOMPARE(f.bars[1].volume, std::uint64_t(214));
}

void TestCsvReader::detection()
{
    QCOMPARE(toString(detectFormat("a", "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume\n")),
             toString(FileFormat::DatabentoCsv));
    QCOMPARE(toString(detectFormat("b", "timestamp,open,high,low,close,volume\n")), toString(FileFormat::Csv));
    QCOMPARE(toString(detectFormat("c", "Date/Time,Open,High,Low,Close,Volume,Count,WAP,HasGaps\n")),
             toString(FileFormat::Csv));
    QCOMPARE(toString(detectFormat("d", "Date,Time,Open,High,Low,Close,Volume\n")), toString(FileFormat::Csv));
    QVERIFY_THROWS_EXCEPTION(ImportError, detectFormat("e", "hello,world\n1,2\n"));
    QVERIFY_THROWS_EXCEPTION(ImportError, detectFormat("f", ""));
}

} // namespace tst_csv_reader

FOXHUNT_TEST_APPLESS_MAIN(tst_csv_reader::TestCsvReader)
#include "tst_csv_reader.moc"
