// SPDX-License-Identifier: GPL-3.0-or-later
// The real main window under the offscreen platform: first start on an empty
// store, importing real files with progress, rejection of a bad file, drops.

#include "ui/about_dialog.h"
#include "ui/app_settings.h"
#include "ui/bars_chart_view.h"
#include "ui/dashboard.h"
#include "ui/training_controller.h"
#include "ui/import_controller.h"
#include "ui/main_window.h"
#include "ui/report_view.h"
#include "ui/run_compare.h"
#include "ui/run_history.h"
#include "ui/training_tab.h"

#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QDir>
#include <QDropEvent>
#include <QAction>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cmath>

namespace tst_main_window {

using foxhunt::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void firstStartShowsSyntheticDefault();
    void importsRealFilesWithProgress();
    void rejectsBadFileAndKeepsStore();
    void cancelledImportStoresNothing();
    void importProgressShowsWhereItIs();
    void rejectsCorrectedPricesWithTheirLine();
    void dropStartsImport();
    void decimationKeepsExtremes();
    void trainsAndChartsLive();
    void runsOfTwoPrecisionsAreCompared();
    void boundedSeriesStaysBounded();
    void aboutShowsLicenceAndThirdParties();
    void desktopHabits();
    void sameSymbolSeriesAreToldApart();
    void pausedClockStandsStill();
    void pauseAndStopAreShown();
    void importsShowTheirReportAndSeries();
    void undoOfTrashSitsInTheStatusBar();
    void seedsTrainARunGroup();

private:
    static QString realFile(const char* name)
    {
        return QStringLiteral(FOXHUNT_REAL_DATA_DIR "/") + QLatin1String(name);
    }
    static bool waitForImport(MainWindow& w);
    QTemporaryDir m_dir;
};

void TestMainWindow::initTestCase()
{
    qputenv("FOXHUNT_NO_DIALOGS", "1");
    QVERIFY(m_dir.isValid());
    // Recent files and folders are remembered in QSettings: keep the user's real ones out of reach.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QCoreApplication::setOrganizationName(QStringLiteral("foxhunt-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
    QVERIFY2(QFile::exists(realFile("ES_1min_sample.csv")), "real data missing: ../shared/data/real");
}

bool TestMainWindow::waitForImport(MainWindow& w)
{
    QSignalSpy done(&w, &MainWindow::importReportReady);
    return done.wait(120000);
}

