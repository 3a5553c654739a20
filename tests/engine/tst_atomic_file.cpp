// SPDX-License-Identifier: GPL-3.0-or-later
// All-or-nothing file output (engine/store/atomic_file.h): short writes are
// continued, a full disk, whether injected through the write seam or real
// (RLIMIT_FSIZE), throws with the reason and leaves the old target (or none)
// and no temporary file behind.

#include "engine/store/atomic_file.h"
#include "tests/engine/file_size_limit.h"
#include "tests/support/test_bundle.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace tst_atomic_file {

class TestAtomicFile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void shortWritesAreContinued();
    void fullDiskLeavesNoTruncatedFile_data();
    void fullDiskLeavesNoTruncatedFile();
    void writeWithoutProgressFails();
    void realFileSizeLimitFails();
    void missingFolderFails();

private:
    QStringList entries() const
    {
        return QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
    }
    std::string target() const { return m_dir.filePath(QStringLiteral("report.html")).toStdString(); }
    static QByteArray contents(const std::string& path)
    {
        QFile f(QString::fromStdString(path));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    /// The message of the std::runtime_error `f` throws, or "" when it throws nothing.
    template <class F>
    static QString failure(F&& f)
    {
        try {
            f();
        } catch (const std::runtime_error& e) {
            return QString::fromStdString(e.what());
        }
        return {};
    }
    QTemporaryDir m_dir;
    std::string m_payload;
};

void TestAtomicFile::initTestCase()
{
    QVERIFY(m_dir.isValid());
    for (int i = 0; i < 20000; ++i) m_payload += "line " + std::to_string(i) + '\n';
}

void TestAtomicFile::init()
{
    for (const QString& name : entries()) QFile::remove(m_dir.filePath(name));
}

void TestAtomicFile::shortWritesAreContinued()
{
    int calls = 0;
    foxhunt::writeFileAtomically(target(), m_payload, [&](int fd, const char* data, std::size_t size) {
        ++calls;
        return ::write(fd, data, std::min<std::size_t>(size, 4093));
    });
    QCOMPARE(contents(target()).toStdString(), m_payload);
    QVERIFY(calls > 10);
    QCOMPARE(entries(), QStringList{QStringLiteral("report.html")});
}

void TestAtomicFile::fullDiskLeavesNoTruncatedFile_data()
{
    QTest::addColumn<bool>("existing");
    QTest::addColumn<int>("error");
    QTest::newRow("new file, ENOSPC") << false << ENOSPC;
    QTest::newRow("old file kept, ENOSPC") << true << ENOSPC;
    QTest::newRow("old file kept, EDQUOT") << true << EDQUOT;
    QTest::newRow("new file, EIO") << false << EIO;
}

void TestAtomicFile::fullDiskLeavesNoTruncatedFile()
{
    QFETCH(bool, existing);
    QFETCH(int, error);
    const QByteArray old("the previous report\n");
    if (existing) {
        QFile f(QString::fromStdString(target()));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(old);
    }
    // The disk fills after 10 000 bytes: the first write is short, the next one fails.
    std::size_t written = 0;
    const QString message = failure([&] {
        foxhunt::writeFileAtomically(target(), m_payload, [&](int fd, const char* data, std::size_t size) -> ssize_t {
            if (written >= 10000) {
                errno = error;
                return -1;
            }
            const ssize_t n = ::write(fd, data, std::min<std::size_t>(size, 10000 - written));
            if (n > 0) written += static_cast<std::size_t>(n);
            return n;
        });
    });
    QVERIFY2(!message.isEmpty(), "a failed write was reported as written");
    QVERIFY2(message.contains(QString::fromStdString(target())), qPrintable(message));
    QVERIFY2(message.contains(QString::fromLatin1(std::strerror(error))), qPrintable(message));
    QCOMPARE(written, std::size_t{10000});
    if (existing) {
        QCOMPARE(entries(), QStringList{QStringLiteral("report.html")});
        QCOMPARE(contents(target()), old);
    } else {
        QCOMPARE(entries(), QStringList{});
    }
}

void TestAtomicFile::writeWithoutProgressFails()
{
    // write(2) returning 0 forever must not spin: the seam gives up after 1000 calls, the writer after one.
    int calls = 0;
    const QString message = failure([&] {
        foxhunt::writeFileAtomically(target(), m_payload, [&](int, const char*, std::size_t) -> ssize_t {
            if (++calls > 1000) {
                errno = EIO;
                return -1;
            }
            return 0;
        });
    });
    QVERIFY(!message.isEmpty());
    QCOMPARE(calls, 1);
    QCOMPARE(entries(), QStringList{});
}

void TestAtomicFile::realFileSizeLimitFails()
{
    QString message;
    {
        const foxhunt::testing::FileSizeLimit limit(16 * 1024);
        QVERIFY(limit.active());
        message = failure([&] { foxhunt::writeFileAtomically(target(), m_payload); });
    }
    QVERIFY2(!message.isEmpty(), "a write past RLIMIT_FSIZE was reported as written");
    QVERIFY2(message.contains(QString::fromLatin1(std::strerror(EFBIG))), qPrintable(message));
    QCOMPARE(entries(), QStringList{});
    // Within the limit the same call writes everything.
    foxhunt::writeFileAtomically(target(), m_payload);
    QCOMPARE(contents(target()).toStdString(), m_payload);
}

void TestAtomicFile::missingFolderFails()
{
    const std::string path = m_dir.filePath(QStringLiteral("no/such/folder/r.json")).toStdString();
    const QString message = failure([&] { foxhunt::writeFileAtomically(path, "{}"); });
    QVERIFY2(message.contains(QString::fromLatin1(std::strerror(ENOENT))), qPrintable(message));
}

} // namespace tst_atomic_file

FOXHUNT_TEST_APPLESS_MAIN(tst_atomic_file::TestAtomicFile)
#include "tst_atomic_file.moc"
