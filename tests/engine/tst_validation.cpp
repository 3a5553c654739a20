// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/data/validation.cpp on the real files and on small planted cases.

#include "engine/data/csv_reader.h"
#include "engine/data/import_error.h"
#include "engine/data/market_time.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

namespace tst_validation {

using namespace foxhunt;

namespace {

std::int64_t utc(const char* iso)
{
    return parseTextTimestamp(iso)->ns;
}

Bar bar(std::int64_t ts, double o, double h, double l, double c, std::uint64_t v = 1, std::uint32_t id = 0)
{
    return Bar{ts, fromPoints(o), fromPoints(h), fromPoints(l), fromPoints(c), v, id};
}

ParsedFile fileOf(std::vector<Bar> bars)
{
    ParsedFile f;
    f.path = "mem.csv";
    f.bars = std::move(bars);
    for (std::size_t i = 0; i < f.bars.size(); ++i) f.lines.push_back(i + 2);
    return f;
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realOneMinute();
    void realFiveMinuteDuplicates();
    void realDbn();
    void rejects_data();
    void rejects();
    void duplicateRuns();
    void instrumentsInterleave();
    void offGridIsWarning();
    void refusesUnrealValues_data();
    void refusesUnrealValues();
    void implausibleDatesWarn();
    void priceJumpsWarn();
    void gapKinds_data();
    void gapKinds();
    void inferInterval();
    void dailySeries();
    void realDailyFromFiveMinute();
};

void TestValidation::realOneMinute()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv");
    ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv");
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsIn, std::uint64_t(15214));
    QCOMPARE(r.rowsKept, std::uint64_t(15214));
    QCOMPARE(r.duplicatesDropped, std::uint64_t(0));
    QVERIFY(r.duplicateRuns.empty());
    QCOMPARE(r.intervalNs, kNsPerMinute);
    QCOMPARE(r.dailyBreaks, std::uint64_t(9));
    QCOMPARE(r.weekends, std::uint64_t(2));
    QCOMPARE(r.otherGaps, std::uint64_t(0));
    QCOMPARE(r.gaps.size(), std::size_t(11));
    QCOMPARE(r.offGridPrices, std::uint64_t(0));
    for (const Gap& g : r.gaps) {
        const std::int64_t minutes = (g.toTs - g.fromTs) / kNsPerMinute;
        QCOMPARE(minutes, g.kind == Gap::Kind::DailyBreak ? std::int64_t(61) : std::int64_t(2941));
    }
    QCOMPARE(f.bars.front().tsEvent, utc("2026-01-25T23:00:00Z"));
    QCOMPARE(f.bars.back().tsEvent, utc("2026-02-09T23:33:00Z"));
    QVERIFY(!r.warnings.empty());
    QVERIFY(r.warnings.back().find("9 daily breaks, 2 weekends") != std::string::npos);
}

