// SPDX-License-Identifier: GPL-3.0-or-later
// The Runs tab over a real store (SQLite, written through the RunStore API as
// a session does): listing, filter, sort, open, overlay, delete (with
// checkpoint files), resume, report export, and renaming and tagging runs.

#include "ui/dashboard.h"
#include "ui/run_compare.h"
#include "ui/run_history.h"
#include "ui/report_view.h"

#include "engine/report/group_report.h"
#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/debiased_ema.h"
#include "tests/support/test_bundle.h"

#include <QtCharts/QChart>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QComboBox>
#include <QDoubleSpinBox>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSignalSpy>
#include <QSettings>
#include <QPushButton>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <utility>

namespace tst_run_history {

using foxhunt::Dashboard;
using foxhunt::MetricBatch;
using foxhunt::RunHistory;
using foxhunt::RunStatus;

class TestRunHistory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void listsRuns();
    void filterNarrowsRows_data();
    void filterNarrowsRows();
    void sortsById();
    void openShowsStoredPoints();
    void overlayHasOneSeriesPerRun();
    void overlayByTime();
    void overlaySmoothsAndChoosesItsAxis_data();
    void overlaySmoothsAndChoosesItsAxis();
    void overlayControlsRedrawIt();
    void resumeEmitsId();
    void exportWritesReport_data();
    void exportWritesReport();
    void deleteRemovesRowRunAndCheckpoint();
    void deleteKeyMovesToTrashAndUndoRestores();
    void trashCanBeShownRestoredAndPurged();
    void undoOfferExpires();
    void resultColumnsShowStoredResults();
    void columnsCanBeHiddenAndStayHidden();
    void compareShowsDifferencesAndDeltas();
    void runsAreRenamedTaggedAndFiltered();
    void resultsTabShowsTheReportsBlocks();
    void groupsAreListedAndCompared();

private:
    /// A finished DQN run in the compare database with these settings and results.
    qint64 resultRun(const char* precision, double testSharpe, double pnl);
    /// A stopped run with a checkpoint in its own folder beside the database (written to *checkpointFile).
    qint64 trashableRun(const char* name, QString* checkpointFile);
    QString m_compareDb;
    qint64 storedRun(const char* name, RunStatus status, int points, double offset, const QString& checkpoint = {});
    QString m_db;
    QTemporaryDir m_dir;
    /// Two finished PPO runs in their own database (its path), with `values` of loss a sample each
    /// `secondsA` and `secondsB` from 2023-11-14 22:13:20 UTC, at steps 0, 10, 20...
    QString smoothingRuns(qint64* a, qint64* b);
    static constexpr std::int64_t kStartNs = 1'700'000'000'000'000'000;
    static constexpr double kSecondsA = 0.5, kSecondsB = 2.0;
    static QList<double> smoothingValues() { return {4.0, 1.0, 3.0, 0.5, std::nan(""), 2.0, 0.25}; }
    qint64 m_trained = 0;
    qint64 m_stopped = 0;
    qint64 m_interrupted = 0;
    QString m_checkpoint;
};

qint64 TestRunHistory::storedRun(const char* name, RunStatus status, int points, double offset,
                                 const QString& checkpoint)
{
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    const std::int64_t id = runs.createRun(name, R"({"models":["dqn"],"steps":500})", series, series.firstTs,
                                           series.lastTs, "{}");
    MetricBatch batch;
    for (int i = 0; i < points; ++i) batch.push_back({"dqn", "loss", i, 0, offset + 1.0 / (1 + i)});
    if (status == RunStatus::Finished)
        for (int i = 0; i < points; i += 10) batch.push_back({"dqn", "latency_ms", i, 0, 0.2 + 0.001 * i});
    // Written in two transactions, as a session flushes its batches.
    const auto half = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
    runs.appendMetrics(id, MetricBatch(batch.begin(), half));
    runs.appendMetrics(id, MetricBatch(half, batch.end()));
    if (!checkpoint.isEmpty()) runs.addCheckpoint(id, "dqn", points, checkpoint.toStdString());
    runs.setStatus(id, status);
    return id;
}

void TestRunHistory::initTestCase()
{
    qputenv("FOXHUNT_NO_DIALOGS", "1");
    QVERIFY(m_dir.isValid());
    // QFile::moveToTrash uses $XDG_DATA_HOME/Trash when it is on the file's mount: a trash of the test's own.
    qputenv("XDG_DATA_HOME", m_dir.filePath(QStringLiteral("xdg-data")).toUtf8());
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("xdg-data"))));
    m_db = m_dir.filePath(QStringLiteral("runs.db"));

    {
        foxhunt::BarStore store(m_db.toStdString());
        QVERIFY(foxhunt::ensureDefaultData(store));
    }
    m_trained = storedRun("alpha", RunStatus::Finished, 400, 0.0);

    // In the database's own checkpoint folder, the only place a deletion removes files from.
    QVERIFY(QDir().mkpath(m_db + QStringLiteral(".checkpoints")));
    m_checkpoint = m_db + QStringLiteral(".checkpoints/gamma-dqn.pt");
    QFile f(m_checkpoint);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("checkpoint");
    f.close();
    m_stopped = storedRun("beta", RunStatus::Stopped, 300, 0.5);
    m_interrupted = storedRun("gamma", RunStatus::Interrupted, 200, 1.0, m_checkpoint);
}

void TestRunHistory::listsRuns()
{
    RunHistory h(m_db);
    QCOMPARE(h.rowCount(), 3);
    const QList<qint64> ids = h.shownRunIds();
    QVERIFY(ids.contains(m_trained) && ids.contains(m_stopped) && ids.contains(m_interrupted));
    QCOMPARE(h.modelsOfRun(m_trained), QStringList{QStringLiteral("dqn")});
}

void TestRunHistory::filterNarrowsRows_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<int>("rows");
    QTest::newRow("name") << "gamma" << 1;
    QTest::newRow("status, any case") << "STOPPED" << 1;
    QTest::newRow("model") << "dqn" << 3;
    QTest::newRow("nothing") << "no-such-run" << 0;
    QTest::newRow("empty") << "" << 3;
}

void TestRunHistory::filterNarrowsRows()
{
    QFETCH(QString, filter);
    QFETCH(int, rows);
    RunHistory h(m_db);
    h.setFilterText(filter);
    QCOMPARE(h.rowCount(), rows);
}

