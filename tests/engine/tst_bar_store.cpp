// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/import_error.h"
#include "engine/data/market_time.h"
#include "engine/data/synthetic.h"
#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"
#include "tests/support/test_bundle.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QIODevice>
#include <QTest>
#include <QCryptographicHash>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>

#include <sqlite3.h>

#include <atomic>
#include <map>
#include <latch>
#include <mutex>
#include <thread>

#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

namespace tst_bar_store {

using namespace foxhunt;

namespace {

std::int64_t utc(int year, unsigned month, unsigned day, int hour, int minute)
{
    return daysFromCivil(year, month, day) * kNsPerDay + (hour * 60 + minute) * kNsPerMinute;
}

// `count` valid bars every `step` minutes from 2021-03-08 14:30 UTC.
std::vector<Bar> makeBars(std::size_t count, int stepMinutes = 1, std::uint32_t id = 0, double base = 3800.0)
{
    std::vector<Bar> bars;
    for (std::size_t i = 0; i < count; ++i) {
        Bar b;
        b.instrumentId = id;
        b.tsEvent = utc(2021, 3, 8, 14, 30) + static_cast<std::int64_t>(i) * stepMinutes * kNsPerMinute;
        const double close = base + 0.25 * static_cast<double>(i % 40);
        b.open = fromPoints(close - 0.25);
        b.high = fromPoints(close + 0.5);
        b.low = fromPoints(close - 0.5);
        b.close = fromPoints(close);
        b.volume = 100 + i % 7;
        bars.push_back(b);
    }
    return bars;
}

ParsedFile vendorFile(std::vector<Bar> bars, const std::string& name = "vendor.csv")
{
    ParsedFile file;
    file.path = name;
    file.format = FileFormat::Csv;
    file.bars = std::move(bars);
    for (std::size_t i = 0; i < file.bars.size(); ++i) file.lines.push_back(i + 2);
    return file;
}

// ESH1 and ESM1 over three days with ESM1 taking the volume on day two, plus a spread.
ParsedFile parentFile()
{
    ParsedFile file;
    file.path = "glbx-es-fut.dbn";
    file.format = FileFormat::Dbn;
    file.dataset = "GLBX.MDP3";
    file.intervalNs = kNsPerMinute;
    file.symbols = {{11, "ESH1"}, {22, "ESM1"}, {33, "ESH1-ESM1"}};
    for (unsigned day : {8u, 9u, 10u}) {
        for (int k = 0; k < 30; ++k) {
            const std::int64_t ts = utc(2021, 3, day, 15, k);
            const auto add = [&](std::uint32_t id, double close, std::uint64_t volume) {
                Bar b;
                b.instrumentId = id;
                b.tsEvent = ts;
                b.open = b.close = fromPoints(close);
                b.high = fromPoints(close + 0.25);
                b.low = fromPoints(close - 0.25);
                b.volume = volume;
                file.bars.push_back(b);
            };
            add(11, 3800.0 + k * 0.25, day == 8 ? 900 : 100);
            add(22, 3790.0 + k * 0.25, day == 8 ? 50 : 700);
            add(33, 10.0, 5);
        }
    }
    for (std::size_t i = 0; i < file.bars.size(); ++i) file.lines.push_back(i + 1);
    return file;
}

std::int64_t countRows(BarStore& store, const char* table)
{
    sqlite3_stmt* st = nullptr;
    const std::string sql = std::string("SELECT count(*) FROM ") + table;
    if (sqlite3_prepare_v2(store.database().handle(), sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return -1;
    std::int64_t n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

std::int64_t pragma(BarStore& store, const char* name)
{
    return countRows(store, (std::string("pragma_") + name + "()").c_str()) >= 0 ? [&] {
        sqlite3_stmt* st = nullptr;
        const std::string sql = std::string("PRAGMA ") + name;
        sqlite3_prepare_v2(store.database().handle(), sql.c_str(), -1, &st, nullptr);
        std::int64_t v = -1;
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return v;
    }() : -1;
}

void rawSql(const std::string& path, const char* sql)
{
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

const char* kCsv = "timestamp,open,high,low,close,volume\n"
                   "2021-03-08 09:30:00,3800.00,3801.00,3799.50,3800.50,120\n"
                   "2021-03-08 09:31:00,3800.50,3802.00,3800.25,3801.75,95\n"
                   "2021-03-08 09:32:00,3801.75,3802.25,3800.00,3800.25,130\n"
                   "2021-03-08 09:33:00,3800.25,3800.75,3799.00,3799.25,88\n";

} // namespace

class TestBarStore : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_counter = 0;
    std::string freshPath() { return m_dir.filePath(QString("db%1.sqlite").arg(++m_counter)).toStdString(); }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void createsVersionedSchema()
    {
        const std::string path = freshPath();
        {
            BarStore store(path);
            QVERIFY(store.empty());
            QCOMPARE(pragma(store, "user_version"), std::int64_t{Database::kSchemaVersion});
            QCOMPARE(pragma(store, "application_id"), std::int64_t{0x46784874});
            QCOMPARE(pragma(store, "foreign_keys"), std::int64_t{1});
            for (const char* table : {"instruments", "bars", "imports", "rolls", "app_meta"})
                QCOMPARE(countRows(store, table) >= 0, true);
            sqlite3_stmt* st = nullptr;
            sqlite3_prepare_v2(store.database().handle(), "PRAGMA journal_mode", -1, &st, nullptr);
            QCOMPARE(sqlite3_step(st), SQLITE_ROW);
            QCOMPARE(QByteArray(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), QByteArray("wal"));
            sqlite3_finalize(st);
            store.storeSeries("ES", "csv", SeriesKind::Series, kNsPerMinute, makeBars(10));
        }
        BarStore reopened(path);
        QVERIFY(!reopened.empty());
        QCOMPARE(reopened.series().size(), std::size_t{1});
    }

    void concurrentFirstOpensAgree()
    {
        // A training run and `foxhunt-cli runs` may create the same new store at once: every
        // connection must come up with one schema, none failing on "table already exists".
        for (int round = 0; round < 5; ++round) {
            const std::string path = freshPath();
            constexpr int kConnections = 6;
            std::latch start(kConnections);
            std::atomic<int> failures{0};
            std::string firstError;
            std::mutex errorMutex;
            std::vector<std::thread> threads;
            for (int i = 0; i < kConnections; ++i)
                threads.emplace_back([&] {
                    start.arrive_and_wait();
                    try {
                        BarStore store(path);
                    } catch (const std::exception& e) {
                        ++failures;
                        std::lock_guard lock(errorMutex);
                        if (firstError.empty()) firstError = e.what();
                    }
                });
            for (std::thread& t : threads) t.join();
            QVERIFY2(failures == 0, firstError.c_str());
            BarStore store(path);
            QCOMPARE(pragma(store, "user_version"), std::int64_t{Database::kSchemaVersion});
        }
    }

    void refusesUnusableFiles_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        QTest::newRow("random bytes") << "random"
                                      << "not an SQLite database";
        QTest::newRow("text file") << "text"
                                   << "not an SQLite database";
        QTest::newRow("truncated database") << "truncated"
                                            << "truncated";
        QTest::newRow("another application's database") << "foreign"
                                                        << "another application";
        QTest::newRow("newer schema") << "newer"
                                      << "made by a newer Foxhunt";
        QTest::newRow("directory") << "directory"
                                   << "directory";
        // A foreign file that happens to carry our application_id used to get Foxhunt's tables added.
        QTest::newRow("foreign file with Foxhunt's application_id") << "foreign-id"
                                                                    << "has no Foxhunt schema";
        // A damaged page used to go unnoticed until an import wrote through it.
        QTest::newRow("corrupted page") << "corrupt-page"
                                        << "is damaged";
    }
    void refusesUnusableFiles()
    {
        QFETCH(QString, kind);
        QFETCH(QString, message);
        const std::string path = freshPath();
        const QString qpath = QString::fromStdString(path);
        if (kind == "random") {
            QByteArray bytes(8192, '\0');
            QRandomGenerator rng(42);
            for (auto& b : bytes) b = static_cast<char>(rng.bounded(256));
            writeFile(qpath, bytes);
        } else if (kind == "text") {
            writeFile(qpath, QByteArray("timestamp,open,high,low,close,volume\n").repeated(200));
        } else if (kind == "truncated") {
            {
                BarStore store(path);
                store.storeSeries("ES", "csv", SeriesKind::Series, kNsPerMinute, makeBars(20000));
            }
            const QByteArray whole = readAll(qpath);
            QVERIFY(whole.size() > 100'000);
            writeFile(qpath, whole.left(whole.size() / 2));
        } else if (kind == "foreign") {
            rawSql(path,
                   "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES ('hi');");
        } else if (kind == "newer") {
            {
                BarStore store(path);
            }
            rawSql(path, "PRAGMA user_version = 99");
        } else if (kind == "directory") {
            QVERIFY(QDir().mkpath(qpath));
        } else if (kind == "foreign-id") {
            rawSql(path, "PRAGMA application_id = 1182287988; CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);");
        } else if (kind == "corrupt-page") {
            {
                BarStore store(path);
                store.storeSeries("ES", "csv", SeriesKind::Series, kNsPerMinute, makeBars(20000));
            }
            QByteArray whole = readAll(qpath);
            QVERIFY(whole.size() > 100'000);
            // Scribble over the interior of the bars table's b-tree pages (not the header, not the size).
            for (qsizetype i = whole.size() / 2; i < whole.size() / 2 + 4 * 8192; i += 7)
                whole[i] = static_cast<char>(0xA5);
            writeFile(qpath, whole);
        }
        const QByteArray before = kind == "directory" ? QByteArray() : readAll(qpath);
        bool thrown = false;
        try {
            BarStore store(path);
        } catch (const StoreError& e) {
            thrown = true;
            QVERIFY2(QString(e.what()).contains(message), e.what());
            QVERIFY2(QString(e.what()).contains(qpath), e.what());
        }
        QVERIFY(thrown);
        if (kind != "directory") QCOMPARE(readAll(qpath), before); // refused, not modified
        QVERIFY(!QFile::exists(qpath + "-wal") || kind == "newer");
    }

    void importsVendorSeries()
    {
        BarStore store(freshPath());
        const std::vector<Bar> bars = makeBars(500);
        const ImportResult r = BarImporter(store).importParsed(vendorFile(bars));
        QVERIFY(!r.alreadyImported);
        QCOMPARE(r.rowsRead, std::uint64_t{500});
        QCOMPARE(r.imported, std::uint64_t{500});
        QCOMPARE(r.alreadyStored, std::uint64_t{0});
        QCOMPARE(QString::fromStdString(r.instrument), QString("ES"));
        QCOMPARE(r.firstTs, bars.front().tsEvent);
        QCOMPARE(r.lastTs, bars.back().tsEvent);
        QCOMPARE(r.sha256.size(), std::size_t{64});
        QCOMPARE(r.seriesIds.size(), std::size_t{1});

        const auto all = store.series();
        QCOMPARE(all.size(), std::size_t{1});
        const SeriesInfo& s = all.front();
        QCOMPARE(s.id, r.seriesIds.front());
        QCOMPARE(QString::fromStdString(s.symbol), QString("ES"));
        QCOMPARE(QString::fromStdString(s.dataset), QString("csv"));
        QVERIFY(s.kind == SeriesKind::Series);
        QCOMPARE(s.intervalNs, kNsPerMinute);
        QCOMPARE(s.barCount, std::uint64_t{500});
        QCOMPARE(s.firstTs, bars.front().tsEvent);
        QCOMPARE(s.lastTs, bars.back().tsEvent);

        const std::vector<Bar> loaded = store.loadBars(s.id);
        QCOMPARE(loaded.size(), bars.size());
        for (std::size_t i = 0; i < bars.size(); ++i) {
            Bar expected = bars[i];
            expected.instrumentId = static_cast<std::uint32_t>(s.id);
            QCOMPARE(loaded[i], expected);
        }
        const auto range = store.loadBars(s.id, bars[100].tsEvent, bars[200].tsEvent);
        QCOMPARE(range.size(), std::size_t{100});
        QCOMPARE(range.front().tsEvent, bars[100].tsEvent);
        QCOMPARE(range.back().tsEvent, bars[199].tsEvent);

        const auto imports = store.imports();
        QCOMPARE(imports.size(), std::size_t{1});
        QCOMPARE(imports.front().rows, std::uint64_t{500});
        QCOMPARE(QString::fromStdString(imports.front().format), QString("csv"));
        QCOMPARE(imports.front().sha256, r.sha256);
        QVERIFY(imports.front().importedAt > 0);
        QVERIFY(QString::fromStdString(imports.front().summary).contains("\"instrument\":\"ES\""));
    }

    void sameContentIsImportedOnce()
    {
        BarStore store(freshPath());
        const ImportResult first = BarImporter(store).importParsed(vendorFile(makeBars(50)));
        const ImportResult second = BarImporter(store).importParsed(vendorFile(makeBars(50), "copy.csv"));
        QVERIFY(!first.alreadyImported);
        QVERIFY(second.alreadyImported);
        QCOMPARE(second.sha256, first.sha256);
        QCOMPARE(second.imported, std::uint64_t{0});
        QCOMPARE(QString::fromStdString(second.instrument), QString("ES"));
        QCOMPARE(second.seriesIds, first.seriesIds);
        QCOMPARE(store.imports().size(), std::size_t{1});
        QCOMPARE(countRows(store, "bars"), std::int64_t{50});
    }

    void identicalOverlapIsSkipped()
    {
        BarStore store(freshPath());
        BarImporter(store).importParsed(vendorFile(makeBars(100)));
        // The same first 100 bars, then 50 new ones.
        const std::vector<Bar> later = makeBars(150);
        const ImportResult r = BarImporter(store).importParsed(vendorFile(later, "later.csv"));
        QCOMPARE(r.imported, std::uint64_t{50});
        QCOMPARE(r.alreadyStored, std::uint64_t{100});
        QCOMPARE(r.replaced, std::uint64_t{0});
        const auto s = store.findSeries("ES");
        QVERIFY(s);
        QCOMPARE(s->barCount, std::uint64_t{150});
        // Rows go in batches of 32: the fourth batch straddles old and new rows.
        QCOMPARE(s->firstTs, later.front().tsEvent);
        QCOMPARE(s->lastTs, later.back().tsEvent);
        QCOMPARE(store.loadBars(s->id).size(), std::size_t{150});
        QCOMPARE(store.imports().size(), std::size_t{2});
    }

    // Issue 18.3: a corrected file used to be "already stored ... skipped" and its SHA-256 recorded.
    void conflictingBarsRejectTheFile()
    {
        BarStore store(freshPath());
        BarImporter(store).importParsed(vendorFile(makeBars(100)));
        const std::vector<Bar> before = store.loadBars(store.findSeries("ES")->id);
        // Bars 0-39 as stored, from bar 40 on other prices; lines are index + 2.
        std::vector<Bar> corrected = makeBars(150);
        for (std::size_t i = 40; i < corrected.size(); ++i) {
            corrected[i].close += kEsTick;
            corrected[i].high += kEsTick;
        }
        corrected[45].volume = 999;
        try {
            BarImporter(store).importParsed(vendorFile(corrected, "corrected.csv"));
            QFAIL("bars that contradict stored ones must reject the file");
        } catch (const StoredBarConflict& e) {
            QCOMPARE(e.line(), std::uint64_t{42});
            QCOMPARE(e.file(), std::string("corrected.csv"));
            QCOMPARE(QString::fromStdString(e.series()), QString("ES"));
            QCOMPARE(e.conflicts(), std::uint64_t{60});
            QCOMPARE(e.fromTs(), corrected.front().tsEvent);
            QCOMPARE(e.toTs(), corrected.back().tsEvent);
            const std::string what = e.what();
            QVERIFY2(what.rfind("corrected.csv:42: ", 0) == 0, e.what());
            const std::string oldClose = formatPrice(before[40].close), newClose = formatPrice(corrected[40].close);
            QVERIFY2(what.find("close " + oldClose + " stored, " + newClose + " in the file") != std::string::npos,
                     e.what());
            QVERIFY2(what.find("high ") != std::string::npos, e.what());
            QVERIFY2(what.find("open ") == std::string::npos, e.what()); // only what differs
            QVERIFY2(what.find("nothing was stored") != std::string::npos, e.what());
        }
        QCOMPARE(store.loadBars(store.findSeries("ES")->id), before);
        QCOMPARE(store.findSeries("ES")->barCount, std::uint64_t{100});
        QCOMPARE(store.imports().size(), std::size_t{1}); // the rejected file is not recorded

        // A volume alone is a conflict too.
        std::vector<Bar> volumeOnly = makeBars(100);
        volumeOnly[7].volume += 1;
        try {
            BarImporter(store).importParsed(vendorFile(volumeOnly, "volume.csv"));
            QFAIL("another volume must reject the file");
        } catch (const StoredBarConflict& e) {
            QCOMPARE(e.line(), std::uint64_t{9});
            QVERIFY2(std::string(e.what()).find("volume " + std::to_string(before[7].volume) + " stored") !=
                         std::string::npos,
                     e.what());
        }
    }

    void replaceRewritesTheRange()
    {
        BarStore store(freshPath());
        // Stored: 200 bars; the file covers bars 50-149 with other closes and lacks bar 100.
        BarImporter(store).importParsed(vendorFile(makeBars(200)));
        const std::vector<Bar> all = makeBars(200);
        std::vector<Bar> file;
        for (std::size_t i = 50; i < 150; ++i) {
            if (i == 100) continue;
            Bar b = all[i];
            if (i >= 60) {
                b.close += kEsTick;
                b.high += kEsTick;
            }
            file.push_back(b);
        }
        ImportOptions options;
        options.conflicts = StoredConflicts::Replace;
        const ImportResult r = BarImporter(store).importParsed(vendorFile(file, "fix.csv"), options);
        QCOMPARE(r.replaced, std::uint64_t{89});
        QCOMPARE(r.alreadyStored, std::uint64_t{10});
        QCOMPARE(r.removed, std::uint64_t{1});
        QCOMPARE(r.imported, std::uint64_t{89});
        const auto s = store.findSeries("ES");
        QCOMPARE(s->barCount, std::uint64_t{199});
        QCOMPARE(s->firstTs, all.front().tsEvent);
        QCOMPARE(s->lastTs, all.back().tsEvent);
        const std::vector<Bar> stored = store.loadBars(s->id);
        QCOMPARE(stored.size(), std::size_t{199});
        for (const Bar& b : stored) {
            const auto i = static_cast<std::size_t>((b.tsEvent - all.front().tsEvent) / kNsPerMinute);
            QVERIFY(i != 100);
            const bool fixedBar = i >= 60 && i < 150;
            QCOMPARE(b.close, all[i].close + (fixedBar ? kEsTick : 0));
        }
        QCOMPARE(store.imports().size(), std::size_t{2});

        // Without replace, a part of that file now agrees with the store: skipped, not rejected.
        const std::vector<Bar> part(file.begin(), file.end() - 1);
        const ImportResult again = BarImporter(store).importParsed(vendorFile(part, "fix-part.csv"));
        QVERIFY(!again.alreadyImported);
        QCOMPARE(again.alreadyStored, std::uint64_t{98});
        QCOMPARE(again.imported, std::uint64_t{0});
    }

    void replaceRollsBackWithTheImport()
    {
        BarStore store(freshPath());
        BarImporter(store).importParsed(vendorFile(makeBars(100)));
        std::vector<Bar> corrected = makeBars(100);
        for (Bar& b : corrected) b.volume += 1;
        ImportOptions options;
        options.conflicts = StoredConflicts::Replace;
        const ProgressFn failing = [](double fraction, std::string_view stage) {
            if (stage == "store" && fraction >= 1.0) throw std::runtime_error("cancelled");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 BarImporter(store).importParsed(vendorFile(corrected, "c.csv"), options, failing));
        const auto s = store.findSeries("ES");
        QCOMPARE(s->barCount, std::uint64_t{100});
        QCOMPARE(store.loadBars(s->id).front().volume, makeBars(1).front().volume);
        QCOMPARE(store.imports().size(), std::size_t{1});
    }

    void conflictInContractNamesItsLine()
    {
        BarStore store(freshPath());
        BarImporter(store).importParsed(parentFile());
        // One ESM1 bar on day three (the continuous series' front then) with another close.
        ParsedFile corrected = parentFile();
        corrected.path = "corrected.dbn";
        std::size_t changed = 0;
        for (std::size_t i = 0; i < corrected.bars.size(); ++i)
            if (corrected.bars[i].instrumentId == 22 && corrected.bars[i].tsEvent == utc(2021, 3, 10, 15, 7)) {
                corrected.bars[i].close += kEsTick;
                corrected.bars[i].high += kEsTick;
                changed = i;
            }
        QVERIFY(changed > 0);
        const std::uint64_t line = corrected.lines[changed];
        try {
            BarImporter(store).importParsed(std::move(corrected));
            QFAIL("a corrected contract bar must reject the file");
        } catch (const StoredBarConflict& e) {
            QCOMPARE(e.line(), line);
            QCOMPARE(e.conflicts(), std::uint64_t{1});
        }
        QCOMPARE(countRows(store, "imports"), std::int64_t{1});

        ParsedFile again = parentFile();
        again.path = "corrected.dbn";
        for (Bar& b : again.bars)
            if (b.instrumentId == 22 && b.tsEvent == utc(2021, 3, 10, 15, 7)) {
                b.close += kEsTick;
                b.high += kEsTick;
            }
        ImportOptions options;
        options.conflicts = StoredConflicts::Replace;
        const ImportResult r = BarImporter(store).importParsed(std::move(again), options);
        QCOMPARE(r.replaced, std::uint64_t{2}); // ESM1 and the continuous series
        const auto main = store.findSeries("ES.c.0");
        QCOMPARE(main->barCount, std::uint64_t{90});
        QCOMPARE(store.rolls(main->id).size(), std::size_t{1});
        const auto m = store.findSeries("ESM1");
        const auto bars = store.loadBars(m->id, utc(2021, 3, 10, 15, 7), utc(2021, 3, 10, 15, 8));
        QCOMPARE(bars.size(), std::size_t{1});
        QCOMPARE(bars.front().close, fromPoints(3790.0 + 7 * 0.25) + kEsTick);
    }

    void intervalsAreSeparateSeries()
    {
        BarStore store(freshPath());
        const ImportResult one = BarImporter(store).importParsed(vendorFile(makeBars(60, 1)));
        const ImportResult five = BarImporter(store).importParsed(vendorFile(makeBars(60, 5), "es5.csv"));
        QVERIFY(one.seriesIds.front() != five.seriesIds.front());
        const auto all = store.series();
        QCOMPARE(all.size(), std::size_t{2});
        QCOMPARE(all[0].intervalNs + all[1].intervalNs, 6 * kNsPerMinute);
        QCOMPARE(five.alreadyStored, std::uint64_t{0});
    }

    void parentFileBuildsContinuousSeries()
    {
        BarStore store(freshPath());
        const ImportResult r = BarImporter(store).importParsed(parentFile());
        QCOMPARE(QString::fromStdString(r.instrument), QString("ES.c.0"));
        QCOMPARE(r.seriesIds.size(), std::size_t{3}); // ES.c.0, ESH1, ESM1; no spread
        QCOMPARE(r.rolls.size(), std::size_t{1});
        QCOMPARE(QString::fromStdString(r.rolls.front().toSymbol), QString("ESM1"));
        QCOMPARE(r.rolls.front().tradingDay, daysFromCivil(2021, 3, 9));
        QCOMPARE(r.rolls.front().priceGap, fromPoints(-10.0));
        QVERIFY(std::any_of(r.warnings.begin(), r.warnings.end(),
                            [](const std::string& w) { return w.find("spread") != std::string::npos; }));

        const auto main = store.findSeries(std::to_string(r.seriesIds.front()));
        QVERIFY(main);
        QCOMPARE(QString::fromStdString(main->symbol), QString("ES.c.0"));
        QVERIFY(main->kind == SeriesKind::Continuous);
        QCOMPARE(QString::fromStdString(main->dataset), QString("GLBX.MDP3"));
        QCOMPARE(main->barCount, std::uint64_t{90});
        const auto rolls = store.rolls(main->id);
        QCOMPARE(rolls.size(), std::size_t{1});
        QCOMPARE(rolls.front().ts, r.rolls.front().ts);
        QCOMPARE(rolls.front().priceGap, r.rolls.front().priceGap);
        QCOMPARE(QString::fromStdString(rolls.front().fromSymbol), QString("ESH1"));

        const auto h = store.findSeries("ESH1");
        const auto m = store.findSeries("ESM1");
        QVERIFY(h && m);
        QVERIFY(h->kind == SeriesKind::Contract);
        QCOMPARE(h->barCount, std::uint64_t{90});
        QVERIFY(!store.findSeries("ESH1-ESM1"));
        QCOMPARE(r.imported, std::uint64_t{270});

        // The continuous bars: ESH1 on day one, ESM1 afterwards.
        const auto bars = store.loadBars(main->id);
        QCOMPARE(bars.front().close, fromPoints(3800.0));
        QCOMPARE(bars.back().close, fromPoints(3790.0 + 29 * 0.25));
    }

    void backAdjustedSeriesIsSeparate()
    {
        BarStore store(freshPath());
        ImportOptions options;
        options.continuous.backAdjust = true;
        const ImportResult r = BarImporter(store).importParsed(parentFile(), options);
        QCOMPARE(QString::fromStdString(r.instrument), QString("ES.c.0.adj"));
        const auto bars = store.loadBars(r.seriesIds.front());
        QCOMPARE(bars.front().close, fromPoints(3800.0 - 10.0));
    }

    void singleContractIsMainSeries()
    {
        BarStore store(freshPath());
        ParsedFile file = vendorFile(makeBars(20, 1, 5482));
        file.format = FileFormat::Dbn;
        file.dataset = "GLBX.MDP3";
        file.symbols = {{5482, "ESH1"}};
        const ImportResult r = BarImporter(store).importParsed(std::move(file));
        QCOMPARE(QString::fromStdString(r.instrument), QString("ESH1"));
        QCOMPARE(r.seriesIds.size(), std::size_t{1});
        QVERIFY(r.rolls.empty());
        const auto s = store.findSeries("ESH1");
        QVERIFY(s);
        QVERIFY(s->kind == SeriesKind::Contract);
        QCOMPARE(QString::fromStdString(s->dataset), QString("GLBX.MDP3"));
    }

    void errorMidInsertRollsBack()
    {
        BarStore store(freshPath());
        int storeCalls = 0;
        const ProgressFn failing = [&](double fraction, std::string_view stage) {
            if (stage == "store" && fraction > 0.0 && ++storeCalls == 2) throw std::runtime_error("cancelled");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 BarImporter(store).importParsed(vendorFile(makeBars(60'000)), {}, failing));
        QCOMPARE(storeCalls, 2);
        QVERIFY(store.empty());
        QCOMPARE(countRows(store, "bars"), std::int64_t{0});
        QCOMPARE(countRows(store, "imports"), std::int64_t{0});
        QCOMPARE(countRows(store, "rolls"), std::int64_t{0});
        // The store is still usable, and the same content may be imported now.
        const ImportResult r = BarImporter(store).importParsed(vendorFile(makeBars(60'000)));
        QVERIFY(!r.alreadyImported);
        QCOMPARE(r.imported, std::uint64_t{60'000});
    }

    void progressIsReportedInBatches()
    {
        BarStore store(freshPath());
        std::vector<std::pair<double, std::string>> calls;
        BarImporter(store).importParsed(vendorFile(makeBars(100'000)), {}, [&](double f, std::string_view stage) {
            calls.emplace_back(f, std::string(stage));
        });
        QVERIFY(calls.size() > 4);
        QVERIFY(calls.size() < 100);
        double last = -1;
        bool sawValidate = false;
        for (const auto& [f, stage] : calls) {
            QVERIFY(f >= 0.0 && f <= 1.0);
            sawValidate |= stage == "validate";
            if (stage == "store") {
                QVERIFY(f >= last);
                last = f;
            }
        }
        QVERIFY(sawValidate);
        QCOMPARE(last, 1.0);
    }

    // A file import reports every stage in order, each rising inside itself (reading by bytes,
    // parsing by rows), and the one overall figure never goes back and ends at 1.
    void importFileProgressRisesThroughEveryStage()
    {
        // 150,000 one-minute bars (about 8 MB): more than one 64 Ki-row parse step, 1 % read steps.
        QByteArray text("timestamp,open,high,low,close,volume\n");
        QDateTime t(QDate(2021, 4, 1), QTime(0, 0), Qt::UTC); // no DST change in New York before July
        for (int i = 0; i < 150'000; ++i, t = t.addSecs(60))
            text += t.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")).toLatin1() + ",3800.00,3801.00,3799.50,3800.50," +
                    QByteArray::number(100 + i % 50) + '\n';
        const QString csv = m_dir.filePath("stages.csv");
        writeFile(csv, text);

        BarStore store(freshPath());
        std::vector<std::pair<double, std::string>> calls;
        const ImportResult r = BarImporter(store).importFile(
            csv.toStdString(), {},
            [&](double f, std::string_view stage) { calls.emplace_back(f, std::string(stage)); });
        QCOMPARE(r.imported, std::uint64_t{150'000});
        const std::vector<std::string> order = {"read", "parse", "validate", "store"};
        std::size_t at = 0;
        std::map<std::string, int> inside; // calls with 0 < f < 1, per stage
        double overall = 0.0;
        for (const auto& [f, stage] : calls) {
            while (at < order.size() && order[at] != stage) ++at;
            QVERIFY2(at < order.size(), ("stage out of order: " + stage).c_str());
            if (f > 0.0 && f < 1.0) ++inside[stage];
            const double o = overallImportFraction(f, stage);
            QVERIFY2(o >= overall, (stage + " went back").c_str());
            overall = o;
        }
        QCOMPARE(at, order.size() - 1);
        QCOMPARE(overall, 1.0);
        QVERIFY(inside["read"] >= 10);
        QVERIFY(inside["parse"] >= 2);
        QVERIFY(inside["store"] >= 1);

        // The stages meet: each one's end is the next one's start.
        for (std::size_t i = 0; i + 1 < order.size(); ++i)
            QCOMPARE(overallImportFraction(1.0, order[i]), overallImportFraction(0.0, order[i + 1]));
        QCOMPARE(overallImportFraction(0.0, "read"), 0.0);
        QCOMPARE(overallImportFraction(0.5, "nonsense"), 1.0);

        // Stopped while parsing: nothing is stored, and the file imports afterwards.
        BarStore second(freshPath());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, BarImporter(second).importFile(
                                                         csv.toStdString(), {}, [](double f, std::string_view stage) {
                                                             if (stage == "parse" && f > 0.0)
                                                                 throw std::runtime_error("cancelled");
                                                         }));
        QVERIFY(second.empty());
        QCOMPARE(countRows(second, "imports"), std::int64_t{0});
        QCOMPARE(BarImporter(second).importFile(csv.toStdString()).imported, r.imported);
    }

    void importFileHashesBytes()
    {
        BarStore store(freshPath());
        const QString csv = m_dir.filePath("es.csv");
        writeFile(csv, kCsv);
        const ImportResult r = BarImporter(store).importFile(csv.toStdString());
        QCOMPARE(QByteArray::fromStdString(r.sha256),
                 QCryptographicHash::hash(QByteArray(kCsv), QCryptographicHash::Sha256).toHex());
        QCOMPARE(r.imported, std::uint64_t{4});
        QCOMPARE(QString::fromStdString(r.instrument), QString("ES"));
        // 09:30 EST is 14:30 UTC.
        QCOMPARE(r.firstTs, utc(2021, 3, 8, 14, 30));
        QCOMPARE(QString::fromStdString(store.imports().front().path), csv);

        const ImportResult again = BarImporter(store).importFile(csv.toStdString());
        QVERIFY(again.alreadyImported);
        QCOMPARE(again.imported, std::uint64_t{0});
        QCOMPARE(store.imports().size(), std::size_t{1});
    }

    void correctedFileIsRejectedThenReplaced()
    {
        BarStore store(freshPath());
        const QString csv = m_dir.filePath("es-orig.csv");
        writeFile(csv, kCsv);
        QCOMPARE(BarImporter(store).importFile(csv.toStdString()).imported, std::uint64_t{4});
        // Line 5 corrected: volume 89 where 88 was stored.
        QByteArray fixedBytes(kCsv);
        fixedBytes.replace("3799.25,88\n", "3799.25,89\n");
        QVERIFY(fixedBytes != QByteArray(kCsv));
        const QString fixedPath = m_dir.filePath("es-fixed.csv");
        writeFile(fixedPath, fixedBytes);
        try {
            BarImporter(store).importFile(fixedPath.toStdString());
            QFAIL("the corrected file must be rejected");
        } catch (const StoredBarConflict& e) {
            QCOMPARE(e.line(), std::uint64_t{5});
            QVERIFY2(QString(e.what()).startsWith(fixedPath + ":5: "), e.what());
        }
        QCOMPARE(store.imports().size(), std::size_t{1});
        // Not recorded, so a second try is still rejected rather than "already imported".
        QVERIFY_THROWS_EXCEPTION(StoredBarConflict, BarImporter(store).importFile(fixedPath.toStdString()));

        ImportOptions replace;
        replace.conflicts = StoredConflicts::Replace;
        const ImportResult r = BarImporter(store).importFile(fixedPath.toStdString(), replace);
        QVERIFY(!r.alreadyImported);
        QCOMPARE(r.replaced, std::uint64_t{1});
        QCOMPARE(r.alreadyStored, std::uint64_t{3});
        QCOMPARE(store.loadBars(store.findSeries("ES")->id).back().volume, std::uint64_t{89});
        QCOMPARE(store.imports().size(), std::size_t{2});
        QVERIFY(BarImporter(store).importFile(fixedPath.toStdString()).alreadyImported);

        // Replace with a file already recorded imports it again, superseding its record.
        const ImportResult back = BarImporter(store).importFile(csv.toStdString(), replace);
        QVERIFY(!back.alreadyImported);
        QCOMPARE(back.replaced, std::uint64_t{1});
        QCOMPARE(store.imports().size(), std::size_t{2});
        QCOMPARE(store.loadBars(store.findSeries("ES")->id).back().volume, std::uint64_t{88});
    }

    void rejectedFileImportsNothing()
    {
        BarStore store(freshPath());
        const QString csv = m_dir.filePath("bad.csv");
        // Line 4: high below low.
        writeFile(csv, "timestamp,open,high,low,close,volume\n"
                       "2021-03-08 09:30:00,3800.00,3801.00,3799.50,3800.50,120\n"
                       "2021-03-08 09:31:00,3800.50,3802.00,3800.25,3801.75,95\n"
                       "2021-03-08 09:32:00,3801.75,3799.00,3800.00,3800.25,130\n");
        try {
            BarImporter(store).importFile(csv.toStdString());
            QFAIL("a bad file must be rejected");
        } catch (const ImportError& e) {
            QCOMPARE(e.line(), std::uint64_t{4});
        }
        QVERIFY(store.empty());
        QVERIFY(store.imports().empty());
        QVERIFY_THROWS_EXCEPTION(ImportError,
                                 BarImporter(store).importFile(m_dir.filePath("missing.csv").toStdString()));
    }

    void findSeriesByIdOrSymbol()
    {
        BarStore store(freshPath());
        const std::int64_t a = store.storeSeries("ES", "csv", SeriesKind::Series, kNsPerMinute, makeBars(5));
        const std::int64_t b = store.storeSeries("ES", "csv", SeriesKind::Series, 5 * kNsPerMinute, makeBars(5, 5));
        QCOMPARE(store.findSeries(std::to_string(a))->id, a);
        QCOMPARE(store.findSeries("ES")->id, b); // the most recent one
        QVERIFY(!store.findSeries("NQ"));
        QVERIFY(!store.findSeries("999"));
        QCOMPARE(store.rolls(a).size(), std::size_t{0});
    }

    void seriesOrderedByKindThenSymbol()
    {
        BarStore store(freshPath());
        store.storeSeries("ZZ", "csv", SeriesKind::Synthetic, kNsPerMinute, makeBars(3));
        store.storeSeries("ESM1", "GLBX.MDP3", SeriesKind::Contract, kNsPerMinute, makeBars(3));
        store.storeSeries("ESH1", "GLBX.MDP3", SeriesKind::Contract, kNsPerMinute, makeBars(3));
        store.storeSeries("ES.c.0", "GLBX.MDP3", SeriesKind::Continuous, kNsPerMinute, makeBars(3));
        const auto all = store.series();
        QStringList symbols;
        for (const auto& s : all) symbols << QString::fromStdString(s.symbol);
        QCOMPARE(symbols, (QStringList{"ESH1", "ESM1", "ES.c.0", "ZZ"}));
        QVERIFY(all.back().synthetic());
    }

    void defaultDataIsSynthetic()
    {
        BarStore store(freshPath());
        QVERIFY(ensureDefaultData(store));
        QVERIFY(!ensureDefaultData(store));
        const auto all = store.series();
        QCOMPARE(all.size(), std::size_t{1});
        QCOMPARE(QString::fromStdString(all.front().symbol), QString(kSyntheticSymbol));
        QCOMPARE(QString::fromStdString(all.front().dataset), QString(kSyntheticDataset));
        QVERIFY(all.front().kind == SeriesKind::Synthetic);
        QCOMPARE(all.front().barCount, std::uint64_t{40 * 1380});
        QVERIFY(store.loadBars(all.front().id) == [&] {
            auto bars = generateSyntheticBars();
            for (auto& b : bars) b.instrumentId = static_cast<std::uint32_t>(all.front().id);
            return bars;
        }());
    }

    void defaultDataDirFollowsXdg()
    {
        const QByteArray saved = qgetenv("XDG_DATA_HOME");
        const QString base = m_dir.filePath("xdg");
        qputenv("XDG_DATA_HOME", base.toUtf8());
        const std::string dir = defaultDataDir();
        const std::string db = defaultDatabasePath();
        if (saved.isNull()) qunsetenv("XDG_DATA_HOME");
        else qputenv("XDG_DATA_HOME", saved);
        QCOMPARE(QString::fromStdString(dir), base + "/foxhunt");
        QVERIFY(QFileInfo(base + "/foxhunt").isDir());
        QCOMPARE(QString::fromStdString(db), base + "/foxhunt/foxhunt.db");
    }

    void unwritablePlacesAreNamed()
    {
        // As a user without write access: root ignores permissions, so a child process
        // running as root gives itself up to "nobody" first.
        namespace fs = std::filesystem;
        const fs::path top = m_dir.filePath("perm").toStdString();
        const fs::path ro = top / "read-only", rw = top / "writable";
        fs::create_directories(ro);
        fs::create_directories(rw);
        {
            BarStore existing((ro / "old.db").string());
        }
        {
            BarStore existing((rw / "locked.db").string());
        }
        using fs::perms;
        fs::permissions(m_dir.path().toStdString(), perms::owner_all | perms::group_read | perms::group_exec |
                                                        perms::others_read | perms::others_exec);
        fs::permissions(top, perms::all);
        fs::permissions(rw, perms::all);
        for (const char* name : {"old.db", "old.db-wal", "old.db-shm"})
            if (fs::exists(ro / name))
                fs::permissions(ro / name, perms::all & ~(perms::owner_exec | perms::group_exec | perms::others_exec));
        fs::permissions(ro, perms::owner_read | perms::owner_exec | perms::group_read | perms::group_exec |
                                perms::others_read | perms::others_exec);
        fs::permissions(rw / "locked.db", perms::owner_read | perms::group_read | perms::others_read);

        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const pid_t child = ::fork();
        if (child == 0) {
            if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
            std::string said;
            for (const fs::path& p : {ro / "new.db", ro / "old.db", rw / "locked.db"}) {
                try {
                    BarStore store(p.string());
                    said += "opened\n";
                } catch (const std::exception& e) {
                    said += std::string(e.what()) + "\n";
                }
            }
            const bool ok = ::write(fds[1], said.data(), said.size()) == static_cast<ssize_t>(said.size());
            ::_exit(ok ? 0 : 3);
        }
        ::close(fds[1]);
        std::string said;
        char buffer[4096];
        for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
            said.append(buffer, static_cast<std::size_t>(n));
        ::close(fds[0]);
        int status = 0;
        ::waitpid(child, &status, 0);
        fs::permissions(ro, perms::all);
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        const QStringList lines = QString::fromStdString(said).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        for (int i = 0; i < 2; ++i) {
            QVERIFY2(lines[i].contains(QString::fromStdString("the folder " + ro.string() + " is not writable")),
                     qPrintable(lines[i]));
            QVERIFY2(!lines[i].contains(QStringLiteral("not a usable")), qPrintable(lines[i]));
        }
        QVERIFY2(lines[2].contains(QStringLiteral("the database file is not writable")), qPrintable(lines[2]));
    }
};

} // namespace tst_bar_store

FOXHUNT_TEST_APPLESS_MAIN(tst_bar_store::TestBarStore)
#include "tst_bar_store.moc"