void TestValidation::realFiveMinuteDuplicates()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsIn, std::uint64_t(25033));
    QCOMPARE(r.duplicatesDropped, std::uint64_t(87));
    QCOMPARE(r.rowsKept, std::uint64_t(24946));
    QCOMPARE(f.bars.size(), std::size_t(24946));
    QCOMPARE(f.lines.size(), std::size_t(24946));
    QCOMPARE(r.duplicateRuns.size(), std::size_t(1));
    QCOMPARE(r.duplicateRuns[0].firstLine, std::uint64_t(15818));
    QCOMPARE(r.duplicateRuns[0].lastLine, std::uint64_t(15904));
    QCOMPARE(r.duplicateRuns[0].originalLine, std::uint64_t(15731));
    QCOMPARE(r.duplicateRuns[0].rows, std::uint64_t(87));
    QCOMPARE(r.intervalNs, 5 * kNsPerMinute);
    // RTH only: every weekend, and the nine exchange holidays in the file's span (Thanksgiving
    // 2016 from Wednesday's close to Friday's open, 2017-07-03's early close to July 5th...),
    // which used to count as "other" like the overnight breaks still do.
    QCOMPARE(r.weekends, std::uint64_t(53));
    QCOMPARE(r.holidays, std::uint64_t(9));
    // Off-grid decimals such as 2424.85 occur only in the WAP column; every OHLC price is on the grid.
    QCOMPARE(r.offGridPrices, std::uint64_t(0));
    QVERIFY(r.warnings.front().find("87 exact duplicate rows dropped: lines 15818-15904 repeat from line 15731") !=
            std::string::npos);
    QCOMPARE(f.bars.front().tsEvent, utc("2016-09-09T13:30:00Z"));
    QCOMPARE(f.bars.back().tsEvent, utc("2017-11-09T21:55:00Z"));
    // The kept line after the dropped run is the first line past it.
    const auto it = std::find(f.lines.begin(), f.lines.end(), std::uint64_t(15817));
    QVERIFY(it != f.lines.end());
    QCOMPARE(*(it + 1), std::uint64_t(15905));

    ZoneConverter ny("America/New_York");
    std::set<std::int64_t> dates;
    for (const Bar& b : f.bars) dates.insert(ny.utcToLocal(b.tsEvent) / kNsPerDay);
    QCOMPARE(dates.size(), std::size_t(290));
    for (std::size_t i = 1; i < f.bars.size(); ++i) QVERIFY(f.bars[i].tsEvent > f.bars[i - 1].tsEvent);
}

void TestValidation::realDbn()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst");
    ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst");
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsKept, std::uint64_t(4));
    QCOMPARE(r.intervalNs, kNsPerMinute);
    QVERIFY(r.gaps.empty());
    QCOMPARE(r.offGridPrices, std::uint64_t(0));
    QCOMPARE(f.bars[0].open, std::int64_t(3'702'750'000'000));
}

void TestValidation::rejects_data()
{
    QTest::addColumn<QString>("csv");
    QTest::addColumn<quint64>("line");
    QTest::addColumn<QString>("reason");
    const QString h = "timestamp,open,high,low,close,volume\n";
    QTest::newRow("conflicting duplicate") << h + "2021-01-04 09:30,10,11,9,10,5\n2021-01-04 09:31,10,11,9,10,5\n"
                                                  "2021-01-04 09:30,10,11,9,10.25,5\n"
                                           << quint64(4) << "conflicting duplicate of line 2";
    QTest::newRow("out of order") << h + "2021-01-04 09:30,10,11,9,10,5\n2021-01-04 09:32,10,11,9,10,5\n"
                                         "2021-01-04 09:31,10,11,9,10,5\n"
                                  << quint64(4) << "out of order";
    QTest::newRow("high below open") << h + "2021-01-04 09:30,10,9.75,9,9.5,5\n" << quint64(2) << "high 9.75 is below";
    QTest::newRow("high below close") << h + "2021-01-04 09:30,10,10,9,10.5,5\n" << quint64(2) << "high 10 is below";
    QTest::newRow("low above close") << h + "2021-01-04 09:30,10,11,9.75,9.5,5\n" << quint64(2) << "low 9.75 is above";
    QTest::newRow("low above high") << h + "2021-01-04 09:30,10,10,11,10,5\n"
                                    << quint64(2) << "low 11 is above high 10";
    QTest::newRow("zero price") << h + "2021-01-04 09:30,0,1,0,1,5\n" << quint64(2) << "non-positive price";
    QTest::newRow("negative price") << h + "2021-01-04 09:30,-1,1,-1,1,5\n" << quint64(2) << "non-positive price";
}

void TestValidation::rejects()
{
    QFETCH(QString, csv);
    QFETCH(quint64, line);
    QFETCH(QString, reason);
    ParsedFile f = readBarBuffer("v.csv", csv.toStdString());
    try {
        validateBars(f);
        QFAIL("the file must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(line));
        QVERIFY2(e.reason().find(reason.toStdString()) != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).rfind("v.csv:" + std::to_string(line) + ": ", 0) == 0, e.what());
    }
}