void TestRunHistory::sortsById()
{
    RunHistory h(m_db);
    const QList<qint64> ids = h.shownRunIds();
    QVERIFY(std::is_sorted(ids.rbegin(), ids.rend())); // newest first by default
}

void TestRunHistory::openShowsStoredPoints()
{
    RunHistory h(m_db);
    QVERIFY(h.openRun(m_trained));
    QCOMPARE(h.openRunId(), m_trained);
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    const MetricBatch loss = runs.metrics(m_trained, "dqn", "loss");
    QVERIFY(!loss.empty());
    Dashboard* d = h.runDashboard();
    QCOMPARE(d->pointCount(QStringLiteral("dqn"), QStringLiteral("loss")), static_cast<int>(loss.size()));
    const QList<QPointF> shown = d->shownPoints(QStringLiteral("dqn"), QStringLiteral("loss"));
    QCOMPARE(shown.back().x(), static_cast<double>(loss.back().step));
    QCOMPARE(shown.back().y(), loss.back().value);
    QVERIFY(d->pointCount(QStringLiteral("dqn"), QStringLiteral("latency_ms")) > 0);

    // A stored run that only has a loss: the other charts say so instead of drawing a line.
    QVERIFY(h.openRun(m_stopped));
    QCOMPARE(h.runDashboard()->pointCount(QStringLiteral("dqn"), QStringLiteral("loss")), 300);
    QCOMPARE(h.runDashboard()->chartMessage(QStringLiteral("dqn"), QStringLiteral("loss_scale")),
             QStringLiteral("no samples in this run"));
    QVERIFY(!h.openRun(987654));
}

void TestRunHistory::overlayByTime()
{
    // Two runs of ten samples: one a sample every 0.5 s, the other every 2 s.
    qint64 fast = 0, slow = 0;
    const QString db = m_dir.filePath(QStringLiteral("timed.db")); // the other tests count the runs of m_db
    {
        foxhunt::BarStore store(db.toStdString());
        QVERIFY(foxhunt::ensureDefaultData(store));
        foxhunt::RunStore runs(store);
        const foxhunt::SeriesInfo series = store.series().front();
        for (const auto& [id, seconds] : {std::pair{&fast, 0.5}, std::pair{&slow, 2.0}}) {
            *id = runs.createRun("timed", R"({"models":["ppo"],"steps":10})", series, series.firstTs, series.lastTs,
                                 "{}");
            MetricBatch batch;
            const std::int64_t start = 1'700'000'000'000'000'000;
            for (int i = 0; i < 10; ++i)
                batch.push_back(
                    {"ppo", "loss", i, start + static_cast<std::int64_t>(i * seconds * 1e9), 1.0 / (1 + i)});
            runs.appendMetrics(*id, batch);
            runs.setStatus(*id, RunStatus::Finished);
        }
    }
    RunHistory h(db);
    QCOMPARE(h.overlay({fast, slow}, QStringLiteral("ppo"), QStringLiteral("loss"),
                       RunHistory::OverlayAxis::RelativeSeconds),
             2);
    const auto series = h.overlayChart()->series();
    const auto* fastLine = qobject_cast<QLineSeries*>(series.at(0));
    const auto* slowLine = qobject_cast<QLineSeries*>(series.at(1));
    QVERIFY(fastLine && slowLine);
    QCOMPARE(fastLine->points().front().x(), 0.0);
    QCOMPARE(fastLine->points().back().x(), 4.5);
    QCOMPARE(slowLine->points().back().x(), 18.0);
    // By step both end at step 9.
    QCOMPARE(h.overlay({fast, slow}, QStringLiteral("ppo"), QStringLiteral("loss")), 2);
    QCOMPARE(qobject_cast<QLineSeries*>(h.overlayChart()->series().at(1))->points().back().x(), 9.0);
}

QString TestRunHistory::smoothingRuns(qint64* a, qint64* b)
{
    const QString db = m_dir.filePath(QStringLiteral("smoothing.db")); // the other tests count the runs of m_db
    if (QFile::exists(db)) QFile::remove(db);
    foxhunt::BarStore store(db.toStdString());
    foxhunt::ensureDefaultData(store);
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    for (const auto& [id, seconds] : {std::pair{a, kSecondsA}, std::pair{b, kSecondsB}}) {
        *id = runs.createRun("smoothed", R"({"models":["ppo"],"steps":70})", series, series.firstTs, series.lastTs,
                             "{}");
        MetricBatch batch;
        const QList<double> values = smoothingValues();
        for (int i = 0; i < values.size(); ++i)
            batch.push_back({"ppo", "loss", 10 * i, kStartNs + static_cast<std::int64_t>(i * seconds * 1e9),
                             values[i] * (id == a ? 1.0 : 2.0)});
        runs.appendMetrics(*id, batch);
        runs.setStatus(*id, RunStatus::Finished);
    }
    return db;
}

void TestRunHistory::overlaySmoothsAndChoosesItsAxis_data()
{
    QTest::addColumn<int>("axis");
    QTest::addColumn<double>("smoothing");
    for (const double smoothing : {0.0, 0.6}) {
        const QByteArray weight = QByteArray::number(smoothing);
        QTest::newRow("step, " + weight) << int(RunHistory::OverlayAxis::Step) << smoothing;
        QTest::newRow("relative, " + weight) << int(RunHistory::OverlayAxis::RelativeSeconds) << smoothing;
        QTest::newRow("wall, " + weight) << int(RunHistory::OverlayAxis::WallTime) << smoothing;
    }
}