void TestMainWindow::firstStartShowsSyntheticDefault()
{
    MainWindow w(m_dir.filePath(QStringLiteral("first.db")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.windowTitle(), QStringLiteral("Foxhunt"));
    QVERIFY(!w.windowIcon().isNull());
    QCOMPARE(w.menuBar()->actions().size(), 3); // File, Training, Help
    QCOMPARE(w.seriesCount(), 1);
    QVERIFY(w.showingSyntheticOnly());
    QVERIFY(w.chartView()->pointCount() > 100);
}

void TestMainWindow::importsRealFilesWithProgress()
{
    MainWindow w(m_dir.filePath(QStringLiteral("real.db")));
    w.show();
    QSignalSpy progress(w.importController(), &foxhunt::ImportController::progress);
    QVERIFY(w.importFiles({realFile("ES_1min_sample.csv"), realFile("test_data.ohlcv-1m.dbn.zst")}));
    QVERIFY(waitForImport(w));
    QVERIFY(progress.count() >= 2);
    QCOMPARE(progress.last().at(0).toInt(), 100);
    const QString report = w.lastImportReport();
    QVERIFY2(report.contains(QStringLiteral("15214 bars")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("4 bars")), qPrintable(report));
    QCOMPARE(w.seriesCount(), 3);
    QVERIFY(!w.showingSyntheticOnly());

    // The banner just went away: let the layout take its room back before the picture. The picture
    // keeps the synthetic series selected: the real files may be read here but not redistributed.
    QCoreApplication::processEvents();
    const QString shot = QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/main_window.png");
    QVERIFY(w.grab().save(shot));
}

void TestMainWindow::rejectsBadFileAndKeepsStore()
{
    const QString bad = m_dir.filePath(QStringLiteral("bad.csv"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("timestamp,open,high,low,close,volume\n"
            "2024-01-02 09:30:00,4700.25,4701.00,4699.75,4700.50,100\n"
            "2024-01-02 09:31:00,4700.50,abc,4699.75,4700.75,100\n");
    f.close();
    MainWindow w(m_dir.filePath(QStringLiteral("bad.db")));
    const int before = w.seriesCount();
    QVERIFY(w.importFiles({bad}));
    QVERIFY(waitForImport(w));
    QVERIFY2(w.lastImportReport().contains(QStringLiteral("bad.csv:3:")), qPrintable(w.lastImportReport()));
    QCOMPARE(w.seriesCount(), before);
}

// Issue 21.2: Cancel in the status bar abandons the import; its transaction rolls back. The click
// comes right after the start, before the worker has even opened its store connection, so the
// worker's first progress check already sees it.
void TestMainWindow::cancelledImportStoresNothing()
{
    const QString db = m_dir.filePath(QStringLiteral("cancel.db"));
    MainWindow w(db);
    w.show();
    const int before = w.seriesCount();
    auto* cancel = w.findChild<QPushButton*>(QStringLiteral("importCancel"));
    QVERIFY(cancel);
    QVERIFY(cancel->isHidden());
    // Another writer holds the database, so the import cannot commit before Cancel is
    // clicked, however the threads are scheduled: it is cancelled while reading, or once
    // it gets the lock and stores its first rows. No timing is involved.
    sqlite3* other = nullptr;
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &other), SQLITE_OK);
    QCOMPARE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    QSignalSpy progress(w.importController(), &foxhunt::ImportController::progress);
    QVERIFY(w.importFiles({realFile("ES_1min_sample.csv")}));
    QVERIFY(!cancel->isHidden());
    QVERIFY(cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(!cancel->isEnabled());
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    QVERIFY(waitForImport(w));
    QVERIFY(cancel->isHidden());
    const QString report = w.lastImportReport();
    QVERIFY2(report.contains(QStringLiteral("cancelled")), qPrintable(report));
    QCOMPARE(w.seriesCount(), before);
    int last = -1;
    for (const QList<QVariant>& signal : progress) {
        QVERIFY(signal.at(0).toInt() >= last);
        last = signal.at(0).toInt();
    }
}

// Issue 21.2: the status bar shows one figure for the whole import, past reading and parsing
// while the store is still to come, with Cancel beside it (docs/import_progress.png). Another
// writer takes the database once the import has opened it, so the import waits at its store
// stage (each new stage is shown at once): no timing is involved.
void TestMainWindow::importProgressShowsWhereItIs()
{
    const QString db = m_dir.filePath(QStringLiteral("progress.db"));
    MainWindow w(db);
    w.resize(1100, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    sqlite3* other = nullptr;
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &other), SQLITE_OK);
    QCOMPARE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    QSignalSpy progress(w.importController(), &foxhunt::ImportController::progress);
    QVERIFY(w.importFiles({realFile("ES_1min_sample.csv")}));
    // Reading, parsing and validating are behind it once the figure passes their share.
    const double beforeStore = foxhunt::overallImportFraction(0.0, "store");
    const auto reached = [&] {
        return !progress.isEmpty() && progress.last().at(0).toInt() >= static_cast<int>(100 * beforeStore);
    };
    while (!reached()) QVERIFY(progress.wait(60000));
    const int shown = progress.last().at(0).toInt();
    QStringList seen;
    for (const QList<QVariant>& signal : progress)
        seen << signal.at(0).toString() + QLatin1Char(' ') + signal.at(1).toString();
    QVERIFY2(shown > 0 && shown < 100, qPrintable(seen.join(QStringLiteral(" | "))));
    QVERIFY(progress.last().at(1).toString().endsWith(QStringLiteral(": store")));
    QCoreApplication::processEvents();
    auto* bar = w.findChild<QProgressBar*>(QStringLiteral("importProgress"));
    auto* cancel = w.findChild<QPushButton*>(QStringLiteral("importCancel"));
    QVERIFY(bar && cancel);
    QVERIFY(bar->isVisible() && cancel->isVisible() && cancel->isEnabled());
    QCOMPARE(bar->value(), shown);
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/import_progress.png")));
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    QVERIFY(waitForImport(w));
    int last = -1;
    for (const QList<QVariant>& signal : progress) {
        QVERIFY(signal.at(0).toInt() >= last);
        last = signal.at(0).toInt();
    }
}

// Issue 18.3: the GUI path says what the CLI says about bars that contradict stored ones.
void TestMainWindow::rejectsCorrectedPricesWithTheirLine()
{
    const auto write = [&](const char* name, const char* secondClose) {
        const QString path = m_dir.filePath(QLatin1String(name));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return QString();
        f.write(QByteArray("timestamp,open,high,low,close,volume\n"
                           "2024-01-02 09:30:00,4700.25,4701.00,4699.75,4700.50,100\n"
                           "2024-01-02 09:31:00,4700.50,4701.50,4699.75,") +
                secondClose + ",100\n");
        return path;
    };
    const QString original = write("orig.csv", "4700.75");
    const QString fixed = write("fixed.csv", "4701.00");
    MainWindow w(m_dir.filePath(QStringLiteral("conflict.db")));
    QVERIFY(w.importFiles({original}));
    QVERIFY(waitForImport(w));
    const int before = w.seriesCount();
    QVERIFY(w.importFiles({fixed}));
    QVERIFY(waitForImport(w));
    const QString report = w.lastImportReport();
    QVERIFY2(report.contains(QStringLiteral("REJECTED ") + fixed + QStringLiteral(":3: ")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("close 4700.75 stored, 4701 in the file")), qPrintable(report));
    QVERIFY2(report.contains(QStringLiteral("--replace")), qPrintable(report));
    QCOMPARE(w.seriesCount(), before);
}

void TestMainWindow::dropStartsImport()
{
    MainWindow w(m_dir.filePath(QStringLiteral("drop.db")));
    w.show();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(realFile("test_data.ohlcv-1m.dbn.zst"))});
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    // Delivered straight to the window: QApplication routes synthetic drops only
    // during a real drag-and-drop session.
    static_cast<QObject&>(w).event(&drop);
    QVERIFY(drop.isAccepted());
    QVERIFY(w.importController()->busy() || w.seriesCount() > 1);
    QVERIFY(waitForImport(w));
    QCOMPARE(w.seriesCount(), 2);
}

