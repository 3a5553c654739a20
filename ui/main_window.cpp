// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/main_window.h"

#include "ui/about_dialog.h"

#include "ui/bars_chart_view.h"
#include "ui/settings_dialog.h"
#include "ui/dashboard.h"
#include "ui/training_controller.h"
#include "ui/training_tab.h"
#include "ui/import_controller.h"
#include "ui/import_report.h"
#include "ui/run_history.h"
#include "ui/series_label.h"

#include "engine/data/market_time.h"
#include "engine/session/devices.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateEdit>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QScrollArea>
#include <QSpinBox>
#include <QTabWidget>
#include <QToolBar>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QSettings>
#include <QFileInfo>
#include <QDesktopServices>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStatusBar>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

// Resources of a static library must be registered by hand, outside any namespace.
static void initFoxhuntResources()
{
    Q_INIT_RESOURCE(foxhunt);
}

namespace foxhunt {

namespace {

enum SeriesColumn { ColSymbol, ColKind, ColDataset, ColInterval, ColBars, ColFrom, ColTo, ColCount };

} // namespace

MainWindow::MainWindow(const QString& databasePath, QWidget* parent)
    : QMainWindow(parent), m_databasePath(databasePath), m_import(std::make_unique<ImportController>(databasePath)),
      m_training(std::make_unique<TrainingController>(databasePath))
{
    initFoxhuntResources();
    setWindowTitle(QStringLiteral("Foxhunt"));
    setWindowIcon(QIcon(QStringLiteral(":/foxhunt/icon.svg")));
    setAcceptDrops(true);
    m_settings = AppSettings::load();
    buildMenus();
    buildCentral();
    buildRunStatus();

    connect(m_import.get(), &ImportController::progress, this, [this](int percent, const QString& text) {
        m_progress->setVisible(true);
        m_progress->setValue(percent);
        statusBar()->showMessage(text);
    });
    connect(m_import.get(), &ImportController::finished, this, &MainWindow::onImportFinished);
    connect(m_training.get(), &TrainingController::started, this, [this](qint64 runId) { m_runId = runId; });
    connect(m_training.get(), &TrainingController::samples, this, &MainWindow::onRunSamples);
    connect(m_training.get(), &TrainingController::finished, this, &MainWindow::onTrainingFinished);
    // Paused, resumed or stopping: the actions and the status bar say so at once, not at the next refresh.
    connect(m_training.get(), &TrainingController::stateChanged, this, [this] {
        updateTrainingActions();
        updateRunStatus();
    });
    updateTrainingActions();
    addRunHistory();

    try {
        m_store = std::make_unique<BarStore>(databasePath.toStdString());
        if (ensureDefaultData(*m_store))
            m_log->appendPlainText(tr("Created %1 with the bundled synthetic ES-like series.").arg(databasePath));
    } catch (const std::exception& e) {
        m_log->appendPlainText(tr("Cannot open the store: %1").arg(QString::fromStdString(e.what())));
        QMetaObject::invokeMethod(
            this,
            [this, msg = QString::fromStdString(e.what())] {
                QMessageBox::critical(this, tr("Foxhunt"), tr("Cannot open the data store:\n%1").arg(msg));
            },
            Qt::QueuedConnection);
    }
    refreshSeries();
    resize(1100, 700);
    applySettings(m_settings);
    restoreLayout();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* importAction = file->addAction(tr("&Import bars..."), this, &MainWindow::openImportDialog);
    importAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+I")));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    fillRecentMenu();
    file->addAction(createSettingsAction());
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* training = menuBar()->addMenu(tr("&Training"));
    m_startAction = training->addAction(tr("&Start"), this, [this] { startTraining(); });
    m_startAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+R")));
    m_pauseAction = training->addAction(tr("&Pause"), this, [this] {
        if (m_training->paused()) m_training->resume();
        else m_training->pause();
    });
    // Ctrl+P and Ctrl+T are Print and New tab everywhere else; these do not take them.
    m_pauseAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+P")));
    m_stepAction = training->addAction(tr("S&tep"), this, [this] { m_training->step(); });
    m_stepAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+T")));
    m_stopAction = training->addAction(tr("St&op"), this, [this] { m_training->stop(); });
    m_stopAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+.")));
    for (auto [action, what] : {std::pair{m_startAction, tr("Start a run with the Training tab's settings")},
                                std::pair{m_pauseAction, tr("Pause or resume the replay")},
                                std::pair{m_stepAction, tr("Replay one bar while paused")},
                                std::pair{m_stopAction, tr("Stop the run (it can be resumed later)")}})
        action->setToolTip(QStringLiteral("%1 (%2)").arg(what, action->shortcut().toString(QKeySequence::NativeText)));
    QToolBar* bar = addToolBar(tr("Training"));
    bar->setObjectName(QStringLiteral("trainingToolBar"));
    bar->addActions({m_startAction, m_pauseAction, m_stepAction, m_stopAction});
    bar->addSeparator();
    bar->addAction(m_settingsAction);
    buildSpeedControl(bar);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* manual = help->addAction(tr("Foxhunt &manual"), this, [this] { QDesktopServices::openUrl(manualUrl()); });
    manual->setObjectName(QStringLiteral("manualAction"));
    manual->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About Foxhunt"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::buildCentral()
{
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);

    m_banner = new QWidget;
    m_banner->setObjectName(QStringLiteral("syntheticBanner"));
    m_banner->setStyleSheet(QStringLiteral("#syntheticBanner { background: #fff3cd; border: 1px solid #e0c060; }"
                                           "#syntheticBanner QLabel { color: #5c4400; }"));
    auto* bannerLayout = new QHBoxLayout(m_banner);
    m_bannerText = new QLabel(tr("<b>Synthetic data.</b> Only the bundled ES-like synthetic series is stored; "
                                 "nothing you see is a real market. Import real ES bars (Databento DBN, CSV) to "
                                 "train on the market."));
    m_bannerText->setWordWrap(true);
    auto* importButton = new QPushButton(tr("Import real data..."));
    connect(importButton, &QPushButton::clicked, this, &MainWindow::openImportDialog);
    bannerLayout->addWidget(m_bannerText, 1);
    bannerLayout->addWidget(importButton);
    layout->addWidget(m_banner);

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->setObjectName(QStringLiteral("seriesSplitter"));
    m_seriesTable = new QTableWidget(0, ColCount);
    m_seriesTable->setHorizontalHeaderLabels(
        {tr("Series"), tr("Kind"), tr("Dataset"), tr("Bar"), tr("Bars"), tr("From (UTC)"), tr("To (UTC)")});
    m_seriesTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_seriesTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_seriesTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_seriesTable->verticalHeader()->hide();
    m_seriesTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(m_seriesTable, &QTableWidget::itemSelectionChanged, this, &MainWindow::showSelectedSeries);
    splitter->addWidget(m_seriesTable);

    m_chart = new BarsChartView;
    splitter->addWidget(m_chart);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({460, 640});

    auto* vertical = new QSplitter(Qt::Vertical);
    vertical->setObjectName(QStringLiteral("logSplitter"));
    vertical->addWidget(splitter);
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setPlaceholderText(tr("Import reports appear here. Drop files on the window to import them."));
    vertical->addWidget(m_log);
    vertical->setStretchFactor(0, 4);
    vertical->setStretchFactor(1, 1);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("mainTabs"));
    auto* dataTab = new QWidget;
    auto* dataLayout = new QVBoxLayout(dataTab);
    dataLayout->setContentsMargins(0, 0, 0, 0);
    dataLayout->addWidget(vertical);
    m_tabs->addTab(dataTab, tr("Data"));
    m_trainingTab = new TrainingTab;
    m_dashboard = m_trainingTab->dashboard();
    m_tabs->addTab(m_trainingTab, tr("Training"));
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);

    m_statusDb = new QLabel;
    m_statusSeries = new QLabel;
    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(200);
    m_progress->setVisible(false);
    m_progress->setObjectName(QStringLiteral("importProgress"));
    m_importCancel = new QPushButton(tr("Cancel"));
    m_importCancel->setObjectName(QStringLiteral("importCancel"));
    m_importCancel->setToolTip(tr("Stop the import; the file being imported is not stored"));
    m_importCancel->setVisible(false);
    connect(m_importCancel, &QPushButton::clicked, this, [this] {
        m_import->cancel();
        m_importCancel->setEnabled(false);
        statusBar()->showMessage(tr("Cancelling the import..."));
    });
    m_statusRun = new QLabel;
    m_statusRun->setObjectName(QStringLiteral("statusRun"));
    statusBar()->addPermanentWidget(m_statusRun);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_importCancel);
    statusBar()->addPermanentWidget(m_statusSeries);
    statusBar()->addPermanentWidget(m_statusDb);
    m_statusDb->setText(m_databasePath);
}

