// SPDX-License-Identifier: GPL-3.0-or-later
// Runs, metrics, evaluations and checkpoints in SQLite; runs left behind by a
// dead process are marked interrupted and keep every committed metric.

#include "engine/store/bar_store.h"
#include "engine/store/database.h"
#include "engine/store/run_store.h"
#include "engine/store/sqlite_util.h"
#include "file_size_limit.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tst_run_store {

using namespace foxhunt;

class TestRunStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void createsAndReadsRuns();
    void metricsRoundTripInOrder();
    void evaluationsAndCheckpoints();
    void deadOwnerIsInterrupted();
    void reusedPidDoesNotKeepARunRunning();
    void liveOwnerInAnotherProcessKeepsItsRun();
    void fullDiskLeavesItsReason();
    void deleteCascades();
    void runsHaveDistinctUuids();
    void deleteMetricsAfterKeepsEarlierSteps();
    void checkpointPathsFollowTheDatabase();
    void storesShareOneDatabase();
    void namesNotesAndTags();
    void badLabelsAreRefused_data();
    void badLabelsAreRefused();
    void tagsGoWithTheirRun();
    void versionFourDatabaseMigrates();
    void trashHidesAndRestores();
    void trashRefusesRunningAndResume();
    void purgeFromTrashDeletes();
    void trashedIdIsNotReused();
    void trashMigrationKeepsRuns();
    void groupsKeepTheirMembers();
    void aNewRunJoinsItsGroupAsItIsCreated();
    void groupOfAVanishedProcessIsInterrupted();
    void migrationAddsGroupsToAnOlderStore();

private:
    QTemporaryDir m_dir;
    std::string m_path;
    int m_n = 0;
};

void TestRunStore::init()
{
    QVERIFY(m_dir.isValid());
    m_path = m_dir.filePath(QStringLiteral("runs-%1.db").arg(++m_n)).toStdString();
}

void TestRunStore::createsAndReadsRuns()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    SeriesInfo s;
    s.symbol = "ES";
    const std::int64_t id = runs.createRun("first", R"({"seed":3})", s, 10, 20, R"({"torch":"1.13"})");
    QVERIFY(id > 0);
    auto info = runs.run(id);
    QVERIFY(info);
    QCOMPARE(info->name, std::string("first"));
    QVERIFY(info->status == RunStatus::Running);
    QCOMPARE(info->fromTs, std::int64_t(10));
    runs.setStatus(id, RunStatus::Failed, "out of memory");
    info = runs.run(id);
    QVERIFY(info->status == RunStatus::Failed);
    QCOMPARE(info->error, std::string("out of memory"));
    QVERIFY(info->finishedNs >= info->createdNs);
    QCOMPARE(runs.runs().size(), std::size_t(1));
    QVERIFY(!runs.run(id + 1));
}

void TestRunStore::metricsRoundTripInOrder()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("m", "{}", {}, 0, 0, "{}");
    MetricBatch batch;
    for (int i = 0; i < 1000; ++i) {
        batch.push_back({"dqn", "loss", i, 100 + i, 1.0 / (1 + i)});
        batch.push_back({"ppo", "entropy", i, 100 + i, 0.5});
    }
    batch.push_back({"dqn", "loss", 1000, 0, std::nan("")});
    runs.appendMetrics(id, batch);
    QCOMPARE(runs.metricCount(id), std::uint64_t(2001));
    const MetricBatch loss = runs.metrics(id, "dqn", "loss");
    QCOMPARE(loss.size(), std::size_t(1001));
    for (int i = 0; i < 1000; ++i) QCOMPARE(loss[static_cast<std::size_t>(i)].value, 1.0 / (1 + i));
    QVERIFY(std::isnan(loss.back().value));
    QCOMPARE(runs.metrics(id, "ppo").size(), std::size_t(1000));
}

void TestRunStore::evaluationsAndCheckpoints()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("e", "{}", {}, 0, 0, "{}");
    runs.saveEvaluation(id, "dqn", "test", R"({"pnl":1})");
    runs.saveEvaluation(id, "dqn", "test", R"({"pnl":2})");
    QCOMPARE(runs.evaluations(id).size(), std::size_t(1));
    QCOMPARE(runs.evaluations(id).front().resultJson, std::string(R"({"pnl":2})"));
    runs.addCheckpoint(id, "dqn", 100, "/tmp/a.pt");
    runs.addCheckpoint(id, "dqn", 200, "/tmp/b.pt");
    runs.addCheckpoint(id, "ppo", 50, "/tmp/c.pt");
    const auto last = runs.lastCheckpoint(id, "dqn");
    QVERIFY(last);
    QCOMPARE(last->step, std::int64_t(200));
    QVERIFY(!runs.lastCheckpoint(id, "tft"));
}

