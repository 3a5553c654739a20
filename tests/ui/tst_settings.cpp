// SPDX-License-Identifier: GPL-3.0-or-later
// Settings, speed, palette, layout and error reporting of the main window, with
// short real runs: what the user sets in the dialog is what the stored run ran with.

#include "ui/app_settings.h"
#include "ui/bars_chart_view.h"
#include "ui/dashboard.h"
#include "ui/main_window.h"
#include "ui/palette.h"
#include "ui/settings_dialog.h"
#include "ui/training_controller.h"

#include "engine/session/devices.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QTest>

#include <nlohmann/json.hpp>

namespace tst_settings {

using foxhunt::AppSettings;
using foxhunt::MainWindow;
using foxhunt::PaletteChoice;
using foxhunt::SettingsDialog;
namespace mp = foxhunt::models::precision;

class TestSettings : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void settingsRoundTrip();
    void badStoredValuesKeepDefaults();
    void presetsAndEngineVerdict_data();
    void presetsAndEngineVerdict();
    void dialogChoicesReachStoredRun();
    void dialogFitsSmallScreen();
    void workersReachNextRunConfig_data();
    void workersReachNextRunConfig();
    void fp16OnCpuIsRefusedWithReason();
    void modelFailureIsShown();
    void speedControlIsLive();
    void uiThreadNeverBlocked();
    void paletteSwitch_data();
    void paletteSwitch();
    void layoutIsRestored();

private:
    QString db(const char* name) const { return m_dir.filePath(QLatin1String(name)); }
    AppSettings quietSettings() const;
    QTemporaryDir m_dir;
    QString m_desktopStyle; ///< the widget style the application started with (the "System" one)
};

void TestSettings::initTestCase()
{
    qputenv("FOXHUNT_NO_DIALOGS", "1");
    QVERIFY(m_dir.isValid());
    // A desktop whose style is not Fusion (Qt's built-in Windows style stands in for Breeze or Adwaita).
    QApplication::setStyle(QStringLiteral("Windows"));
    m_desktopStyle = QApplication::style()->name().toLower();
    QCOMPARE(m_desktopStyle, QStringLiteral("windows"));
    // Keep the user's real settings out of reach: every QSettings() below writes under m_dir.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QApplication::setOrganizationName(QStringLiteral("foxhunt-test"));
    QApplication::setApplicationName(QStringLiteral("tst_settings"));
}

void TestSettings::init()
{
    QSettings().clear();
}

AppSettings TestSettings::quietSettings() const
{
    AppSettings s;
    s.dataDir = m_dir.filePath(QStringLiteral("data")); // checkpoints stay in the temporary folder
    return s;
}

void TestSettings::settingsRoundTrip()
{
    AppSettings a;
    a.threads = 3;
    a.workers = 4;
    a.workerTimeoutSeconds = 42.0;
    a.precision.amp = foxhunt::ampPreset(foxhunt::AmpPreset::VoltaTuring);
    a.precision.amp.growth_interval = 77;
    a.precision.int8 = true;
    a.precision.int8StaticActivations = true;
    a.precision.calibrationBars = 321;
    a.precision.int8RefreshEvery = 0;
    a.precision.memoryBudgetMb = 880.0;
    a.precision.memoryBudgetAction = foxhunt::MemoryBudgetAction::Warn;
    a.ensemble = true;
    a.refreshHz = 4;
    a.dataDir = QStringLiteral("/tmp/somewhere");
    a.palette = PaletteChoice::Dark;
    QSettings file(m_dir.filePath(QStringLiteral("roundtrip.ini")), QSettings::IniFormat);
    a.save(file);
    const AppSettings b = AppSettings::load(file);
    QVERIFY(a == b);
    QCOMPARE(b.refreshIntervalMs(), 250);
    QVERIFY(!(b == AppSettings{}));
}

void TestSettings::badStoredValuesKeepDefaults()
{
    QSettings file(m_dir.filePath(QStringLiteral("bad.ini")), QSettings::IniFormat);
    file.setValue(QStringLiteral("settings/refresh_hz"), 50); // above 10 Hz
    file.setValue(QStringLiteral("settings/threads"), QStringLiteral("many"));
    file.setValue(QStringLiteral("settings/workers"), 0);
    file.setValue(QStringLiteral("settings/worker_timeout_s"), -5.0);
    file.setValue(QStringLiteral("settings/amp/dtype"), QStringLiteral("fp8"));
    file.setValue(QStringLiteral("settings/palette"), QStringLiteral("dark"));
    const AppSettings s = AppSettings::load(file);
    QCOMPARE(s.refreshHz, AppSettings{}.refreshHz);
    QCOMPARE(s.threads, 1);
    QCOMPARE(s.workers, 1);
    QCOMPARE(s.workerTimeoutSeconds, AppSettings{}.workerTimeoutSeconds);
    QVERIFY(s.precision.amp.dtype == AppSettings{}.precision.amp.dtype);
    QVERIFY(s.palette == PaletteChoice::Dark);
}