void MainWindow::setTrainingModels(const QStringList& models)
{
    m_trainingTab->setModels(models);
}

void MainWindow::setTrainingSteps(int steps)
{
    m_trainingTab->setSteps(steps);
}

SessionConfig MainWindow::nextRunConfig() const
{
    SessionConfig config = m_trainingTab->config();
    m_settings.applyTo(config);
    return config;
}

ModelPreset MainWindow::selectedPreset() const
{
    return m_trainingTab->selectedPreset();
}

SessionConfig MainWindow::presetConfig() const
{
    return m_trainingTab->presetConfig();
}

QCheckBox* MainWindow::wholeSeriesBox() const
{
    return m_trainingTab->wholeSeriesBox();
}
QDateEdit* MainWindow::fromDateEdit() const
{
    return m_trainingTab->fromDateEdit();
}
QDateEdit* MainWindow::toDateEdit() const
{
    return m_trainingTab->toDateEdit();
}
QComboBox* MainWindow::presetBox() const
{
    return m_trainingTab->presetBox();
}
QDoubleSpinBox* MainWindow::agentLearningRateBox() const
{
    return m_trainingTab->agentLearningRateBox();
}
QDoubleSpinBox* MainWindow::forecasterLearningRateBox() const
{
    return m_trainingTab->forecasterLearningRateBox();
}
QSpinBox* MainWindow::pastLengthBox() const
{
    return m_trainingTab->pastLengthBox();
}