namespace {

/// Runs `body` in a child process that then ends without finishing its run, as a
/// crashed or killed owner would; returns the child's exit status.
template <typename Body>
int inChild(Body body)
{
    const pid_t child = ::fork();
    if (child == 0) {
        int code = 1;
        try {
            code = body();
        } catch (...) {
            code = 3;
        }
        ::_exit(code);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Creates a run in a child process that ends without finishing it; returns its id.
std::int64_t runOfAVanishedProcess(const std::string& path, const char* name)
{
    int fds[2];
    if (::pipe(fds) != 0) return 0;
    const int code = inChild([&] {
        BarStore bars(path);
        RunStore runs(bars);
        const std::int64_t id = runs.createRun(name, "{}", {}, 0, 0, "{}");
        runs.appendMetrics(id, {{"dqn", "loss", 1, 1, 0.25}});
        return ::write(fds[1], &id, sizeof id) == sizeof id ? 0 : 2;
    });
    std::int64_t id = 0;
    if (code != 0 || ::read(fds[0], &id, sizeof id) != sizeof id) id = 0;
    ::close(fds[0]);
    ::close(fds[1]);
    return id;
}

} // namespace

void TestRunStore::deadOwnerIsInterrupted()
{
    const std::int64_t orphan = runOfAVanishedProcess(m_path, "orphan");
    QVERIFY(orphan > 0);
    std::int64_t mine = 0;
    {
        // A run of this process, whose RunStore has gone: the process still owns it.
        BarStore bars(m_path);
        RunStore runs(bars);
        mine = runs.createRun("mine", "{}", {}, 0, 0, "{}");
    }
    BarStore bars(m_path);
    RunStore runs(bars);
    QCOMPARE(runs.markInterruptedRuns(), 1);
    QVERIFY(runs.run(orphan)->status == RunStatus::Interrupted);
    QCOMPARE(QString::fromStdString(runs.run(orphan)->error),
             QStringLiteral("the process running it ended unexpectedly"));
    QVERIFY(runs.run(mine)->status == RunStatus::Running);
    QCOMPARE(runs.metricCount(orphan), std::uint64_t(1));
    QCOMPARE(runs.markInterruptedRuns(), 0);
    runs.setStatus(mine, RunStatus::Finished);
    QCOMPARE(runs.markInterruptedRuns(), 0);
}

void TestRunStore::reusedPidDoesNotKeepARunRunning()
{
    // Two runs whose owners ended, their process IDs since taken by live processes
    // (init, and this very process): the IDs are alive, the owners are not.
    const std::int64_t a = runOfAVanishedProcess(m_path, "a");
    const std::int64_t b = runOfAVanishedProcess(m_path, "b");
    QVERIFY(a > 0 && b > 0);
    BarStore bars(m_path);
    for (auto [id, pid] : {std::pair{a, std::int64_t{1}}, std::pair{b, std::int64_t{::getpid()}}}) {
        const std::string sql = "UPDATE runs SET owner_pid = " + std::to_string(pid) +
                                " WHERE id = " + std::to_string(id);
        QCOMPARE(sqlite3_exec(bars.database().handle(), sql.c_str(), nullptr, nullptr, nullptr), 0);
    }
    RunStore runs(bars);
    QCOMPARE(runs.markInterruptedRuns(), 2);
    QVERIFY(runs.run(a)->status == RunStatus::Interrupted);
    QVERIFY(runs.run(b)->status == RunStatus::Interrupted);
}

void TestRunStore::liveOwnerInAnotherProcessKeepsItsRun()
{
    int ready[2], go[2];
    QCOMPARE(::pipe(ready), 0);
    QCOMPARE(::pipe(go), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        // The owner: creates its run, says so, and trains until told to end (without finishing).
        BarStore bars(m_path);
        RunStore runs(bars);
        const std::int64_t id = runs.createRun("elsewhere", "{}", {}, 0, 0, "{}");
        char c = 0;
        const bool ok = ::write(ready[1], &id, sizeof id) == sizeof id && ::read(go[0], &c, 1) == 1;
        ::_exit(ok ? 0 : 2);
    }
    std::int64_t id = 0;
    QCOMPARE(::read(ready[0], &id, sizeof id), ssize_t(sizeof id));
    {
        BarStore bars(m_path);
        RunStore runs(bars);
        QCOMPARE(runs.markInterruptedRuns(), 0);
        QVERIFY(runs.run(id)->status == RunStatus::Running);
        // Nor can this process take the run over while its owner holds it.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, runs.reopenRun(id));
    }
    QCOMPARE(::write(go[1], "x", 1), ssize_t(1));
    int status = 0;
    ::waitpid(child, &status, 0);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);

    BarStore bars(m_path);
    RunStore runs(bars);
    QCOMPARE(runs.markInterruptedRuns(), 1);
    QVERIFY(runs.run(id)->status == RunStatus::Interrupted);
}

void TestRunStore::fullDiskLeavesItsReason()
{
    // The owner's disk fills while it records samples: the store can no longer be
    // written, so the reason goes into the space set aside when the run began.
    int fds[2];
    QCOMPARE(::pipe(fds), 0);
    const int code = inChild([&] {
        BarStore bars(m_path);
        RunStore runs(bars);
        const std::int64_t id = runs.createRun("full", "{}", {}, 0, 0, "{}");
        if (::write(fds[1], &id, sizeof id) != sizeof id) return 2;
        struct stat st { };
        if (::stat(m_path.c_str(), &st) != 0) return 2;
        testing::FileSizeLimit limit(static_cast<rlim_t>(st.st_size) + 8192);
        MetricBatch many;
        for (int i = 0; i < 200'000; ++i) many.push_back({"dqn", "loss", i, i, 0.5});
        try {
            runs.appendMetrics(id, many);
        } catch (const std::exception& e) {
            try {
                runs.setStatus(id, RunStatus::Failed, e.what());
                return 4; // the status was written after all: no full disk to speak of
            } catch (const std::exception&) {
                return runs.leaveNote(id, std::string("no space: ") + e.what()) ? 0 : 5;
            }
        }
        return 6;
    });
    std::int64_t id = 0;
    QCOMPARE(::read(fds[0], &id, sizeof id), ssize_t(sizeof id));
    ::close(fds[0]);
    ::close(fds[1]);
    QCOMPARE(code, 0);

    BarStore bars(m_path);
    RunStore runs(bars);
    QCOMPARE(runs.markInterruptedRuns(), 1);
    const RunInfo run = *runs.run(id);
    QVERIFY(run.status == RunStatus::Failed);
    QVERIFY2(QString::fromStdString(run.error).startsWith(QStringLiteral("no space: ")), run.error.c_str());
    QVERIFY(!QString::fromStdString(run.error).contains(QStringLiteral("unexpectedly")));
    QCOMPARE(runs.metricCount(id), std::uint64_t(0));
    // The note went with the verdict.
    QVERIFY(!std::filesystem::exists(std::filesystem::path(runs.checkpointFolder()) / RunStore::runFolderName(run) /
                                     "last-words"));
}

void TestRunStore::deleteCascades()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("d", "{}", {}, 0, 0, "{}");
    runs.appendMetrics(id, {{"tft", "loss", 1, 1, 1.0}});
    runs.saveEvaluation(id, "tft", "test", "{}");
    runs.deleteRun(id);
    QVERIFY(!runs.run(id));
    QCOMPARE(runs.metricCount(id), std::uint64_t(0));
    QVERIFY(runs.evaluations(id).empty());
}

void TestRunStore::runsHaveDistinctUuids()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::string a = runs.run(runs.createRun("a", "{}", {}, 0, 0, "{}"))->uuid;
    const std::string b = runs.run(runs.createRun("b", "{}", {}, 0, 0, "{}"))->uuid;
    QCOMPARE(a.size(), std::size_t{32});
    QVERIFY(a != b);
}

