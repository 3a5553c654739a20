// SPDX-License-Identifier: GPL-3.0-or-later
// Bounded zstd decompression (zstdDecompress in engine/data/reader.cpp): a
// frame that claims gigabytes is refused before any memory is set aside for
// it, a bomb stops at the limit (the file's size times a ratio, with a floor
// and a ceiling), and a configured limit lets a larger file through.

#include "engine/data/import_error.h"
#include "engine/data/reader.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <sys/resource.h>

namespace tst_zstd_decompress {

using namespace foxhunt;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

/// The start of a frame whose header claims `claimed` bytes: 1 KiB of data flushed, then cut off.
std::string claimingFrame(std::uint64_t claimed)
{
    std::unique_ptr<ZSTD_CCtx, CCtxDeleter> c(ZSTD_createCCtx());
    ZSTD_CCtx_setPledgedSrcSize(c.get(), claimed);
    const std::string data(1024, 'x');
    std::string out(ZSTD_compressBound(data.size()) + 64, '\0');
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    ZSTD_compressStream2(c.get(), &ob, &in, ZSTD_e_flush);
    out.resize(ob.pos);
    return out;
}

/// `bytes` zeros as one zstd frame that does not say its size, compressed 1 MiB at a time.
std::string bomb(std::uint64_t bytes)
{
    std::unique_ptr<ZSTD_CCtx, CCtxDeleter> c(ZSTD_createCCtx());
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_contentSizeFlag, 0);
    const std::string zeros(kMiB, '\0');
    std::string out;
    std::string chunk(ZSTD_CStreamOutSize(), '\0');
    for (std::uint64_t done = 0; done < bytes; done += kMiB) {
        const bool last = done + kMiB >= bytes;
        ZSTD_inBuffer in{zeros.data(), static_cast<std::size_t>(std::min<std::uint64_t>(kMiB, bytes - done)), 0};
        std::size_t remaining = 0;
        do {
            ZSTD_outBuffer ob{chunk.data(), chunk.size(), 0};
            remaining = ZSTD_compressStream2(c.get(), &ob, &in, last ? ZSTD_e_end : ZSTD_e_continue);
            out.append(chunk.data(), ob.pos);
        } while (last ? remaining != 0 : in.pos < in.size);
    }
    return out;
}

std::uint64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

} // namespace

class TestZstdDecompress : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void limitFollowsTheFileSize_data();
    void limitFollowsTheFileSize();
    void claimBeyondTheLimitIsRefusedUpFront_data();
    void claimBeyondTheLimitIsRefusedUpFront();
    void bombStopsAtTheLimit();
    void configuredLimitAdmitsALargerFile();
    void readBarBufferUsesTheReadLimits();
};