bool MainWindow::startTraining()
{
    if (m_training->running()) return false;
    const SessionConfig config = nextRunConfig();
    if (config.models.empty()) {
        statusBar()->showMessage(tr("Choose at least one model to train"), 5000);
        return false;
    }
    if (config.fromDay && config.toDay && *config.fromDay > *config.toDay) {
        reportError(tr("Cannot start the run"), tr("The date range ends before it starts."));
        return false;
    }
    if (const std::optional<std::string> problem = preflightProblem(config)) {
        reportError(tr("Cannot start the run"), QString::fromStdString(*problem));
        return false;
    }
    if (const int seeds = m_trainingTab->seedCount(); seeds > 1) {
        TrainingGroup group;
        for (int i = 0; i < seeds; ++i) group.seeds.push_back(static_cast<std::int64_t>(config.seed) + i);
        group.config = config;
        try {
            if (!m_store) throw std::runtime_error("the data store is not open");
            RunStore runs(*m_store);
            group.id = runs.createGroup(GroupKind::Seeds, toJson(config).dump(), group.seeds);
        } catch (const std::exception& e) {
            reportError(tr("Cannot start the run group"), QString::fromStdString(e.what()));
            return false;
        }
        m_group = std::move(group);
        return startGroupMember();
    }
    return launchTraining(config);
}

