// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli end to end, as a user runs it: the real files in shared/data/real
// import with the results SOURCES.md describes; bad files are rejected with
// file:line: reason and leave the store unchanged.

#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "engine/data/market_time.h"
#include "engine/replay/split.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QSet>

#include <csignal>
#include <map>
#include <thread>

namespace tst_cli {

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void versionAndHelp();
    void importsRealFiles_data();
    void importsRealFiles();
    void reimportIsNoOp();
    void importShowsProgressOnlyWhenAsked_data();
    void importShowsProgressOnlyWhenAsked();
    void trainAndReportShowProgressOnlyWhenAsked_data();
    void trainAndReportShowProgressOnlyWhenAsked();
    void runsHidesTrashedRuns();
    void rejectsBadFiles_data();
    void rejectsBadFiles();
    void correctedPricesNeedReplace();
    void barsListsSeries();
    void replayReportsFeatures();
    void trainsAgentsAndWritesReports();
    void killedRunIsInterruptedAndResumes();
    void seedsTrainAGroup();
    void sweepTrainsATrialPerMemberAndRanksThem();
    void interruptedGroupResumes();
    void foldsTrainWalkForward();
    void badTrainSettingsAreRefused_data();
    void badTrainSettingsAreRefused();
    void usageErrorsExitWithTheDocumentedCode();
    void importReadsAPipeOnce();
    void importRefusesADevice();
    void importLimitsDecompression();
    void threadsAreCappedAtTheHardware();
    void runsAreNamedTaggedAndAnnotated();
    void trashedRunsAreRestoredAndPurged();

private:
    struct Result {
        int exitCode = -1;
        QByteArray out, err;
        QJsonObject json() const { return QJsonDocument::fromJson(out).object(); }
    };
    Result cli(const QStringList& args, const QByteArray& input = {});
    QString db(const QString& name) const { return m_dir.filePath(name); }
    static QString realFile(const QString& name) { return QStringLiteral(FOXHUNT_REAL_DATA_DIR "/") + name; }
    QString writeFile(const QString& name, const QByteArray& bytes);
    QTemporaryDir m_dir;
};

TestCli::Result TestCli::cli(const QStringList& args, const QByteArray& input)
{
    QProcess p;
    p.start(QStringLiteral(FOXHUNT_CLI_PATH), args);
    // Standard input is a pipe: what the command gets for /dev/stdin.
    if (!input.isEmpty()) p.write(input);
    p.closeWriteChannel();
    Result r;
    if (!p.waitForFinished(300000)) return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString TestCli::writeFile(const QString& name, const QByteArray& bytes)
{
    QFile f(m_dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes);
    return f.fileName();
}

void TestCli::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFile::exists(realFile(QStringLiteral("SOURCES.md"))), "real data missing: ../shared/data/real");
}

void TestCli::versionAndHelp()
{
    const Result v = cli({QStringLiteral("--version")});
    QCOMPARE(v.exitCode, 0);
    QVERIFY(v.out.contains("foxhunt-cli " FOXHUNT_VERSION));
    for (const char* cmd : {"import", "bars", "replay", "train", "bench"}) {
        const Result h = cli({QString::fromLatin1(cmd), QStringLiteral("--help")});
        QCOMPARE(h.exitCode, 0);
        QVERIFY2(h.out.contains("--json"), cmd);
    }
}

void TestCli::importsRealFiles_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("imported");
    QTest::addColumn<int>("duplicates");
    QTest::addColumn<QString>("firstTime");
    QTest::addColumn<QString>("instrument");
    // 2026-01-25 18:00 ET (EST) = 23:00 UTC; 2016-09-09 09:30 ET (EDT) = 13:30 UTC.
    QTest::newRow("1min") << "ES_1min_sample.csv"
                          << "csv" << 15214 << 0 << "2026-01-25T23:00:00Z"
                          << "ES";
    QTest::newRow("5min") << "es_5min_1yr.csv"
                          << "csv" << 24946 << 87 << "2016-09-09T13:30:00Z"
                          << "ES";
    QTest::newRow("dbn") << "test_data.ohlcv-1m.dbn.zst"
                         << "dbn" << 4 << 0 << "2020-12-28T00:00:00Z"
                         << "ESH1";
}

void TestCli::importsRealFiles()
{
    QFETCH(QString, file);
    QFETCH(QString, format);
    QFETCH(int, imported);
    QFETCH(int, duplicates);
    QFETCH(QString, firstTime);
    QFETCH(QString, instrument);
    const QString store = db(QStringLiteral("real-%1.db").arg(QTest::currentDataTag()));
    const Result r = cli(
        {QStringLiteral("import"), realFile(file), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject f = r.json().value(QStringLiteral("files")).toArray().at(0).toObject();
    QCOMPARE(f.value(QStringLiteral("format")).toString(), format);
    QCOMPARE(f.value(QStringLiteral("imported")).toInt(), imported);
    QCOMPARE(f.value(QStringLiteral("duplicates_dropped")).toInt(), duplicates);
    QCOMPARE(f.value(QStringLiteral("first_time")).toString(), firstTime);
    QCOMPARE(f.value(QStringLiteral("instrument")).toString(), instrument);
    QVERIFY(f.value(QStringLiteral("warnings")).isArray());
    if (duplicates > 0) {
        // The duplicated 2017-06-12 session: lines 15818-15904 repeat 15731-15817.
        const QJsonObject run = f.value(QStringLiteral("duplicate_runs")).toArray().at(0).toObject();
        QCOMPARE(run.value(QStringLiteral("first_line")).toInt(), 15818);
        QCOMPARE(run.value(QStringLiteral("last_line")).toInt(), 15904);
        QCOMPARE(run.value(QStringLiteral("original_line")).toInt(), 15731);
    }
}

void TestCli::reimportIsNoOp()
{
    const QString store = db(QStringLiteral("reimport.db"));
    const QString file = realFile(QStringLiteral("ES_1min_sample.csv"));
    QCOMPARE(cli({QStringLiteral("import"), file, QStringLiteral("--db"), store}).exitCode, 0);
    const Result again = cli({QStringLiteral("import"), file, QStringLiteral("--db"), store, QStringLiteral("--json")});
    QCOMPARE(again.exitCode, 0);
    const QJsonObject f = again.json().value(QStringLiteral("files")).toArray().at(0).toObject();
    QCOMPARE(f.value(QStringLiteral("status")).toString(), QStringLiteral("already_imported"));
    QCOMPARE(f.value(QStringLiteral("imported")).toInt(), 0);
}

// Issue 21.2: the progress line goes to stderr when forced, never when switched off, and not by
// default here, where stderr is a pipe rather than a terminal.
void TestCli::importShowsProgressOnlyWhenAsked_data()
{
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<bool>("shown");
    QTest::newRow("--progress") << QStringList{QStringLiteral("--progress")} << true;
    QTest::newRow("--no-progress") << QStringList{QStringLiteral("--no-progress")} << false;
    QTest::newRow("not a terminal") << QStringList{} << false;
}

void TestCli::importShowsProgressOnlyWhenAsked()
{
    QFETCH(QStringList, flags);
    QFETCH(bool, shown);
    const QString store = db(QStringLiteral("progress-%1.db").arg(QTest::currentDataTag()));
    const Result r = cli(QStringList{QStringLiteral("import"), realFile(QStringLiteral("ES_1min_sample.csv")),
                                     QStringLiteral("--db"), store} +
                         flags);
    QCOMPARE(r.exitCode, 0);
    const QString err = QString::fromUtf8(r.err);
    QCOMPARE(err.contains(QStringLiteral("import ES_1min_sample.csv: ")), shown);
    QCOMPARE(err.contains(QLatin1Char('%')), shown);
    QCOMPARE(err.contains(QStringLiteral("ETA")), shown);
    QCOMPARE(err.contains(QLatin1Char('\r')), shown);
    if (shown) QVERIFY2(err.contains(QStringLiteral("100 %")), qPrintable(err));
    // The summary stays on stdout either way.
    QVERIFY2(r.out.contains("bars imported"), r.out.constData());

    const Result replay = cli(QStringList{QStringLiteral("replay"), QStringLiteral("--db"), store} + flags);
    QCOMPARE(replay.exitCode, 0);
    QCOMPARE(QString::fromUtf8(replay.err).contains(QStringLiteral("ETA")), shown);
}

void TestCli::trainAndReportShowProgressOnlyWhenAsked_data()
{
    importShowsProgressOnlyWhenAsked_data();
}

void TestCli::trainAndReportShowProgressOnlyWhenAsked()
{
    QFETCH(QStringList, flags);
    QFETCH(bool, shown);
    QString tag = QString::fromLatin1(QTest::currentDataTag());
    tag.replace(QLatin1Char(' '), QLatin1Char('-'));
    const QString store = db(QStringLiteral("train-progress%1.db").arg(tag));
    // A tiny run on the bundled bars: the line is the point here, not the training.
    const Result train = cli(QStringList{QStringLiteral("train"), QStringLiteral("--db"), store,
                                         QStringLiteral("--models"), QStringLiteral("dqn"), QStringLiteral("--steps"),
                                         QStringLiteral("60"), QStringLiteral("--seed"), QStringLiteral("2"),
                                         QStringLiteral("--json")} +
                             flags);
    QVERIFY2(train.exitCode == 0, train.err.constData());
    const QString trainErr = QString::fromUtf8(train.err);
    QCOMPARE(trainErr.contains(QStringLiteral("train: ")), shown);
    QCOMPARE(trainErr.contains(QStringLiteral(" bars  ")), shown);
    QCOMPARE(trainErr.contains(QLatin1Char('%')), shown);
    QCOMPARE(trainErr.contains(QLatin1Char('\r')), shown);
    // The result stays on stdout either way.
    const QString id = QString::number(train.json().value(QStringLiteral("run_id")).toInt());
    QVERIFY(id.toInt() > 0);

    const QString out = m_dir.filePath(QStringLiteral("progress-%1.html").arg(tag));
    const Result report = cli(
        QStringList{QStringLiteral("report"), id, QStringLiteral("--db"), store, QStringLiteral("--out"), out} + flags);
    QVERIFY2(report.exitCode == 0, report.err.constData());
    const QString reportErr = QString::fromUtf8(report.err);
    QCOMPARE(reportErr.contains(QStringLiteral("report progress-%1.html: ").arg(tag)), shown);
    QCOMPARE(reportErr.contains(QStringLiteral("ETA")), shown);
    QCOMPARE(reportErr.contains(QLatin1Char('\r')), shown);
    if (shown) QVERIFY2(reportErr.contains(QStringLiteral("100 %")), qPrintable(reportErr));
    QVERIFY2(report.out.contains(out.toUtf8()), report.out.constData());
    QVERIFY(QFile::exists(out));
}

void TestCli::runsHidesTrashedRuns()
{
    const QString store = db(QStringLiteral("trash.db"));
    auto train = [&] {
        const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                              QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("60"),
                              QStringLiteral("--json")});
        return r.exitCode == 0 ? static_cast<std::int64_t>(r.json().value(QStringLiteral("run_id")).toInt()) : 0;
    };
    const std::int64_t kept = train(), trashed = train();
    QVERIFY(kept > 0 && trashed > kept);
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        runs.trashRun(trashed);
    }
    auto listed = [&](const QStringList& extra) {
        const Result r = cli(
            QStringList{QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")} + extra);
        QList<std::int64_t> ids;
        for (const QJsonValue& v : r.json().value(QStringLiteral("runs")).toArray())
            ids << static_cast<std::int64_t>(v.toObject().value(QStringLiteral("id")).toInt());
        return r.exitCode == 0 ? ids : QList<std::int64_t>{-1};
    };
    QCOMPARE(listed({}), QList<std::int64_t>{kept});
    QCOMPARE(listed({QStringLiteral("--trashed")}), QList<std::int64_t>{trashed});
    const Result plain = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--trashed")});
    QCOMPARE(plain.exitCode, 0);
    QVERIFY2(plain.out.contains("trashed 20"), plain.out.constData());

    // A run in the trash does not resume; the message says where it is.
    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--resume"),
                                QString::number(trashed), QStringLiteral("--json")});
    QCOMPARE(resumed.exitCode, 1);
    QVERIFY2(resumed.err.contains("in the trash"), resumed.err.constData());
}