void TestRunStore::deleteMetricsAfterKeepsEarlierSteps()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("m", "{}", {}, 0, 0, "{}");
    const std::int64_t other = runs.createRun("o", "{}", {}, 0, 0, "{}");
    MetricBatch batch;
    for (int step = 1; step <= 10; ++step)
        for (const char* model : {"dqn", "tft", "session"}) batch.push_back({model, "loss", step, 0, 1.0 * step});
    runs.appendMetrics(id, batch);
    runs.appendMetrics(other, batch);
    runs.deleteMetricsAfter(id, {{"dqn", 4}, {"session", 6}});
    QCOMPARE(runs.metrics(id, "dqn").size(), std::size_t{4});
    QCOMPARE(runs.metrics(id, "dqn").back().step, std::int64_t{4});
    QCOMPARE(runs.metrics(id, "session").size(), std::size_t{6});
    QCOMPARE(runs.metrics(id, "tft").size(), std::size_t{10}); // not named: all kept
    QCOMPARE(runs.metricCount(other), std::uint64_t{30});      // another run: untouched
}

void TestRunStore::checkpointPathsFollowTheDatabase()
{
    std::int64_t id = 0;
    {
        BarStore bars(m_path);
        RunStore runs(bars);
        id = runs.createRun("c", "{}", {}, 0, 0, "{}");
        QCOMPARE(runs.checkpointFolder(), m_path + ".checkpoints");
        runs.addCheckpoint(id, "dqn", 10, runs.checkpointFolder() + "/run-x/dqn-10.pt");
        runs.addCheckpoint(id, "tft", 10, "/elsewhere/tft-10.pt");
    }
    // Moved: files inside the folder are found beside the database's new path, others where they were.
    const std::string moved = m_dir.filePath(QStringLiteral("moved-%1.db").arg(m_n)).toStdString();
    QVERIFY(std::rename(m_path.c_str(), moved.c_str()) == 0);
    BarStore bars(moved);
    RunStore runs(bars);
    QCOMPARE(runs.lastCheckpoint(id, "dqn")->path, moved + ".checkpoints/run-x/dqn-10.pt");
    QCOMPARE(runs.lastCheckpoint(id, "tft")->path, std::string("/elsewhere/tft-10.pt"));
}