void TestSettings::presetsAndEngineVerdict_data()
{
    QTest::addColumn<int>("preset"); // index in the preset box: 1 disabled, 2 Ampere, 3 Volta/Turing
    QTest::addColumn<bool>("amp");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<double>("scale");
    QTest::newRow("disabled") << 1 << false << QStringLiteral("bf16") << 1024.0;
    QTest::newRow("ampere") << 2 << true << QStringLiteral("bf16") << 1.0;
    QTest::newRow("volta-turing") << 3 << true << QStringLiteral("f16") << 2048.0;
}

void TestSettings::presetsAndEngineVerdict()
{
    QFETCH(int, preset);
    QFETCH(bool, amp);
    QFETCH(QString, dtype);
    QFETCH(double, scale);
    SettingsDialog d(AppSettings{});
    auto* box = d.findChild<QComboBox*>(QStringLiteral("ampPreset"));
    auto* device = d.findChild<QComboBox*>(QStringLiteral("device"));
    QVERIFY(box && device);
    QCOMPARE(device->itemData(0).toString(), QStringLiteral("cpu"));
    QCOMPARE(box->currentIndex(), 1); // the defaults are the disabled preset
    box->setCurrentIndex(preset);
    const AppSettings s = d.settings();
    QCOMPARE(s.precision.amp.enabled, amp);
    QCOMPARE(QString::fromStdString(mp::to_string(s.precision.amp.dtype)), dtype);
    QCOMPARE(s.precision.amp.loss_scale, scale);

    // The dialog repeats the engine's verdict for the chosen device, whatever it is.
    const foxhunt::DeviceCheck check = foxhunt::checkPrecision(s.precision.amp, "cpu");
    QCOMPARE(d.precisionProblem().isEmpty(), check.ok);
    auto* dtypeBox = d.findChild<QComboBox*>(QStringLiteral("ampDtype"));
    mp::MixedPrecisionConfig fp16 = s.precision.amp;
    fp16.enabled = true;
    fp16.dtype = mp::HalfType::F16;
    const bool fp16Blocked = !foxhunt::checkPrecision(fp16, "cpu").ok;
    QCOMPARE(dtypeBox->itemText(0).contains(QStringLiteral("CUDA")), fp16Blocked);
    if (fp16Blocked && dtype == QLatin1String("f16"))
        QVERIFY2(d.precisionProblem().contains(QStringLiteral("FP16")), qPrintable(d.precisionProblem()));

    // Editing a field away from the preset shows "Custom".
    if (amp) {
        d.findChild<QSpinBox*>(QStringLiteral("growthInterval"))->setValue(1234);
        if (s.precision.amp.dynamic_loss_scale) QCOMPARE(box->currentIndex(), 0);
    }
}

void TestSettings::dialogFitsSmallScreen()
{
    // A 768-pixel screen less its panel and the title bar: the dialog at the default font fits.
    SettingsDialog d(quietSettings());
    qInfo("Settings dialog size hint: %d x %d px", d.sizeHint().width(), d.sizeHint().height());
    QVERIFY2(d.sizeHint().height() <= 700, qPrintable(QString::number(d.sizeHint().height())));
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QVERIFY2(d.height() <= 700, qPrintable(QString::number(d.height())));
    // Every section is still there, a page each.
    auto* tabs = d.findChild<QTabWidget*>(QStringLiteral("settingsTabs"));
    QVERIFY(tabs);
    QCOMPARE(tabs->count(), 4);
}