void TestCli::rejectsBadFiles_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("where");
    const QByteArray header = "timestamp,open,high,low,close,volume\n";
    QTest::newRow("bad row") << "bad_row.csv"
                             << header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                                         "2024-01-02 09:31:00,4700.25,x,4699.75,4700.5,10\n"
                             << "bad_row.csv:3:";
    QTest::newRow("conflicting duplicate") << "conflict.csv"
                                           << header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                                                       "2024-01-02 09:31:00,4700.25,4701,4699.75,4700.5,10\n"
                                                       "2024-01-02 09:31:00,4700.25,4702,4699.75,4700.5,10\n"
                                           << "conflict.csv:4:";
    QTest::newRow("year 2300") << "y2300.csv"
                               << header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                                           "2300-01-02 09:31:00,4700.25,4701,4699.75,4700.5,10\n"
                               << "y2300.csv:3: timestamp '2300-01-02 09:31:00' is outside the accepted range";
    QTest::newRow("year 9999 is not 'out of order'")
        << "y9999.csv"
        << header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                    "9999-12-31 09:31:00,4700.25,4701,4699.75,4700.5,10\n"
        << "y9999.csv:3: timestamp '9999-12-31 09:31:00' is outside the accepted range";
    QTest::newRow("epoch 0") << "epoch0.csv" << header + "1970-01-01T00:00:00Z,4700.25,4701,4699.75,4700.5,10\n"
                             << "epoch0.csv:2: timestamp";
    QTest::newRow("volume past int64") << "vol.csv"
                                       << header +
                                              "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,9999999999999999999\n"
                                       << "vol.csv:2: volume '9999999999999999999' cannot be real";
    QFile dbn(realFile(QStringLiteral("test_data.ohlcv-1m.dbn.zst")));
    QVERIFY(dbn.open(QIODevice::ReadOnly));
    const QByteArray whole = dbn.readAll();
    QTest::newRow("truncated dbn") << "truncated.dbn.zst" << whole.left(whole.size() - 20) << "truncated.dbn.zst";
}

void TestCli::rejectsBadFiles()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, where);
    const QString file = writeFile(name, bytes);
    const QString store = db(QStringLiteral("reject.db"));
    QCOMPARE(cli({QStringLiteral("import"), realFile(QStringLiteral("test_data.ohlcv-1m.dbn.zst")),
                  QStringLiteral("--db"), store})
                 .exitCode,
             0);
    const QByteArray before =
        cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")}).out;

    const Result r = cli({QStringLiteral("import"), file, QStringLiteral("--db"), store});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(where.toUtf8()), r.err.constData());
    const QByteArray after = cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")}).out;
    QCOMPARE(after, before);
}