// A BarStore and a RunStore on one Database use its one connection: a run refers to a series the
// bar store wrote, and both name the same file.
void TestRunStore::storesShareOneDatabase()
{
    Database db(m_path);
    BarStore bars(db);
    RunStore runs(db);
    QCOMPARE(bars.path(), m_path);
    Bar bar;
    bar.tsEvent = 60'000'000'000;
    bar.open = bar.high = bar.low = bar.close = 4'000'000'000'000;
    bar.volume = 1;
    const std::int64_t seriesId = bars.storeSeries("ES", "csv", SeriesKind::Series, 60'000'000'000, {bar});
    const auto series = bars.findSeries(std::to_string(seriesId));
    QVERIFY(series);
    const std::int64_t runId = runs.createRun("shared", "{}", *series, 0, 0, "{}");
    const auto info = runs.run(runId);
    QVERIFY(info);
    QCOMPARE(info->seriesId, seriesId);
    QCOMPARE(info->series, std::string("ES"));
    QCOMPARE(runs.checkpointFolder(), m_path + ".checkpoints");
    runs.setStatus(runId, RunStatus::Finished);
}

void TestRunStore::namesNotesAndTags()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("generated", "{}", {}, 0, 0, "{}");
    const std::int64_t other = runs.createRun("other", "{}", {}, 0, 0, "{}");
    QVERIFY(runs.run(id)->tags.empty());
    QCOMPARE(runs.run(id)->notes, std::string());

    runs.setName(id, "  baseline \u00e9t\u00e9  "); // trimmed, UTF-8 kept
    runs.setNotes(id, "first line\nsecond line");
    runs.addTags(id, {" GPU ", "lr-sweep", "gpu", "Baseline"}); // "gpu" is GPU again: the first spelling stays
    runs.addTags(other, {"lr-sweep"});
    auto info = runs.run(id);
    QVERIFY(info);
    QCOMPARE(info->name, std::string("baseline \u00e9t\u00e9"));
    QCOMPARE(info->notes, std::string("first line\nsecond line"));
    QCOMPARE(info->tags, (std::vector<std::string>{"Baseline", "GPU", "lr-sweep"}));
    QCOMPARE(runs.tags(other), (std::vector<std::string>{"lr-sweep"}));

    // The list the runs table and `foxhunt-cli runs` read carries the same.
    const std::vector<RunInfo> all = runs.runs();
    QCOMPARE(all.size(), std::size_t{2});
    QCOMPARE(all[1].id, id);
    QCOMPARE(all[1].tags, info->tags);
    QCOMPARE(all[1].notes, info->notes);
    QCOMPARE(all[0].tags, (std::vector<std::string>{"lr-sweep"}));

    runs.removeTags(id, {"gpu", "not-there"}); // matched whatever the case
    QCOMPARE(runs.tags(id), (std::vector<std::string>{"Baseline", "lr-sweep"}));
    runs.setTags(id, {"a", "b"});
    QCOMPARE(runs.tags(id), (std::vector<std::string>{"a", "b"}));
    QCOMPARE(runs.tags(other), (std::vector<std::string>{"lr-sweep"}));
    runs.setName(id, "");
    QCOMPARE(runs.run(id)->name, std::string());
    const std::string longest(RunStore::kMaxNameLength, 'x');
    runs.setName(id, longest);
    QCOMPARE(runs.run(id)->name, longest);
}

