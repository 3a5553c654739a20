// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints belong to their database and their run: two databases' runs with
// the same id keep apart, a file of another run is refused by name, a copied
// database finds its files (or says why not), deleting a run removes only its
// own files. A resume replaces what was recorded after its checkpoint instead
// of storing the same steps twice; checkpoints also come by wall time and at Stop.

#include "engine/session/local_workers.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/checkpoint_identity.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <filesystem>
#include <map>
#include <string_view>
#include <tuple>

using namespace foxhunt;

class TestCheckpointResume : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void identityIsVerified_data();
    void identityIsVerified();
    void databasesKeepTheirCheckpointsApart_data();
    void databasesKeepTheirCheckpointsApart();
    void copiedDatabaseFindsItsCheckpoints();
    void deleteRemovesOnlyThisDatabasesFiles();
    void resumeReplacesSamplesAfterCheckpoint();
    void twoProcessResumeStoresEachStepOnce();
    void checkpointsByWallTime();
    void stopCheckpointsWhereItStopped();

private:
    static SessionConfig smallConfig(std::vector<ModelKind> models, long long steps);
    /// Runs until the progress passes `stopAt` bars, then stops (deterministic: from the worker's own notification).
    static SessionResult runStoppedAt(const std::string& db, const SessionConfig& c, long long stopAt);
    static SessionResult resume(const std::string& db, const SessionConfig& c, std::int64_t runId);
    std::string path(const QString& name) const { return m_dir.filePath(name).toStdString(); }
    QTemporaryDir m_dir;
};

namespace {

void rawSql(const std::string& path, const char* sql)
{
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

/// Copies a closed database file with whatever WAL files it left.
void copyDatabase(const std::string& from, const std::string& to)
{
    std::filesystem::copy_file(from, to);
    for (const char* suffix : {"-wal", "-shm"})
        if (std::filesystem::exists(from + suffix)) std::filesystem::copy_file(from + suffix, to + suffix);
}

} // namespace

void TestCheckpointResume::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // Nothing of these runs may land in the user's data folder.
    qputenv("XDG_DATA_HOME", m_dir.filePath(QStringLiteral("xdg")).toUtf8());
}

SessionConfig TestCheckpointResume::smallConfig(std::vector<ModelKind> models, long long steps)
{
    SessionConfig c = SessionConfig::defaults();
    c.models = std::move(models);
    c.steps = steps;
    c.seed = 7;
    c.checkpointEvery = 0;
    c.checkpointSeconds = 0;
    c.dqn.learningStarts = 50;
    c.tft.windowing.pastLength = 16;
    c.tft.batchSize = 8;
    c.tft.evalBatchSize = 512;
    return c;
}

SessionResult TestCheckpointResume::runStoppedAt(const std::string& db, const SessionConfig& c, long long stopAt)
{
    TrainingSession session(db, c);
    session.setSamplesReadyCallback([&] {
        MetricBatch drained;
        session.samples().drain(drained);
        if (session.progress().tick >= stopAt) session.stop();
    });
    return session.run();
}

SessionResult TestCheckpointResume::resume(const std::string& db, const SessionConfig& c, std::int64_t runId)
{
    TrainingSession session(db, c);
    session.resumeRun(runId);
    return session.run();
}

void TestCheckpointResume::identityIsVerified_data()
{
    QTest::addColumn<QString>("stored");
    QTest::addColumn<QString>("complaint"); // "" = accepted
    const CheckpointIdentity mine{"aaaa", "cfg1", "dqn", 400};
    auto with = [&](auto change) {
        CheckpointIdentity i = mine;
        change(i);
        return QString::fromStdString(toString(i));
    };
    QTest::newRow("same run") << QString::fromStdString(toString(mine)) << QString();
    QTest::newRow("no identity") << QString() << QStringLiteral("does not say which run");
    QTest::newRow("not json") << QStringLiteral("{oops") << QStringLiteral("unreadable");
    QTest::newRow("other run") << with([](CheckpointIdentity& i) { i.runUuid = "bbbb"; })
                               << QStringLiteral("another run");
    QTest::newRow("other config") << with([](CheckpointIdentity& i) { i.configSha256 = "cfg2"; })
                                  << QStringLiteral("another configuration");
    QTest::newRow("other model") << with([](CheckpointIdentity& i) { i.model = "tft"; })
                                 << QStringLiteral("holds model 'tft'");
    QTest::newRow("other step") << with([](CheckpointIdentity& i) { i.step = 300; }) << QStringLiteral("of step 300");
}