void TestZstdDecompress::limitFollowsTheFileSize_data()
{
    QTest::addColumn<quint64>("compressed");
    QTest::addColumn<quint64>("limit");
    QTest::newRow("27 bytes: the floor") << quint64(27) << quint64(64 * kMiB);
    QTest::newRow("33 KB bomb: the floor") << quint64(33'000) << quint64(64 * kMiB);
    QTest::newRow("1 MiB: 200x") << quint64(kMiB) << quint64(200 * kMiB);
    QTest::newRow("100 MiB: the ceiling") << quint64(100 * kMiB) << quint64(4 * kGiB);
    QTest::newRow("no overflow") << quint64(std::numeric_limits<std::uint64_t>::max()) << quint64(4 * kGiB);
}

void TestZstdDecompress::limitFollowsTheFileSize()
{
    QFETCH(quint64, compressed);
    QFETCH(quint64, limit);
    QCOMPARE(decompressedLimit(compressed, ReadLimits{}), std::uint64_t(limit));
}

void TestZstdDecompress::claimBeyondTheLimitIsRefusedUpFront_data()
{
    QTest::addColumn<quint64>("claimed");
    QTest::addColumn<QString>("said");
    QTest::newRow("2 GiB") << quint64(2 * kGiB) << "claim 2 GiB";
    QTest::newRow("15 GiB") << quint64(15 * kGiB) << "claim 15 GiB";
}

void TestZstdDecompress::claimBeyondTheLimitIsRefusedUpFront()
{
    QFETCH(quint64, claimed);
    QFETCH(QString, said);
    const std::string frame = claimingFrame(claimed);
    QCOMPARE(ZSTD_getFrameContentSize(frame.data(), frame.size()), static_cast<unsigned long long>(claimed));
    QVERIFY(frame.size() < 64);
    const std::uint64_t before = peakRssBytes();
    try {
        zstdDecompress("claims.zst", frame);
        QFAIL("a frame claiming more than the limit was decompressed");
    } catch (const ImportError& e) {
        QVERIFY2(e.reason().find(said.toStdString()) != std::string::npos, e.what());
        QVERIFY2(e.reason().find("the limit of 64 MiB") != std::string::npos, e.what());
        QVERIFY2(e.reason().find("nothing was decompressed") != std::string::npos, e.what());
    }
    // The old decoder set aside (and zero-filled) the claimed size first.
    QVERIFY2(peakRssBytes() - before < 64 * kMiB, qPrintable(QString::number((peakRssBytes() - before) / kMiB)));
}

void TestZstdDecompress::bombStopsAtTheLimit()
{
    const std::string z = bomb(512 * kMiB);
    // Small enough that the limit is the 64 MiB floor, not 200x the input.
    QVERIFY2(z.size() * 200 < 64 * kMiB, qPrintable(QString::number(z.size())));
    QCOMPARE(ZSTD_getFrameContentSize(z.data(), z.size()), ZSTD_CONTENTSIZE_UNKNOWN);
    const std::uint64_t before = peakRssBytes();
    try {
        zstdDecompress("bomb.zst", z);
        QFAIL("a zstd bomb was decompressed in full");
    } catch (const ImportError& e) {
        QVERIFY2(e.reason().find("decompresses to more than the limit of 64 MiB") != std::string::npos, e.what());
        QVERIFY2(e.reason().find("decompression stopped") != std::string::npos, e.what());
    }
    // At most the limit, the last chunk and the string's growth: far below the 512 MiB it holds.
    const std::uint64_t grown = peakRssBytes() - before;
    QVERIFY2(grown < 200 * kMiB, qPrintable(QStringLiteral("%1 MiB").arg(grown / kMiB)));
}

void TestZstdDecompress::configuredLimitAdmitsALargerFile()
{
    const std::string z = bomb(96 * kMiB);
    QVERIFY_THROWS_EXCEPTION(ImportError, zstdDecompress("big.zst", z));
    ReadLimits limits;
    limits.minDecompressedBytes = limits.maxDecompressedBytes = 128 * kMiB;
    const std::string out = zstdDecompress("big.zst", z, limits);
    QCOMPARE(out.size(), static_cast<std::size_t>(96 * kMiB));
    QVERIFY(std::all_of(out.begin(), out.end(), [](char c) { return c == '\0'; }));
    // A ceiling below the content refuses it, whatever the ratio would allow.
    limits.maxCompressionRatio = 1'000'000;
    limits.minDecompressedBytes = 0;
    limits.maxDecompressedBytes = 32 * kMiB;
    QVERIFY_THROWS_EXCEPTION(ImportError, zstdDecompress("big.zst", z, limits));
}

void TestZstdDecompress::readBarBufferUsesTheReadLimits()
{
    const std::string z = bomb(2 * kMiB);
    ReadOptions options;
    options.limits.minDecompressedBytes = options.limits.maxDecompressedBytes = kMiB;
    try {
        readBarBuffer("small-limit.dbn.zst", z, options);
        QFAIL("readBarBuffer ignored its limits");
    } catch (const ImportError& e) {
        QVERIFY2(e.reason().find("the limit of 1 MiB") != std::string::npos, e.what());
    }
}

} // namespace tst_zstd_decompress

FOXHUNT_TEST_APPLESS_MAIN(tst_zstd_decompress::TestZstdDecompress)
#include "tst_zstd_decompress.moc"