void TestSettings::dialogChoicesReachStoredRun()
{
    MainWindow w(db("settings.db"));
    w.applySettings(quietSettings());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* action = w.findChild<QAction*>(QStringLiteral("settingsAction"));
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence(QStringLiteral("Ctrl+,")));
    action->trigger();
    auto* d = w.findChild<SettingsDialog*>();
    QVERIFY(d && d->isVisible());
    d->findChild<QCheckBox*>(QStringLiteral("ampEnabled"))->setChecked(true);
    auto* dtype = d->findChild<QComboBox*>(QStringLiteral("ampDtype"));
    dtype->setCurrentIndex(dtype->findData(QStringLiteral("bf16")));
    d->findChild<QCheckBox*>(QStringLiteral("int8Enabled"))->setChecked(true);
    d->findChild<QCheckBox*>(QStringLiteral("int8Static"))->setChecked(true);
    d->findChild<QSpinBox*>(QStringLiteral("calibrationBars"))->setValue(200);
    d->findChild<QDoubleSpinBox*>(QStringLiteral("memoryBudget"))->setValue(4096.0);
    QVERIFY2(d->precisionProblem().isEmpty(), qPrintable(d->precisionProblem()));
    d->grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/settings.png"));
    d->accept();
    QVERIFY(w.settings().precision.amp.enabled);
    QVERIFY(w.settings().precision.amp.dtype == mp::HalfType::BF16);
    QVERIFY(w.settings().precision.int8);
    QCOMPARE(AppSettings::load().precision.calibrationBars, 200); // saved for the next launch
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("nextRunSummary"))->text().contains(QStringLiteral("BF16")));

    w.setTrainingModels({QStringLiteral("dqn")});
    w.setTrainingSteps(150);
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(w.runSummary().contains(QStringLiteral("BF16")));
    QVERIFY(w.runSummary().contains(QStringLiteral("INT8")));
    QVERIFY(finished.wait(300000));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("finished"));

    foxhunt::BarStore store(db("settings.db").toStdString());
    foxhunt::RunStore runs(store);
    const auto all = runs.runs();
    QCOMPARE(all.size(), std::size_t{1});
    const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(all.front().configJson)).object();
    const QJsonObject precision = config.value(QStringLiteral("precision")).toObject();
    QCOMPARE(precision.value(QStringLiteral("amp")).toBool(), true);
    QCOMPARE(precision.value(QStringLiteral("amp_dtype")).toString(), QStringLiteral("bf16"));
    QCOMPARE(precision.value(QStringLiteral("int8")).toBool(), true);
    QCOMPARE(precision.value(QStringLiteral("int8_static_activations")).toBool(), true);
    QCOMPARE(precision.value(QStringLiteral("calibration_bars")).toInt(), 200);
    QCOMPARE(precision.value(QStringLiteral("memory_budget_mb")).toDouble(), 4096.0);
    QCOMPARE(precision.value(QStringLiteral("memory_budget_action")).toString(), QStringLiteral("refuse"));
    QCOMPARE(config.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
    // The run's checkpoints are beside its database, not in the data folder (which moves the store
    // on the next launch only).
    QVERIFY(QDir(db("settings.db") + QStringLiteral(".checkpoints")).exists());
    QVERIFY(!QDir(m_dir.filePath(QStringLiteral("data/checkpoints"))).exists());
}

void TestSettings::workersReachNextRunConfig_data()
{
    QTest::addColumn<int>("workers");
    QTest::addColumn<double>("timeout");
    QTest::addColumn<bool>("shown"); // the run summaries name the processes
    QTest::newRow("one process") << 1 << 60.0 << false;
    QTest::newRow("two processes") << 2 << 90.0 << true;
    QTest::newRow("eight processes") << 8 << 5.0 << true;
}

void TestSettings::workersReachNextRunConfig()
{
    QFETCH(int, workers);
    QFETCH(double, timeout);
    QFETCH(bool, shown);
    MainWindow w(db("workers.db"));
    w.applySettings(quietSettings());
    w.findChild<QAction*>(QStringLiteral("settingsAction"))->trigger();
    auto* d = w.findChild<SettingsDialog*>();
    QVERIFY(d);
    auto* workerBox = d->findChild<QSpinBox*>(QStringLiteral("workers"));
    auto* timeoutBox = d->findChild<QDoubleSpinBox*>(QStringLiteral("workerTimeout"));
    QVERIFY(workerBox && timeoutBox);
    QCOMPARE(workerBox->value(), 1);
    QCOMPARE(workerBox->minimum(), 1);
    QVERIFY(workerBox->maximum() >= 8);
    QVERIFY(!workerBox->toolTip().isEmpty() && !timeoutBox->toolTip().isEmpty());
    QCOMPARE(timeoutBox->value(), 60.0);
    QVERIFY(!timeoutBox->isEnabled()); // one process has no one to wait for
    workerBox->setValue(workers);
    QCOMPARE(timeoutBox->isEnabled(), workers > 1);
    timeoutBox->setValue(timeout);
    d->accept();

    QCOMPARE(w.settings().workers, workers);
    QCOMPARE(w.settings().workerTimeoutSeconds, timeout);
    const AppSettings saved = AppSettings::load(); // what the next launch reads
    QCOMPARE(saved.workers, workers);
    QCOMPARE(saved.workerTimeoutSeconds, timeout);

    // The next run's config, as the run store will keep it.
    const nlohmann::json json = foxhunt::toJson(w.nextRunConfig());
    QCOMPARE(json.at("workers").get<int>(), workers);
    QCOMPARE(json.at("distributed_timeout_s").get<double>(), timeout);
    const foxhunt::SessionConfig back = foxhunt::sessionConfigFromJson(json); // the engine accepts it
    QCOMPARE(back.workers, workers);
    QCOMPARE(back.distributedTimeoutSeconds, timeout);

    const QString summary = w.findChild<QLabel*>(QStringLiteral("nextRunSummary"))->text();
    QVERIFY2(summary.contains(QStringLiteral("%1 processes").arg(workers)) == shown, qPrintable(summary));
    // Each local worker runs foxhunt-cli from next to this executable.
    QCOMPARE(w.trainingController()->workerProgram(),
             QCoreApplication::applicationDirPath() + QStringLiteral("/foxhunt-cli"));
}