void TestCheckpointResume::identityIsVerified()
{
    QFETCH(QString, stored);
    QFETCH(QString, complaint);
    const CheckpointIdentity mine{"aaaa", "cfg1", "dqn", 400};
    try {
        verifyCheckpointIdentity("/x/dqn-400.pt", stored.toStdString(), mine);
        QVERIFY2(complaint.isEmpty(), "a foreign checkpoint was accepted");
    } catch (const CheckpointMismatch& e) {
        const QString what = QString::fromStdString(e.what());
        QVERIFY2(!complaint.isEmpty(), e.what());
        QVERIFY2(what.startsWith(QStringLiteral("/x/dqn-400.pt: ")), e.what()); // names the file
        QVERIFY2(what.contains(complaint), e.what());
    }
}

void TestCheckpointResume::databasesKeepTheirCheckpointsApart_data()
{
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<bool>("sharedFolder");
    QTest::newRow("beside each database") << QStringLiteral("beside") << false;
    QTest::newRow("one folder for both") << QStringLiteral("shared") << true;
}

void TestCheckpointResume::databasesKeepTheirCheckpointsApart()
{
    QFETCH(QString, prefix);
    QFETCH(bool, sharedFolder);
    SessionConfig c = smallConfig({ModelKind::Dqn}, 60);
    if (sharedFolder) c.checkpointDir = path(prefix + QStringLiteral("-checkpoints"));
    const std::string a = path(prefix + QStringLiteral("-a.db")), b = path(prefix + QStringLiteral("-b.db"));

    // Run 1 of each database, with the same config: the files that used to share one name.
    const SessionResult ra = runStoppedAt(a, c, 30);
    SessionConfig other = c;
    other.seed = 8;
    const SessionResult rb = runStoppedAt(b, other, 30);
    QVERIFY(ra.status == RunStatus::Stopped);
    QVERIFY(rb.status == RunStatus::Stopped);
    QCOMPARE(ra.runId, rb.runId);

    std::optional<CheckpointRecord> ca, cb;
    {
        BarStore sa(a), sb(b);
        ca = RunStore(sa).lastCheckpoint(ra.runId, "dqn");
        cb = RunStore(sb).lastCheckpoint(rb.runId, "dqn");
    }
    QVERIFY(ca && cb);
    QVERIFY2(std::filesystem::path(ca->path) != std::filesystem::path(cb->path), ca->path.c_str());
    QVERIFY(QFile::exists(QString::fromStdString(ca->path)));
    QVERIFY(QFile::exists(QString::fromStdString(cb->path)));
    if (!sharedFolder) {
        QVERIFY2(ca->path.rfind(a + ".checkpoints/", 0) == 0, ca->path.c_str());
        QVERIFY2(cb->path.rfind(b + ".checkpoints/", 0) == 0, cb->path.c_str());
    }

    // B's file where A's should be (what the shared layout did): A's resume refuses it by name.
    const QString aFile = QString::fromStdString(ca->path);
    const QString saved = aFile + QStringLiteral(".saved");
    QVERIFY(QFile::rename(aFile, saved));
    QVERIFY(QFile::copy(QString::fromStdString(cb->path), aFile));
    const SessionResult refused = resume(a, c, ra.runId);
    QVERIFY(refused.status == RunStatus::Failed);
    QVERIFY2(refused.error.find(ca->path) != std::string::npos, refused.error.c_str());
    QVERIFY2(refused.error.find("belongs to another run") != std::string::npos, refused.error.c_str());

    // Its own file back: A resumes from it.
    QVERIFY(QFile::remove(aFile));
    QVERIFY(QFile::rename(saved, aFile));
    const SessionResult resumed = resume(a, c, ra.runId);
    QVERIFY2(resumed.status == RunStatus::Finished, resumed.error.c_str());
    QCOMPARE(nlohmann::json::parse(resumed.json)["first_tick"].get<long long>(), static_cast<long long>(ca->step));
}

void TestCheckpointResume::copiedDatabaseFindsItsCheckpoints()
{
    const SessionConfig c = smallConfig({ModelKind::Dqn}, 60);
    const std::string a = path(QStringLiteral("original.db"));
    const SessionResult r = runStoppedAt(a, c, 30);
    QVERIFY(r.status == RunStatus::Stopped);

    // Copied (or moved) together with its checkpoint folder: the copy resumes from its own files.
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("elsewhere"))));
    const std::string copy = path(QStringLiteral("elsewhere/copy.db"));
    copyDatabase(a, copy);
    std::filesystem::copy(a + ".checkpoints", copy + ".checkpoints", std::filesystem::copy_options::recursive);
    {
        BarStore store(copy);
        const auto last = RunStore(store).lastCheckpoint(r.runId, "dqn");
        QVERIFY(last);
        QVERIFY2(last->path.rfind(copy + ".checkpoints/", 0) == 0, last->path.c_str());
    }
    const SessionResult resumed = resume(copy, c, r.runId);
    QVERIFY2(resumed.status == RunStatus::Finished, resumed.error.c_str());

    // Copied without it: the resume says which file is missing and where checkpoints are kept.
    const std::string alone = path(QStringLiteral("elsewhere/alone.db"));
    copyDatabase(a, alone);
    const SessionResult refused = resume(alone, c, r.runId);
    QVERIFY(refused.status == RunStatus::Failed);
    QVERIFY2(refused.error.find(alone + ".checkpoints/") != std::string::npos, refused.error.c_str());
    QVERIFY2(refused.error.find("is missing") != std::string::npos, refused.error.c_str());
    QVERIFY2(refused.error.find("copied without that folder") != std::string::npos, refused.error.c_str());
}