void TestValidation::duplicateRuns()
{
    const std::int64_t t0 = utc("2021-01-04T14:30:00Z");
    const std::int64_t m = kNsPerMinute;
    ParsedFile f = fileOf({bar(t0, 10, 11, 9, 10), bar(t0 + m, 10, 11, 9, 10.25), bar(t0 + m, 10, 11, 9, 10.25),
                           bar(t0 + 2 * m, 10, 11, 9, 10), bar(t0, 10, 11, 9, 10), bar(t0 + m, 10, 11, 9, 10.25),
                           bar(t0 + 3 * m, 10, 11, 9, 10)});
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.duplicatesDropped, std::uint64_t(3));
    QCOMPARE(r.rowsKept, std::uint64_t(4));
    QCOMPARE(r.duplicateRuns.size(), std::size_t(2));
    QCOMPARE(r.duplicateRuns[0].firstLine, std::uint64_t(4));
    QCOMPARE(r.duplicateRuns[0].lastLine, std::uint64_t(4));
    QCOMPARE(r.duplicateRuns[0].originalLine, std::uint64_t(3));
    QCOMPARE(r.duplicateRuns[1].firstLine, std::uint64_t(6));
    QCOMPARE(r.duplicateRuns[1].lastLine, std::uint64_t(7));
    QCOMPARE(r.duplicateRuns[1].originalLine, std::uint64_t(2));
    QCOMPARE(r.duplicateRuns[1].rows, std::uint64_t(2));
    QCOMPARE(f.lines, (std::vector<std::uint64_t>{2, 3, 5, 8}));
}

void TestValidation::instrumentsInterleave()
{
    const std::int64_t t0 = utc("2021-01-04T14:30:00Z");
    const std::int64_t m = kNsPerMinute;
    ParsedFile f = fileOf({bar(t0, 10, 11, 9, 10, 1, 1), bar(t0, 20, 21, 19, 20, 1, 2),
                           bar(t0 + m, 10, 11, 9, 10, 1, 1), bar(t0 + m, 20, 21, 19, 20, 1, 2),
                           bar(t0 + 5 * m, 10, 11, 9, 10, 1, 1)});
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsKept, std::uint64_t(5));
    QCOMPARE(r.intervalNs, m);
    QCOMPARE(r.gaps.size(), std::size_t(1));
    QCOMPARE(r.gaps[0].kind, Gap::Kind::Other);

    ParsedFile bad = fileOf(
        {bar(t0, 10, 11, 9, 10, 1, 1), bar(t0 + m, 20, 21, 19, 20, 1, 2), bar(t0, 20, 21, 19, 20, 1, 2)});
    QVERIFY_THROWS_EXCEPTION(ImportError, validateBars(bad));
}

void TestValidation::offGridIsWarning()
{
    const std::int64_t t0 = utc("2021-01-04T14:30:00Z");
    ParsedFile f = fileOf({bar(t0, 10, 11, 9, 10), bar(t0 + kNsPerMinute, 10, 11.1, 9, 10),
                           bar(t0 + 2 * kNsPerMinute, 10.05, 11, 9, 10)});
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsKept, std::uint64_t(3));
    QCOMPARE(r.offGridPrices, std::uint64_t(2));
    QCOMPARE(r.offGridFirstLine, std::uint64_t(3));
    QCOMPARE(r.warnings.size(), std::size_t(1));
    QVERIFY(r.warnings[0].find("first at line 3") != std::string::npos);
}