void TestRunStore::badLabelsAreRefused_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("long name") << "name" << QByteArray(201, 'n') << "at most 200 characters, not 201";
    QTest::newRow("line break in name") << "name" << QByteArray("two\nlines") << "control characters";
    QTest::newRow("not UTF-8") << "name" << QByteArray("caf\xe9") << "not UTF-8";
    QTest::newRow("empty tag") << "tag" << QByteArray("   ") << "may not be empty";
    QTest::newRow("comma") << "tag" << QByteArray("a,b") << "comma";
    QTest::newRow("long tag") << "tag" << QByteArray(65, 't') << "at most 64 characters";
    QTest::newRow("tab in tag") << "tag" << QByteArray("a\tb") << "control characters";
    QTest::newRow("long notes") << "notes" << QByteArray(20001, 'w') << "at most 20000 characters";
    QTest::newRow("unknown run") << "missing" << QByteArray("fine") << "no run 999";
}

void TestRunStore::badLabelsAreRefused()
{
    QFETCH(QString, what);
    QFETCH(QByteArray, text);
    QFETCH(QString, reason);
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("kept", "{}", {}, 0, 0, "{}");
    runs.addTags(id, {"old"});
    const std::string value = text.toStdString();
    try {
        if (what == QLatin1String("name")) runs.setName(id, value);
        else if (what == QLatin1String("tag")) runs.addTags(id, {"fine", value});
        else if (what == QLatin1String("notes")) runs.setNotes(id, value);
        else runs.setName(999, value);
        QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(reason), e.what());
    }
    // Nothing of a refused edit is stored, not even the good tag given with the bad one.
    QCOMPARE(runs.run(id)->name, std::string("kept"));
    QCOMPARE(runs.run(id)->tags, (std::vector<std::string>{"old"}));
    QCOMPARE(runs.run(id)->notes, std::string());
}

void TestRunStore::tagsGoWithTheirRun()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("t", "{}", {}, 0, 0, "{}");
    const std::int64_t kept = runs.createRun("k", "{}", {}, 0, 0, "{}");
    runs.addTags(id, {"x", "y"});
    runs.addTags(kept, {"x"});
    runs.deleteRun(id);
    sql::Statement count(bars.database().handle(), "SELECT count(*) FROM run_tags WHERE run_id = ?");
    count.bind(1, id);
    QVERIFY(count.step());
    QCOMPARE(count.int64(0), std::int64_t{0});
    QCOMPARE(runs.tags(kept), (std::vector<std::string>{"x"}));
    // A new run reusing the deleted run's id (SQLite may reuse the largest rowid) starts bare.
    const std::int64_t again = runs.createRun("again", "{}", {}, 0, 0, "{}");
    QVERIFY(runs.tags(again).empty());
}

void TestRunStore::versionFourDatabaseMigrates()
{
    std::int64_t id = 0;
    {
        // As Foxhunt left it at schema version 4: runs without notes, no tag table.
        Database old(m_path, 4);
        sql::exec(old.handle(), "INSERT INTO runs(name, created, finished, status, uuid) "
                                "VALUES ('from v4', 1, 2, 'finished', lower(hex(randomblob(16))))");
        id = sqlite3_last_insert_rowid(old.handle());
        sql::Statement version(old.handle(), "PRAGMA user_version");
        QVERIFY(version.step());
        QCOMPARE(version.int64(0), std::int64_t{4});
        sql::Statement table(old.handle(), "SELECT count(*) FROM sqlite_schema WHERE name = 'run_tags'");
        QVERIFY(table.step());
        QCOMPARE(table.int64(0), std::int64_t{0});
    }
    Database db(m_path);
    sql::Statement version(db.handle(), "PRAGMA user_version");
    QVERIFY(version.step());
    QCOMPARE(version.int64(0), std::int64_t{Database::kSchemaVersion});
    RunStore runs(db);
    auto info = runs.run(id);
    QVERIFY(info);
    QCOMPARE(info->name, std::string("from v4"));
    QCOMPARE(info->notes, std::string());
    QVERIFY(info->tags.empty());
    QVERIFY(info->status == RunStatus::Finished);
    runs.setNotes(id, "migrated");
    runs.addTags(id, {"old"});
    info = runs.run(id);
    QCOMPARE(info->notes, std::string("migrated"));
    QCOMPARE(info->tags, (std::vector<std::string>{"old"}));
}