void TestRunHistory::overlaySmoothsAndChoosesItsAxis()
{
    QFETCH(int, axis);
    QFETCH(double, smoothing);
    const auto overlayAxis = static_cast<RunHistory::OverlayAxis>(axis);
    qint64 a = 0, b = 0;
    RunHistory h(smoothingRuns(&a, &b));
    h.setOverlaySmoothing(smoothing);
    QCOMPARE(h.overlaySmoothing(), smoothing);
    QCOMPARE(h.overlay({a, b}, QStringLiteral("ppo"), QStringLiteral("loss"), overlayAxis), 2);
    const QList<QAbstractSeries*> series = h.overlayChart()->series();
    const int perRun = smoothing > 0 ? 2 : 1;
    QCOMPARE(series.size(), 2 * perRun);

    // The x of each kept sample (the NaN is skipped) in each mode; wall time in ms since the epoch.
    const QList<double> values = smoothingValues();
    for (int run = 0; run < 2; ++run) {
        const double seconds = run == 0 ? kSecondsA : kSecondsB, scale = run == 0 ? 1.0 : 2.0;
        QList<double> xs, raw, smoothed;
        foxhunt::DebiasedEma ema(smoothing);
        for (int i = 0; i < values.size(); ++i) {
            if (!std::isfinite(values[i])) continue;
            switch (overlayAxis) {
            case RunHistory::OverlayAxis::Step: xs << 10.0 * i; break;
            case RunHistory::OverlayAxis::RelativeSeconds: xs << i * seconds; break;
            case RunHistory::OverlayAxis::WallTime: xs << (static_cast<double>(kStartNs) + i * seconds * 1e9) / 1e6;
            }
            raw << values[i] * scale;
            smoothed << ema.push(values[i] * scale);
        }
        // Hand-checked first values of the debiased EMA at 0.6: 4, (0.6 * 1.6 + 0.4 * 1) / (1 - 0.36) = 2.125.
        if (smoothing > 0 && run == 0) {
            QCOMPARE(smoothed.at(0), 4.0);
            QCOMPARE(smoothed.at(1), 2.125);
        }
        const auto* rawLine = qobject_cast<QLineSeries*>(series.at(run * perRun));
        QVERIFY(rawLine);
        const QList<QPointF> rawPoints = rawLine->points();
        QCOMPARE(rawPoints.size(), xs.size());
        for (int i = 0; i < xs.size(); ++i) {
            QCOMPARE(rawPoints[i].x(), xs[i]);
            QCOMPARE(rawPoints[i].y(), raw[i]);
        }
        if (smoothing == 0) {
            QCOMPARE(rawLine->pen().color().alpha(), 255);
            continue;
        }
        // The raw line is faint behind the smoothed one, in the run's colour, and only the smoothed is in the legend.
        const auto* smoothLine = qobject_cast<QLineSeries*>(series.at(run * perRun + 1));
        QVERIFY(smoothLine);
        QVERIFY(rawLine->pen().color().alpha() < 255);
        QCOMPARE(smoothLine->pen().color().alpha(), 255);
        QCOMPARE(smoothLine->pen().color().rgb(), rawLine->pen().color().rgb());
        QVERIFY(!h.overlayChart()->legend()->markers(const_cast<QLineSeries*>(rawLine)).front()->isVisible());
        const QList<QPointF> smoothPoints = smoothLine->points();
        QCOMPARE(smoothPoints.size(), xs.size());
        for (int i = 0; i < xs.size(); ++i) {
            QCOMPARE(smoothPoints[i].x(), xs[i]);
            QCOMPARE(smoothPoints[i].y(), smoothed[i]);
        }
    }
    // Wall time reads on a date-time axis spanning both runs; the others on a value axis.
    const QList<QAbstractAxis*> xAxes = h.overlayChart()->axes(Qt::Horizontal);
    QCOMPARE(xAxes.size(), 1);
    if (overlayAxis == RunHistory::OverlayAxis::WallTime) {
        const auto* time = qobject_cast<QDateTimeAxis*>(xAxes.front());
        QVERIFY(time);
        QCOMPARE(time->min().toMSecsSinceEpoch(), kStartNs / 1'000'000);
        QVERIFY(time->max().toMSecsSinceEpoch() >= kStartNs / 1'000'000 + 12'000); // the slow run's 6 x 2 s
    } else {
        QVERIFY(qobject_cast<QValueAxis*>(xAxes.front()));
    }
}

void TestRunHistory::overlayControlsRedrawIt()
{
    qint64 a = 0, b = 0;
    RunHistory h(smoothingRuns(&a, &b));
    auto* smoothingBox = h.findChild<QDoubleSpinBox*>(QStringLiteral("overlaySmoothing"));
    auto* axisBox = h.findChild<QComboBox*>(QStringLiteral("overlayAxis"));
    QVERIFY(smoothingBox && axisBox);
    QCOMPARE(h.overlay({a, b}, QStringLiteral("ppo"), QStringLiteral("loss")), 2);
    QCOMPARE(h.overlayChart()->series().size(), 2);
    // The overlay shown follows the smoothing box and the axis box at once.
    smoothingBox->setValue(0.5);
    QCOMPARE(h.overlayChart()->series().size(), 4);
    axisBox->setCurrentIndex(axisBox->findData(int(RunHistory::OverlayAxis::WallTime)));
    QVERIFY(qobject_cast<QDateTimeAxis*>(h.overlayChart()->axes(Qt::Horizontal).value(0)));
    QCOMPARE(h.overlayChart()->series().size(), 4);
    const auto* slowRaw = qobject_cast<QLineSeries*>(h.overlayChart()->series().at(2));
    QCOMPARE(slowRaw->points().back().x(), (static_cast<double>(kStartNs) + 6 * kSecondsB * 1e9) / 1e6);
    smoothingBox->setValue(0.0);
    QCOMPARE(h.overlayChart()->series().size(), 2);
    // An overlay asked for by code sets the box to its axis.
    QCOMPARE(h.overlay({a, b}, QStringLiteral("ppo"), QStringLiteral("loss"), RunHistory::OverlayAxis::Step), 2);
    QCOMPARE(axisBox->currentData().toInt(), int(RunHistory::OverlayAxis::Step));
    QCOMPARE(qobject_cast<QLineSeries*>(h.overlayChart()->series().at(1))->points().back().x(), 60.0);
}

void TestRunHistory::overlayHasOneSeriesPerRun()
{
    RunHistory h(m_db);
    h.selectRuns({m_trained, m_stopped, m_interrupted});
    QCOMPARE(h.selectedRunIds().size(), 3);
    QCOMPARE(h.overlay(h.selectedRunIds(), QStringLiteral("dqn"), QStringLiteral("loss")), 3);
    QCOMPARE(h.overlayChart()->series().size(), 3);
    QCOMPARE(h.overlay({m_stopped, m_interrupted}, QStringLiteral("dqn"), QStringLiteral("loss")), 2);
    QCOMPARE(h.overlayChart()->series().size(), 2);
    QCOMPARE(h.overlay({m_stopped}, QStringLiteral("tft"), QStringLiteral("loss")), 0);
    QCOMPARE(h.overlayChart()->series().size(), 0);
}

void TestRunHistory::resumeEmitsId()
{
    RunHistory h(m_db);
    QSignalSpy spy(&h, &RunHistory::resumeRequested);
    QVERIFY(h.requestResume(m_interrupted));
    QVERIFY(h.requestResume(m_stopped));
    QVERIFY(!h.requestResume(m_trained)); // finished runs do not resume
    QCOMPARE(spy.count(), 2);
    QCOMPARE(spy.at(0).at(0).toLongLong(), m_interrupted);
    QCOMPARE(spy.at(1).at(0).toLongLong(), m_stopped);
}

void TestRunHistory::exportWritesReport_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("ok");
    QTest::newRow("html") << "report.html" << true;
    QTest::newRow("json") << "report.json" << true;
    QTest::newRow("csv") << "report.csv" << true;
    QTest::newRow("pdf") << "report.pdf" << true;
    QTest::newRow("unknown format") << "report.txt" << false;
}