// Issue 18.5: each of these used to be stored with exit 0.
void TestValidation::refusesUnrealValues_data()
{
    QTest::addColumn<qint64>("ts");
    QTest::addColumn<qint64>("price"); // replaces the high (and the close, for undefined)
    QTest::addColumn<quint64>("volume");
    QTest::addColumn<QString>("reason");
    const qint64 t = qint64(utc("2021-01-04T14:31:00Z"));
    const qint64 p = fromPoints(11);
    QTest::newRow("Databento undefined price") << t << qint64(kUndefinedPrice) << quint64(5) << "undefined high price";
    QTest::newRow("price of 9.2 billion points") << t << qint64(kUndefinedPrice - 1) << quint64(5) << "cannot be real";
    QTest::newRow("price above 1e9 points") << t << qint64(kMaxBarPrice + 1) << quint64(5) << "cannot be real";
    QTest::newRow("volume 2^63") << t << p << quint64(1ULL << 63) << "volume 9223372036854775808 cannot be real";
    QTest::newRow("volume UINT64_MAX") << t << p << quint64(UINT64_MAX) << "cannot be real";
    QTest::newRow("epoch 0") << qint64(0) << p << quint64(5) << "1970-01-01T00:00:00Z is outside the accepted range";
    QTest::newRow("epoch plus an hour") << qint64(3600 * kNsPerSecond) << p << quint64(5)
                                        << "outside the accepted range";
    QTest::newRow("year 1700") << qint64(utc("1700-06-01T00:00:00Z")) << p << quint64(5)
                               << "1700-06-01T00:00:00Z is outside";
    QTest::newRow("negative") << qint64(INT64_MIN) << p << quint64(5) << "outside the accepted range";
    QTest::newRow("2262-04-05") << qint64(106'745 * kNsPerDay) << p << quint64(5) << "2262-04-05T00:00:00Z is outside";
}

void TestValidation::refusesUnrealValues()
{
    QFETCH(qint64, ts);
    QFETCH(qint64, price);
    QFETCH(quint64, volume);
    QFETCH(QString, reason);
    const std::int64_t t0 = utc("2021-01-04T14:30:00Z");
    Bar odd = bar(t0 + kNsPerMinute, 10, 11, 9, 10, volume);
    odd.tsEvent = ts;
    odd.high = price;
    if (price == kUndefinedPrice) odd.close = price;
    // A good bar first: the bad one is named by its own line (3).
    ParsedFile f = fileOf({bar(t0, 10, 11, 9, 10), odd});
    try {
        validateBars(f);
        QFAIL("the bar must be refused");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(3));
        QVERIFY2(e.reason().find(reason.toStdString()) != std::string::npos, e.what());
    }
}

void TestValidation::implausibleDatesWarn()
{
    // Inside the accepted range, but before S&P 500 futures existed, or ahead of today.
    const std::int64_t early = utc("1975-03-03T15:00:00Z");
    const std::int64_t late = utc("2200-03-03T15:00:00Z");
    ParsedFile f = fileOf({bar(early, 10, 11, 9, 10), bar(early + kNsPerMinute, 10, 11, 9, 10),
                           bar(utc("2021-01-04T14:30:00Z"), 10, 11, 9, 10), bar(late, 10, 11, 9, 10)});
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsKept, std::uint64_t(4));
    QCOMPARE(r.earlyBars, std::uint64_t(2));
    QCOMPARE(r.earlyFirstLine, std::uint64_t(2));
    QCOMPARE(r.futureBars, std::uint64_t(1));
    QCOMPARE(r.futureFirstLine, std::uint64_t(5));
    const auto has = [&](const char* text) {
        return std::any_of(r.warnings.begin(), r.warnings.end(),
                           [&](const std::string& w) { return w.find(text) != std::string::npos; });
    };
    QVERIFY(has("2 bars dated before 1982"));
    QVERIFY(has("1 bar dated in the future (first at line 5)"));

    ParsedFile now = fileOf({bar(utc("2021-01-04T14:30:00Z"), 10, 11, 9, 10)});
    const ValidationReport plain = validateBars(now);
    QCOMPARE(plain.earlyBars + plain.futureBars, std::uint64_t(0));
}

