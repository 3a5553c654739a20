// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/data/dbn_reader.cpp and the DBN paths of engine/data/reader.cpp.

#include "engine/data/dbn_reader.h"
#include "engine/data/import_error.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace tst_dbn_reader {

using namespace foxhunt;

namespace {

template <typename T>
void put(std::string& out, T value)
{
    char buf[sizeof(T)];
    std::memcpy(buf, &value, sizeof(T));
    out.append(buf, sizeof(T));
}

void putCstr(std::string& out, const std::string& s, std::size_t width)
{
    std::string field = s.substr(0, width);
    field.resize(width, '\0');
    out += field;
}

struct TestRecord {
    std::uint8_t rtype = kRtypeOhlcv1m;
    std::uint32_t instrumentId = 5482;
    std::uint64_t ts = 0;
    std::int64_t open = 0, high = 0, low = 0, close = 0;
    std::uint64_t volume = 0;
};

// A minimal DBN writer following the documented layout, so v1/v2 files can be
// produced without fixtures.
std::string writeDbn(std::uint8_t version, std::uint16_t schema, bool tsOut, const std::vector<TestRecord>& records,
                     bool withUnknownRecord)
{
    const std::size_t width = version == 1 ? 22 : 71;
    std::string meta;
    putCstr(meta, "GLBX.MDP3", 16);
    put<std::uint16_t>(meta, schema);
    put<std::uint64_t>(meta, 1609113600000000000ULL);
    put<std::uint64_t>(meta, 1609200000000000000ULL);
    put<std::uint64_t>(meta, 0);
    if (version == 1) put<std::uint64_t>(meta, records.size());
    put<std::uint8_t>(meta, 1); // stype_in raw_symbol
    put<std::uint8_t>(meta, 0); // stype_out instrument_id
    put<std::uint8_t>(meta, tsOut ? 1 : 0);
    if (version >= 2) put<std::uint16_t>(meta, static_cast<std::uint16_t>(width));
    meta.resize(100, '\0');
    put<std::uint32_t>(meta, 0); // schema definition length
    put<std::uint32_t>(meta, 1);
    putCstr(meta, "ESH1", width);
    put<std::uint32_t>(meta, 0);
    put<std::uint32_t>(meta, 1);
    putCstr(meta, "ESZ9", width);
    put<std::uint32_t>(meta, 1);
    putCstr(meta, "ESH1", width);
    put<std::uint32_t>(meta, 1);
    put<std::uint32_t>(meta, 20201228);
    put<std::uint32_t>(meta, 20201229);
    putCstr(meta, "5482", width);
    meta.resize((meta.size() + 7) / 8 * 8, '\0');

    std::string out = "DBN";
    put<std::uint8_t>(out, version);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(meta.size()));
    out += meta;
    const std::size_t recLen = kDbnOhlcvSize + (tsOut ? 8 : 0);
    for (std::size_t i = 0; i < records.size(); ++i) {
        const TestRecord& r = records[i];
        put<std::uint8_t>(out, static_cast<std::uint8_t>(recLen / 4));
        put<std::uint8_t>(out, r.rtype);
        put<std::uint16_t>(out, 1);
        put<std::uint32_t>(out, r.instrumentId);
        put<std::uint64_t>(out, r.ts);
        put<std::int64_t>(out, r.open);
        put<std::int64_t>(out, r.high);
        put<std::int64_t>(out, r.low);
        put<std::int64_t>(out, r.close);
        put<std::uint64_t>(out, r.volume);
        if (tsOut) put<std::uint64_t>(out, r.ts + 1000);
        if (withUnknownRecord && i == 0) {
            // An instrument-definition-like record of 80 bytes: must be skipped by length.
            std::string unknown(80, '\x7f');
            unknown[0] = static_cast<char>(80 / 4);
            unknown[1] = static_cast<char>(0x13);
            out += unknown;
        }
    }
    return out;
}

std::vector<TestRecord> sampleRecords(std::uint8_t rtype)
{
    std::vector<TestRecord> recs;
    for (int i = 0; i < 5; ++i) {
        TestRecord r;
        r.rtype = rtype;
        r.ts = 1609113600000000000ULL + std::uint64_t(i) * 60'000'000'000ULL;
        r.open = 3702'750'000'000 + i * kEsTick;
        r.high = r.open + 2 * kEsTick;
        r.low = r.open - kEsTick;
        r.close = r.open + kEsTick;
        r.volume = 100 + std::uint64_t(i);
        recs.push_back(r);
    }
    return recs;
}