bool MainWindow::startGroupMember()
{
    if (!m_group || m_group->next >= m_group->seeds.size()) return false;
    SessionConfig config = m_group->config;
    const std::int64_t seed = m_group->seeds[m_group->next];
    config.seed = static_cast<std::uint64_t>(seed);
    config.groupId = m_group->id;
    config.groupMember = seed;
    if (!launchTraining(config)) {
        endGroup(RunStatus::Failed);
        return false;
    }
    m_statusRun->setText(tr("group %1: seed %2 (%3 of %4) training...")
                             .arg(m_group->id)
                             .arg(seed)
                             .arg(m_group->next + 1)
                             .arg(m_group->seeds.size()));
    ++m_group->next;
    return true;
}

void MainWindow::endGroup(RunStatus status)
{
    if (!m_group) return;
    const qint64 id = m_group->id;
    m_group.reset();
    try {
        if (m_store) RunStore(*m_store).setGroupStatus(id, status);
    } catch (const std::exception& e) {
        reportError(tr("Run group"), tr("Cannot store the end of run group %1: %2").arg(id).arg(e.what()));
    }
    if (m_history) m_history->refresh();
    Q_EMIT trainingGroupEnded(id, QString::fromStdString(toString(status)));
}

bool MainWindow::launchTraining(const SessionConfig& config)
{
    m_dashboard->clear();
    m_runId = 0;
    if (!m_training->start(config)) return false;
    m_tabs->setCurrentIndex(1);
    m_statusRun->setText(tr("training..."));
    m_uiTimings.clear();
    m_rateTick = 0;
    m_barsPerSecond = 0.0;
    m_rateClock.start();
    m_statusTimer.start();
    updateRunStatus();
    updateTrainingActions();
    return true;
}

void MainWindow::updateTrainingActions()
{
    const bool running = m_training->running();
    m_startAction->setEnabled(!running);
    m_pauseAction->setText(m_training->paused() ? tr("&Resume") : tr("&Pause"));
    // Stopping takes a few seconds (the run stores what it has): nothing more to ask of it meanwhile.
    const bool stopping = m_training->stopping();
    m_pauseAction->setEnabled(running && !stopping);
    m_stepAction->setEnabled(running && !stopping && m_training->paused());
    m_stopAction->setEnabled(running && !stopping);
}

void MainWindow::onTrainingFinished(const QString& status, const QString& error)
{
    updateTrainingActions();
    m_statusTimer.stop();
    m_hadRun = true; // even a run that ended before the first status refresh shows its final state
    updateRunStatus();
    m_statusRun->setText(tr("run %1 %2").arg(m_runId).arg(status));
    if (status == QLatin1String("failed"))
        reportError(tr("Training failed"), error.isEmpty() ? tr("the run failed without a reason") : error);
    if (!m_group) return;
    if (status == QLatin1String("finished") && m_group->next < m_group->seeds.size()) {
        // The next member, once the controller has let go of this one.
        QTimer::singleShot(0, this, [this] {
            if (m_group && !m_training->running()) startGroupMember();
        });
        return;
    }
    const qint64 id = m_group->id;
    const std::size_t done = m_group->next - (status == QLatin1String("finished") ? 0 : 1);
    const std::size_t total = m_group->seeds.size();
    endGroup(status == QLatin1String("finished")  ? RunStatus::Finished
             : status == QLatin1String("stopped") ? RunStatus::Stopped
                                                  : RunStatus::Failed);
    m_statusRun->setText(status == QLatin1String("finished")
                             ? tr("group %1 finished: %2 runs (Runs tab, Groups)").arg(id).arg(total)
                             : tr("group %1 %2 after %3 of %4 runs (foxhunt-cli train --resume-group %1 trains the "
                                  "rest)")
                                   .arg(id)
                                   .arg(status)
                                   .arg(done)
                                   .arg(total));
}