// Issue 18.5: a price far from its neighbours is flagged (not refused), per instrument.
void TestValidation::priceJumpsWarn()
{
    const std::int64_t t0 = utc("2021-01-04T14:30:00Z");
    const std::int64_t m = kNsPerMinute;
    // Instrument 1 spikes to 100 at line 4 and falls back at line 5; instrument 2 trades at
    // 200 all along, interleaved, and must not count as a jump of instrument 1.
    ParsedFile f = fileOf({bar(t0, 10, 11, 9, 10, 1, 1), bar(t0, 200, 201, 199, 200, 1, 2),
                           bar(t0 + m, 10, 100, 10, 100, 1, 1), bar(t0 + 2 * m, 100, 100, 10, 10, 1, 1),
                           bar(t0 + 3 * m, 10, 14, 8, 14, 1, 1), bar(t0 + m, 200, 201, 199, 200, 1, 2)});
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.rowsKept, std::uint64_t(6));
    QCOMPARE(r.priceJumps, std::uint64_t(2));
    QCOMPARE(r.priceJumpFirstLine, std::uint64_t(4));
    const bool warned = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
        return w.find("2 bars with a price more than 1.5x above or below the previous close of their instrument (first "
                      "at line 4)") != std::string::npos;
    });
    QVERIFY(warned);

    // A 40% move (10 -> 14 in the high) is not flagged.
    ParsedFile calm = fileOf({bar(t0, 10, 11, 9, 10), bar(t0 + m, 10, 14, 10, 14), bar(t0 + 2 * m, 14, 14, 10, 10)});
    QCOMPARE(validateBars(calm).priceJumps, std::uint64_t(0));
}

void TestValidation::gapKinds_data()
{
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<qint64>("interval");
    QTest::addColumn<int>("kind");
    const qint64 m1 = kNsPerMinute, m5 = 5 * kNsPerMinute;
    // Times in UTC; comments in ET.
    QTest::newRow("Tue break 16:59 -> 18:00 EST") << "2021-01-05T21:59:00Z"
                                                  << "2021-01-05T23:00:00Z" << m1 << int(Gap::Kind::DailyBreak);
    QTest::newRow("Wed break EDT") << "2021-07-07T20:59:00Z"
                                   << "2021-07-07T22:00:00Z" << m1 << int(Gap::Kind::DailyBreak);
    QTest::newRow("Fri 16:59 -> Sun 18:00") << "2021-01-08T21:59:00Z"
                                            << "2021-01-10T23:00:00Z" << m1 << int(Gap::Kind::Weekend);
    QTest::newRow("RTH Fri 16:55 -> Mon 09:30") << "2017-06-09T20:55:00Z"
                                                << "2017-06-12T13:30:00Z" << m5 << int(Gap::Kind::Weekend);
    QTest::newRow("RTH overnight") << "2017-06-12T20:55:00Z"
                                   << "2017-06-13T13:30:00Z" << m5 << int(Gap::Kind::Other);
    QTest::newRow("missing minutes mid-session") << "2021-01-05T15:00:00Z"
                                                 << "2021-01-05T15:10:00Z" << m1 << int(Gap::Kind::Other);
    QTest::newRow("Friday 16:59 -> Tuesday (holiday)") << "2021-01-15T21:59:00Z"
                                                       << "2021-01-19T23:00:00Z" << m1 << int(Gap::Kind::Other);
    // Issue 21.6: exchange holidays are holidays, not "other".
    QTest::newRow("MLK 2021: Fri 16:59 -> Mon 18:00") << "2021-01-15T21:59:00Z"
                                                      << "2021-01-18T23:00:00Z" << m1 << int(Gap::Kind::Holiday);
    QTest::newRow("MLK 2021 halt: Mon 12:59 -> 18:00") << "2021-01-18T17:59:00Z"
                                                       << "2021-01-18T23:00:00Z" << m1 << int(Gap::Kind::Holiday);
    QTest::newRow("MLK 2021 RTH: Fri 16:55 -> Tue 09:30") << "2021-01-15T21:55:00Z"
                                                          << "2021-01-19T14:30:00Z" << m5 << int(Gap::Kind::Holiday);
    QTest::newRow("Good Friday 2024: Thu 16:59 -> Sun 18:00")
        << "2024-03-28T20:59:00Z"
        << "2024-03-31T22:00:00Z" << m1 << int(Gap::Kind::Holiday);
    QTest::newRow("Thanksgiving 2023: 12:59 -> 18:00") << "2023-11-23T17:59:00Z"
                                                       << "2023-11-23T23:00:00Z" << m1 << int(Gap::Kind::Holiday);
    QTest::newRow("Thanksgiving 2023: a day missing after") << "2023-11-23T17:59:00Z"
                                                            << "2023-11-24T23:00:00Z" << m1 << int(Gap::Kind::Other);
    QTest::newRow("Juneteenth 2022 (observed Mon)") << "2022-06-17T20:59:00Z"
                                                    << "2022-06-20T22:00:00Z" << m1 << int(Gap::Kind::Holiday);
    QTest::newRow("an ordinary Monday closed") << "2022-06-10T20:59:00Z"
                                               << "2022-06-13T22:00:00Z" << m1 << int(Gap::Kind::Other);
    // Daily bars by date: weekends and holidays are expected.
    const qint64 d1 = kNsPerDay;
    QTest::newRow("daily Fri -> Mon") << "2021-01-08T00:00:00Z"
                                      << "2021-01-11T00:00:00Z" << d1 << int(Gap::Kind::Weekend);
    QTest::newRow("daily at ET midnight Fri -> Mon") << "2021-01-08T05:00:00Z"
                                                     << "2021-01-11T05:00:00Z" << d1 << int(Gap::Kind::Weekend);
    QTest::newRow("daily over MLK 2021") << "2021-01-15T00:00:00Z"
                                         << "2021-01-19T00:00:00Z" << d1 << int(Gap::Kind::Holiday);
    QTest::newRow("daily over Good Friday 2024") << "2024-03-28T00:00:00Z"
                                                 << "2024-04-01T00:00:00Z" << d1 << int(Gap::Kind::Holiday);
    QTest::newRow("daily over Thanksgiving 2023") << "2023-11-22T00:00:00Z"
                                                  << "2023-11-24T00:00:00Z" << d1 << int(Gap::Kind::Holiday);
    QTest::newRow("daily missing Wednesday") << "2021-01-05T00:00:00Z"
                                             << "2021-01-07T00:00:00Z" << d1 << int(Gap::Kind::Other);
    QTest::newRow("daily missing Friday before a weekend") << "2021-01-07T00:00:00Z"
                                                           << "2021-01-11T00:00:00Z" << d1 << int(Gap::Kind::Other);
}