void TestRunHistory::exportWritesReport()
{
    QFETCH(QString, file);
    QFETCH(bool, ok);
    RunHistory h(m_db);
    h.selectRuns({m_trained, m_stopped});
    QCOMPARE(h.reportRunIds().size(), 2);
    QSignalSpy done(&h, &RunHistory::exportFinished);
    const QString path = m_dir.filePath(file);
    QVERIFY(h.exportReportTo(h.reportRunIds(), path, /*openResult=*/false));
    QVERIFY(h.exporting());
    QVERIFY(!h.exportReportTo(h.reportRunIds(), path, false)); // one at a time
    QVERIFY(done.wait(60000));
    QVERIFY(!h.exporting());
    QCOMPARE(done.first().at(0).toString(), path);
    const QString error = done.first().at(1).toString();
    QCOMPARE(error.isEmpty(), ok);
    if (ok) QVERIFY(QFileInfo(path).size() > 100);
    if (ok && file.endsWith(QLatin1String(".pdf"))) {
        QFile pdf(path);
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
    }
}

void TestRunHistory::deleteRemovesRowRunAndCheckpoint()
{
    RunHistory h(m_db);
    QVERIFY(QFile::exists(m_checkpoint));
    QVERIFY(h.openRun(m_interrupted));
    QVERIFY(!h.deleteRuns({m_interrupted}, RunHistory::Confirm::Ask)); // no dialog here, so nothing is deleted
    QCOMPARE(h.rowCount(), 3);
    QSignalSpy spy(&h, &RunHistory::runsDeleted);
    QVERIFY(h.deleteRuns({m_interrupted}, RunHistory::Confirm::Skip));
    QCOMPARE(h.rowCount(), 2);
    QVERIFY(!h.shownRunIds().contains(m_interrupted));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(h.openRunId(), 0);
    QVERIFY(!QFile::exists(m_checkpoint));
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    QVERIFY(!runs.run(m_interrupted));
    QVERIFY(runs.run(m_stopped));
}

qint64 TestRunHistory::trashableRun(const char* name, QString* checkpointFile)
{
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    const std::int64_t id = runs.createRun(name, R"({"models":["dqn"],"steps":50})", series, series.firstTs,
                                           series.lastTs, "{}");
    runs.appendMetrics(id, {{"dqn", "loss", 1, 0, 0.5}, {"dqn", "loss", 2, 0, 0.4}});
    const QString folder = QString::fromStdString(runs.checkpointFolder()) + QLatin1Char('/') +
                           QString::fromStdString(foxhunt::RunStore::runFolderName(*runs.run(id)));
    QDir().mkpath(folder);
    *checkpointFile = folder + QStringLiteral("/dqn-2.pt");
    QFile f(*checkpointFile);
    if (f.open(QIODevice::WriteOnly)) f.write("weights");
    f.close();
    runs.addCheckpoint(id, "dqn", 2, checkpointFile->toStdString());
    runs.setStatus(id, RunStatus::Stopped);
    return id;
}

void TestRunHistory::deleteKeyMovesToTrashAndUndoRestores()
{
    QString file;
    const qint64 id = trashableRun("to-trash", &file);
    QVERIFY(QFile::exists(file));
    const QString folder = QFileInfo(file).absolutePath();
    const QString trash = m_dir.filePath(QStringLiteral("xdg-data/Trash"));

    RunHistory h(m_db);
    h.resize(1000, 700);
    h.show();
    QVERIFY(QTest::qWaitForWindowActive(&h));
    const int before = h.rowCount();
    auto* table = h.findChild<QTableView*>(QStringLiteral("runTable"));
    QVERIFY(table);
    h.selectRuns({id});
    QCOMPARE(h.selectedRunIds(), QList<qint64>{id});
    table->setFocus();
    QSignalSpy spy(&h, &RunHistory::runsDeleted);
    QSignalSpy offered(&h, &RunHistory::undoOffered);
    QSignalSpy ended(&h, &RunHistory::undoOfferEnded);
    QTest::keyClick(table, Qt::Key_Delete);

    // Hidden from the table, kept in the store; the folder is in the desktop trash, not removed.
    QCOMPARE(spy.count(), 1);
    QCOMPARE(h.rowCount(), before - 1);
    QVERIFY(!h.shownRunIds().contains(id));
    QVERIFY2(h.statusText().startsWith(QStringLiteral("Run %1 moved to trash").arg(id)), qPrintable(h.statusText()));
    // The Undo itself is the main window's (its status bar, tst_main_window): the tab offers it by signal.
    QCOMPARE(offered.count(), 1);
    QCOMPARE(offered.first().at(0).toString(), QStringLiteral("Run %1 moved to trash").arg(id));
    QCOMPARE(h.undoableRunIds(), QList<qint64>{id});
    QCOMPARE(h.undoOfferMs(), 15000);
    QVERIFY(!h.findChild<QPushButton*>(QStringLiteral("undoTrash")));
    QVERIFY(!QFileInfo::exists(folder));
    QString inTrash;
    {
        foxhunt::BarStore store(m_db.toStdString());
        foxhunt::RunStore runs(store);
        const auto info = runs.run(id);
        QVERIFY(info && info->trashedNs > 0);
        inTrash = QString::fromStdString(info->trashPath);
    }
    QVERIFY2(inTrash.startsWith(trash + QStringLiteral("/files/")), qPrintable(inTrash));
    QVERIFY(QFile::exists(inTrash + QStringLiteral("/dqn-2.pt")));
    QVERIFY(
        QFile::exists(trash + QStringLiteral("/info/") + QFileInfo(inTrash).fileName() + QStringLiteral(".trashinfo")));
    // A trashed run does not resume.
    QVERIFY(!h.requestResume(id));

    QCOMPARE(ended.count(), 0);
    QVERIFY(h.undoTrash());
    QCOMPARE(ended.count(), 1);
    QCOMPARE(h.rowCount(), before);
    QVERIFY(h.shownRunIds().contains(id));
    QVERIFY(QFile::exists(file));
    QVERIFY(!QFileInfo::exists(inTrash));
    QVERIFY(!QFile::exists(trash + QStringLiteral("/info/") + QFileInfo(inTrash).fileName() +
                           QStringLiteral(".trashinfo")));
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    QCOMPARE(runs.run(id)->trashedNs, std::int64_t{0});
    QCOMPARE(runs.checkpoints(id).size(), std::size_t{1});
    QVERIFY(!h.undoTrash()); // nothing left to undo
}

