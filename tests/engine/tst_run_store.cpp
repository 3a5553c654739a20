// Runs, metrics, evaluations and checkpoints in SQLite; runs left behind by a
// dead process are marked interrupted and keep every committed metric.

#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <cmath>
#include <cstdio>

#include <sys/wait.h>
#include <unistd.h>

using namespace foxhunt;

class TestRunStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void createsAndReadsRuns();
    void metricsRoundTripInOrder();
    void evaluationsAndCheckpoints();
    void deadOwnerIsInterrupted();
    void deleteCascades();
    void runsHaveDistinctUuids();
    void deleteMetricsAfterKeepsEarlierSteps();
    void checkpointPathsFollowTheDatabase();

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

void TestRunStore::deadOwnerIsInterrupted()
{
    // A real process that has ended: its pid no longer exists.
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);

    std::int64_t orphan = 0, mine = 0;
    {
        BarStore bars(m_path);
        RunStore runs(bars);
        orphan = runs.createRun("orphan", "{}", {}, 0, 0, "{}");
        mine = runs.createRun("mine", "{}", {}, 0, 0, "{}");
        runs.appendMetrics(orphan, {{"dqn", "loss", 1, 1, 0.25}});
    }
    {
        // Rewrite the owner as the dead child, as if that process had crashed.
        BarStore bars(m_path);
        const std::string sql = "UPDATE runs SET owner_pid = " + std::to_string(child) + " WHERE id = " + std::to_string(orphan);
        QCOMPARE(sqlite3_exec(bars.handle(), sql.c_str(), nullptr, nullptr, nullptr), 0);
    }
    BarStore bars(m_path);
    RunStore runs(bars);
    QCOMPARE(runs.markInterruptedRuns(), 1);
    QVERIFY(runs.run(orphan)->status == RunStatus::Interrupted);
    QVERIFY(runs.run(mine)->status == RunStatus::Running);
    QCOMPARE(runs.metricCount(orphan), std::uint64_t(1));
    QCOMPARE(runs.markInterruptedRuns(), 0);
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
    QCOMPARE(runs.metricCount(other), std::uint64_t{30});       // another run: untouched
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

QTEST_APPLESS_MAIN(TestRunStore)
#include "tst_run_store.moc"