void TestValidation::gapKinds()
{
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(qint64, interval);
    QFETCH(int, kind);
    const std::vector<Bar> bars = {bar(utc(from.toStdString().c_str()), 1, 1, 1, 1),
                                   bar(utc(to.toStdString().c_str()), 1, 1, 1, 1)};
    const auto gaps = findGaps(bars, interval);
    QCOMPARE(gaps.size(), std::size_t(1));
    QCOMPARE(int(gaps[0].kind), kind);
    QCOMPARE(gaps[0].fromTs, bars[0].tsEvent);
    QCOMPARE(gaps[0].toTs, bars[1].tsEvent);
    QVERIFY(findGaps(bars, bars[1].tsEvent - bars[0].tsEvent).empty());
}

void TestValidation::inferInterval()
{
    const std::int64_t m = kNsPerMinute;
    std::vector<Bar> bars;
    for (std::int64_t t : {0LL, 5LL, 10LL, 15LL, 17LL, 30LL, 35LL}) bars.push_back(bar(t * m, 1, 1, 1, 1));
    QCOMPARE(inferIntervalNs(bars), 5 * m);
    QCOMPARE(inferIntervalNs({}), std::int64_t(0));
    QCOMPARE(inferIntervalNs({bar(0, 1, 1, 1, 1), bar(2 * m, 1, 1, 1, 1), bar(3 * m, 1, 1, 1, 1)}), m);
}