void TestMainWindow::decimationKeepsExtremes()
{
    std::vector<foxhunt::Bar> bars(10000);
    for (std::size_t i = 0; i < bars.size(); ++i) {
        bars[i].tsEvent = static_cast<std::int64_t>(i) * foxhunt::kNsPerMinute;
        bars[i].close = foxhunt::fromPoints(4000.0 + static_cast<double>(i % 100));
    }
    bars[5000].close = foxhunt::fromPoints(9999.0);
    const auto points = foxhunt::decimateMinMax(bars, 100);
    QVERIFY(points.size() <= 200);
    bool sawSpike = false;
    for (std::size_t i = 1; i < points.size(); ++i) QVERIFY(points[i].x() >= points[i - 1].x());
    for (const QPointF& p : points) sawSpike |= p.y() == 9999.0;
    QVERIFY(sawSpike);
}

void TestMainWindow::trainsAndChartsLive()
{
    MainWindow w(m_dir.filePath(QStringLiteral("train.db")));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // All four models, small enough that each one learns within the run: the screenshot shows every chart.
    w.setTrainingModels(
        {QStringLiteral("dqn"), QStringLiteral("ppo"), QStringLiteral("mamba2"), QStringLiteral("tft")});
    w.presetBox()->setCurrentIndex(w.presetBox()->findData(QStringLiteral("small")));
    w.setTrainingSteps(400);
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QSignalSpy batches(w.trainingController(), &foxhunt::TrainingController::samples);
    QVERIFY(w.startTraining());
    QVERIFY(!w.startTraining()); // one run at a time
    w.trainingController()->pause();
    QVERIFY(w.trainingController()->paused());
    w.trainingController()->resume();
    QVERIFY(finished.wait(300000));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("finished"));
    QVERIFY(batches.count() >= 1);
    QVERIFY(w.dashboard()->pointCount(QStringLiteral("tft"), QStringLiteral("loss")) > 0);
    QVERIFY(w.dashboard()->pointCount(QStringLiteral("dqn"), QStringLiteral("latency_ms")) > 0);
    for (const char* model : {"dqn", "ppo", "mamba2", "tft"}) {
        QVERIFY2(w.dashboard()->pointCount(QLatin1String(model), QStringLiteral("loss")) > 0, model);
        QVERIFY2(w.dashboard()->pointCount(QLatin1String(model), QStringLiteral("grad_norm")) > 0, model);
    }
    QVERIFY(w.dashboard()->pointCount(QStringLiteral("ppo"), QStringLiteral("equity_ticks")) > 0);
    QVERIFY(w.dashboard()->pointCount(QStringLiteral("mamba2"), QStringLiteral("forecast_q50")) > 0);
    QCOMPARE(w.dashboard()->chartCount(), 4 * 6);
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/training.png")));
    // The forecasters' sections, further down the same dashboard.
    auto* scroll = qobject_cast<QScrollArea*>(w.dashboard()->parentWidget()->parentWidget());
    QVERIFY(scroll);
    const QWidget* mambaLoss = w.dashboard()->chartView(QStringLiteral("mamba2"), QStringLiteral("loss"));
    scroll->verticalScrollBar()->setValue(mambaLoss->mapTo(w.dashboard(), QPoint(0, 0)).y() - 40);
    QVERIFY(scroll->verticalScrollBar()->value() > 0);
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/training_forecasters.png")));
}