void MainWindow::refreshSeries()
{
    // Keep the selected series selected across the reload, and draw it once.
    qlonglong selectedId = -1;
    if (const QList<QTableWidgetItem*> sel = m_seriesTable->selectedItems(); !sel.isEmpty())
        selectedId = sel.first()->data(Qt::UserRole).toLongLong();
    const QSignalBlocker blocker(m_seriesTable);
    m_seriesTable->clearSelection();
    m_seriesTable->setRowCount(0);
    if (!m_store) {
        m_banner->setVisible(false);
        m_statusSeries->setText(tr("no store"));
        return;
    }
    const std::vector<SeriesInfo> all = m_store->series();
    m_seriesTable->setRowCount(static_cast<int>(all.size()));
    int selectRow = all.empty() ? -1 : 0;
    for (int row = 0; row < static_cast<int>(all.size()); ++row) {
        const SeriesInfo& s = all[static_cast<std::size_t>(row)];
        auto set = [&](int col, const QString& text) {
            auto* item = new QTableWidgetItem(text);
            item->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(s.id));
            m_seriesTable->setItem(row, col, item);
        };
        set(ColSymbol, QString::fromStdString(s.symbol) + (s.synthetic() ? tr(" (synthetic)") : QString()));
        set(ColKind, QString::fromStdString(toString(s.kind)));
        set(ColDataset, QString::fromStdString(s.dataset));
        set(ColInterval, intervalText(s.intervalNs));
        set(ColBars, QLocale().toString(static_cast<qulonglong>(s.barCount)));
        set(ColFrom, s.barCount ? QString::fromStdString(formatUtc(s.firstTs)) : QString());
        set(ColTo, s.barCount ? QString::fromStdString(formatUtc(s.lastTs)) : QString());
        if (s.id == selectedId) selectRow = row;
    }
    if (m_trainingTab) {
        // "Default" names the series a run would take, so its range bounds the dates too.
        std::optional<SeriesInfo> fallback;
        try {
            if (!all.empty()) fallback = chooseSeries(*m_store, std::string());
        } catch (const std::exception&) {
            // A store that cannot say: Default stays unnamed.
        }
        m_trainingTab->setSeries(all, fallback ? fallback->id : 0);
    }
    m_banner->setVisible(showingSyntheticOnly());
    m_statusSeries->setText(tr("%n series", nullptr, static_cast<int>(all.size())));
    if (selectRow >= 0) m_seriesTable->selectRow(selectRow);
    showSelectedSeries();
}

int MainWindow::seriesCount() const
{
    return m_seriesTable->rowCount();
}

bool MainWindow::showingSyntheticOnly() const
{
    if (!m_store) return false;
    const std::vector<SeriesInfo> all = m_store->series();
    return !all.empty() && std::all_of(all.begin(), all.end(), [](const SeriesInfo& s) { return s.synthetic(); });
}

void MainWindow::showSelectedSeries()
{
    const QList<QTableWidgetItem*> items = m_seriesTable->selectedItems();
    if (items.isEmpty() || !m_store) return;
    const std::int64_t id = items.first()->data(Qt::UserRole).toLongLong();
    const auto info = m_store->findSeries(std::to_string(id));
    if (!info) return;
    m_chart->setBars(m_store->loadBars(id), QStringLiteral("%1 — %2 bars%3")
                                                .arg(QString::fromStdString(info->symbol))
                                                .arg(info->barCount)
                                                .arg(info->synthetic() ? tr(" — SYNTHETIC") : QString()));
}

bool MainWindow::importFiles(const QStringList& files)
{
    if (files.isEmpty()) return false;
    if (!m_import->start(files)) {
        statusBar()->showMessage(tr("An import is already running"), 5000);
        return false;
    }
    rememberImported(files);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_importCancel->setEnabled(true);
    m_importCancel->setVisible(true);
    return true;
}

bool MainWindow::importFromCommandLine(const QStringList& files)
{
    // The per-file report is on the Data tab, whichever tab the last session ended on.
    m_tabs->setCurrentIndex(kDataTab);
    return importFiles(files);
}