void TestRunHistory::undoOfferExpires()
{
    QString file;
    const qint64 id = trashableRun("expires", &file);
    RunHistory h(m_db);
    h.setUndoOfferMs(50);
    QSignalSpy ended(&h, &RunHistory::undoOfferEnded);
    QVERIFY(h.trashRuns({id}));
    QCOMPARE(h.undoableRunIds(), QList<qint64>{id});
    QVERIFY(ended.wait(5000));
    QCOMPARE(ended.count(), 1);
    QVERIFY(h.undoableRunIds().isEmpty());
    QVERIFY(!h.undoTrash()); // expired: the run stays in the trash
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    QVERIFY(runs.run(id)->trashedNs > 0);
    QVERIFY(h.restoreRuns({id}));
    QCOMPARE(ended.count(), 1); // no offer left to end
}

void TestRunHistory::trashCanBeShownRestoredAndPurged()
{
    QString fileA, fileB;
    const qint64 a = trashableRun("trash-a", &fileA);
    const qint64 b = trashableRun("trash-b", &fileB);
    RunHistory h(m_db);
    const int before = h.rowCount();
    QVERIFY(h.trashRuns({a, b}));
    QCOMPARE(h.rowCount(), before - 2);
    QCOMPARE(h.undoableRunIds(), (QList<qint64>{a, b}));
    QSignalSpy ended(&h, &RunHistory::undoOfferEnded);

    h.setShowTrash(true);
    QVERIFY(h.showingTrash());
    QCOMPARE(h.rowCount(), 2);
    QCOMPARE(h.shownRunIds().size(), 2);
    QVERIFY(h.shownRunIds().contains(a) && h.shownRunIds().contains(b));
    QVERIFY(h.restoreRuns({a}));
    QCOMPARE(h.shownRunIds(), QList<qint64>{b});
    QVERIFY(QFile::exists(fileA));
    QCOMPARE(h.undoableRunIds(), QList<qint64>{b});
    QCOMPARE(ended.count(), 0); // b is still offered

    QVERIFY(!h.deleteRuns({b}, RunHistory::Confirm::Ask)); // no dialog here: nothing is deleted
    QVERIFY(h.deleteRuns({b}, RunHistory::Confirm::Skip));
    QCOMPARE(h.rowCount(), 0);
    QVERIFY(h.undoableRunIds().isEmpty());
    QCOMPARE(ended.count(), 1);
    h.setShowTrash(false);
    QCOMPARE(h.rowCount(), before - 1);
    QVERIFY(h.shownRunIds().contains(a));
    foxhunt::BarStore store(m_db.toStdString());
    foxhunt::RunStore runs(store);
    QVERIFY(!runs.run(b));
    QVERIFY(runs.run(a) && runs.run(a)->trashedNs == 0);
}

qint64 TestRunHistory::resultRun(const char* precision, double testSharpe, double pnl)
{
    if (m_compareDb.isEmpty()) {
        m_compareDb = m_dir.filePath(QStringLiteral("compare.db"));
        foxhunt::BarStore store(m_compareDb.toStdString());
        foxhunt::ensureDefaultData(store);
    }
    foxhunt::BarStore store(m_compareDb.toStdString());
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    const std::string config = std::string(R"({"models":["dqn"],"steps":500,"device":"cpu","precision":)") + precision +
                               "}";
    const std::int64_t id = runs.createRun("r", config, series, series.firstTs, series.lastTs, "{}");
    const std::string sharpe = std::to_string(testSharpe), money = std::to_string(pnl);
    runs.saveEvaluation(id, "dqn", "validation",
                        R"({"policy":{"sharpe":1.5},"int8":{"degradation":0.02,"served":true}})");
    runs.saveEvaluation(id, "dqn", "test",
                        R"({"policy":{"sharpe":)" + sharpe + R"(,"pnl_usd":)" + money +
                            R"(},"buy_and_hold":{"pnl_usd":-100}})");
    runs.saveEvaluation(id, "dqn", "training", R"({"latency":{"p50_ms":0.1,"p95_ms":0.25,"p99_ms":0.3}})");
    runs.appendMetrics(id, {{"dqn", "param_bytes", 1, 0, 40960.0},
                            {"dqn", "param_bytes", 2, 0, 40960.0},
                            {"dqn", "activation_bytes", 1, 0, 512.0},
                            {"dqn", "activation_bytes", 2, 0, 1024.0}});
    runs.setStatus(id, RunStatus::Finished);
    return id;
}

void TestRunHistory::resultColumnsShowStoredResults()
{
    const qint64 id = resultRun(R"({"amp":true,"amp_dtype":"bf16","int8":true})", 0.75, 1234.5);
    RunHistory h(m_compareDb);
    QCOMPARE(h.cellText(id, RunHistory::ColPrecision), QStringLiteral("BF16 + INT8"));
    QCOMPARE(h.cellText(id, RunHistory::ColDevice), QStringLiteral("cpu"));
    QCOMPARE(h.cellText(id, RunHistory::ColProcesses), QStringLiteral("1"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("test_sharpe"))),
             QStringLiteral("0.75"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("validation_sharpe"))),
             QStringLiteral("1.5"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("test_pnl"))),
             QStringLiteral("1,234.50 USD"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("buy_hold_pnl"))),
             QStringLiteral("-100.00 USD"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("int8_degradation"))),
             QStringLiteral("2.00 %"));
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("p95_latency"))),
             QStringLiteral("0.25 ms"));
    // Each component at its peak: 40 KiB of parameters and a 1 KiB activation peak.
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("dqn"), QStringLiteral("peak_memory"))),
             QStringLiteral("41.0 KiB"));
    // A forecaster's columns stay empty for a DQN run; agents have no quantile-loss column.
    QCOMPARE(h.cellText(id, h.resultColumn(QStringLiteral("tft"), QStringLiteral("quantile_loss"))), QString());
    QCOMPARE(h.resultColumn(QStringLiteral("dqn"), QStringLiteral("quantile_loss")), -1);
    QCOMPARE(h.columnTitles().size(), RunHistory::ColCount + 2 * 7 + 2 * 5);
}