// Issue 19: two real runs of the same models, FP32 (trainsAndChartsLive's) and BF16 + INT8, in the
// Runs tab: the table's result columns, the compare view with only the precision settings differing,
// the second run's Results tab and its memory chart in readable units (the docs/ screenshots).
void TestMainWindow::runsOfTwoPrecisionsAreCompared()
{
    const QString db = m_dir.filePath(QStringLiteral("train.db"));
    {
        foxhunt::AppSettings s = foxhunt::AppSettings::load();
        s.precision.amp = foxhunt::models::precision::MixedPrecisionConfig::for_ampere();
        s.precision.int8 = true;
        s.save();
    }
    const auto restore = qScopeGuard([] { foxhunt::AppSettings().save(); });
    MainWindow w(db);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QList<qint64> before = w.runHistory()->shownRunIds();
    QCOMPARE(before.size(), 1); // trainsAndChartsLive's FP32 run
    w.setTrainingModels(
        {QStringLiteral("dqn"), QStringLiteral("ppo"), QStringLiteral("mamba2"), QStringLiteral("tft")});
    w.presetBox()->setCurrentIndex(w.presetBox()->findData(QStringLiteral("small")));
    w.setTrainingSteps(400);
    QVERIFY(w.nextRunConfig().precision.amp.enabled && w.nextRunConfig().precision.int8);
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(300000));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("finished"));

    foxhunt::RunHistory* history = w.runHistory();
    history->refresh();
    const QList<qint64> runs = history->shownRunIds(); // newest first
    QCOMPARE(runs.size(), 2);
    const qint64 fp32 = before.front(), mixed = runs.front() == fp32 ? runs.back() : runs.front();
    auto* tabs = w.findChild<QTabWidget*>();
    QVERIFY(tabs);
    tabs->setCurrentIndex(MainWindow::kRunsTab);
    QCOMPARE(history->cellText(fp32, foxhunt::RunHistory::ColPrecision), QStringLiteral("FP32"));
    QVERIFY2(history->cellText(mixed, foxhunt::RunHistory::ColPrecision).startsWith(QStringLiteral("BF16")),
             qPrintable(history->cellText(mixed, foxhunt::RunHistory::ColPrecision)));
    for (const qint64 id : {fp32, mixed}) {
        QVERIFY(!history->cellText(id, history->resultColumn(QStringLiteral("dqn"), QStringLiteral("test_sharpe")))
                     .isEmpty());
        QVERIFY(!history->cellText(id, history->resultColumn(QStringLiteral("mamba2"), QStringLiteral("p95_latency")))
                     .isEmpty());
    }
    history->selectRuns({fp32, mixed});
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/runs_table.png")));

    // Compared: only the precision switches differ, and each run is labelled by it.
    const int differ = history->compare({fp32, mixed});
    QVERIFY(differ >= 2);
    QTableWidget* settings = history->compareView()->settingsTable();
    QStringList keys;
    for (int r = 0; r < settings->rowCount(); ++r) keys << settings->verticalHeaderItem(r)->text();
    QVERIFY2(keys.contains(QStringLiteral("precision.amp")) && keys.contains(QStringLiteral("precision.int8")),
             qPrintable(keys.join(',')));
    QVERIFY2(keys.filter(QStringLiteral("mamba2.")).isEmpty() && !keys.contains(QStringLiteral("steps")),
             qPrintable(keys.join(','))); // the same models and sizes
    QVERIFY(settings->horizontalHeaderItem(1)->text().contains(QStringLiteral("BF16")));
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/compare.png")));

    // The BF16 + INT8 run's results, from its report, with an INT8 table among them.
    QSignalSpy shown(history, &foxhunt::RunHistory::resultsShown);
    history->showResults();
    QVERIFY(history->openRun(mixed));
    QVERIFY(shown.wait(60000));
    foxhunt::ReportView* results = history->resultsView();
    QVERIFY(results->tableCount() > 0 && results->chartCount() > 0);
    QVERIFY2(results->headings().filter(QStringLiteral("INT8")).size() > 0, qPrintable(results->headings().join('|')));
    auto* bottom = qobject_cast<QTabWidget*>(results->parentWidget()->parentWidget()->parentWidget()->parentWidget());
    QVERIFY(bottom);
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/results.png")));

    // Its memory chart reads in bytes' units, not "0.0".
    foxhunt::Dashboard* charts = history->runDashboard();
    bottom->setCurrentIndex(0);
    charts->setExpanded(QStringLiteral("mamba2"), QStringLiteral("memory"), true); // full width, twice as tall
    QCoreApplication::processEvents();
    const auto unit = charts->yAxisUnit(QStringLiteral("mamba2"), QStringLiteral("memory"));
    QVERIFY2(unit.first.contains(QStringLiteral("iB")) || unit.first == QStringLiteral("B"), qPrintable(unit.first));
    QVERIFY(charts->chartView(QStringLiteral("mamba2"), QStringLiteral("memory"))
                ->grab()
                .save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/memory_chart.png")));
}

void TestMainWindow::boundedSeriesStaysBounded()
{
    foxhunt::BoundedSeries s(1000);
    for (int i = 0; i < 200000; ++i) s.append(i, std::sin(i * 0.01));
    QVERIFY(s.size() <= 1000);
    const auto points = s.decimated(100);
    QVERIFY(points.size() <= 200);
    QCOMPARE(points.back().x(), 199999.0);
    QCOMPARE(s.decimated(1000).front().x(), 0.0); // the whole span is kept, thinned
}

