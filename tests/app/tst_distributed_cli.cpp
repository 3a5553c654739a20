// SPDX-License-Identifier: GPL-3.0-or-later
// Multi-process runs end to end through foxhunt-cli: two real processes train one run over c10d
// (Gloo on 127.0.0.1); rank 0 charts every rank; killing either rank ends the other within the
// timeout with a readable error and leaves the store consistent; the run resumes on one process.

#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/session/local_workers.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace tst_distributed_cli {

namespace {

/// Small models so a step takes milliseconds; frequent checkpoints.
constexpr char kSmallConfig[] = R"({
  "checkpoint_every": 40,
  "tft": {"batch_size": 8, "past_length": 20, "hidden_size": 8, "embedding_size": 4, "heads": 2},
  "ppo": {"n_steps": 32, "batch_size": 16, "n_epochs": 2},
  "dqn": {"learning_starts": 16, "train_freq": 4}
})";

/// The children of `parent` (from /proc).
QList<qint64> childrenOf(qint64 parent)
{
    QList<qint64> out;
    for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric) continue;
        std::ifstream stat("/proc/" + entry.toStdString() + "/stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
        std::istringstream rest(line.substr(line.rfind(')') + 2));
        char state = 0;
        qint64 ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent) out.push_back(pid);
    }
    return out;
}

} // namespace

class TestDistributedCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_config = m_dir.filePath(QStringLiteral("small.json"));
        QFile f(m_config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kSmallConfig);
    }

    void twoProcessesTrainOneRun()
    {
        const QString store = m_dir.filePath(QStringLiteral("two.db"));
        const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                              QStringLiteral("tft,ppo,dqn"), QStringLiteral("--steps"), QStringLiteral("80"),
                              QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--config"), m_config,
                              QStringLiteral("--json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject doc = r.json();
        QCOMPARE(doc.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QCOMPARE(doc.value(QStringLiteral("ranks")).toInt(), 2);
        QVERIFY(!doc.contains(QStringLiteral("worker_problems")));
        // CPU ranks reduce through Gloo, and the stored run says so beside its rank count.
        QCOMPARE(doc.value(QStringLiteral("collectives")).toString(), QStringLiteral("gloo"));
        {
            foxhunt::BarStore bars(store.toStdString());
            const auto info = foxhunt::RunStore(bars).run(doc.value(QStringLiteral("run_id")).toInteger());
            QVERIFY(info);
            const nlohmann::json versions = nlohmann::json::parse(info->versionsJson);
            QCOMPARE(versions.value("ranks", 0), 2);
            QCOMPARE(versions.value("collectives", std::string()), std::string("gloo"));
        }
        for (const char* model : {"tft", "ppo", "dqn"}) {
            const QJsonObject last = doc.value(QStringLiteral("models"))
                                         .toObject()
                                         .value(QLatin1String(model))
                                         .toObject()
                                         .value(QStringLiteral("training"))
                                         .toObject()
                                         .value(QStringLiteral("final"))
                                         .toObject();
            // Rank 0 speaks for both: each rank's throughput and the slowest all-reduce wait.
            QVERIFY2(last.value(QStringLiteral("throughput_rank0")).toDouble() > 0.0, model);
            QVERIFY2(last.value(QStringLiteral("throughput_rank1")).toDouble() > 0.0, model);
            QVERIFY2(last.contains(QStringLiteral("allreduce_ms")), model);
            QVERIFY2(last.value(QStringLiteral("allreduce_ms")).toDouble() >= 0.0, model);
        }
        // Evaluated once, by rank 0, on the whole validation and test split.
        QVERIFY(doc.value(QStringLiteral("models"))
                    .toObject()
                    .value(QStringLiteral("ppo"))
                    .toObject()
                    .contains(QStringLiteral("test")));
    }

    void killedWorkerFailsRunThatResumesOnOneProcess()
    {
        const QString store = m_dir.filePath(QStringLiteral("kill-worker.db"));
        QProcess owner;
        owner.start(QStringLiteral(FOXHUNT_CLI_PATH),
                    {QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                     QStringLiteral("tft"), QStringLiteral("--steps"), QStringLiteral("100000000"),
                     QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--timeout"), QStringLiteral("10"),
                     QStringLiteral("--config"), m_config, QStringLiteral("--json")});
        QVERIFY(owner.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(committed(store), 120000);
        const QList<qint64> workers = childrenOf(owner.processId());
        QCOMPARE(workers.size(), 1);
        ::kill(static_cast<pid_t>(workers.front()), SIGKILL);

        // Rank 0 notices at its next collective and fails the run, naming rank 1.
        QVERIFY(owner.waitForFinished(60000));
        QCOMPARE(owner.exitCode(), 1);
        const QByteArray err = owner.readAllStandardError();
        QVERIFY2(err.contains("rank 1"), err.constData());
        const QJsonObject run = firstRun(store);
        QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QVERIFY(run.value(QStringLiteral("metrics")).toInt() > 0);
        QVERIFY(run.value(QStringLiteral("checkpoints")).toInt() > 0);

        // The failed two-process run continues from its last checkpoint on one process.
        const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--resume"),
                                    QString::number(run.value(QStringLiteral("id")).toInt()), QStringLiteral("--steps"),
                                    QStringLiteral("1"), QStringLiteral("--json")});
        QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
        QCOMPARE(resumed.json().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
        QVERIFY(resumed.json().value(QStringLiteral("resumed")).toBool());
        QVERIFY(!resumed.json().contains(QStringLiteral("ranks")));
    }

    void killedOwnerStopsWorker()
    {
        // Ranks started by hand, as on two machines: torchrun's variables in the environment.
        const QString store = m_dir.filePath(QStringLiteral("kill-owner.db"));
        const int port = foxhunt::freeLocalPort();
        auto environment = [port](int rank) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
            env.insert(QStringLiteral("MASTER_PORT"), QString::number(port));
            env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("2"));
            env.insert(QStringLiteral("RANK"), QString::number(rank));
            env.insert(QStringLiteral("FOXHUNT_DIST_TIMEOUT"), QStringLiteral("10"));
            return env;
        };
        QProcess owner, worker;
        owner.setProcessEnvironment(environment(0));
        worker.setProcessEnvironment(environment(1));
        owner.start(QStringLiteral(FOXHUNT_CLI_PATH),
                    {QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                     QStringLiteral("tft"), QStringLiteral("--steps"), QStringLiteral("100000000"),
                     QStringLiteral("--config"), m_config, QStringLiteral("--json")});
        worker.start(QStringLiteral(FOXHUNT_CLI_PATH), {QStringLiteral("worker")});
        QVERIFY(owner.waitForStarted());
        QVERIFY(worker.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(committed(store), 120000);
        ::kill(static_cast<pid_t>(owner.processId()), SIGKILL);
        QVERIFY(owner.waitForFinished(30000));

        QVERIFY(worker.waitForFinished(60000));
        QCOMPARE(worker.exitCode(), 1);
        const QByteArray err = worker.readAllStandardError();
        QVERIFY2(err.contains("rank 0"), err.constData());
        // The owner died mid-run: its run is interrupted, with what it committed.
        const QJsonObject run = firstRun(store);
        QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
        QVERIFY(run.value(QStringLiteral("metrics")).toInt() > 0);
    }

    void pauseStepAndStopActBetweenBlocks()
    {
        // The window's controls on a two-process session: started paused, three single steps
        // replay exactly three bars on both ranks, and stop ends the run there.
        foxhunt::SessionConfig config = foxhunt::sessionConfigFromJson(nlohmann::json::parse(kSmallConfig),
                                                                       foxhunt::SessionConfig::defaults());
        config.models = {foxhunt::ModelKind::Tft, foxhunt::ModelKind::Ppo};
        config.steps = 1000;
        config.workers = 2;
        config.distributedTimeoutSeconds = 30;
        foxhunt::TrainingSession session(m_dir.filePath(QStringLiteral("pause.db")).toStdString(), config);
        session.setWorkerProgram(FOXHUNT_CLI_PATH);
        session.pause();
        foxhunt::SessionResult result;
        std::thread worker([&] { result = session.run(); });
        for (int k = 1; k <= 3; ++k) {
            session.step();
            QTRY_COMPARE_WITH_TIMEOUT(session.progress().tick.load(), static_cast<long long>(k), 60000);
        }
        session.stop();
        worker.join();
        QVERIFY(result.status == foxhunt::RunStatus::Stopped);
        const nlohmann::json doc = nlohmann::json::parse(result.json);
        QCOMPARE(doc.at("ticks").get<long long>(), 3LL);
        QCOMPARE(doc.at("ranks").get<int>(), 2);
        QVERIFY(!doc.contains("worker_problems"));
    }

private:
    struct Result {
        int exitCode = -1;
        QByteArray out, err;
        QJsonObject json() const { return QJsonDocument::fromJson(out).object(); }
    };

    Result cli(const QStringList& args)
    {
        QProcess p;
        p.start(QStringLiteral(FOXHUNT_CLI_PATH), args);
        Result r;
        if (!p.waitForFinished(300000)) {
            p.kill();
            p.waitForFinished();
            return r;
        }
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    QJsonObject firstRun(const QString& store)
    {
        const Result r = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")});
        return r.json().value(QStringLiteral("runs")).toArray().at(0).toObject();
    }

    /// The run has committed metrics and a checkpoint.
    bool committed(const QString& store)
    {
        if (!QFile::exists(store)) return false;
        const QJsonObject run = firstRun(store);
        return run.value(QStringLiteral("checkpoints")).toInt() > 0 && run.value(QStringLiteral("metrics")).toInt() > 0;
    }

    QTemporaryDir m_dir;
    QString m_config;
};

} // namespace tst_distributed_cli

FOXHUNT_TEST_GUILESS_MAIN(tst_distributed_cli::TestDistributedCli)
#include "tst_distributed_cli.moc"