void TestRunHistory::columnsCanBeHiddenAndStayHidden()
{
    QSettings().remove(QStringLiteral("runs/hiddenColumns"));
    resultRun(R"({"amp":false})", 0.1, 10.0);
    const int sharpe = [&] {
        RunHistory h(m_compareDb);
        return h.resultColumn(QStringLiteral("ppo"), QStringLiteral("test_sharpe"));
    }();
    {
        RunHistory h(m_compareDb);
        QVERIFY(h.columnShown(sharpe)); // shown until hidden
        QVERIFY(
            !h.columnShown(h.resultColumn(QStringLiteral("ppo"), QStringLiteral("peak_memory")))); // hidden until shown
        h.setColumnShown(RunHistory::ColDevice, false);
        h.setColumnShown(RunHistory::ColId, false); // the id always shows
        QVERIFY(h.columnShown(RunHistory::ColId));
    }
    RunHistory again(m_compareDb);
    QVERIFY(!again.columnShown(RunHistory::ColDevice));
    QVERIFY(again.columnShown(RunHistory::ColPrecision));
    again.setColumnShown(RunHistory::ColDevice, true);
    QSettings().remove(QStringLiteral("runs/hiddenColumns"));
}

void TestRunHistory::compareShowsDifferencesAndDeltas()
{
    const qint64 fp32 = resultRun(R"({"amp":false,"int8":false})", 0.5, 100.0);
    const qint64 bf16 = resultRun(R"({"amp":true,"amp_dtype":"bf16","int8":true})", 0.8, 250.0);
    RunHistory h(m_compareDb);
    QCOMPARE(h.compare({fp32}), -1); // one run is no comparison
    const int differ = h.compare({fp32, bf16});
    QVERIFY(differ >= 3);

    // Only the settings that differ: the precision switches, not the shared steps or models.
    QTableWidget* settings = h.compareView()->settingsTable();
    QCOMPARE(settings->rowCount(), differ);
    QStringList keys;
    for (int r = 0; r < settings->rowCount(); ++r) keys << settings->verticalHeaderItem(r)->text();
    QVERIFY2(keys.contains(QStringLiteral("precision.amp")) && keys.contains(QStringLiteral("precision.int8")),
             qPrintable(keys.join(',')));
    QVERIFY(!keys.contains(QStringLiteral("steps")) && !keys.contains(QStringLiteral("models")));
    const int amp = static_cast<int>(keys.indexOf(QStringLiteral("precision.amp")));
    QCOMPARE(settings->item(amp, 0)->text(), QStringLiteral("false"));
    QCOMPARE(settings->item(amp, 1)->text(), QStringLiteral("true"));
    // The other run is labelled by what sets it apart, in its own colour.
    QCOMPARE(settings->horizontalHeaderItem(1)->text(), QStringLiteral("run %1 · BF16 + INT8").arg(bf16));
    QCOMPARE(settings->horizontalHeaderItem(1)->foreground().color(), foxhunt::RunCompare::runColour(1));

    auto resultRow = [&](const QString& label) {
        QTableWidget* results = h.compareView()->resultsTable();
        for (int r = 0; r < results->rowCount(); ++r)
            if (results->verticalHeaderItem(r)->text() == label) return r;
        return -1;
    };
    QTableWidget* results = h.compareView()->resultsTable();
    const int pnl = resultRow(QStringLiteral("dqn · test P&L"));
    QVERIFY(pnl >= 0);
    QCOMPARE(results->item(pnl, 0)->text(), QStringLiteral("100.00 USD"));
    QCOMPARE(results->item(pnl, 1)->text(), QStringLiteral("250.00 USD (+150.00 USD)"));
    QVERIFY(results->horizontalHeaderItem(0)->text().endsWith(QStringLiteral("(baseline)")));
    QCOMPARE(results->item(resultRow(QStringLiteral("precision")), 1)->text(), QStringLiteral("BF16 + INT8"));
    // The same forecaster rows do not appear: neither run has one.
    QCOMPARE(resultRow(QStringLiteral("tft · test quantile loss")), -1);

    h.compareView()->setBaseline(1);
    QCOMPARE(results->item(pnl, 0)->text(), QStringLiteral("100.00 USD (-150.00 USD)"));
    QCOMPARE(results->item(pnl, 1)->text(), QStringLiteral("250.00 USD"));

    // The overlay gives each run the compare view's colour and label.
    h.overlay({fp32, bf16}, QStringLiteral("dqn"), QStringLiteral("param_bytes"));
    const auto series = h.overlayChart()->series();
    QCOMPARE(series.size(), 2);
    auto* second = qobject_cast<QLineSeries*>(series.at(1));
    QVERIFY(second->name().startsWith(QStringLiteral("run %1 · BF16 + INT8").arg(bf16)));
    QCOMPARE(second->pen().color(), foxhunt::RunCompare::runColour(1));

    // At 960 px every column of both tables shows whole (side by side only where both fit); narrow,
    // one above the other; wide, side by side.
    h.resize(960, 720);
    h.show();
    QVERIFY(QTest::qWaitForWindowExposed(&h));
    QCOMPARE(h.compare({fp32, bf16}), differ); // the Compare tab in front again
    QCoreApplication::processEvents();
    for (QTableWidget* t : {h.compareView()->settingsTable(), h.compareView()->resultsTable()}) {
        QCoreApplication::processEvents();
        QVERIFY2(t->horizontalHeader()->length() <= t->viewport()->width(), qPrintable(t->objectName()));
    }
    h.resize(2400, 900);
    QCoreApplication::processEvents();
    QCOMPARE(h.compareView()->arrangement(), Qt::Horizontal);
    h.compareView()->resize(420, 600); // the view alone, narrower than its two tables
    QCOMPARE(h.compareView()->arrangement(), Qt::Vertical);
}