void TestMainWindow::aboutShowsLicenceAndThirdParties()
{
    MainWindow w(m_dir.filePath(QStringLiteral("about.db")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.showAbout();
    foxhunt::AboutDialog* about = w.aboutDialog();
    QVERIFY(about && about->isVisible());
    // The whole GPL-3 text, built in (the package ships it too).
    QVERIFY(about->licenceText().contains(QStringLiteral("GNU GENERAL PUBLIC LICENSE")));
    QVERIFY(about->licenceText().contains(QStringLiteral("Version 3, 29 June 2007")));
    QStringList names, licences;
    const QTableWidget* table = about->componentTable();
    for (int r = 0; r < table->rowCount(); ++r) {
        names << table->item(r, 0)->text();
        licences << table->item(r, 2)->text();
        QVERIFY(!table->item(r, 1)->text().isEmpty());
    }
    for (const char* name : {"Qt Charts", "LibTorch", "SQLite", "zstd", "date", "nlohmann-json", "CLI11", "OpenBLAS"})
        QVERIFY2(names.filter(QLatin1String(name)).size() == 1, name);
    QCOMPARE(licences.at(names.indexOf(QStringLiteral("Qt Charts"))), QStringLiteral("GPL-3.0-only"));
    about->tabs()->setCurrentIndex(2);
    QVERIFY(about->grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/about.png")));
    w.showAbout(); // shown again, not a second dialog
    QCOMPARE(w.findChildren<foxhunt::AboutDialog*>().size(), 1);
}

void TestMainWindow::desktopHabits()
{
    QSettings().remove(QStringLiteral("import"));
    MainWindow w(m_dir.filePath(QStringLiteral("habits.db")));
    w.show();
    // Pause and Step leave Ctrl+P (Print) and Ctrl+T (New tab) alone and say their keys in tooltips.
    for (QAction* a : w.findChildren<QAction*>()) {
        QVERIFY2(a->shortcut() != QKeySequence(QStringLiteral("Ctrl+P")), qPrintable(a->text()));
        QVERIFY2(a->shortcut() != QKeySequence(QStringLiteral("Ctrl+T")), qPrintable(a->text()));
        if (a->text().contains(QStringLiteral("Pause")) || a->text().contains(QStringLiteral("S&tep")))
            QVERIFY2(a->toolTip().contains(a->shortcut().toString(QKeySequence::NativeText)), qPrintable(a->toolTip()));
    }
    // F1 opens the manual, which exists.
    auto* manual = w.findChild<QAction*>(QStringLiteral("manualAction"));
    QVERIFY(manual);
    QCOMPARE(manual->shortcut(), QKeySequence(QKeySequence::HelpContents));
    QVERIFY2(MainWindow::manualUrl().isLocalFile() && QFileInfo::exists(MainWindow::manualUrl().toLocalFile()),
             qPrintable(MainWindow::manualUrl().toString()));
    // Imports are remembered: newest first, and the folder for the next file dialog.
    QVERIFY(w.importFiles({realFile("test_data.ohlcv-1m.dbn.zst")}));
    QVERIFY(waitForImport(w));
    QVERIFY(w.importFiles({realFile("ES_1min_sample.csv")}));
    QVERIFY(waitForImport(w));
    const QStringList recent = w.recentFiles();
    QCOMPARE(recent.size(), 2);
    QVERIFY(recent.first().endsWith(QStringLiteral("ES_1min_sample.csv")));
    QCOMPARE(QSettings().value(QStringLiteral("import/last_folder")).toString(),
             QFileInfo(realFile("ES_1min_sample.csv")).absolutePath());
    auto* menu = w.findChild<QMenu*>(QStringLiteral("recentMenu"));
    QVERIFY(menu);
    Q_EMIT menu->aboutToShow();
    QVERIFY(menu->actions().first()->text().contains(QStringLiteral("ES_1min_sample.csv")));
    // The runs table deletes with the Delete key.
    bool deleteKey = false;
    for (const QShortcut* sc : w.findChildren<QShortcut*>())
        deleteKey |= sc->key() == QKeySequence(QKeySequence::Delete);
    QVERIFY(deleteKey);
}

void TestMainWindow::sameSymbolSeriesAreToldApart()
{
    // Two vendor CSVs of the same contract, one at 1 minute and one at 5: same symbol, other bars.
    const QString path = m_dir.filePath(QStringLiteral("twins.db"));
    std::int64_t oneMinuteRun = 0, fiveMinuteRun = 0;
    {
        foxhunt::BarStore store(path.toStdString());
        const auto bars = [](std::int64_t firstTs, std::int64_t interval, int n) {
            std::vector<foxhunt::Bar> out;
            for (int i = 0; i < n; ++i) {
                const std::int64_t price = 4700'000'000'000 + i * 250'000'000LL;
                out.push_back({firstTs + i * interval, price, price + 250'000'000, price - 250'000'000, price, 10, 0});
            }
            return out;
        };
        // 2024-01-02 15:00 UTC (a Tuesday session) and 2024-03-28 15:00 UTC.
        const std::int64_t jan2 = 1704207600LL * foxhunt::kNsPerSecond;
        const std::int64_t mar28 = 1711638000LL * foxhunt::kNsPerSecond;
        const std::int64_t minute = foxhunt::kNsPerMinute;
        const std::int64_t a = store.storeSeries("ES.FUT", "csv", foxhunt::SeriesKind::Series, minute,
                                                 bars(jan2, minute, 30));
        const std::int64_t b = store.storeSeries("ES.FUT", "csv", foxhunt::SeriesKind::Series, 5 * minute,
                                                 bars(mar28, 5 * minute, 30));
        QVERIFY(a != b);
        foxhunt::RunStore runs(store);
        for (auto [id, run] : {std::pair{a, &oneMinuteRun}, std::pair{b, &fiveMinuteRun}}) {
            const foxhunt::SeriesInfo info = *store.findSeries(std::to_string(id));
            *run = runs.createRun("twin", R"({"models":["dqn"],"steps":10})", info, info.firstTs, info.lastTs, "{}");
        }
    }
    MainWindow w(path);
    QComboBox* box = w.trainingTab()->seriesBox();
    QStringList texts;
    for (int i = 1; i < box->count(); ++i) texts << box->itemText(i);
    QVERIFY2(texts.contains(QStringLiteral("ES.FUT · 1 min · 2024-01-02 – 2024-01-02")), qPrintable(texts.join('\n')));
    QVERIFY2(texts.contains(QStringLiteral("ES.FUT · 5 min · 2024-03-28 – 2024-03-28")), qPrintable(texts.join('\n')));
    const QString one = w.runHistory()->cellText(oneMinuteRun, foxhunt::RunHistory::ColSeries);
    const QString five = w.runHistory()->cellText(fiveMinuteRun, foxhunt::RunHistory::ColSeries);
    QCOMPARE(one, QStringLiteral("ES.FUT · 1 min · 2024-01-02 – 2024-01-02"));
    QCOMPARE(five, QStringLiteral("ES.FUT · 5 min · 2024-03-28 – 2024-03-28"));
}

void TestMainWindow::pausedClockStandsStill()
{
    foxhunt::PausableClock clock;
    clock.start(1000);
    QCOMPARE(clock.elapsedMs(1500), 500);
    clock.pause(1500);
    QCOMPARE(clock.elapsedMs(9000), 500); // paused: the clock stands still
    clock.pause(9000);                    // twice is once
    clock.resume(10000);
    QCOMPARE(clock.elapsedMs(10250), 750); // resumed: it continues from where it stood
    clock.stop(10250);
    QCOMPARE(clock.elapsedMs(20000), 750); // ended: the final figure stays
    clock.resume(20000);                   // no run to resume
    QCOMPARE(clock.elapsedMs(30000), 750);
}

void TestMainWindow::pauseAndStopAreShown()
{
    MainWindow w(m_dir.filePath(QStringLiteral("pause.db")));
    w.show();
    w.setTrainingModels({QStringLiteral("dqn")});
    w.presetBox()->setCurrentIndex(w.presetBox()->findData(QStringLiteral("small")));
    w.setTrainingSteps(1'000'000); // far more than the test waits for
    const auto action = [&w](const char* text) {
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QLatin1String(text)) return a;
        return static_cast<QAction*>(nullptr);
    };
    QAction* stop = action("St&op");
    QAction* step = action("S&tep");
    QVERIFY(stop && step);
    auto* status = w.findChild<QLabel*>(QStringLiteral("statusRun"));
    QVERIFY(status);
    foxhunt::TrainingController* c = w.trainingController();
    QSignalSpy finished(c, &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    QTRY_VERIFY_WITH_TIMEOUT(c->tick() > 0, 120000);

    action("&Pause")->trigger();
    QVERIFY(c->paused());
    QVERIFY2(status->text().contains(QStringLiteral("Paused")), qPrintable(status->text()));
    QVERIFY(action("&Resume") && step->isEnabled());
    const qint64 atPause = c->elapsedMs();
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < 50) QCoreApplication::processEvents(); // the status bar refreshes meanwhile
    QCOMPARE(c->elapsedMs(), atPause);
    action("&Resume")->trigger();
    QVERIFY(!c->paused());
    QVERIFY2(!status->text().contains(QStringLiteral("Paused")), qPrintable(status->text()));
    QTRY_VERIFY(c->elapsedMs() > atPause);

    stop->trigger();
    QVERIFY(c->stopping());
    QVERIFY2(status->text().contains(QStringLiteral("Stopping…")), qPrintable(status->text()));
    QVERIFY(!stop->isEnabled());
    QVERIFY(!step->isEnabled());
    QVERIFY(!action("&Pause")->isEnabled());
    QVERIFY(finished.wait(120000));
    QVERIFY(!c->stopping());
    QVERIFY2(status->text().contains(QStringLiteral("stopped")), qPrintable(status->text()));
    QVERIFY(action("&Start")->isEnabled());
}

void TestMainWindow::importsShowTheirReportAndSeries()
{
    const QString path = m_dir.filePath(QStringLiteral("cmdline.db"));
    {
        // The last session ended on the Training tab.
        MainWindow before(path);
        before.findChild<QTabWidget*>(QStringLiteral("mainTabs"))->setCurrentIndex(MainWindow::kTrainingTab);
        before.saveLayout();
    }
    MainWindow w(path);
    w.show();
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("mainTabs"));
    QVERIFY(tabs);
    QCOMPARE(tabs->currentIndex(), int(MainWindow::kTrainingTab));
    // `foxhunt FILE`: the report of each file is on the Data tab, shown at once.
    QVERIFY(w.importFromCommandLine({realFile("ES_1min_sample.csv")}));
    QCOMPARE(tabs->currentIndex(), int(MainWindow::kDataTab));
    QVERIFY(waitForImport(w));
    QComboBox* box = w.trainingTab()->seriesBox();
    const auto& outcomes = w.importController()->outcomes();
    QVERIFY(outcomes.size() == 1 && outcomes.front().ok);
    QCOMPARE(box->currentData().toString(), QString::number(outcomes.front().result.seriesIds.front()));
    // A later import (the dialog's way in) selects its series in turn.
    box->setCurrentIndex(0);
    QVERIFY(w.importFiles({realFile("test_data.ohlcv-1m.dbn.zst")}));
    QVERIFY(waitForImport(w));
    QCOMPARE(box->currentData().toString(),
             QString::number(w.importController()->outcomes().front().result.seriesIds.front()));
    QSettings().remove(QStringLiteral("window"));
    QSettings().remove(QStringLiteral("training"));
}

void TestMainWindow::undoOfTrashSitsInTheStatusBar()
{
    // QFile::moveToTrash uses $XDG_DATA_HOME/Trash when it is on the file's mount: a trash of the test's own.
    const QByteArray xdg = qgetenv("XDG_DATA_HOME");
    const auto restoreXdg = qScopeGuard([xdg] {
        if (xdg.isNull()) qunsetenv("XDG_DATA_HOME");
        else qputenv("XDG_DATA_HOME", xdg);
    });
    qputenv("XDG_DATA_HOME", m_dir.filePath(QStringLiteral("xdg-data")).toUtf8());
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("xdg-data"))));
    const QString path = m_dir.filePath(QStringLiteral("undo.db"));
    std::int64_t id = 0;
    QString file;
    {
        // A stopped run with a checkpoint in its own folder beside the database.
        foxhunt::BarStore store(path.toStdString());
        foxhunt::ensureDefaultData(store);
        foxhunt::RunStore runs(store);
        const foxhunt::SeriesInfo series = store.series().front();
        id = runs.createRun("undo me", R"({"models":["dqn"],"steps":50})", series, series.firstTs, series.lastTs, "{}");
        const QString folder = QString::fromStdString(runs.checkpointFolder()) + QLatin1Char('/') +
                               QString::fromStdString(foxhunt::RunStore::runFolderName(*runs.run(id)));
        QVERIFY(QDir().mkpath(folder));
        file = folder + QStringLiteral("/dqn-2.pt");
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("weights");
        f.close();
        runs.addCheckpoint(id, "dqn", 2, file.toStdString());
        runs.setStatus(id, foxhunt::RunStatus::Stopped);
    }
    const auto trashedAt = [&] {
        foxhunt::BarStore store(path.toStdString());
        return foxhunt::RunStore(store).run(id)->trashedNs;
    };
    MainWindow w(path);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("mainTabs"));
    auto* undo = w.statusBar()->findChild<QPushButton*>(QStringLiteral("undoTrash"));
    auto* text = w.statusBar()->findChild<QLabel*>(QStringLiteral("undoText"));
    QVERIFY(tabs && undo && text);
    QVERIFY(!undo->isVisible());
    tabs->setCurrentIndex(MainWindow::kRunsTab);
    QVERIFY(w.runHistory()->shownRunIds().contains(id));
    QVERIFY(w.runHistory()->trashRuns({id}));
    QVERIFY(trashedAt() > 0);
    QVERIFY(!QFile::exists(file));
    QVERIFY(undo->isVisible());
    QCOMPARE(text->text(), QStringLiteral("Run %1 moved to trash \u00b7").arg(id));

    // From any tab, and a passing status message does not hide it.
    tabs->setCurrentIndex(MainWindow::kDataTab);
    w.statusBar()->showMessage(QStringLiteral("Import finished"), 5000);
    QVERIFY(undo->isVisible());
    QTest::mouseClick(undo, Qt::LeftButton);
    QVERIFY(!undo->isVisible()); // used: gone
    QCOMPARE(trashedAt(), std::int64_t{0});
    QVERIFY(QFile::exists(file));
    QVERIFY(w.runHistory()->shownRunIds().contains(id));
    QVERIFY2(w.statusBar()->currentMessage().contains(QStringLiteral("restored")),
             qPrintable(w.statusBar()->currentMessage()));

    // Unused, the offer goes when it expires, and the run stays in the trash.
    w.runHistory()->setUndoOfferMs(50);
    QVERIFY(w.runHistory()->trashRuns({id}));
    QVERIFY(undo->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!undo->isVisible(), 5000);
    QVERIFY(w.runHistory()->undoableRunIds().isEmpty());
    QVERIFY(trashedAt() > 0);
}