std::string compress(std::string_view data)
{
    std::string out(ZSTD_compressBound(data.size()), '\0');
    const std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
    out.resize(n);
    return out;
}

} // namespace

class TestDbnReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realFixture();
    void versions_data();
    void versions();
    void multiFrameZstd();
    void truncatedRecord_data();
    void truncatedRecord();
    void truncatedMetadata();
    void corruptZstd();
    void detection();
    void unrealValues_data();
    void unrealValues();
    void versionMustMatchLayout_data();
    void versionMustMatchLayout();
    void insaneSymbols_data();
    void insaneSymbols();
    void unsupportedVersionNamed();
};

void TestDbnReader::realFixture()
{
    QVERIFY2(std::filesystem::exists(FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst"),
             "real data missing: " FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst");
    const ParsedFile f = readBarFile(FOXHUNT_REAL_DATA_DIR "/test_data.ohlcv-1m.dbn.zst");
    QCOMPARE(toString(f.format), toString(FileFormat::Dbn));
    QCOMPARE(f.bars.size(), std::size_t(4));
    QCOMPARE(f.dbn.version, std::uint8_t(3));
    QCOMPARE(f.dbn.dataset, std::string("GLBX.MDP3"));
    QCOMPARE(f.dataset, std::string("GLBX.MDP3"));
    QCOMPARE(f.dbn.schema, std::uint16_t(6));
    QCOMPARE(f.dbn.start, std::uint64_t(1609113600000000000ULL));
    QCOMPARE(f.dbn.end, std::uint64_t(1609200000000000000ULL));
    QCOMPARE(f.dbn.limit, std::uint64_t(4));
    QCOMPARE(f.dbn.stypeIn, std::uint8_t(1));
    QCOMPARE(f.dbn.stypeOut, std::uint8_t(0));
    QCOMPARE(f.dbn.tsOut, false);
    QCOMPARE(f.dbn.symbols, std::vector<std::string>{"ESH1"});
    QVERIFY(f.dbn.partial.empty());
    QVERIFY(f.dbn.notFound.empty());
    QCOMPARE(f.dbn.mappings.size(), std::size_t(1));
    QCOMPARE(f.dbn.mappings[0].rawSymbol, std::string("ESH1"));
    QCOMPARE(f.dbn.mappings[0].startDate, std::uint32_t(20201228));
    QCOMPARE(f.dbn.mappings[0].endDate, std::uint32_t(20201229));
    QCOMPARE(f.dbn.mappings[0].symbol, std::string("5482"));
    QCOMPARE(f.symbols.at(5482), std::string("ESH1"));
    QCOMPARE(f.intervalNs, kNsPerMinute);
    QCOMPARE(f.recordsSkipped, std::uint64_t(0));
    QCOMPARE(f.defaultSymbol, std::string("ES"));
    QVERIFY(f.warnings.empty());

    struct Row {
        std::int64_t ts;
        double o, h, l, c;
        std::uint64_t v;
    };
    const Row expected[] = {
        {1609113600000000000, 3702.75, 3704.75, 3702.50, 3704.75, 306},
        {1609113660000000000, 3704.75, 3705.00, 3704.00, 3704.00, 214},
        {1609113720000000000, 3704.25, 3704.75, 3704.00, 3704.50, 192},
        {1609113780000000000, 3704.50, 3704.50, 3703.00, 3703.00, 158},
    };
    for (std::size_t i = 0; i < 4; ++i) {
        const Bar& b = f.bars[i];
        QCOMPARE(b.instrumentId, std::uint32_t(5482));
        QCOMPARE(b.tsEvent, expected[i].ts);
        QCOMPARE(b.open, fromPoints(expected[i].o));
        QCOMPARE(b.high, fromPoints(expected[i].h));
        QCOMPARE(b.low, fromPoints(expected[i].l));
        QCOMPARE(b.close, fromPoints(expected[i].c));
        QCOMPARE(b.volume, expected[i].v);
        QCOMPARE(f.lines[i], std::uint64_t(i + 1));
    }
    QCOMPARE(f.bars[0].open, std::int64_t(3'702'750'000'000));
}

void TestDbnReader::versions_data()
{
    QTest::addColumn<int>("version");
    QTest::addColumn<int>("schema");
    QTest::addColumn<int>("rtype");
    QTest::addColumn<bool>("tsOut");
    QTest::addColumn<qint64>("interval");
    QTest::newRow("v1 1m") << 1 << 6 << int(kRtypeOhlcv1m) << false << qint64(kNsPerMinute);
    QTest::newRow("v1 deprecated rtype, 1h schema")
        << 1 << 7 << int(kRtypeOhlcvDeprecated) << false << qint64(3600 * kNsPerSecond);
    QTest::newRow("v2 1s ts_out") << 2 << 5 << int(kRtypeOhlcv1s) << true << qint64(kNsPerSecond);
    QTest::newRow("v2 1d") << 2 << 8 << int(kRtypeOhlcv1d) << false << qint64(kNsPerDay);
    QTest::newRow("v3 mixed schema, 1h rtype")
        << 3 << 0xFFFF << int(kRtypeOhlcv1h) << false << qint64(3600 * kNsPerSecond);
    QTest::newRow("v3 eod ts_out") << 3 << 13 << int(kRtypeOhlcvEod) << true << qint64(kNsPerDay);
}

void TestDbnReader::versions()
{
    QFETCH(int, version);
    QFETCH(int, schema);
    QFETCH(int, rtype);
    QFETCH(bool, tsOut);
    QFETCH(qint64, interval);
    const auto recs = sampleRecords(static_cast<std::uint8_t>(rtype));
    const std::string bytes = writeDbn(static_cast<std::uint8_t>(version), static_cast<std::uint16_t>(schema), tsOut,
                                       recs,
                                       /*withUnknownRecord=*/true);
    const ParsedFile f = readBarBuffer("mem.dbn", bytes);
    QCOMPARE(toString(f.format), toString(FileFormat::Dbn));
    QCOMPARE(int(f.dbn.version), version);
    QCOMPARE(f.dbn.tsOut, tsOut);
    QCOMPARE(f.recordsSkipped, std::uint64_t(1));
    QCOMPARE(f.bars.size(), recs.size());
    QCOMPARE(f.intervalNs, std::int64_t(interval));
    QCOMPARE(f.dbn.symbols, std::vector<std::string>{"ESH1"});
    QCOMPARE(f.dbn.notFound, std::vector<std::string>{"ESZ9"});
    QCOMPARE(f.symbols.at(5482), std::string("ESH1"));
    QCOMPARE(f.warnings.size(), std::size_t(2));
    QVERIFY(f.warnings[0].find("1 DBN record of other types skipped") != std::string::npos);
    QVERIFY(f.warnings[1].find("ESZ9") != std::string::npos);
    for (std::size_t i = 0; i < recs.size(); ++i) {
        QCOMPARE(f.bars[i].tsEvent, std::int64_t(recs[i].ts));
        QCOMPARE(f.bars[i].open, recs[i].open);
        QCOMPARE(f.bars[i].high, recs[i].high);
        QCOMPARE(f.bars[i].low, recs[i].low);
        QCOMPARE(f.bars[i].close, recs[i].close);
        QCOMPARE(f.bars[i].volume, recs[i].volume);
    }
    // Record numbers count the skipped record (record 2).
    QCOMPARE(f.lines[0], std::uint64_t(1));
    QCOMPARE(f.lines[1], std::uint64_t(3));
}

void TestDbnReader::multiFrameZstd()
{
    const std::string plain = writeDbn(2, 6, false, sampleRecords(kRtypeOhlcv1m), /*withUnknownRecord=*/false);
    const std::size_t half = plain.size() / 2;
    const std::string twoFrames = compress(std::string_view(plain).substr(0, half)) +
                                  compress(std::string_view(plain).substr(half));
    QCOMPARE(zstdDecompress("two.zst", twoFrames), plain);
    const ParsedFile a = readBarBuffer("plain.dbn", plain);
    const ParsedFile b = readBarBuffer("two.dbn.zst", twoFrames);
    QCOMPARE(b.bars.size(), std::size_t(5));
    QVERIFY(a.bars == b.bars);
    QCOMPARE(b.lines, a.lines);
}

void TestDbnReader::truncatedRecord_data()
{
    QTest::addColumn<int>("cut");
    QTest::addColumn<quint64>("record");
    QTest::newRow("last record short by 1") << 1 << quint64(6);
    QTest::newRow("last record short by 40") << 40 << quint64(6);
    QTest::newRow("only one byte of the last record") << 55 << quint64(6);
}

void TestDbnReader::truncatedRecord()
{
    QFETCH(int, cut);
    QFETCH(quint64, record);
    std::string bytes = writeDbn(3, 6, false, sampleRecords(kRtypeOhlcv1m), /*withUnknownRecord=*/true);
    bytes.resize(bytes.size() - std::size_t(cut));
    try {
        readBarBuffer("cut.dbn", bytes);
        QFAIL("a truncated file must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(record));
        QVERIFY2(e.reason().find("truncated") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).rfind("cut.dbn:" + std::to_string(record) + ": ", 0) == 0, e.what());
    }
    // The same cut inside a zstd stream is caught as well.
    QVERIFY_THROWS_EXCEPTION(ImportError, readBarBuffer("cut.dbn.zst", compress(bytes)));
}

void TestDbnReader::truncatedMetadata()
{
    const std::string bytes = writeDbn(3, 6, false, sampleRecords(kRtypeOhlcv1m), /*withUnknownRecord=*/false);
    try {
        readBarBuffer("meta.dbn", bytes.substr(0, 60));
        QFAIL("truncated metadata must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(0));
        QVERIFY2(e.reason().find("truncated DBN metadata") != std::string::npos, e.what());
    }
}

void TestDbnReader::corruptZstd()
{
    std::string z = compress(writeDbn(3, 6, false, sampleRecords(kRtypeOhlcv1m), false));
    QVERIFY_THROWS_EXCEPTION(ImportError, zstdDecompress("short.zst", std::string_view(z).substr(0, z.size() - 5)));
    // A frame header with its reserved bit set after a good frame.
    const std::string garbage = z + std::string("\x28\xB5\x2F\xFD\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 12);
    QVERIFY_THROWS_EXCEPTION(ImportError, readBarBuffer("bad.zst", garbage));
}

void TestDbnReader::detection()
{
    const std::string dbn = writeDbn(1, 6, false, sampleRecords(kRtypeOhlcv1m), false);
    QCOMPARE(toString(detectFormat("x", dbn)), toString(FileFormat::Dbn));
    QCOMPARE(toString(detectFormat("x", compress(dbn))), toString(FileFormat::Dbn));
    QVERIFY_THROWS_EXCEPTION(ImportError, detectFormat("x", std::string("\x01\x02\x00\x03", 4)));
    ReadOptions forced;
    forced.format = FileFormat::Dbn;
    QVERIFY_THROWS_EXCEPTION(ImportError, readBarBuffer("text.csv", "timestamp,open\n", forced));
}

// Issue 18.5: Databento's undefined values and timestamps past int64 used to be stored.
void TestDbnReader::unrealValues_data()
{
    QTest::addColumn<int>("field"); // 0 ts, 1 close, 2 volume
    QTest::addColumn<quint64>("value");
    QTest::addColumn<QString>("reason");
    QTest::newRow("undefined ts_event") << 0 << quint64(UINT64_MAX) << "undefined ts_event";
    QTest::newRow("ts_event past int64") << 0 << quint64((1ULL << 63) + 5) << "lies after 2262";
    QTest::newRow("ts_event 2300") << 0 << quint64(10'413'792'000ULL * 1'000'000'000ULL) << "lies after 2262";
    QTest::newRow("ts_event 2262-04-05") << 0 << quint64(106'745ULL * 86'400'000'000'000ULL)
                                         << "2262-04-05T00:00:00Z is outside the accepted range";
    QTest::newRow("ts_event 0") << 0 << quint64(0) << "1970-01-01T00:00:00Z is outside the accepted range";
    QTest::newRow("undefined price") << 1 << quint64(INT64_MAX) << "undefined close price";
    QTest::newRow("volume 2^63") << 2 << quint64(1ULL << 63) << "volume 9223372036854775808 cannot be real";
    QTest::newRow("volume UINT64_MAX") << 2 << quint64(UINT64_MAX) << "cannot be real";
}

void TestDbnReader::unrealValues()
{
    QFETCH(int, field);
    QFETCH(quint64, value);
    QFETCH(QString, reason);
    std::vector<TestRecord> recs = sampleRecords(kRtypeOhlcv1m);
    TestRecord& r = recs[3];
    if (field == 0) r.ts = value;
    if (field == 1) r.close = static_cast<std::int64_t>(value);
    if (field == 2) r.volume = value;
    const std::string bytes = writeDbn(3, 6, false, recs, /*withUnknownRecord=*/false);
    try {
        ParsedFile f = readBarBuffer("u.dbn", bytes);
        validateBars(f);
        QFAIL("the record must be refused");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(4));
        QVERIFY2(e.reason().find(reason.toStdString()) != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).rfind("u.dbn:4: ", 0) == 0, e.what());
    }
}

// Issue 18.6: a changed version byte made the metadata misread, and the bars were stored
// under a symbol read from the wrong offset.
void TestDbnReader::versionMustMatchLayout_data()
{
    QTest::addColumn<int>("written");
    QTest::addColumn<int>("claimed");
    QTest::addColumn<int>("extra"); // bytes appended to the metadata (declared length grows)
    QTest::newRow("v2 claimed as v1") << 2 << 1 << 0;
    QTest::newRow("v3 claimed as v1") << 3 << 1 << 0;
    QTest::newRow("v1 claimed as v2") << 1 << 2 << 0;
    QTest::newRow("v1 claimed as v3") << 1 << 3 << 0;
    QTest::newRow("v3 with 16 unread metadata bytes") << 3 << 3 << 16;
    QTest::newRow("v1 with 8 unread metadata bytes") << 1 << 1 << 8;
}

void TestDbnReader::versionMustMatchLayout()
{
    QFETCH(int, written);
    QFETCH(int, claimed);
    QFETCH(int, extra);
    std::string bytes = writeDbn(static_cast<std::uint8_t>(written), 6, false, sampleRecords(kRtypeOhlcv1m),
                                 /*withUnknownRecord=*/false);
    bytes[3] = static_cast<char>(claimed);
    if (extra > 0) {
        std::uint32_t metaLen = 0;
        std::memcpy(&metaLen, bytes.data() + 4, 4);
        // Non-zero bytes: more than alignment padding.
        bytes.insert(8 + metaLen, std::string(std::size_t(extra), '\x55'));
        metaLen += std::uint32_t(extra);
        std::memcpy(bytes.data() + 4, &metaLen, 4);
    }
    try {
        const ParsedFile f = readBarBuffer("v.dbn", bytes);
        QFAIL(qPrintable("must be rejected, read " + QString::number(f.bars.size()) + " bars, symbol " +
                         QString::fromStdString(f.symbols.empty() ? std::string() : f.symbols.begin()->second)));
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(0));
        QVERIFY2(e.reason().find("DBN") != std::string::npos, e.what());
        QVERIFY2(e.reason().find("v" + std::to_string(claimed)) != std::string::npos, e.what());
    }
}

void TestDbnReader::insaneSymbols_data()
{
    QTest::addColumn<QByteArray>("from");
    QTest::addColumn<QByteArray>("to");
    QTest::newRow("control bytes in a symbol") << QByteArray("ESH1", 4) << QByteArray("E\x01\x02", 4);
    QTest::newRow("garbage after the terminator") << QByteArray("ESZ9\0\0", 6) << QByteArray("ESZ9\0Z", 6);
    QTest::newRow("control bytes in the dataset") << QByteArray("GLBX.MDP3", 9)
                                                  << QByteArray("GLBX\x7f\x10"
                                                                "DP3",
                                                                9);
}

void TestDbnReader::insaneSymbols()
{
    QFETCH(QByteArray, from);
    QFETCH(QByteArray, to);
    std::string bytes = writeDbn(2, 6, false, sampleRecords(kRtypeOhlcv1m), /*withUnknownRecord=*/false);
    const std::size_t at = bytes.find(std::string(from.constData(), std::size_t(from.size())));
    QVERIFY(at != std::string::npos && at < 8 + 200);
    bytes.replace(at, std::size_t(to.size()), std::string(to.constData(), std::size_t(to.size())));
    try {
        readBarBuffer("s.dbn", bytes);
        QFAIL("a metadata string that is not text must be rejected");
    } catch (const ImportError& e) {
        QCOMPARE(e.line(), std::uint64_t(0));
        QVERIFY2(e.reason().find("DBN metadata") != std::string::npos, e.what());
    }
}

// Issue 18.12: version 9 was called an "unrecognised binary file".
void TestDbnReader::unsupportedVersionNamed()
{
    std::string bytes = writeDbn(3, 6, false, sampleRecords(kRtypeOhlcv1m), /*withUnknownRecord=*/false);
    bytes[3] = '\x09';
    QCOMPARE(toString(detectFormat("x", bytes)), toString(FileFormat::Dbn));
    for (const std::string& data : {bytes, compress(bytes)}) {
        try {
            readBarBuffer("v9.dbn", data);
            QFAIL("version 9 must be rejected");
        } catch (const ImportError& e) {
            QCOMPARE(e.reason(), std::string("unsupported DBN version 9 (1-3 are supported)"));
        }
    }
    // Text that happens to start with "DBN" is still text.
    QVERIFY_THROWS_EXCEPTION(ImportError, detectFormat("x", std::string("DBNtimestamp,open\n")));
}

} // namespace tst_dbn_reader

FOXHUNT_TEST_APPLESS_MAIN(tst_dbn_reader::TestDbnReader)
#include "tst_dbn_reader.moc"