void TestValidation::dailySeries()
{
    // Daily bars at New York midnight: two weeks over MLK 2021, and the 25-hour step at
    // the end of daylight saving, which skips no date.
    std::vector<Bar> bars;
    for (const char* d :
         {"2021-01-04T05:00:00Z", "2021-01-05T05:00:00Z", "2021-01-06T05:00:00Z", "2021-01-07T05:00:00Z",
          "2021-01-08T05:00:00Z", "2021-01-11T05:00:00Z", "2021-01-12T05:00:00Z", "2021-01-13T05:00:00Z",
          "2021-01-14T05:00:00Z", "2021-01-15T05:00:00Z", "2021-01-19T05:00:00Z"})
        bars.push_back(bar(utc(d), 1, 1, 1, 1));
    ParsedFile f = fileOf(bars);
    f.intervalNs = kNsPerDay;
    const ValidationReport r = validateBars(f);
    QCOMPARE(r.weekends, std::uint64_t(1));
    QCOMPARE(r.holidays, std::uint64_t(1));
    QCOMPARE(r.otherGaps, std::uint64_t(0));
    QVERIFY(r.warnings.back().find("1 weekends, 1 holidays, 0 other") != std::string::npos);

    const std::vector<Bar> dst = {bar(utc("2021-11-05T04:00:00Z"), 1, 1, 1, 1),
                                  bar(utc("2021-11-08T05:00:00Z"), 1, 1, 1, 1),
                                  bar(utc("2021-11-09T05:00:00Z"), 1, 1, 1, 1)};
    const auto gaps = findGaps(dst, kNsPerDay);
    QCOMPARE(gaps.size(), std::size_t(1));
    QCOMPARE(gaps[0].kind, Gap::Kind::Weekend);
    QCOMPARE(countGaps(gaps).weekends, std::uint64_t(1));
    const std::vector<Bar> everyDay = {bar(utc("2021-11-06T04:00:00Z"), 1, 1, 1, 1),
                                       bar(utc("2021-11-07T04:00:00Z"), 1, 1, 1, 1),
                                       bar(utc("2021-11-08T05:00:00Z"), 1, 1, 1, 1)};
    QVERIFY(findGaps(everyDay, kNsPerDay).empty());
}

void TestValidation::realDailyFromFiveMinute()
{
    // One daily bar per New York date of the RTH 5-minute file (2016-09-09 .. 2017-11-09),
    // stamped at 00:00 UTC of that date as Databento stamps daily bars.
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/es_5min_1yr.csv");
    validateBars(f);
    ZoneConverter ny("America/New_York");
    std::vector<Bar> daily;
    for (const Bar& b : f.bars) {
        const std::int64_t d = ny.utcToLocal(b.tsEvent) / kNsPerDay;
        if (daily.empty() || daily.back().tsEvent != d * kNsPerDay) daily.push_back(bar(d * kNsPerDay, 1, 1, 1, 1));
    }
    QCOMPARE(daily.size(), std::size_t(290));
    const std::vector<Gap> gaps = findGaps(daily, kNsPerDay);
    const GapCounts c = countGaps(gaps);
    // Every weekend, and the nine holidays from Thanksgiving 2016 to Labor Day 2017
    // (Christmas and New Year's Day observed on Mondays); the one other gap is a hole
    // in the file, 2017-05-10 .. 2017-05-17.
    QCOMPARE(c.weekends, std::uint64_t(53));
    QCOMPARE(c.holidays, std::uint64_t(9));
    QCOMPARE(c.other, std::uint64_t(1));
    QCOMPARE(c.dailyBreaks, std::uint64_t(0));
    std::vector<std::string> holidays;
    for (const Gap& g : gaps) {
        if (g.kind == Gap::Kind::Holiday) holidays.push_back(formatUtc(g.toTs).substr(0, 10));
        if (g.kind == Gap::Kind::Other) {
            QCOMPARE(formatUtc(g.fromTs), std::string("2017-05-09T00:00:00Z"));
            QCOMPARE(formatUtc(g.toTs), std::string("2017-05-18T00:00:00Z"));
        }
    }
    QCOMPARE(holidays, (std::vector<std::string>{"2016-11-25", "2016-12-27", "2017-01-03", "2017-01-17", "2017-02-21",
                                                 "2017-04-17", "2017-05-30", "2017-07-05", "2017-09-05"}));
}

} // namespace tst_validation

FOXHUNT_TEST_APPLESS_MAIN(tst_validation::TestValidation)
#include "tst_validation.moc"