void TestSettings::fp16OnCpuIsRefusedWithReason()
{
    AppSettings s = quietSettings();
    s.precision.amp = foxhunt::ampPreset(foxhunt::AmpPreset::VoltaTuring);
    if (foxhunt::checkPrecision(s.precision.amp, "cpu").ok) QSKIP("this LibTorch runs FP16 autocast on the CPU");
    MainWindow w(db("fp16.db"));
    w.applySettings(s);
    QSignalSpy errors(&w, &MainWindow::errorReported);
    QVERIFY(!w.startTraining());
    QCOMPARE(errors.count(), 1);
    QVERIFY2(w.lastErrorMessage().contains(QStringLiteral("FP16")), qPrintable(w.lastErrorMessage()));
    QVERIFY2(w.lastErrorMessage().contains(QStringLiteral("BF16")), qPrintable(w.lastErrorMessage()));
    QVERIFY(!w.trainingController()->running());

    s.precision.amp = foxhunt::ampPreset(foxhunt::AmpPreset::Disabled);
    s.device = "cuda:7";
    w.applySettings(s);
    QVERIFY(!w.startTraining());
    QVERIFY2(w.lastErrorMessage().contains(QStringLiteral("cuda:7")), qPrintable(w.lastErrorMessage()));
}

void TestSettings::modelFailureIsShown()
{
    MainWindow w(db("failure.db"));
    QSignalSpy errors(&w, &MainWindow::errorReported);
    // What the controller emits when a session comes back with status "failed".
    Q_EMIT w.trainingController()->finished(QStringLiteral("failed"), QStringLiteral("tft: loss is NaN at step 12"));
    QCOMPARE(errors.count(), 1);
    QCOMPARE(w.lastErrorMessage(), QStringLiteral("tft: loss is NaN at step 12"));
}

void TestSettings::speedControlIsLive()
{
    MainWindow w(db("speed.db"));
    w.applySettings(quietSettings());
    w.show();
    w.setTrainingModels({QStringLiteral("dqn")});
    w.setTrainingSteps(100);
    w.setSpeed(1.0); // one-minute bars at real time: this run would take hours
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    QCOMPARE(w.trainingController()->runConfig().speed, 1.0);
    QCOMPARE(w.trainingController()->sessionSpeed(), 1.0);
    auto* control = w.findChild<QComboBox*>(QStringLiteral("speedControl"));
    QVERIFY(control);
    control->setCurrentIndex(control->findData(100.0));
    QCOMPARE(w.trainingController()->sessionSpeed(), 100.0);
    control->setCurrentIndex(control->findData(0.0)); // Max
    QCOMPARE(w.trainingController()->sessionSpeed(), 0.0);
    QCOMPARE(w.speed(), 0.0);
    QVERIFY(finished.wait(300000)); // only because the pace changed while running
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("finished"));
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("statusStep"))->text().contains(QStringLiteral("/")));
    QVERIFY(!w.findChild<QLabel*>(QStringLiteral("statusElapsed"))->text().isEmpty());
    QVERIFY(w.findChild<QLabel*>(QStringLiteral("statusDevice"))->text().startsWith(QStringLiteral("cpu")));
}