void TestMainWindow::seedsTrainARunGroup()
{
    // Seeds 3 on the Training tab: a run group of seeds 5, 6 and 7, trained one after another; the
    // Runs tab lists the members with their group and shows the group's report. Then a group whose
    // first member is stopped ends stopped, with the rest left to resume.
    const QString path = m_dir.filePath(QStringLiteral("group.db"));
    MainWindow w(path);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const auto oneSeedAgain = qScopeGuard([&w] { w.trainingTab()->seedsBox()->setValue(1); });
    w.setTrainingModels({QStringLiteral("dqn")});
    w.presetBox()->setCurrentIndex(w.presetBox()->findData(QStringLiteral("small")));
    w.setTrainingSteps(300);
    w.trainingTab()->seedsBox()->setValue(3);
    QCOMPARE(w.trainingTab()->seedCount(), 3);
    const foxhunt::SessionConfig next = w.nextRunConfig();
    QSignalSpy ended(&w, &MainWindow::trainingGroupEnded);
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    const qint64 group = w.trainingGroupId();
    QVERIFY(group > 0);
    QVERIFY(!w.startTraining()); // one run at a time
    QVERIFY(ended.wait(300000));
    QCOMPARE(ended.first().at(0).toLongLong(), group);
    QCOMPARE(ended.first().at(1).toString(), QStringLiteral("finished"));
    QCOMPARE(finished.count(), 3);
    QCOMPARE(w.trainingGroupId(), qint64(0));

    QList<qint64> members;
    {
        foxhunt::BarStore store(path.toStdString());
        foxhunt::RunStore runs(store);
        const auto info = runs.group(group);
        QVERIFY(info);
        QVERIFY(info->status == foxhunt::RunStatus::Finished);
        const std::int64_t first = static_cast<std::int64_t>(next.seed);
        QCOMPARE(info->members, (std::vector<std::int64_t>{first, first + 1, first + 2}));
        for (const foxhunt::RunInfo& r : runs.groupMembers(group)) {
            QVERIFY(r.status == foxhunt::RunStatus::Finished);
            QCOMPARE(nlohmann::json::parse(r.configJson).at("seed").get<std::int64_t>(), r.groupMember);
            members << r.id;
        }
        QCOMPARE(members.size(), 3);
    }
    foxhunt::RunHistory* history = w.runHistory();
    history->refresh();
    QCOMPARE(history->cellText(members.first(), foxhunt::RunHistory::ColGroup),
             QStringLiteral("%1 seeds · seed %2").arg(group).arg(next.seed));
    QSignalSpy shown(history, &foxhunt::RunHistory::groupsShown);
    QVERIFY(history->showGroups(history->groupsOf(members)));
    QVERIFY(shown.wait(60000));
    QVERIFY(history->groupsView()->headings().contains(QStringLiteral("DQN")));
    // docs/groups.png: the members in the runs table and the group's report below it.
    w.resize(1400, 900);
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("mainTabs"));
    QVERIFY(tabs);
    tabs->setCurrentIndex(MainWindow::kRunsTab);
    history->selectRuns(members);
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/groups.png")));

    // Stopped during its first member: the group ends stopped; nothing more starts.
    w.setTrainingSteps(200'000);
    w.trainingTab()->seedsBox()->setValue(2);
    QVERIFY(w.startTraining());
    const qint64 stoppedGroup = w.trainingGroupId();
    QVERIFY(stoppedGroup > group);
    w.trainingController()->stop();
    QVERIFY(ended.wait(120000));
    QCOMPARE(ended.last().at(0).toLongLong(), stoppedGroup);
    QCOMPARE(ended.last().at(1).toString(), QStringLiteral("stopped"));
    QVERIFY(!w.trainingController()->running());
    foxhunt::BarStore store(path.toStdString());
    foxhunt::RunStore runs(store);
    QVERIFY(runs.group(stoppedGroup)->status == foxhunt::RunStatus::Stopped);
    QCOMPARE(runs.groupMembers(stoppedGroup).size(), std::size_t(1));
}

} // namespace tst_main_window

FOXHUNT_TEST_MAIN(tst_main_window::TestMainWindow)
#include "tst_main_window.moc"