void TestRunHistory::runsAreRenamedTaggedAndFiltered()
{
    const QString path = m_dir.filePath(QStringLiteral("labels.db"));
    qint64 first = 0, second = 0;
    {
        foxhunt::BarStore store(path.toStdString());
        QVERIFY(foxhunt::ensureDefaultData(store));
        foxhunt::RunStore runs(store);
        const foxhunt::SeriesInfo series = store.series().front();
        for (qint64* id : {&first, &second}) {
            *id = runs.createRun("unnamed", R"({"models":["dqn"],"steps":10})", series, series.firstTs, series.lastTs,
                                 "{}");
            runs.setStatus(*id, RunStatus::Finished);
        }
    }
    RunHistory h(path);
    QVERIFY(h.columnTitles().contains(QStringLiteral("Tags")));
    QVERIFY(h.columnShown(RunHistory::ColName) && h.columnShown(RunHistory::ColTags));

    // Renaming edits the Name cell through the table's model, as the view's editor does.
    auto* table = h.findChild<QTableView*>(QStringLiteral("runTable"));
    QVERIFY(table);
    QAbstractItemModel* model = table->model();
    auto nameIndex = [&](qint64 id) {
        for (int r = 0; r < model->rowCount(); ++r)
            if (model->index(r, RunHistory::ColId).data().toLongLong() == id)
                return model->index(r, RunHistory::ColName);
        return QModelIndex();
    };
    QVERIFY(model->flags(nameIndex(first)) & Qt::ItemIsEditable);
    QVERIFY(!(model->flags(model->index(0, RunHistory::ColStatus)) & Qt::ItemIsEditable));
    QVERIFY(model->setData(nameIndex(first), QStringLiteral("  bf16 baseline "), Qt::EditRole));
    QCOMPARE(h.cellText(first, RunHistory::ColName), QStringLiteral("bf16 baseline"));
    {
        foxhunt::BarStore store(path.toStdString());
        QCOMPARE(foxhunt::RunStore(store).run(first)->name, std::string("bf16 baseline"));
    }
    // A refused name leaves the stored one, and the cell shows it again.
    model->setData(nameIndex(first), QString(201, QLatin1Char('x')), Qt::EditRole);
    QCOMPARE(h.cellText(first, RunHistory::ColName), QStringLiteral("bf16 baseline"));
    QVERIFY(h.findChild<QLabel*>(QStringLiteral("runHistoryStatus"))->text().contains(QStringLiteral("at most 200")));

    QVERIFY(h.setRunTags(second, {QStringLiteral("sweep"), QStringLiteral(" lr-3e-4 ")}));
    QCOMPARE(h.cellText(second, RunHistory::ColTags), QStringLiteral("lr-3e-4, sweep"));
    QVERIFY(!h.setRunTags(second, {QStringLiteral("a,b")}));
    QCOMPARE(h.cellText(second, RunHistory::ColTags), QStringLiteral("lr-3e-4, sweep"));
    QVERIFY(h.setRunNotes(first, QStringLiteral("the one to beat")));

    h.setFilterText(QStringLiteral("SWEEP")); // a tag, in any case
    QCOMPARE(h.shownRunIds(), QList<qint64>{second});
    h.setFilterText(QStringLiteral("baseline")); // a name
    QCOMPARE(h.shownRunIds(), QList<qint64>{first});
    // Only what shows is matched: with the Tags column hidden, a tag finds nothing.
    h.setFilterText(QStringLiteral("sweep"));
    QCOMPARE(h.rowCount(), 1);
    h.setColumnShown(RunHistory::ColTags, false);
    QCOMPARE(h.rowCount(), 0);
    h.setColumnShown(RunHistory::ColTags, true);
    QSettings().remove(QStringLiteral("runs/hiddenColumns"));
    QCOMPARE(h.shownRunIds(), QList<qint64>{second});
    h.setFilterText({});
    QCOMPARE(h.rowCount(), 2);

    // What was set is there after a reload, notes as the name's tooltip.
    RunHistory again(path);
    QCOMPARE(again.cellText(first, RunHistory::ColName), QStringLiteral("bf16 baseline"));
    QCOMPARE(again.cellText(second, RunHistory::ColTags), QStringLiteral("lr-3e-4, sweep"));
    auto* againTable = again.findChild<QTableView*>(QStringLiteral("runTable"));
    QAbstractItemModel* againModel = againTable->model();
    QString tip;
    for (int r = 0; r < againModel->rowCount(); ++r)
        if (againModel->index(r, RunHistory::ColId).data().toLongLong() == first)
            tip = againModel->index(r, RunHistory::ColName).data(Qt::ToolTipRole).toString();
    QCOMPARE(tip, QStringLiteral("the one to beat"));
}