// Issue 18.3: a corrected file used to exit 0 with "already stored ... skipped" and was then
// recorded, so it could never be imported.
void TestCli::correctedPricesNeedReplace()
{
    const QString store = db(QStringLiteral("corrected.db"));
    const QByteArray header = "timestamp,open,high,low,close,volume\n";
    const QString original = writeFile(QStringLiteral("orig.csv"),
                                       header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                                                "2024-01-02 09:31:00,4700.5,4701.5,4700,4701,12\n"
                                                "2024-01-02 09:32:00,4701,4701.25,4700.5,4700.75,9\n");
    const QString fixed = writeFile(QStringLiteral("fixed.csv"),
                                    header + "2024-01-02 09:30:00,4700.25,4701,4699.75,4700.5,10\n"
                                             "2024-01-02 09:31:00,4700.5,4701.5,4700,4701.25,12\n"
                                             "2024-01-02 09:32:00,4701,4701.25,4700.5,4700.75,9\n");
    QCOMPARE(cli({QStringLiteral("import"), original, QStringLiteral("--db"), store}).exitCode, 0);
    const QByteArray before =
        cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")}).out;

    for (int attempt = 0; attempt < 2; ++attempt) { // rejected, so not recorded: the same answer twice
        const Result r = cli({QStringLiteral("import"), fixed, QStringLiteral("--db"), store});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains((fixed + QStringLiteral(":3: ")).toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains("close 4701 stored, 4701.25 in the file"), r.err.constData());
        QVERIFY2(r.err.contains("--replace"), r.err.constData());
        QCOMPARE(cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")}).out, before);
    }

    const Result replaced = cli({QStringLiteral("import"), fixed, QStringLiteral("--db"), store,
                                 QStringLiteral("--replace"), QStringLiteral("--json")});
    QVERIFY2(replaced.exitCode == 0, replaced.err.constData());
    const QJsonObject f = replaced.json().value(QStringLiteral("files")).toArray().at(0).toObject();
    QCOMPARE(f.value(QStringLiteral("status")).toString(), QStringLiteral("imported"));
    QCOMPARE(f.value(QStringLiteral("replaced")).toInt(), 1);
    QCOMPARE(f.value(QStringLiteral("already_stored")).toInt(), 2);
    const QJsonArray series = cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")})
                                  .json()
                                  .value(QStringLiteral("series"))
                                  .toArray();
    QCOMPARE(series.size(), 1);
    QCOMPARE(series.at(0).toObject().value(QStringLiteral("bars")).toInt(), 3);
}

void TestCli::barsListsSeries()
{
    const QString store = db(QStringLiteral("bars.db"));
    QCOMPARE(
        cli({QStringLiteral("import"), realFile(QStringLiteral("ES_1min_sample.csv")), QStringLiteral("--db"), store})
            .exitCode,
        0);
    const Result r = cli({QStringLiteral("bars"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    const QJsonArray series = r.json().value(QStringLiteral("series")).toArray();
    QCOMPARE(series.size(), 1);
    const QJsonObject s = series.at(0).toObject();
    QCOMPARE(s.value(QStringLiteral("bars")).toInt(), 15214);
    QCOMPARE(s.value(QStringLiteral("interval_s")).toInt(), 60);
    QCOMPARE(s.value(QStringLiteral("gaps")).toObject().value(QStringLiteral("daily_breaks")).toInt(), 9);
    QCOMPARE(s.value(QStringLiteral("gaps")).toObject().value(QStringLiteral("weekends")).toInt(), 2);
}

void TestCli::replayReportsFeatures()
{
    const QString store = db(QStringLiteral("replay.db"));
    QCOMPARE(
        cli({QStringLiteral("import"), realFile(QStringLiteral("ES_1min_sample.csv")), QStringLiteral("--db"), store})
            .exitCode,
        0);
    const Result r = cli({QStringLiteral("replay"), QStringLiteral("--db"), store, QStringLiteral("--series"),
                          QStringLiteral("ES"), QStringLiteral("--from"), QStringLiteral("2026-01-27"),
                          QStringLiteral("--to"), QStringLiteral("2026-01-29"), QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = r.json();
    // ES trading days 2026-01-27 .. 2026-01-29 inclusive: 3 full sessions of 1380 bars.
    QCOMPARE(j.value(QStringLiteral("bars_replayed")).toInt(), 3 * 1380);
    QVERIFY(j.value(QStringLiteral("features")).toArray().size() >= 8);
    QVERIFY(j.value(QStringLiteral("bars_per_second")).toDouble() > 0);
}

void TestCli::trainsAgentsAndWritesReports()
{
    const QString store = db(QStringLiteral("train.db"));
    const QString html = m_dir.filePath(QStringLiteral("run.html"));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                          QStringLiteral("dqn,ppo"), QStringLiteral("--steps"), QStringLiteral("600"),
                          QStringLiteral("--seed"), QStringLiteral("3"), QStringLiteral("--report"), html,
                          QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = r.json();
    QCOMPARE(j.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    const QJsonObject models = j.value(QStringLiteral("models")).toObject();
    for (const char* m : {"dqn", "ppo"}) {
        const QJsonObject test = models.value(QLatin1String(m)).toObject().value(QStringLiteral("test")).toObject();
        QVERIFY2(test.contains(QStringLiteral("flat")) && test.contains(QStringLiteral("buy_and_hold")), m);
        QCOMPARE(test.value(QStringLiteral("flat")).toObject().value(QStringLiteral("pnl_usd")).toDouble(), 0.0);
    }
    QFile page(html);
    QVERIFY(page.open(QIODevice::ReadOnly));
    const QByteArray text = page.readAll();
    QVERIFY(text.startsWith("<!DOCTYPE html>"));
    QVERIFY(text.contains("<svg") && text.contains("buy and hold") && text.contains("synthetic"));

    const QString runId = QString::number(j.value(QStringLiteral("run_id")).toInt());
    const QString csv = m_dir.filePath(QStringLiteral("run.csv"));
    QCOMPARE(
        cli({QStringLiteral("report"), runId, QStringLiteral("--db"), store, QStringLiteral("--out"), csv}).exitCode,
        0);
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readLine().startsWith("run,model,metric,step,time,value"));
    QVERIFY(f.readAll().count('\n') > 10);

    // The same run's figures per metric, labelled from the registry.
    const Result figures = cli({QStringLiteral("metrics"), QStringLiteral("--run"), runId, QStringLiteral("--db"),
                                store, QStringLiteral("--json")});
    QVERIFY2(figures.exitCode == 0, figures.err.constData());
    const QJsonObject ppo =
        figures.json().value(QStringLiteral("models")).toObject().value(QStringLiteral("ppo")).toObject();
    const QJsonObject gradNorm = ppo.value(QStringLiteral("grad_norm")).toObject();
    QCOMPARE(gradNorm.value(QStringLiteral("label")).toString(), QStringLiteral("grad norm"));
    QVERIFY(gradNorm.value(QStringLiteral("samples")).toInt() > 0);
    QVERIFY(gradNorm.value(QStringLiteral("max")).toDouble() >= gradNorm.value(QStringLiteral("min")).toDouble());
    QCOMPARE(ppo.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("unit")).toString(),
             QStringLiteral("ms"));
    const Result list = cli({QStringLiteral("metrics"), QStringLiteral("--json")});
    QCOMPARE(list.exitCode, 0);
    QVERIFY(list.json().value(QStringLiteral("metrics")).toArray().size() > 20);
    QCOMPARE(
        cli({QStringLiteral("metrics"), QStringLiteral("--run"), QStringLiteral("999"), QStringLiteral("--db"), store})
            .exitCode,
        1);
}

void TestCli::killedRunIsInterruptedAndResumes()
{
    // A real training process, killed with SIGKILL once it has committed
    // metrics and a checkpoint; the store stays readable, the run is marked
    // interrupted on the next start and resumes from its checkpoint.
    const QString store = db(QStringLiteral("kill.db"));
    const QString config = writeFile(QStringLiteral("kill.json"), R"({"checkpoint_every": 200})");
    QProcess p;
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p.start(QStringLiteral(FOXHUNT_CLI_PATH),
            {QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"), QStringLiteral("dqn"),
             QStringLiteral("--steps"), QStringLiteral("100000000"), QStringLiteral("--config"), config,
             QStringLiteral("--json")});
    QVERIFY(p.waitForStarted());
    auto checkpointed = [&] {
        const Result bars = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")});
        const QJsonArray runs = bars.json().value(QStringLiteral("runs")).toArray();
        return !runs.isEmpty() && runs.at(0).toObject().value(QStringLiteral("checkpoints")).toInt() > 0 &&
               runs.at(0).toObject().value(QStringLiteral("metrics")).toInt() > 0;
    };
    QTRY_VERIFY_WITH_TIMEOUT(checkpointed(), 120000);
    ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(30000));

    const Result after = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QCOMPARE(after.exitCode, 0);
    const QJsonObject run = after.json().value(QStringLiteral("runs")).toArray().at(0).toObject();
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QVERIFY(run.value(QStringLiteral("metrics")).toInt() > 0);

    const QString id = QString::number(run.value(QStringLiteral("id")).toInt());
    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--resume"), id,
                                QStringLiteral("--steps"), QStringLiteral("1"), QStringLiteral("--json")});
    QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
    QCOMPARE(resumed.json().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    QVERIFY(resumed.json().value(QStringLiteral("resumed")).toBool());
}

void TestCli::seedsTrainAGroup()
{
    // Two members of a tiny DQN run on the synthetic series, in parallel: each an ordinary run
    // with its seed and the group's id; --json prints the group's summary.
    const QString store = db(QStringLiteral("group.db"));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                          QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("300"),
                          QStringLiteral("--seeds"), QStringLiteral("1-2"), QStringLiteral("--jobs"),
                          QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = r.json();
    const int group = j.value(QStringLiteral("group_id")).toInt();
    QVERIFY2(group > 0, r.out.constData());
    QCOMPARE(j.value(QStringLiteral("kind")).toString(), QStringLiteral("seeds"));
    QCOMPARE(j.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    const QJsonArray members = j.value(QStringLiteral("members")).toArray();
    QCOMPARE(members.size(), 2);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(members.at(i).toObject().value(QStringLiteral("member")).toInt(), i + 1);
        QCOMPARE(members.at(i).toObject().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    }
    const QJsonObject dqn = j.value(QStringLiteral("models")).toObject().value(QStringLiteral("dqn")).toObject();
    const QJsonObject test = dqn.value(QStringLiteral("test")).toObject();
    for (const char* who : {"policy", "flat", "buy_and_hold"})
        for (const char* figure : {"sharpe", "pnl_usd", "max_drawdown_usd"}) {
            const QJsonObject f = test.value(QLatin1String(who)).toObject().value(QLatin1String(figure)).toObject();
            for (const char* key : {"n", "mean", "median", "iqm", "ci95"})
                QVERIFY2(f.contains(QLatin1String(key)), (std::string(who) + "." + figure + "." + key).c_str());
        }
    QCOMPARE(test.value(QStringLiteral("policy"))
                 .toObject()
                 .value(QStringLiteral("pnl_usd"))
                 .toObject()
                 .value(QStringLiteral("n"))
                 .toInt(),
             2);
    QVERIFY(dqn.value(QStringLiteral("p_beats_buy_and_hold")).toObject().contains(QStringLiteral("ci95")));
    const QJsonObject best = dqn.value(QStringLiteral("best_member")).toObject();
    QCOMPARE(best.value(QStringLiteral("trials")).toInt(), 2);
    QVERIFY(best.value(QStringLiteral("verdict")).toString().endsWith(QStringLiteral("significant")));

    // The members are ordinary runs, with the group's id and their seed.
    const Result runs = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QCOMPARE(runs.exitCode, 0);
    const QJsonArray list = runs.json().value(QStringLiteral("runs")).toArray();
    QCOMPARE(list.size(), 2);
    QSet<int> seeds;
    for (const QJsonValue& v : list) {
        QCOMPARE(v.toObject().value(QStringLiteral("group_id")).toInt(), group);
        seeds.insert(v.toObject().value(QStringLiteral("group_member")).toInt());
    }
    QCOMPARE(seeds, (QSet<int>{1, 2}));
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore stored(bars);
        for (const foxhunt::RunInfo& run : stored.groupMembers(group))
            QCOMPARE(nlohmann::json::parse(run.configJson).at("seed").get<std::int64_t>(), run.groupMember);
    }
    const Result groups = cli({QStringLiteral("groups"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QVERIFY2(groups.exitCode == 0, groups.err.constData());
    const QJsonArray g = groups.json().value(QStringLiteral("groups")).toArray();
    QCOMPARE(g.size(), 1);
    QCOMPARE(g.at(0).toObject().value(QStringLiteral("id")).toInt(), group);
    QCOMPARE(g.at(0).toObject().value(QStringLiteral("seeds")).toArray().size(), 2);
    QCOMPARE(g.at(0).toObject().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    const Result text = cli({QStringLiteral("groups"), QStringLiteral("--db"), store});
    QVERIFY(text.out.contains("2/2 finished"));

    // The group's own report: its section per model and its members, in HTML and in PDF.
    const QString html = QDir(m_dir.path()).filePath(QStringLiteral("group.html"));
    const Result report = cli({QStringLiteral("report"), QStringLiteral("--db"), store, QStringLiteral("--group"),
                               QString::number(group), QStringLiteral("--out"), html, QStringLiteral("--json")});
    QVERIFY2(report.exitCode == 0, report.err.constData());
    QCOMPARE(report.json().value(QStringLiteral("groups")).toArray().size(), 1);
    QFile page(html);
    QVERIFY(page.open(QIODevice::ReadOnly));
    const QByteArray body = page.readAll();
    QVERIFY(body.contains(QStringLiteral("<section id=\"group-%1-dqn\">").arg(group).toUtf8()));
    QVERIFY(body.contains(QStringLiteral("<section id=\"group-%1-members\">").arg(group).toUtf8()));
    QVERIFY(body.contains("performance profile"));
    const QString pdf = QDir(m_dir.path()).filePath(QStringLiteral("group.pdf"));
    const Result pdfReport = cli({QStringLiteral("report"), QStringLiteral("--db"), store, QStringLiteral("--group"),
                                  QString::number(group), QStringLiteral("--out"), pdf});
    QVERIFY2(pdfReport.exitCode == 0, pdfReport.err.constData());
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.read(5) == "%PDF-");
    // Runs and groups in one report, or neither, are refused; so is a group that is not there.
    for (const QStringList& bad : {QStringList{QStringLiteral("1"), QStringLiteral("--group"), QString::number(group)},
                                   QStringList{}, QStringList{QStringLiteral("--group"), QString::number(group + 5)}}) {
        const Result refused = cli(
            QStringList{QStringLiteral("report"), QStringLiteral("--db"), store, QStringLiteral("--out"), html} + bad);
        QVERIFY2(refused.exitCode != 0, qPrintable(bad.join(' ')));
    }
}

void TestCli::interruptedGroupResumes()
{
    // A three-seed group; then one member reads interrupted (its process died) and one never
    // started (no run). Resuming the group resumes the first, trains the second and leaves the
    // finished one alone: every seed ends finished, in one run each.
    const QString store = db(QStringLiteral("group-resume.db"));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                          QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("300"),
                          QStringLiteral("--seeds"), QStringLiteral("1,2,3"), QStringLiteral("--jobs"),
                          QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const std::int64_t group = r.json().value(QStringLiteral("group_id")).toInt();
    std::map<std::int64_t, foxhunt::RunInfo> before;
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        for (const foxhunt::RunInfo& run : runs.groupMembers(group)) before[run.groupMember] = run;
        QCOMPARE(before.size(), std::size_t(3));
        runs.setStatus(before[2].id, foxhunt::RunStatus::Interrupted, "the process running it ended unexpectedly");
        runs.deleteRun(before[3].id);
        runs.setGroupStatus(group, foxhunt::RunStatus::Interrupted);
    }
    const Result listed = cli({QStringLiteral("groups"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    const QJsonObject g = listed.json().value(QStringLiteral("groups")).toArray().at(0).toObject();
    QCOMPARE(g.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(g.value(QStringLiteral("members")).toArray().at(2).toObject().value(QStringLiteral("status")).toString(),
             QStringLiteral("pending"));

    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--db"), store,
                                QStringLiteral("--resume-group"), QString::number(group), QStringLiteral("--json")});
    QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
    QCOMPARE(resumed.json().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    foxhunt::BarStore bars(store.toStdString());
    foxhunt::RunStore runs(bars);
    QCOMPARE(runs.runs().size(), std::size_t(3)); // no seed trained twice
    std::map<std::int64_t, foxhunt::RunInfo> after;
    for (const foxhunt::RunInfo& run : runs.groupMembers(group)) {
        QVERIFY2(run.status == foxhunt::RunStatus::Finished, run.error.c_str());
        QVERIFY(after.emplace(run.groupMember, run).second);
    }
    QCOMPARE(after.size(), std::size_t(3));
    QCOMPARE(after[1].id, before[1].id);
    QCOMPARE(after[1].finishedNs, before[1].finishedNs); // finished: not run again
    QCOMPARE(after[2].id, before[2].id);                 // resumed in its own run
    QVERIFY(after[2].finishedNs > before[2].finishedNs);
    QVERIFY(after[3].uuid != before[3].uuid); // trained afresh (SQLite may give it the freed id)
    QVERIFY(after[3].createdNs > before[3].finishedNs);
    QCOMPARE(nlohmann::json::parse(after[3].configJson).at("seed").get<std::int64_t>(), std::int64_t(3));
    QVERIFY(runs.group(group)->status == foxhunt::RunStatus::Finished);
    // A finished group has nothing left to do.
    const Result again = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--resume-group"),
                              QString::number(group)});
    QVERIFY2(again.exitCode == 0, again.err.constData());
    QCOMPARE(runs.runs().size(), std::size_t(3));
}

void TestCli::sweepTrainsATrialPerMemberAndRanksThem()
{
    // A grid of two learning rates: two ordinary runs in a sweep group, each trained with its trial's
    // value; --json ranks the trials and deflates the best one's Sharpe over both.
    const QString store = db(QStringLiteral("sweep.db"));
    const QString spec = writeFile(QStringLiteral("sweep.json"),
                                   R"({"method": "grid", "space": {"dqn.learning_rate": [0.0001, 0.001]}})");
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                          QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("300"),
                          QStringLiteral("--sweep"), spec, QStringLiteral("--jobs"), QStringLiteral("2"),
                          QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = r.json();
    const int group = j.value(QStringLiteral("group_id")).toInt();
    QVERIFY2(group > 0, r.out.constData());
    QCOMPARE(j.value(QStringLiteral("kind")).toString(), QStringLiteral("sweep"));
    QCOMPARE(j.value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
    const QJsonArray trials = j.value(QStringLiteral("trials")).toArray();
    QCOMPARE(trials.size(), 2);
    QSet<QString> settings;
    for (int i = 0; i < 2; ++i) {
        const QJsonObject t = trials.at(i).toObject();
        QCOMPARE(t.value(QStringLiteral("rank")).toInt(), i + 1);
        QCOMPARE(t.value(QStringLiteral("ranked_by")).toString(), QStringLiteral("dqn test Sharpe"));
        settings.insert(t.value(QStringLiteral("settings")).toString());
    }
    QCOMPARE(settings,
             (QSet<QString>{QStringLiteral("dqn.learning_rate=0.0001"), QStringLiteral("dqn.learning_rate=0.001")}));
    // Ranked best first, where both have a Sharpe.
    const QJsonValue first = trials.at(0).toObject().value(QStringLiteral("score"));
    const QJsonValue second = trials.at(1).toObject().value(QStringLiteral("score"));
    if (first.isDouble() && second.isDouble()) QVERIFY(first.toDouble() >= second.toDouble());
    const QJsonObject best = j.value(QStringLiteral("models"))
                                 .toObject()
                                 .value(QStringLiteral("dqn"))
                                 .toObject()
                                 .value(QStringLiteral("best_member"))
                                 .toObject();
    if (!best.isEmpty()) QCOMPARE(best.value(QStringLiteral("trials")).toInt(), 2);

    // Each member trained with its trial's learning rate, and the group stores the plan.
    foxhunt::BarStore bars(store.toStdString());
    foxhunt::RunStore stored(bars);
    const std::vector<foxhunt::RunInfo> members = stored.groupMembers(group);
    QCOMPARE(members.size(), std::size_t(2));
    const nlohmann::json plan = nlohmann::json::parse(stored.group(group)->configJson).at("sweep");
    for (const foxhunt::RunInfo& run : members) {
        const double lr = nlohmann::json::parse(run.configJson).at("dqn").at("learning_rate").get<double>();
        QCOMPARE(lr, plan.at("trials").at(run.groupMember).at("dqn.learning_rate").get<double>());
    }

    // A bad sweep is refused before anything is stored.
    const QString bad = writeFile(QStringLiteral("bad.json"), R"({"space": {"dqn.learning_rat": [0.1]}})");
    const Result refused = cli(
        {QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--sweep"), bad});
    QVERIFY(refused.exitCode != 0);
    QVERIFY2(refused.err.contains("no key 'dqn.learning_rat'"), refused.err.constData());
    QCOMPARE(stored.groups().size(), std::size_t(1));
}

void TestCli::foldsTrainWalkForward()
{
    // Two seeds x three expanding folds of a tiny DQN run over 20 synthetic trading days: six
    // members, each an ordinary run whose split (as its report recomputes it from the stored
    // config) ends training and validation before its fold's test days; the summary joins each
    // seed's test segments into one out-of-sample curve.
    const QString store = db(QStringLiteral("folds.db"));
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                          QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("200"),
                          QStringLiteral("--to"), QStringLiteral("2024-02-02"), QStringLiteral("--seeds"),
                          QStringLiteral("1-2"), QStringLiteral("--folds"), QStringLiteral("3"),
                          QStringLiteral("--jobs"), QStringLiteral("2"), QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const nlohmann::json j = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(j.at("kind").get<std::string>(), std::string("folds"));
    QCOMPARE(j.at("status").get<std::string>(), std::string("finished"));
    const nlohmann::json& plan = j.at("walk_forward");
    QCOMPARE(plan.at("folds").get<int>(), 3);
    QCOMPARE(plan.at("window").get<std::string>(), std::string("expanding"));
    QCOMPARE(plan.at("members").size(), std::size_t(6));
    QCOMPARE(j.at("members").size(), std::size_t(6));
    for (std::size_t i = 0; i < 6; ++i) {
        const nlohmann::json& m = j["members"][i];
        QCOMPARE(m.at("member").get<std::size_t>(), i);
        QCOMPARE(m.at("seed").get<std::size_t>(), i / 3 + 1);
        QCOMPARE(m.at("fold").get<std::size_t>(), i % 3);
        QCOMPARE(m.at("status").get<std::string>(), std::string("finished"));
    }
    // 20 days in blocks of 5: the folds test on days 6-10, 11-15 and 16-20, one after the other.
    for (std::size_t k = 0; k < 3; ++k) {
        const nlohmann::json& f = plan["members"][k];
        QCOMPARE(f.at("test").at("days").get<int>(), 5);
        QVERIFY(f["train"]["to"].get<std::string>() < f["validation"]["from"].get<std::string>());
        QVERIFY(f["validation"]["to"].get<std::string>() < f["test"]["from"].get<std::string>());
        if (k > 0)
            QVERIFY(plan["members"][k - 1]["test"]["to"].get<std::string>() < f["test"]["from"].get<std::string>());
        QVERIFY(f["train"]["from"] == plan["members"][0]["train"]["from"]); // expanding: from the first day
        QVERIFY(f["test"] == plan["members"][k + 3]["test"]);               // the same folds for seed 2
    }
    QCOMPARE(plan["members"][2]["test"]["to"].get<std::string>(), std::string("2024-02-02"));

    // Every member's stored split (its report's) ends training and validation before its test days.
    std::map<std::int64_t, foxhunt::RunInfo> byMember;
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        for (const foxhunt::RunInfo& run : runs.groupMembers(j.at("group_id").get<std::int64_t>()))
            byMember[run.groupMember] = run;
    }
    QCOMPARE(byMember.size(), std::size_t(6));
    QStringList reportArgs{QStringLiteral("report")};
    for (const auto& [member, run] : byMember) reportArgs << QString::number(run.id);
    const QString reportFile = m_dir.filePath(QStringLiteral("folds-report.json"));
    reportArgs << QStringLiteral("--db") << store << QStringLiteral("--out") << reportFile;
    const Result report = cli(reportArgs);
    QVERIFY2(report.exitCode == 0, report.err.constData());
    QFile file(reportFile);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const nlohmann::json reported = nlohmann::json::parse(file.readAll().toStdString());
    std::map<std::int64_t, nlohmann::json> splitOf;
    for (const nlohmann::json& run : reported.at("runs")) splitOf[run.at("id").get<std::int64_t>()] = run.at("split");
    for (const auto& [member, run] : byMember) {
        const nlohmann::json& f = plan["members"][std::size_t(member)];
        const nlohmann::json config = nlohmann::json::parse(run.configJson);
        QCOMPARE(config.at("seed").get<std::int64_t>(), f.at("seed").get<std::int64_t>());
        // Its config names the fold's validation and test days: the split is explicit, not shares.
        QCOMPARE(foxhunt::formatDate(config.at("validation_from_day").get<std::int64_t>()),
                 f["validation"]["from"].get<std::string>());
        QCOMPARE(foxhunt::formatDate(config.at("test_from_day").get<std::int64_t>()),
                 f["test"]["from"].get<std::string>());
        const nlohmann::json& split = splitOf.at(run.id);
        QVERIFY2(split.is_object(), reported.dump().c_str());
        const auto open = [](const nlohmann::json& date) {
            return foxhunt::formatUtc(foxhunt::sessionOpenUtc(*foxhunt::parseDate(date.get<std::string>())));
        };
        QCOMPARE(split["train"]["from"].get<std::string>(), open(f["train"]["from"]));
        QCOMPARE(split["validation"]["from"].get<std::string>(), open(f["validation"]["from"]));
        QCOMPARE(split["test"]["from"].get<std::string>(), open(f["test"]["from"]));
        QVERIFY(split["train"]["to"].get<std::string>() <= split["test"]["from"].get<std::string>());
        QVERIFY(split["validation"]["to"].get<std::string>() <= split["test"]["from"].get<std::string>());
        // The run saw no bar after its test days: its data ends before the next fold's test begins.
        QVERIFY(run.toTs < foxhunt::sessionOpenUtc(*foxhunt::parseDate(f["test"]["to"].get<std::string>()) + 1));
    }

    // The fold-by-fold table and one joined out-of-sample curve per seed.
    const nlohmann::json& wf = j.at("models").at("dqn").at("walk_forward");
    QCOMPARE(wf.at("folds").size(), std::size_t(6));
    QCOMPARE(wf.at("out_of_sample").size(), std::size_t(2));
    for (const nlohmann::json& joined : wf["out_of_sample"]) {
        QVERIFY(joined.at("complete").get<bool>());
        QCOMPARE(joined.at("fold_starts").size(), std::size_t(3));
        QVERIFY(!joined.at("equity_usd").empty());
        double sum = 0.0, buyHold = 0.0;
        for (const nlohmann::json& row : wf["folds"])
            if (row["seed"] == joined["seed"]) {
                sum += row.at("pnl_usd").get<double>();
                buyHold += row.at("buy_and_hold_pnl_usd").get<double>();
            }
        QCOMPARE(joined.at("pnl_usd").get<double>(), sum);
        QCOMPARE(joined.at("buy_and_hold_pnl_usd").get<double>(), buyHold);
    }
    QCOMPARE(wf.at("over_folds").at("policy").at("pnl_usd").at("n").get<int>(), 6);
    QCOMPARE(wf["over_folds"].at("folds_compared").get<int>(), 6);

    // A member trained again by --resume-group gets the stored fold, not a new cut.
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        runs.deleteRun(byMember[4].id);
        runs.setGroupStatus(j["group_id"].get<std::int64_t>(), foxhunt::RunStatus::Interrupted);
    }
    const Result resumed = cli({QStringLiteral("train"), QStringLiteral("--db"), store,
                                QStringLiteral("--resume-group"), QString::number(j["group_id"].get<std::int64_t>()),
                                QStringLiteral("--json")});
    QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
    {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        for (const foxhunt::RunInfo& run : runs.groupMembers(j["group_id"].get<std::int64_t>())) {
            const nlohmann::json config = nlohmann::json::parse(run.configJson);
            const nlohmann::json before = nlohmann::json::parse(byMember[run.groupMember].configJson);
            for (const char* key : {"from_day", "to_day", "train_fraction", "validation_fraction", "seed"})
                QVERIFY2(config.at(key) == before.at(key), key);
            QVERIFY(run.status == foxhunt::RunStatus::Finished);
        }
    }

    const Result groups = cli({QStringLiteral("groups"), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QVERIFY2(groups.exitCode == 0, groups.err.constData());
    const nlohmann::json g = nlohmann::json::parse(groups.out.toStdString()).at("groups").at(0);
    QCOMPARE(g.at("folds").get<int>(), 3);
    QVERIFY(g.at("seeds") == nlohmann::json::array({1, 2}));
    QVERIFY(g.at("models").at("dqn").contains("walk_forward"));

    // More folds than the days allow: refused, and no group is made.
    const Result tooMany = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
                                QStringLiteral("dqn"), QStringLiteral("--steps"), QStringLiteral("200"),
                                QStringLiteral("--to"), QStringLiteral("2024-02-02"), QStringLiteral("--folds"),
                                QStringLiteral("19")});
    QCOMPARE(tooMany.exitCode, 1);
    QVERIFY2(tooMany.err.contains("19 folds need at least 21 trading days"), tooMany.err.constData());
    foxhunt::BarStore bars(store.toStdString());
    QCOMPARE(foxhunt::RunStore(bars).groups().size(), std::size_t(1));
}

void TestCli::badTrainSettingsAreRefused_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QByteArray>("config"); // written to a file and passed with --config when not empty
    QTest::addColumn<QString>("message");
    const QByteArray none;
    QTest::newRow("steps 0") << QStringList{"--steps", "0"} << none << "--steps";
    QTest::newRow("steps -5") << QStringList{"--steps", "-5"} << none << "--steps";
    QTest::newRow("steps beyond int64") << QStringList{"--steps", "99999999999999999999"} << none << "--steps";
    QTest::newRow("no models") << QStringList{"--models", ""} << none << "--models is empty";
    QTest::newRow("seed -5") << QStringList{"--seed", "-5"} << none << "--seed";
    QTest::newRow("threads -3") << QStringList{"--threads", "-3"} << none << "--threads";
    QTest::newRow("nproc 0") << QStringList{"--nproc", "0"} << none << "--nproc";
    QTest::newRow("timeout -1") << QStringList{"--timeout", "-1"} << none << "--timeout";
    QTest::newRow("resume -1") << QStringList{"--resume", "-1"} << none << "--resume";
    QTest::newRow("speed abc") << QStringList{"--speed", "abc"} << none << "--speed is max or a positive";
    QTest::newRow("seeds abc") << QStringList{"--seeds", "abc"} << none << "--seeds takes seeds like 1-5";
    QTest::newRow("seeds downwards") << QStringList{"--seeds", "3-1"} << none << "must run upwards";
    QTest::newRow("seeds twice") << QStringList{"--seeds", "1-3,2"} << none << "names a seed twice";
    QTest::newRow("seeds with seed") << QStringList{"--seeds", "1-2", "--seed", "4"} << none
                                     << "--seed does not go with";
    QTest::newRow("window without folds") << QStringList{"--window", "rolling"} << none << "--window goes with --folds";
    QTest::newRow("folds 0") << QStringList{"--folds", "0"} << none << "--folds";
    QTest::newRow("window bad") << QStringList{"--folds", "3", "--window", "sideways"} << none << "--window";
    QTest::newRow("folds with resume-group")
        << QStringList{"--folds", "3", "--resume-group", "1"} << none << "leave out --seeds, --folds and --sweep";
    QTest::newRow("seeds bad config") << QStringList{"--seeds", "1-2"} << QByteArray(R"({"stepz": 10})")
                                      << "unknown key stepz";
    QTest::newRow("config seed -1") << QStringList{} << QByteArray(R"({"seed": -1})") << "seed must be a whole number";
    QTest::newRow("config steps 1e300") << QStringList{} << QByteArray(R"({"steps": 1e300})")
                                        << "steps must be a whole number";
    QTest::newRow("config unknown top-level key")
        << QStringList{} << QByteArray(R"({"stepz": 10})") << "unknown key stepz";
    QTest::newRow("config head_dim 0") << QStringList{"--models", "mamba2"}
                                       << QByteArray(R"({"mamba2": {"head_dim": 0}})")
                                       << "mamba2.head_dim must be at least 1";
    QTest::newRow("config head_dim not dividing")
        << QStringList{"--models", "mamba2"} << QByteArray(R"({"mamba2": {"head_dim": 7}})") << "must divide d_model";
    QTest::newRow("config tft heads 0") << QStringList{"--models", "tft"} << QByteArray(R"({"tft": {"heads": 0}})")
                                        << "tft.heads must be at least 1";
}

void TestCli::badTrainSettingsAreRefused()
{
    QFETCH(QStringList, args);
    QFETCH(QByteArray, config);
    QFETCH(QString, message);
    QString tag = QString::fromLatin1(QTest::currentDataTag());
    tag.replace(QLatin1Char(' '), QLatin1Char('-'));
    const QString store = db(QStringLiteral("refused-%1.db").arg(tag));
    QStringList all{QStringLiteral("train"), QStringLiteral("--db"), store};
    all << args;
    if (!config.isEmpty()) all << QStringLiteral("--config") << writeFile(QStringLiteral("refused.json"), config);
    const Result r = cli(all);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
    QVERIFY2(!r.err.contains("stod"), r.err.constData());
    QVERIFY2(!QFile::exists(store), "refused before the store is opened: no run, nothing left running");
}

void TestCli::usageErrorsExitWithTheDocumentedCode()
{
    // CLI11's own codes (105 for a failed check, 109 for an unknown option) are not the README's.
    const Result missing = cli({QStringLiteral("import"), m_dir.filePath(QStringLiteral("not-there.csv")),
                                QStringLiteral("--db"), db(QStringLiteral("missing.db"))});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("not-there.csv"), missing.err.constData());
    QCOMPARE(cli({QStringLiteral("train"), QStringLiteral("--no-such-option")}).exitCode, 1);
    QCOMPARE(cli({QStringLiteral("train"), QStringLiteral("--help")}).exitCode, 0);
    // A filter that matches no benchmark: JSON on stdout as --json promises, and a failure.
    const Result bench = cli({QStringLiteral("bench"), QStringLiteral("--json"), QStringLiteral("--filter"),
                              QStringLiteral("NoSuchBenchmark")});
    QCOMPARE(bench.exitCode, 1);
    QVERIFY2(bench.json().value(QStringLiteral("error")).toString().contains(QStringLiteral("NoSuchBenchmark")),
             bench.out.constData());
    // report --json says what it wrote; a run that is not there is a JSON error.
    const QString store = db(QStringLiteral("report-json.db"));
    const Result trained = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--steps"),
                                QStringLiteral("50"), QStringLiteral("--json")});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const QString id = QString::number(trained.json().value(QStringLiteral("run_id")).toInt());
    const QString out = m_dir.filePath(QStringLiteral("report-json.html"));
    const Result report = cli({QStringLiteral("report"), id, QStringLiteral("--db"), store, QStringLiteral("--out"),
                               out, QStringLiteral("--json")});
    QVERIFY2(report.exitCode == 0, report.err.constData());
    QCOMPARE(report.json().value(QStringLiteral("format")).toString(), QStringLiteral("html"));
    QCOMPARE(report.json().value(QStringLiteral("bytes")).toInteger(), QFileInfo(out).size());
    const Result missingRun = cli({QStringLiteral("report"), QStringLiteral("999"), QStringLiteral("--db"), store,
                                   QStringLiteral("--out"), out, QStringLiteral("--json")});
    QCOMPARE(missingRun.exitCode, 1);
    QVERIFY(missingRun.json().contains(QStringLiteral("error")));
}

void TestCli::importReadsAPipeOnce()
{
    // `import /dev/stdin` (and `import <(cat f)`) read the pipe to hash it, then found it empty.
    QFile real(realFile(QStringLiteral("ES_1min_sample.csv")));
    QVERIFY(real.open(QIODevice::ReadOnly));
    const QByteArray csv = real.readAll();
    const QString store = db(QStringLiteral("stdin.db"));
    const Result r = cli({QStringLiteral("import"), QStringLiteral("/dev/stdin"), QStringLiteral("--db"), store,
                          QStringLiteral("--json")},
                         csv);
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject f = r.json().value(QStringLiteral("files")).toArray().at(0).toObject();
    QCOMPARE(f.value(QStringLiteral("imported")).toInt(), 15214);
    // The same bytes from the file itself are known by their hash, taken while the pipe was read.
    const Result again = cli(
        {QStringLiteral("import"), real.fileName(), QStringLiteral("--db"), store, QStringLiteral("--json")});
    QVERIFY2(again.exitCode == 0, again.err.constData());
    QCOMPARE(again.json()
                 .value(QStringLiteral("files"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("status"))
                 .toString(),
             QStringLiteral("already_imported"));
}

void TestCli::importRefusesADevice()
{
    // /dev/zero never ends: refused by its type, before it is opened.
    const Result r = cli({QStringLiteral("import"), QStringLiteral("/dev/zero"), QStringLiteral("--db"),
                          db(QStringLiteral("device.db"))});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("/dev/zero: is a character device, not a regular file"), r.err.constData());
}

void TestCli::importLimitsDecompression()
{
    // A hand-made zstd frame: a header claiming 2 MiB (single segment) and sixteen 128 KiB RLE blocks of zeros.
    QByteArray frame = QByteArray::fromHex("28b52ffd"
                                           "a0"
                                           "00002000");
    for (int block = 0; block < 16; ++block) frame += QByteArray::fromHex(block == 15 ? "03001000" : "02001000");
    const QString file = writeFile(QStringLiteral("zeros.dbn.zst"), frame);
    const QString store = db(QStringLiteral("zstd.db"));
    // Within the default limit it decompresses, and the zeros are then no known format.
    Result r = cli({QStringLiteral("import"), file, QStringLiteral("--db"), store});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("unrecognised"), r.err.constData());
    // With a 1 MiB limit the claim alone is refused.
    r = cli({QStringLiteral("import"), file, QStringLiteral("--db"), store, QStringLiteral("--max-decompressed"),
             QStringLiteral("1")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("the zstd frames claim 2 MiB uncompressed, more than the limit of 1 MiB"),
             r.err.constData());
}

void TestCli::threadsAreCappedAtTheHardware()
{
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const Result r = cli({QStringLiteral("train"), QStringLiteral("--db"), db(QStringLiteral("threads.db")),
                          QStringLiteral("--models"), QStringLiteral("dqn"), QStringLiteral("--steps"),
                          QStringLiteral("50"), QStringLiteral("--threads"), QStringLiteral("100000"),
                          QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QByteArray note = "100000 threads asked for, but this machine has " + QByteArray::number(hardware) +
                            " hardware thread";
    QVERIFY2(r.err.contains(note), r.err.constData());
    QVERIFY2(r.err.contains("; using " + QByteArray::number(hardware)), r.err.constData());
    QCOMPARE(r.json().value(QStringLiteral("status")).toString(), QStringLiteral("finished"));
}

void TestCli::runsAreNamedTaggedAndAnnotated()
{
    const QString store = db(QStringLiteral("labels.db"));
    const Result trained = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--steps"),
                                QStringLiteral("50"), QStringLiteral("--name"), QStringLiteral("  first try "),
                                QStringLiteral("--tag"), QStringLiteral("smoke"), QStringLiteral("--tag"),
                                QStringLiteral("CPU"), QStringLiteral("--json")});
    QVERIFY2(trained.exitCode == 0, trained.err.constData());
    const QString id = QString::number(trained.json().value(QStringLiteral("run_id")).toInt());
    auto listed = [&] {
        const Result r = cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")});
        return r.json().value(QStringLiteral("runs")).toArray().at(0).toObject();
    };
    QJsonObject run = listed();
    QCOMPARE(run.value(QStringLiteral("name")).toString(), QStringLiteral("first try"));
    QCOMPARE(run.value(QStringLiteral("tags")).toArray(), (QJsonArray{QStringLiteral("CPU"), QStringLiteral("smoke")}));
    QCOMPARE(run.value(QStringLiteral("notes")).toString(), QString());

    const Result labelled = cli({QStringLiteral("runs"), QStringLiteral("label"), id, QStringLiteral("--db"), store,
                                 QStringLiteral("--name"), QStringLiteral("baseline"), QStringLiteral("--untag"),
                                 QStringLiteral("cpu"), QStringLiteral("--tag"), QStringLiteral("lr 1e-3"),
                                 QStringLiteral("--note"), QStringLiteral("seed 3, default preset")});
    QVERIFY2(labelled.exitCode == 0, labelled.err.constData());
    QVERIFY2(labelled.out.contains("baseline [lr 1e-3, smoke]"), labelled.out.constData());
    run = listed();
    QCOMPARE(run.value(QStringLiteral("name")).toString(), QStringLiteral("baseline"));
    QCOMPARE(run.value(QStringLiteral("tags")).toArray(),
             (QJsonArray{QStringLiteral("lr 1e-3"), QStringLiteral("smoke")}));
    QCOMPARE(run.value(QStringLiteral("notes")).toString(), QStringLiteral("seed 3, default preset"));
    const Result text = cli({QStringLiteral("runs"), QStringLiteral("--db"), store});
    QVERIFY2(text.out.contains("baseline [lr 1e-3, smoke]"), text.out.constData());

    // Bad input exits 1 with the reason and changes nothing.
    const QStringList labelArgs = {QStringLiteral("runs"), QStringLiteral("label"), id, QStringLiteral("--db"), store};
    const QList<QPair<QStringList, QByteArray>> bad = {
        {{QStringLiteral("--tag"), QStringLiteral("a,b"), QStringLiteral("--name"), QStringLiteral("changed")},
         "comma"},
        {{QStringLiteral("--name"), QString(201, QLatin1Char('n'))}, "at most 200 characters"},
        {{QStringLiteral("--tag"), QStringLiteral(" ")}, "may not be empty"},
        {{}, "nothing to change"},
    };
    for (const auto& [extra, reason] : bad) {
        const Result r = cli(labelArgs + extra);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(reason), r.err.constData());
    }
    const Result unknown = cli({QStringLiteral("runs"), QStringLiteral("label"), QStringLiteral("999"),
                                QStringLiteral("--db"), store, QStringLiteral("--tag"), QStringLiteral("x")});
    QCOMPARE(unknown.exitCode, 1);
    QVERIFY2(unknown.err.contains("no run 999"), unknown.err.constData());
    QCOMPARE(cli({QStringLiteral("runs"), QStringLiteral("label"), QStringLiteral("--db"), store}).exitCode,
             1); // no id
    QCOMPARE(
        cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--tag"), QStringLiteral("x,y")})
            .exitCode,
        1);
    run = listed();
    QCOMPARE(run.value(QStringLiteral("name")).toString(), QStringLiteral("baseline"));
    QCOMPARE(run.value(QStringLiteral("tags")).toArray().size(), 2);
    QCOMPARE(cli({QStringLiteral("runs"), QStringLiteral("--db"), store, QStringLiteral("--json")})
                 .json()
                 .value(QStringLiteral("runs"))
                 .toArray()
                 .size(),
             1); // the refused train made no run
}

void TestCli::trashedRunsAreRestoredAndPurged()
{
    const QString store = db(QStringLiteral("restore.db"));
    const QString trash = m_dir.filePath(QStringLiteral("desktop/Trash"));
    QVERIFY(QDir().mkpath(trash + QStringLiteral("/files")) && QDir().mkpath(trash + QStringLiteral("/info")));
    struct Stored {
        std::int64_t id = 0;
        QString folder, file;
    };
    // A stopped run with a checkpoint in its own folder beside the database, as a session leaves it.
    auto stored = [&](const char* name) {
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::ensureDefaultData(bars);
        foxhunt::RunStore runs(bars);
        const foxhunt::SeriesInfo series = bars.series().front();
        Stored r;
        r.id = runs.createRun(name, R"({"models":["dqn"],"steps":50})", series, series.firstTs, series.lastTs, "{}");
        r.folder = QString::fromStdString(runs.checkpointFolder()) + QLatin1Char('/') +
                   QString::fromStdString(foxhunt::RunStore::runFolderName(*runs.run(r.id)));
        QDir().mkpath(r.folder);
        r.file = r.folder + QStringLiteral("/dqn-2.pt");
        QFile f(r.file);
        if (f.open(QIODevice::WriteOnly)) f.write("weights");
        f.close();
        runs.addCheckpoint(r.id, "dqn", 2, r.file.toStdString());
        runs.setStatus(r.id, foxhunt::RunStatus::Stopped);
        return r;
    };
    // What the window's Delete does: the folder to the desktop trash (freedesktop layout), the run to the trash.
    auto trashRun = [&](const Stored& r, bool moveFolder) {
        QString inTrash;
        if (moveFolder) {
            inTrash = trash + QStringLiteral("/files/") + QFileInfo(r.folder).fileName();
            QDir().rename(r.folder, inTrash);
            QFile info(trash + QStringLiteral("/info/") + QFileInfo(r.folder).fileName() +
                       QStringLiteral(".trashinfo"));
            if (info.open(QIODevice::WriteOnly)) info.write("[Trash Info]\n");
        }
        foxhunt::BarStore bars(store.toStdString());
        foxhunt::RunStore runs(bars);
        runs.trashRun(r.id, inTrash.toStdString());
        return inTrash;
    };
    auto trashedAt = [&](std::int64_t id) -> std::int64_t {
        foxhunt::BarStore bars(store.toStdString());
        const auto info = foxhunt::RunStore(bars).run(id);
        return info ? info->trashedNs : -1; // -1: gone
    };
    const auto idOf = [](const QJsonValue& run) {
        return static_cast<std::int64_t>(run.toObject().value(QStringLiteral("id")).toInteger());
    };
    const Stored moved = stored("moved"), inPlace = stored("in place"), active = stored("active"),
                 purgedMoved = stored("purged moved"), purgedInPlace = stored("purged in place");
    const QString movedTrash = trashRun(moved, true);
    QVERIFY(QFileInfo(movedTrash).isDir() && !QFileInfo::exists(moved.folder));
    trashRun(inPlace, false);
    const QString purgedTrash = trashRun(purgedMoved, true);
    trashRun(purgedInPlace, false);
    const QString dbArg = QStringLiteral("--db");
    const auto idText = [](const Stored& r) { return QString::number(r.id); };

    // A run outside the trash, or an unknown one, is refused, and nothing of the others changes.
    for (const QString& command : {QStringLiteral("restore"), QStringLiteral("purge")}) {
        const Result refused = cli({QStringLiteral("runs"), command, idText(moved), idText(active), dbArg, store});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(QStringLiteral("run %1 is not in the trash").arg(active.id).toUtf8()),
                 refused.err.constData());
        const Result unknown = cli({QStringLiteral("runs"), command, QStringLiteral("999"), dbArg, store});
        QCOMPARE(unknown.exitCode, 1);
        QVERIFY2(unknown.err.contains("no run 999"), unknown.err.constData());
        QVERIFY(trashedAt(moved.id) > 0);
        QCOMPARE(trashedAt(active.id), std::int64_t{0});
        QVERIFY(QFileInfo(movedTrash).isDir());
        QVERIFY(QFile::exists(active.file));
    }
    QVERIFY(cli({QStringLiteral("runs"), QStringLiteral("restore"), dbArg, store}).exitCode != 0); // no id

    // Restore: the runs are listed again, a folder moved to the desktop trash is back where it was.
    const Result restored = cli({QStringLiteral("runs"), QStringLiteral("restore"), idText(moved), idText(inPlace),
                                 dbArg, store, QStringLiteral("--json")});
    QVERIFY2(restored.exitCode == 0, restored.err.constData());
    const QJsonArray restoredRuns = restored.json().value(QStringLiteral("runs")).toArray();
    QCOMPARE(restoredRuns.size(), 2);
    QCOMPARE(idOf(restoredRuns.at(0)), moved.id);
    QCOMPARE(restoredRuns.at(0).toObject().value(QStringLiteral("checkpoint_folder")).toString(), moved.folder);
    QCOMPARE(restoredRuns.at(0).toObject().value(QStringLiteral("trashed")).toString(), QString());
    QCOMPARE(restoredRuns.at(0).toObject().value(QStringLiteral("checkpoints")).toInt(), 1);
    QCOMPARE(idOf(restoredRuns.at(1)), inPlace.id);
    QCOMPARE(restoredRuns.at(1).toObject().value(QStringLiteral("checkpoint_folder")).toString(), QString());
    QCOMPARE(trashedAt(moved.id), std::int64_t{0});
    QCOMPARE(trashedAt(inPlace.id), std::int64_t{0});
    QVERIFY(QFile::exists(moved.file));
    QVERIFY(!QFileInfo::exists(movedTrash));
    QVERIFY(!QFile::exists(trash + QStringLiteral("/info/") + QFileInfo(movedTrash).fileName() +
                           QStringLiteral(".trashinfo")));
    QVERIFY(QFile::exists(inPlace.file));
    // Restored runs are outside the trash now: a second restore is refused.
    QCOMPARE(cli({QStringLiteral("runs"), QStringLiteral("restore"), idText(moved), dbArg, store}).exitCode, 1);

    // Purge, as the window's permanent delete: the run and this database's files go; a folder in the
    // desktop trash stays there, and the output says where.
    const Result purged = cli({QStringLiteral("runs"), QStringLiteral("purge"), idText(purgedMoved),
                               idText(purgedInPlace), dbArg, store, QStringLiteral("--json")});
    QVERIFY2(purged.exitCode == 0, purged.err.constData());
    const QJsonArray purgedRuns = purged.json().value(QStringLiteral("runs")).toArray();
    QCOMPARE(purgedRuns.size(), 2);
    QCOMPARE(idOf(purgedRuns.at(0)), purgedMoved.id);
    QCOMPARE(purgedRuns.at(0).toObject().value(QStringLiteral("desktop_trash")).toString(), purgedTrash);
    QCOMPARE(purgedRuns.at(1).toObject().value(QStringLiteral("removed")).toArray(), QJsonArray{purgedInPlace.file});
    QCOMPARE(purgedRuns.at(1).toObject().value(QStringLiteral("desktop_trash")).toString(), QString());
    QCOMPARE(trashedAt(purgedMoved.id), std::int64_t{-1});
    QCOMPARE(trashedAt(purgedInPlace.id), std::int64_t{-1});
    QVERIFY(QFile::exists(purgedTrash + QStringLiteral("/dqn-2.pt")));
    QVERIFY(!QFile::exists(purgedInPlace.file));
    QVERIFY(!QFileInfo::exists(purgedInPlace.folder));

    // Text output, and a folder gone from the desktop trash: the run is back, the message says the folder is not.
    const QString lostTrash = trashRun(moved, true);
    QVERIFY(QDir(lostTrash).removeRecursively());
    const Result lost = cli({QStringLiteral("runs"), QStringLiteral("restore"), idText(moved), dbArg, store});
    QCOMPARE(lost.exitCode, 1);
    QVERIFY2(lost.out.contains(QStringLiteral("%1  restored  moved").arg(moved.id).toUtf8()), lost.out.constData());
    QVERIFY2(lost.err.contains("is back, but not its checkpoint folder: it is no longer in the trash"),
             lost.err.constData());
    QCOMPARE(trashedAt(moved.id), std::int64_t{0});
    trashRun(inPlace, false);
    const Result text = cli({QStringLiteral("runs"), QStringLiteral("purge"), idText(inPlace), dbArg, store});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QVERIFY2(
        text.out.contains(QStringLiteral("%1  purged  in place  1 checkpoint files removed").arg(inPlace.id).toUtf8()),
        text.out.constData());
}

} // namespace tst_cli

FOXHUNT_TEST_GUILESS_MAIN(tst_cli::TestCli)
#include "tst_cli.moc"