void MainWindow::openImportDialog()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Import bars"), QSettings().value(QStringLiteral("import/last_folder")).toString(),
        tr("Bar files (*.dbn *.zst *.csv *.txt);;Databento DBN (*.dbn *.dbn.zst);;CSV (*.csv *.txt);;All files (*)"));
    importFiles(files);
}

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(QStringLiteral("import/recent")).toStringList();
}

void MainWindow::rememberImported(const QStringList& files)
{
    QSettings s;
    QStringList recent = recentFiles();
    for (const QString& f : files) {
        const QString path = QFileInfo(f).absoluteFilePath();
        recent.removeAll(path);
        recent.prepend(path);
    }
    while (recent.size() > kMaxRecentFiles) recent.removeLast();
    s.setValue(QStringLiteral("import/recent"), recent);
    if (!files.isEmpty()) s.setValue(QStringLiteral("import/last_folder"), QFileInfo(files.last()).absolutePath());
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = recentFiles();
    for (int i = 0; i < recent.size(); ++i) {
        const QString path = recent[i];
        QAction* a = m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                             [this, path] { importFiles({path}); });
        a->setToolTip(path);
        a->setEnabled(QFileInfo::exists(path));
    }
    if (recent.isEmpty()) m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
    m_recentMenu->addSeparator();
    m_recentMenu
        ->addAction(tr("Clear the list"), this,
                    [this] {
                        QSettings().remove(QStringLiteral("import/recent"));
                        fillRecentMenu();
                    })
        ->setEnabled(!recent.isEmpty());
}

QUrl MainWindow::manualUrl()
{
    // The installed README (the package ships it), else the one beside a build, else the web site.
    for (const QString& candidate : {QStringLiteral(FOXHUNT_DOC_DIR "/README.md"),
                                     QCoreApplication::applicationDirPath() + QStringLiteral("/../README.md"),
                                     QStringLiteral(FOXHUNT_SOURCE_DIR "/README.md")})
        if (QFileInfo::exists(candidate)) return QUrl::fromLocalFile(QFileInfo(candidate).canonicalFilePath());
    return QUrl(QStringLiteral(FOXHUNT_HOMEPAGE_URL));
}

void MainWindow::onImportFinished()
{
    m_progress->setVisible(false);
    m_importCancel->setVisible(false);
    m_lastReport = formatImportReport(m_import->outcomes());
    m_log->appendPlainText(m_lastReport);
    int failed = 0;
    for (const ImportOutcome& o : m_import->outcomes()) failed += o.ok ? 0 : 1;
    statusBar()->showMessage(failed ? tr("Import finished: %1 file(s) rejected").arg(failed) : tr("Import finished"),
                             10000);
    refreshSeries();
    // The series the batch stored (its first file's main one) is what the next run is meant for.
    for (const ImportOutcome& o : m_import->outcomes())
        if (o.ok && !o.result.seriesIds.empty()) {
            m_trainingTab->selectSeries(o.result.seriesIds.front());
            break;
        }
    if (failed && isVisible() && !qEnvironmentVariableIsSet("FOXHUNT_NO_DIALOGS"))
        QMessageBox::warning(this, tr("Import"), m_lastReport);
    Q_EMIT importReportReady(m_lastReport);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) files << url.toLocalFile();
    if (importFiles(files)) event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    // An import in flight is abandoned: its transaction rolls back, so the
    // store never keeps half a file. A run is stopped; the controller waits
    // for the worker to store what it has.
    m_import->cancel();
    m_training->stop();
    saveLayout();
    QMainWindow::closeEvent(event);
}

void MainWindow::showAbout()
{
    // Non-modal and reused, so tests (and users) can look at it beside the window.
    if (!m_about) m_about = new AboutDialog(m_databasePath, this);
    m_about->show();
    m_about->raise();
}