// Issue 19.2: a run's results in the window are the report's own blocks (buildRunReport), read on
// a worker thread: the same headings, tables and charts as the exported report.
void TestRunHistory::resultsTabShowsTheReportsBlocks()
{
    const qint64 first = resultRun(R"({"amp":false,"int8":true})", 0.75, 1234.5);
    const qint64 second = resultRun(R"({"amp":true,"amp_dtype":"bf16","int8":true})", -0.5, -250.0);
    RunHistory h(m_compareDb);
    QVERIFY(h.resultsView());
    QVERIFY(!h.resultsView()->message().isEmpty()); // "Open a run ..."
    QSignalSpy shown(&h, &RunHistory::resultsShown);
    // Opened with the charts in front: the report is not read until the Results tab is shown.
    QVERIFY(h.openRun(first));
    QCoreApplication::processEvents();
    QCOMPARE(shown.count(), 0);
    h.showResults();
    QVERIFY(shown.wait(60000));
    QCOMPARE(shown.last().at(0).toLongLong(), first);
    // Asked for twice before the first answer: the last one asked for is shown.
    QVERIFY(h.openRun(first));
    QVERIFY(h.openRun(second));
    while (shown.isEmpty() || shown.last().at(0).toLongLong() != second) QVERIFY(shown.wait(60000));
    QVERIFY(h.resultsView()->message().isEmpty());

    foxhunt::BarStore store(m_compareDb.toStdString());
    const foxhunt::ReportDocument document = foxhunt::buildRunReport(foxhunt::runReportJson(store, {second}));
    QStringList headings;
    int tables = 0, charts = 0;
    const foxhunt::ReportBlock* firstTable = nullptr;
    for (const foxhunt::ReportBlock& b : document.blocks) {
        if (b.kind == foxhunt::ReportBlockKind::Heading) headings << QString::fromStdString(b.text);
        if (b.kind == foxhunt::ReportBlockKind::Table && tables++ == 0) firstTable = &b;
        if (b.kind == foxhunt::ReportBlockKind::Chart) ++charts;
    }
    QVERIFY(tables > 0 && firstTable);
    QCOMPARE(h.resultsView()->headings(), headings);
    QCOMPARE(h.resultsView()->tableCount(), tables);
    QCOMPARE(h.resultsView()->chartCount(), charts);
    const QList<QStringList> shownTable = h.resultsView()->tableText(0);
    QCOMPARE(shownTable.size(), static_cast<qsizetype>(firstTable->rows.size() + 1));
    for (std::size_t c = 0; c < firstTable->header.size(); ++c)
        QCOMPARE(shownTable.front().at(static_cast<qsizetype>(c)), QString::fromStdString(firstTable->header[c]));
    for (std::size_t r = 0; r < firstTable->rows.size(); ++r)
        for (std::size_t c = 0; c < firstTable->rows[r].size(); ++c)
            QCOMPARE(shownTable.at(static_cast<qsizetype>(r + 1)).at(static_cast<qsizetype>(c)),
                     QString::fromStdString(firstTable->rows[r][c]));

    // The first run again: its own results replace the second's.
    QVERIFY(h.openRun(first));
    QVERIFY(shown.wait(60000));
    QCOMPARE(shown.last().at(0).toLongLong(), first);
    QStringList firstHeadings;
    for (const foxhunt::ReportBlock& b : foxhunt::buildRunReport(foxhunt::runReportJson(store, {first})).blocks)
        if (b.kind == foxhunt::ReportBlockKind::Heading) firstHeadings << QString::fromStdString(b.text);
    QCOMPARE(h.resultsView()->headings(), firstHeadings);
}

void TestRunHistory::groupsAreListedAndCompared()
{
    // Two seeds groups of two members each, and a run outside any group.
    const qint64 loner = resultRun(R"({"amp":false})", 0.1, 10.0);
    qint64 groupA = 0, groupB = 0;
    QList<qint64> membersA, membersB;
    {
        foxhunt::BarStore store(m_compareDb.toStdString());
        foxhunt::RunStore runs(store);
        groupA = runs.createGroup(foxhunt::GroupKind::Seeds, R"({"models":["dqn"]})", {1, 2});
        groupB = runs.createGroup(foxhunt::GroupKind::Seeds, R"({"models":["dqn"]})", {1, 2});
        for (int seed : {1, 2}) {
            membersA << resultRun(R"({"amp":false})", 0.5 * seed, 100.0 * seed);
            runs.addGroupMember(groupA, membersA.back(), seed);
            membersB << resultRun(R"({"amp":false})", -0.5 * seed, -100.0 * seed);
            runs.addGroupMember(groupB, membersB.back(), seed);
        }
    }
    RunHistory h(m_compareDb);
    QCOMPARE(h.cellText(membersA[1], RunHistory::ColGroup), QStringLiteral("%1 seeds · seed 2").arg(groupA));
    QCOMPARE(h.cellText(loner, RunHistory::ColGroup), QString());
    QVERIFY(h.groupsOf({loner}).isEmpty());
    QCOMPARE(h.groupsOf({membersB[0], membersA[0], membersA[1], loner}), (QList<qint64>{groupB, groupA}));
    auto* button = h.findChild<QPushButton*>(QStringLiteral("groupsButton"));
    QVERIFY(button);
    h.selectRuns({loner});
    QVERIFY(!button->isEnabled());
    QVERIFY(!h.showGroups({}));

    // Selecting members of both groups and pressing Groups compares the two groups.
    h.selectRuns({membersA[0], membersB[1]});
    QVERIFY(button->isEnabled());
    QSignalSpy shown(&h, &RunHistory::groupsShown);
    button->click();
    QVERIFY(shown.wait(60000));
    // In the table's order: newest run first, so group B (its member is newer) before group A.
    QCOMPARE(shown.last().at(0).value<QList<qint64>>(), (QList<qint64>{groupB, groupA}));
    foxhunt::BarStore store(m_compareDb.toStdString());
    foxhunt::RunStore runs(store);
    const foxhunt::ReportDocument document = foxhunt::buildGroupReport(
        foxhunt::groupReportJson(runs, {groupB, groupA}));
    QStringList headings;
    int tables = 0, charts = 0;
    for (const foxhunt::ReportBlock& b : document.blocks) {
        if (b.kind == foxhunt::ReportBlockKind::Heading) headings << QString::fromStdString(b.text);
        tables += b.kind == foxhunt::ReportBlockKind::Table;
        charts += b.kind == foxhunt::ReportBlockKind::Chart;
    }
    QCOMPARE(h.groupsView()->headings(), headings);
    QVERIFY(headings.contains(QStringLiteral("Groups compared")));
    QCOMPARE(h.groupsView()->tableCount(), tables);
    QCOMPARE(h.groupsView()->chartCount(), charts);
    // The comparison table: one row per group, each with its test P&L IQM over seeds 1 and 2.
    const QList<QStringList> compared = h.groupsView()->tableText(0);
    QCOMPARE(compared.size(), 3);
    QVERIFY2(compared.at(1).at(2).startsWith(QStringLiteral("-150 [")), qPrintable(compared.at(1).join('|')));
    QVERIFY2(compared.at(2).at(2).startsWith(QStringLiteral("150 [")), qPrintable(compared.at(2).join('|')));

    // One group alone: its own report, without a comparison.
    QVERIFY(h.showGroups({groupB}));
    QVERIFY(shown.wait(60000));
    QVERIFY(!h.groupsView()->headings().contains(QStringLiteral("Groups compared")));
    QVERIFY(h.groupsView()->headings().contains(QStringLiteral("DQN")));
}

} // namespace tst_run_history

FOXHUNT_TEST_MAIN(tst_run_history::TestRunHistory)
#include "tst_run_history.moc"