namespace {

std::vector<std::int64_t> idsOf(const std::vector<RunInfo>& runs)
{
    std::vector<std::int64_t> out;
    for (const RunInfo& r : runs) out.push_back(r.id);
    return out;
}

} // namespace

void TestRunStore::trashHidesAndRestores()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t a = runs.createRun("a", "{}", {}, 0, 0, "{}");
    const std::int64_t b = runs.createRun("b", "{}", {}, 0, 0, "{}");
    runs.appendMetrics(a, {{"dqn", "loss", 1, 1, 0.5}});
    runs.setStatus(a, RunStatus::Finished);
    runs.setStatus(b, RunStatus::Stopped);

    runs.trashRun(a, "/tmp/Trash/files/run-a");
    QCOMPARE(idsOf(runs.runs()), std::vector<std::int64_t>{b});
    QCOMPARE(idsOf(runs.runs(RunListing::Trashed)), std::vector<std::int64_t>{a});
    QCOMPARE(idsOf(runs.runs(RunListing::All)), (std::vector<std::int64_t>{b, a}));
    const auto trashed = runs.run(a);
    QVERIFY(trashed && trashed->trashedNs > 0);
    QCOMPARE(trashed->trashPath, std::string("/tmp/Trash/files/run-a"));
    // Nothing of it is gone while it is in the trash.
    QCOMPARE(runs.metricCount(a), std::uint64_t{1});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.trashRun(a));

    runs.restoreRun(a);
    QCOMPARE(idsOf(runs.runs()), (std::vector<std::int64_t>{b, a}));
    QVERIFY(runs.runs(RunListing::Trashed).empty());
    QCOMPARE(runs.run(a)->trashedNs, std::int64_t{0});
    QCOMPARE(runs.run(a)->trashPath, std::string());
    QVERIFY(runs.run(a)->status == RunStatus::Finished);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.restoreRun(a));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.trashRun(b + 100));
}

void TestRunStore::trashRefusesRunningAndResume()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("r", "{}", {}, 0, 0, "{}");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.trashRun(id));
    QVERIFY(runs.run(id)->trashedNs == 0);
    runs.setStatus(id, RunStatus::Interrupted);
    runs.trashRun(id);
    try {
        runs.reopenRun(id);
        QFAIL("a trashed run was reopened");
    } catch (const std::invalid_argument& e) {
        QVERIFY2(std::string(e.what()).find("in the trash") != std::string::npos, e.what());
    }
    QVERIFY(runs.run(id)->status == RunStatus::Interrupted);
    runs.restoreRun(id);
    runs.reopenRun(id);
    QVERIFY(runs.run(id)->status == RunStatus::Running);
    runs.setStatus(id, RunStatus::Stopped);
}

void TestRunStore::purgeFromTrashDeletes()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t id = runs.createRun("p", "{}", {}, 0, 0, "{}");
    runs.appendMetrics(id, {{"tft", "loss", 1, 1, 1.0}});
    const auto info = runs.run(id);
    const std::filesystem::path folder = std::filesystem::path(runs.checkpointFolder()) /
                                         RunStore::runFolderName(*info);
    std::filesystem::create_directories(folder);
    const std::string file = (folder / "tft-1.pt").string();
    {
        std::ofstream(file) << "weights";
    }
    runs.addCheckpoint(id, "tft", 1, file);
    runs.setStatus(id, RunStatus::Finished);
    runs.trashRun(id);
    QVERIFY(std::filesystem::exists(file)); // the store itself moves no file to the trash
    const RunDeletion deletion = runs.deleteRun(id);
    QVERIFY(!runs.run(id));
    QVERIFY(runs.runs(RunListing::All).empty());
    QCOMPARE(runs.metricCount(id), std::uint64_t{0});
    QCOMPARE(deletion.removed, std::vector<std::string>{file});
    QVERIFY(!std::filesystem::exists(folder));
}

void TestRunStore::trashedIdIsNotReused()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t a = runs.createRun("a", "{}", {}, 0, 0, "{}");
    runs.setStatus(a, RunStatus::Finished);
    runs.trashRun(a);
    // The newest run is in the trash: a new run still gets an id of its own.
    const std::int64_t b = runs.createRun("b", "{}", {}, 0, 0, "{}");
    QVERIFY(b > a);
    QCOMPARE(runs.run(a)->name, std::string("a"));
    runs.setStatus(b, RunStatus::Finished);
}