void TestCheckpointResume::deleteRemovesOnlyThisDatabasesFiles()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 40);
    c.checkpointDir = path(QStringLiteral("delete-shared"));
    const std::string a = path(QStringLiteral("delete-a.db")), b = path(QStringLiteral("delete-b.db"));
    const SessionResult ra = runStoppedAt(a, c, 1'000'000);
    const SessionResult rb = runStoppedAt(b, c, 1'000'000);
    QVERIFY(ra.status == RunStatus::Finished);
    QVERIFY(rb.status == RunStatus::Finished);
    QCOMPARE(ra.runId, rb.runId);

    // A record of the old layout: a path another database may use too.
    const std::string legacy = path(QStringLiteral("delete-shared/run-1/dqn-40.pt"));
    QVERIFY(QDir().mkpath(QString::fromStdString(std::filesystem::path(legacy).parent_path().string())));
    QFile f(QString::fromStdString(legacy));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("another database's weights");
    f.close();

    BarStore sa(a), sb(b);
    RunStore runsA(sa), runsB(sb);
    runsA.addCheckpoint(ra.runId, "dqn", 39, legacy);
    const std::vector<CheckpointRecord> mine = runsA.checkpoints(ra.runId);
    const std::vector<CheckpointRecord> theirs = runsB.checkpoints(rb.runId);
    QCOMPARE(mine.size(), std::size_t{2});
    QCOMPARE(theirs.size(), std::size_t{1});

    const RunDeletion d = runsA.deleteRun(ra.runId);
    QVERIFY(!runsA.run(ra.runId));
    QCOMPARE(d.removed.size(), std::size_t{1});
    QCOMPARE(d.kept.size(), std::size_t{1});
    QVERIFY2(d.kept.front().rfind(legacy + ": ", 0) == 0, d.kept.front().c_str());
    QVERIFY(QFile::exists(QString::fromStdString(legacy)));
    for (const CheckpointRecord& rec : mine)
        if (rec.path != legacy) QVERIFY2(!QFile::exists(QString::fromStdString(rec.path)), rec.path.c_str());
    // The other database's run keeps its file.
    QVERIFY(QFile::exists(QString::fromStdString(theirs.front().path)));
}

void TestCheckpointResume::resumeReplacesSamplesAfterCheckpoint()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Tft}, 120);
    c.checkpointEvery = 50;
    const std::string db = path(QStringLiteral("duplicates.db"));
    const SessionResult first = runStoppedAt(db, c, 80);
    QVERIFY(first.status == RunStatus::Stopped);
    // As if killed after the checkpoint at 50: its later checkpoints were never written, the
    // samples after it were committed.
    rawSql(db, "DELETE FROM checkpoints WHERE step > 50; UPDATE runs SET status = 'interrupted'");
    {
        BarStore store(db);
        RunStore runs(store);
        QCOMPARE(runs.lastCheckpoint(first.runId, "dqn")->step, std::int64_t{50});
        QVERIFY(runs.metrics(first.runId, "dqn", "equity_ticks").back().step > 50);
    }

    const SessionResult resumed = resume(db, c, first.runId);
    QVERIFY2(resumed.status == RunStatus::Finished, resumed.error.c_str());
    QCOMPARE(nlohmann::json::parse(resumed.json)["first_tick"].get<long long>(), 50LL);

    BarStore store(db);
    RunStore runs(store);
    // Each (model, metric, step) once.
    std::map<std::tuple<std::string, std::string, std::int64_t>, int> seen;
    for (const MetricSample& s : runs.metrics(first.runId)) {
        const int n = ++seen[{s.model, s.metric, s.step}];
        QVERIFY2(n == 1, (s.model + "/" + s.metric + " step " + std::to_string(s.step) + " stored twice").c_str());
    }
    // And every step there: equity every 10th step, the forecaster's loss every step.
    const MetricBatch equity = runs.metrics(first.runId, "dqn", "equity_ticks");
    QCOMPARE(equity.size(), std::size_t{12});
    for (std::size_t i = 0; i < equity.size(); ++i) QCOMPARE(equity[i].step, static_cast<std::int64_t>(10 * (i + 1)));
    const MetricBatch loss = runs.metrics(first.runId, "tft", "loss");
    QCOMPARE(loss.size(), std::size_t{120});
    QCOMPARE(loss.front().step, std::int64_t{1});
    QCOMPARE(loss.back().step, std::int64_t{120});
}

