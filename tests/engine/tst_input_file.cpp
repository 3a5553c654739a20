// SPDX-License-Identifier: GPL-3.0-or-later
// Reading an import once (engine/data/input_file.h): a named FIFO, /dev/zero
// and folders are refused from their type alone, before anything opens them;
// a pipe handed over as /dev/fd/N (a shell's `<(...)`) or /dev/stdin is read
// once, hashed on the way, and bounded.

#include "engine/data/import_error.h"
#include "engine/data/input_file.h"
#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"
#include "engine/store/sha256.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tst_input_file {

using namespace foxhunt;

namespace {

const char kCsv[] = "timestamp,open,high,low,close,volume\n"
                    "2021-03-08 09:30:00,3800.00,3801.00,3799.50,3800.50,120\n"
                    "2021-03-08 09:31:00,3800.50,3802.00,3800.25,3801.75,95\n"
                    "2021-03-08 09:32:00,3801.75,3803.00,3801.50,3802.25,130\n";

/// A pipe already holding `bytes` with its write end closed: what `<(cat file)` hands over.
class FilledPipe {
public:
    explicit FilledPipe(std::string_view bytes)
    {
        int fds[2] = {-1, -1};
        if (::pipe(fds) != 0) return;
        m_read = fds[0];
        // Below the pipe's 64 KiB buffer, so the write completes without a reader.
        m_ok = ::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
        ::close(fds[1]);
    }
    ~FilledPipe()
    {
        if (m_read >= 0) ::close(m_read);
    }
    bool ok() const { return m_ok; }
    std::string path() const { return "/dev/fd/" + std::to_string(m_read); }

private:
    int m_read = -1;
    bool m_ok = false;
};

} // namespace

class TestInputFile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void refusedByTypeWithoutOpening_data();
    void refusedByTypeWithoutOpening();
    void regularFileIsReadAndHashedOnce();
    void pipeIsReadOnce();
    void pipeImportsIntoTheStore();
    void pipeIsBounded();
    void closedDescriptorIsRefused();

private:
    QTemporaryDir m_dir;
};

void TestInputFile::refusedByTypeWithoutOpening_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("kind");
    const QString fifo = m_dir.filePath(QStringLiteral("no-writer.fifo"));
    QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
    QTest::newRow("named FIFO without a writer") << fifo << "named FIFO";
    QTest::newRow("/dev/zero") << "/dev/zero"
                               << "character device";
    QTest::newRow("folder") << m_dir.path() << "folder";
}

void TestInputFile::refusedByTypeWithoutOpening()
{
    QFETCH(QString, path);
    QFETCH(QString, kind);
    // The type check opens nothing, so it cannot hang whatever the path is.
    const std::optional<std::string> problem = inputFileProblem(path.toStdString());
    QVERIFY2(problem, "a non-regular file was accepted for reading");
    QVERIFY2(QString::fromStdString(*problem).contains(kind), problem->c_str());
    // Only once the check refuses is readInputFile (which would block on a FIFO or never end on
    // /dev/zero if it opened them) called: it must refuse with the same reason.
    try {
        readInputFile(path.toStdString());
        QFAIL("readInputFile read a non-regular file");
    } catch (const ImportError& e) {
        QCOMPARE(e.reason(), *problem);
        QCOMPARE(QString::fromStdString(e.file()), path);
    }
    // The importer gives the same answer.
    BarStore store(m_dir.filePath(QStringLiteral("refused.db")).toStdString());
    QVERIFY_THROWS_EXCEPTION(ImportError, BarImporter(store).importFile(path.toStdString()));
    QVERIFY(store.imports().empty());
}

void TestInputFile::regularFileIsReadAndHashedOnce()
{
    const std::string path = m_dir.filePath(QStringLiteral("bars.csv")).toStdString();
    {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(::write(fd, kCsv, sizeof kCsv - 1), static_cast<ssize_t>(sizeof kCsv - 1));
        ::close(fd);
    }
    QVERIFY(!inputFileProblem(path));
    Sha256 hash;
    int chunks = 0;
    const std::string bytes = readInputFile(path, {}, [&](std::string_view chunk) {
        ++chunks;
        hash.update(chunk);
    });
    QCOMPARE(bytes, std::string(kCsv));
    QCOMPARE(chunks, 1);
    QCOMPARE(hash.hex(), sha256Hex(kCsv));
}

void TestInputFile::pipeIsReadOnce()
{
    FilledPipe pipe(kCsv);
    QVERIFY(pipe.ok());
    QVERIFY(!inputFileProblem(pipe.path()));
    std::string seen;
    const std::string bytes = readInputFile(pipe.path(), {}, [&](std::string_view chunk) { seen += chunk; });
    QCOMPARE(bytes, std::string(kCsv));
    QCOMPARE(seen, bytes);
}

void TestInputFile::pipeImportsIntoTheStore()
{
    // `foxhunt-cli import <(cat f)` read the pipe once to hash it and found it empty when parsing.
    FilledPipe pipe(kCsv);
    QVERIFY(pipe.ok());
    BarStore store(m_dir.filePath(QStringLiteral("pipe.db")).toStdString());
    const ImportResult r = BarImporter(store).importFile(pipe.path());
    QCOMPARE(r.imported, std::uint64_t{3});
    QCOMPARE(r.sha256, sha256Hex(kCsv));
    QCOMPARE(store.imports().size(), std::size_t{1});
}

void TestInputFile::pipeIsBounded()
{
    FilledPipe pipe(kCsv);
    QVERIFY(pipe.ok());
    ReadLimits limits;
    limits.maxStreamBytes = 64;
    try {
        readInputFile(pipe.path(), limits);
        QFAIL("a pipe beyond its bound was read");
    } catch (const ImportError& e) {
        QVERIFY2(e.reason().find("more than 64 bytes") != std::string::npos, e.what());
    }
}

void TestInputFile::closedDescriptorIsRefused()
{
    int fds[2] = {-1, -1};
    QVERIFY(::pipe(fds) == 0);
    ::close(fds[0]);
    ::close(fds[1]);
    const std::string path = "/dev/fd/" + std::to_string(fds[0]);
    const std::optional<std::string> problem = inputFileProblem(path);
    QVERIFY(problem);
    QVERIFY2(problem->find("not open") != std::string::npos, problem->c_str());
    QVERIFY_THROWS_EXCEPTION(ImportError, readInputFile(path));
}

} // namespace tst_input_file

FOXHUNT_TEST_APPLESS_MAIN(tst_input_file::TestInputFile)
#include "tst_input_file.moc"