void TestSettings::uiThreadNeverBlocked()
{
    MainWindow w(db("busy.db"));
    w.applySettings(quietSettings());
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setTrainingModels({QStringLiteral("dqn"), QStringLiteral("tft")});
    w.setTrainingSteps(200);
    w.setSpeed(0.0);
    QSignalSpy finished(w.trainingController(), &foxhunt::TrainingController::finished);
    QVERIFY(w.startTraining());
    QVERIFY(finished.wait(300000));
    QCOMPARE(finished.first().at(0).toString(), QStringLiteral("finished"));

    // Time inside our own handlers, not gaps between events: drain (which runs the chart
    // update it triggers), the chart update alone, the theme of new charts, the status bar.
    // The bound is on the UI thread's own CPU time in each call; wall time is reported
    // beside it, since on a loaded machine it also counts time the OS gave to others.
    QHash<QString, foxhunt::HandlerStats> all = w.uiTimings().all();
    all.insert(QStringLiteral("drain"), w.trainingController()->timings().stats(QStringLiteral("drain")));
    QVERIFY(all.value(QStringLiteral("drain")).calls >= 2);
    QVERIFY(all.value(QStringLiteral("charts")).calls >= 1);
    QVERIFY(all.value(QStringLiteral("status")).calls >= 1);
    const qint64 limitNs = 50'000'000;
    QStringList report;
    for (auto it = all.cbegin(); it != all.cend(); ++it)
        report << QStringLiteral("%1: %2 calls, max %3 ms CPU, max %4 ms wall (call %5)")
                      .arg(it.key())
                      .arg(it->calls)
                      .arg(it->maxCpuNs / 1e6, 0, 'f', 1)
                      .arg(it->maxNs / 1e6, 0, 'f', 1)
                      .arg(it->slowestCall);
    qInfo("%s", qPrintable(report.join(QStringLiteral("; "))));
    for (auto it = all.cbegin(); it != all.cend(); ++it)
        QVERIFY2(it->maxCpuNs < limitNs, qPrintable(report.join(QStringLiteral("; "))));
    QVERIFY(w.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/training_settings.png")));
}

void TestSettings::paletteSwitch_data()
{
    QTest::addColumn<int>("choice");
    QTest::addColumn<bool>("dark");
    QTest::newRow("dark") << int(PaletteChoice::Dark) << true;
    QTest::newRow("light") << int(PaletteChoice::Light) << false;
    QTest::newRow("dark again") << int(PaletteChoice::Dark) << true;
    QTest::newRow("system") << int(PaletteChoice::System) << false;
}

void TestSettings::paletteSwitch()
{
    QFETCH(int, choice);
    QFETCH(bool, dark);
    MainWindow w(db("palette.db"));
    AppSettings s = quietSettings();
    s.palette = static_cast<PaletteChoice>(choice);
    w.applySettings(s);
    const QColor window = QApplication::palette().color(QPalette::Window);
    QCOMPARE(window.lightness() < 128, dark);
    // Our light and dark palettes need Fusion; "System" is the desktop's own style and colours.
    QCOMPARE(QApplication::style()->name().toLower(),
             choice == int(PaletteChoice::System) ? m_desktopStyle : QStringLiteral("fusion"));
    QCOMPARE(w.chartView()->chart()->theme(), dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    QVERIFY(AppSettings::load().palette == s.palette);
}

void TestSettings::layoutIsRestored()
{
    QList<int> seriesSizes, logSizes;
    QSize size;
    {
        MainWindow w(db("layout.db"));
        w.resize(1000, 640);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto* series = w.findChild<QSplitter*>(QStringLiteral("seriesSplitter"));
        auto* log = w.findChild<QSplitter*>(QStringLiteral("logSplitter"));
        QVERIFY(series && log);
        series->setSizes({250, 700});
        log->setSizes({300, 200});
        seriesSizes = series->sizes();
        logSizes = log->sizes();
        size = w.size();
        w.dashboard()->setSmoothing(0.6);
        w.dashboard()->setIgnoreOutliers(false);
        w.close(); // saves
    }
    MainWindow w(db("layout.db"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.size(), size);
    QCOMPARE(w.findChild<QSplitter*>(QStringLiteral("seriesSplitter"))->sizes(), seriesSizes);
    QCOMPARE(w.findChild<QSplitter*>(QStringLiteral("logSplitter"))->sizes(), logSizes);
    QCOMPARE(w.dashboard()->smoothing(), 0.6);
    QVERIFY(!w.dashboard()->ignoresOutliers());

    QSettings().clear(); // what --reset-settings does
    MainWindow fresh(db("layout.db"));
    QVERIFY(!fresh.restoreLayout());
    QCOMPARE(fresh.size(), QSize(1100, 700));
}

} // namespace tst_settings

FOXHUNT_TEST_MAIN(tst_settings::TestSettings)
#include "tst_settings.moc"