void TestCheckpointResume::twoProcessResumeStoresEachStepOnce()
{
    SessionConfig c = smallConfig({ModelKind::Tft}, 120);
    c.checkpointEvery = 50;
    c.workers = 2;
    c.distributedTimeoutSeconds = 60;
    const std::string db = path(QStringLiteral("two-process.db"));
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    SessionResult first;
    {
        TrainingSession session(db, c);
        session.setWorkerProgram(self);
        // Rank 0 stops between control blocks, after the checkpoint at 50.
        session.setSamplesReadyCallback([&] {
            MetricBatch drained;
            session.samples().drain(drained);
            if (session.progress().tick >= 60) session.stop();
        });
        first = session.run();
    }
    QVERIFY2(first.status == RunStatus::Stopped, first.error.c_str());
    rawSql(db, "DELETE FROM checkpoints WHERE step > 50; UPDATE runs SET status = 'interrupted'");
    {
        BarStore store(db);
        QVERIFY(RunStore(store).metrics(first.runId, "tft", "loss").back().step > 50);
    }

    // Rank 0 checks its checkpoint, sends it to rank 1, and drops what came after it.
    TrainingSession second(db, c);
    second.setWorkerProgram(self);
    second.resumeRun(first.runId);
    const SessionResult resumed = second.run();
    QVERIFY2(resumed.status == RunStatus::Finished, resumed.error.c_str());
    QCOMPARE(nlohmann::json::parse(resumed.json)["first_tick"].get<long long>(), 50LL);

    BarStore store(db);
    RunStore runs(store);
    std::map<std::tuple<std::string, std::string, std::int64_t>, int> seen;
    for (const MetricSample& s : runs.metrics(first.runId)) {
        const int n = ++seen[{s.model, s.metric, s.step}];
        QVERIFY2(n == 1, (s.model + "/" + s.metric + " step " + std::to_string(s.step) + " stored twice").c_str());
    }
    const MetricBatch loss = runs.metrics(first.runId, "tft", "loss");
    QCOMPARE(loss.size(), std::size_t{120});
    QCOMPARE(loss.back().step, std::int64_t{120});
}

void TestCheckpointResume::checkpointsByWallTime()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 25);
    c.checkpointSeconds = 10;
    const std::string db = path(QStringLiteral("by-time.db"));
    TrainingSession session(db, c);
    // One second per reading: read when training starts and once per bar.
    int readings = 0;
    const auto start = std::chrono::steady_clock::now();
    session.setCheckpointClock([&] { return start + std::chrono::seconds(readings++); });
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    QCOMPARE(readings, 26);

    BarStore store(db);
    std::vector<std::int64_t> steps;
    for (const CheckpointRecord& rec : RunStore(store).checkpoints(r.runId)) {
        steps.push_back(rec.step);
        QVERIFY2(QFile::exists(QString::fromStdString(rec.path)), rec.path.c_str());
    }
    // Every 10 s of training, and at the end.
    QCOMPARE(steps, (std::vector<std::int64_t>{10, 20, 25}));
}

void TestCheckpointResume::stopCheckpointsWhereItStopped()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 1'000'000);
    c.checkpointSeconds = 3600; // neither ticks nor time would checkpoint this short run
    const std::string db = path(QStringLiteral("stop.db"));
    const SessionResult r = runStoppedAt(db, c, 40);
    QVERIFY(r.status == RunStatus::Stopped);
    const long long stoppedAt = nlohmann::json::parse(r.json)["ticks"].get<long long>();
    QVERIFY(stoppedAt >= 40);
    {
        BarStore store(db);
        const auto last = RunStore(store).lastCheckpoint(r.runId, "dqn");
        QVERIFY(last);
        QCOMPARE(static_cast<long long>(last->step), stoppedAt);
    }
    c.steps = stoppedAt + 10;
    const SessionResult resumed = resume(db, c, r.runId);
    QVERIFY2(resumed.status == RunStatus::Finished, resumed.error.c_str());
    const nlohmann::json doc = nlohmann::json::parse(resumed.json);
    QCOMPARE(doc["first_tick"].get<long long>(), stoppedAt);
    QCOMPARE(doc["ticks"].get<long long>(), 10LL);
}

int main(int argc, char** argv)
{
    // Started by a two-process session as its rank 1: `<this test> worker`, the rendezvous in the environment.
    if (argc > 1 && std::string_view(argv[1]) == "worker") {
        try {
            return runWorker(rendezvousFromEnvironment()).status == RunStatus::Failed ? 1 : 0;
        } catch (const std::exception&) {
            return 1;
        }
    }
    TestCheckpointResume test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_checkpoint_resume.moc"