// The Runs tab and File -> Export report: kept apart from the rest of the window's wiring.
void MainWindow::addRunHistory()
{
    m_history = new RunHistory(m_databasePath);
    m_tabs->addTab(m_history, tr("Runs"));

    m_exportReportAction = new QAction(tr("&Export report..."), this);
    m_exportReportAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
    m_exportReportAction->setToolTip(tr("Write the selected or open run(s) as HTML, JSON or CSV"));
    connect(m_exportReportAction, &QAction::triggered, this, &MainWindow::exportReport);
    if (QMenu* file = menuBar()->actions().isEmpty() ? nullptr : menuBar()->actions().first()->menu()) {
        const QList<QAction*> items = file->actions();
        const auto separator = std::find_if(items.begin(), items.end(), [](QAction* a) { return a->isSeparator(); });
        file->insertAction(separator != items.end() ? *separator : nullptr, m_exportReportAction);
    }

    // Charts for every enabled model from the first drain on; the table follows runs starting and ending.
    connect(m_training.get(), &TrainingController::started, this, [this](qint64 runId) {
        m_dashboard->setModels(m_history->modelsOfRun(runId));
        m_history->refresh();
    });
    connect(m_training.get(), &TrainingController::finished, this, [this] {
        m_dashboard->setLive(false);
        m_dashboard->setResultDocument(m_training->lastResult().toUtf8());
        m_history->refresh();
    });
    connect(m_history, &RunHistory::resumeRequested, this, &MainWindow::resumeTraining);

    // "Run 7 moved to trash · Undo" in the status bar, whichever tab shows, until the Runs tab ends the offer
    // (used, expired, or the runs restored or deleted otherwise). A permanent widget: a passing status
    // message does not hide it.
    m_undoOffer = new QWidget;
    m_undoOffer->setObjectName(QStringLiteral("undoOffer"));
    auto* undoRow = new QHBoxLayout(m_undoOffer);
    undoRow->setContentsMargins(0, 0, 0, 0);
    m_undoText = new QLabel;
    m_undoText->setObjectName(QStringLiteral("undoText"));
    auto* undo = new QPushButton(tr("Undo"));
    undo->setObjectName(QStringLiteral("undoTrash"));
    undo->setFlat(true);
    undo->setToolTip(tr("Take the runs just deleted out of the trash again, with their checkpoints"));
    undoRow->addWidget(m_undoText);
    undoRow->addWidget(undo);
    m_undoOffer->hide();
    statusBar()->insertPermanentWidget(0, m_undoOffer);
    connect(m_history, &RunHistory::undoOffered, this, [this](const QString& text) {
        m_undoText->setText(text + QStringLiteral(" \u00b7"));
        m_undoOffer->show();
    });
    connect(m_history, &RunHistory::undoOfferEnded, m_undoOffer, &QWidget::hide);
    connect(undo, &QPushButton::clicked, this, [this] {
        if (m_history->undoTrash()) statusBar()->showMessage(m_history->statusText(), 5000);
    });
}

bool MainWindow::resumeTraining(qint64 runId)
{
    if (m_training->running()) {
        statusBar()->showMessage(tr("A run is already training; stop it before resuming another"), 5000);
        return false;
    }
    SessionConfig config = SessionConfig::defaults();
    // This machine's device, threads and workers; the run keeps its own models,
    // hyperparameters and precision (see TrainingSession::resumeRun()).
    m_settings.applyTo(config);
    config.steps = 0; // keep the stored run's step budget
    m_dashboard->clear();
    m_runId = runId;
    if (!m_training->start(config, runId)) return false;
    m_tabs->setCurrentIndex(1);
    m_statusRun->setText(tr("resuming run %1...").arg(runId));
    updateTrainingActions();
    return true;
}

void MainWindow::exportReport()
{
    // Nothing chosen on the Runs tab: the run trained last (or now) is what the user means.
    if (m_history->reportRunIds().isEmpty() && m_runId > 0) {
        m_history->refresh();
        m_history->selectRuns({m_runId});
    }
    m_history->exportReport();
}

} // namespace foxhunt