void TestRunStore::trashMigrationKeepsRuns()
{
    std::int64_t id = 0;
    {
        // As Foxhunt left it at schema version 5: names, notes and tags, no trash.
        Database old(m_path, 5);
        sql::exec(old.handle(), "INSERT INTO runs(name, created, finished, status, uuid) "
                                "VALUES ('from v5', 1, 2, 'finished', lower(hex(randomblob(16))))");
        id = sqlite3_last_insert_rowid(old.handle());
        sql::Statement column(old.handle(), "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'trashed_at'");
        QVERIFY(column.step());
        QCOMPARE(column.int64(0), std::int64_t{0});
    }
    Database db(m_path);
    sql::Statement version(db.handle(), "PRAGMA user_version");
    QVERIFY(version.step());
    QCOMPARE(version.int64(0), std::int64_t{Database::kSchemaVersion});
    QVERIFY(Database::kSchemaVersion >= 6);
    RunStore runs(db);
    QCOMPARE(idsOf(runs.runs()), std::vector<std::int64_t>{id});
    QCOMPARE(runs.run(id)->trashedNs, std::int64_t{0});
    QCOMPARE(runs.run(id)->name, std::string("from v5"));
    runs.trashRun(id);
    QVERIFY(runs.runs().empty());
    QCOMPARE(idsOf(runs.runs(RunListing::Trashed)), std::vector<std::int64_t>{id});
}

void TestRunStore::groupsKeepTheirMembers()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.createGroup(GroupKind::Seeds, "{}", {}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.createGroup(GroupKind::Seeds, "{}", {1, 2, 1}));
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, R"({"steps":10})", {3, 1, 2});
    const std::int64_t other = runs.createGroup(GroupKind::Seeds, "{}", {1});
    QVERIFY(g > 0 && other > g);
    const std::int64_t a = runs.createRun("seed 1", R"({"seed":1})", {}, 0, 0, "{}");
    const std::int64_t b = runs.createRun("seed 3", R"({"seed":3})", {}, 0, 0, "{}");
    const std::int64_t c = runs.createRun("seed 1 again", R"({"seed":1})", {}, 0, 0, "{}");
    const std::int64_t loose = runs.createRun("no group", "{}", {}, 0, 0, "{}");
    runs.addGroupMember(g, a, 1);
    runs.addGroupMember(g, b, 3);
    // A seed is trained once per group; a seed outside the spec is no member.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.addGroupMember(g, c, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.addGroupMember(g, c, 7));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runs.addGroupMember(g + 99, c, 1));
    runs.addGroupMember(other, c, 1); // the same seed in another group is another member

    const std::vector<RunGroupInfo> groups = runs.groups();
    QCOMPARE(groups.size(), std::size_t(2));
    QCOMPARE(groups[0].id, other); // newest first
    const RunGroupInfo& info = groups[1];
    QVERIFY(info.kind == GroupKind::Seeds);
    QCOMPARE(info.configJson, std::string(R"({"steps":10})"));
    QCOMPARE(info.members, (std::vector<std::int64_t>{3, 1, 2}));
    QCOMPARE(info.uuid.size(), std::size_t(32));
    QVERIFY(info.uuid != groups[0].uuid);
    QVERIFY(info.status == RunStatus::Running);

    const std::vector<RunInfo> members = runs.groupMembers(g);
    QCOMPARE(members.size(), std::size_t(2));
    QCOMPARE(members[0].id, b); // in the spec's order: 3, then 1
    QCOMPARE(members[0].groupMember, std::int64_t(3));
    QCOMPARE(members[1].id, a);
    QCOMPARE(members[1].groupId, g);
    QCOMPARE(runs.run(loose)->groupId, std::int64_t(0));
    QCOMPARE(runs.run(c)->groupId, other);

    runs.setGroupStatus(g, RunStatus::Finished);
    QVERIFY(runs.group(g)->status == RunStatus::Finished);
    QVERIFY(runs.group(g)->finishedNs >= runs.group(g)->createdNs);
    QVERIFY(!runs.group(g + 99));
    // Deleting a member leaves the group with one fewer; deleting nothing else.
    runs.deleteRun(a);
    QCOMPARE(runs.groupMembers(g).size(), std::size_t(1));
    QCOMPARE(toString(GroupKind::Folds), std::string("folds"));
    QVERIFY(groupKindFromString("sweep") == GroupKind::Sweep);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, groupKindFromString("bags"));
}

void TestRunStore::aNewRunJoinsItsGroupAsItIsCreated()
{
    BarStore bars(m_path);
    RunStore runs(bars);
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, "{}", {1, 2});
    const std::int64_t a = runs.createRun("seed 1", "{}", {}, 0, 0, "{}", NewRunLabels{{"sweep"}, g, 1});
    const std::optional<RunInfo> info = runs.run(a);
    QVERIFY(info);
    QCOMPARE(info->groupId, g);
    QCOMPARE(info->groupMember, std::int64_t(1));
    QCOMPARE(runs.tags(a), std::vector<std::string>{"sweep"});
    // A place taken, a member outside the spec, or a bad tag: nothing is created, not even a run
    // without its group (which a resume would train a second time).
    const std::size_t before = runs.runs().size();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             runs.createRun("seed 1 again", "{}", {}, 0, 0, "{}", NewRunLabels{{}, g, 1}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             runs.createRun("seed 9", "{}", {}, 0, 0, "{}", NewRunLabels{{}, g, 9}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             runs.createRun("bad tag", "{}", {}, 0, 0, "{}", NewRunLabels{{"a,b"}, g, 2}));
    QCOMPARE(runs.runs().size(), before);
    QCOMPARE(runs.groupMembers(g).size(), std::size_t(1));
    const std::int64_t b = runs.createRun("seed 2", "{}", {}, 0, 0, "{}", NewRunLabels{{}, g, 2});
    QCOMPARE(runs.run(b)->groupMember, std::int64_t(2));
}

void TestRunStore::groupOfAVanishedProcessIsInterrupted()
{
    // A group launcher that dies leaves its group "running"; it reads as interrupted, and can be
    // taken over (reopened) by the next launcher.
    const pid_t child = ::fork();
    if (child == 0) {
        BarStore bars(m_path);
        RunStore runs(bars);
        runs.createGroup(GroupKind::Seeds, "{}", {1, 2});
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    BarStore bars(m_path);
    RunStore runs(bars);
    QCOMPARE(runs.groups().size(), std::size_t(1));
    const std::int64_t g = runs.groups()[0].id;
    QVERIFY(runs.group(g)->status == RunStatus::Interrupted);
    runs.reopenGroup(g);
    QVERIFY(runs.group(g)->status == RunStatus::Running);
    // A group of this very process is alive.
    const std::int64_t mine = runs.createGroup(GroupKind::Seeds, "{}", {5});
    QVERIFY(runs.group(mine)->status == RunStatus::Running);
}

void TestRunStore::migrationAddsGroupsToAnOlderStore()
{
    std::int64_t id = 0;
    {
        BarStore bars(m_path);
        RunStore runs(bars);
        id = runs.createRun("before groups", "{}", {}, 0, 0, "{}");
        runs.setStatus(id, RunStatus::Finished);
        // Back to schema 6: no run_groups, no group columns.
        const char* sql = "DROP INDEX runs_by_group_member; ALTER TABLE runs DROP COLUMN group_member; "
                          "ALTER TABLE runs DROP COLUMN group_id; DROP TABLE run_groups; PRAGMA user_version = 6";
        QCOMPARE(sqlite3_exec(bars.database().handle(), sql, nullptr, nullptr, nullptr), 0);
    }
    BarStore bars(m_path);
    RunStore runs(bars);
    sqlite3_stmt* st = nullptr;
    QCOMPARE(sqlite3_prepare_v2(bars.database().handle(), "PRAGMA user_version", -1, &st, nullptr), 0);
    QCOMPARE(sqlite3_step(st), SQLITE_ROW);
    QCOMPARE(sqlite3_column_int(st, 0), Database::kSchemaVersion);
    sqlite3_finalize(st);
    QCOMPARE(runs.run(id)->name, std::string("before groups"));
    QCOMPARE(runs.run(id)->groupId, std::int64_t(0));
    QVERIFY(runs.groups().empty());
    const std::int64_t g = runs.createGroup(GroupKind::Seeds, "{}", {1});
    runs.addGroupMember(g, id, 1);
    QCOMPARE(runs.groupMembers(g).size(), std::size_t(1));
}

} // namespace tst_run_store

FOXHUNT_TEST_APPLESS_MAIN(tst_run_store::TestRunStore)
#include "tst_run_store.moc"
