// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Foxhunt main window: the frame the dashboard lives in. Lists the stored
// series, previews one, imports files (menu, dialog, drag and drop) with progress.

#include "ui/app_settings.h"
#include "ui/handler_timing.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QUrl>

#include <memory>
#include <optional>
#include <vector>

QT_BEGIN_NAMESPACE
class QAction;
class QCheckBox;
class QComboBox;
class QSpinBox;
class QTabWidget;
class QLabel;
class QMenu;
class QDoubleSpinBox;
class QDateEdit;
class QToolBar;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableWidget;
class QWidget;
QT_END_NAMESPACE

namespace foxhunt {

class BarStore;
class BarsChartView;
class Dashboard;
class ImportController;
class AboutDialog;
class RunHistory;
class SettingsDialog;
class TrainingController;
class TrainingTab;

/// The main window. Owns a read connection to the store; imports write through
/// ImportController's worker connection.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Opens (creating if needed) the store at databasePath; on an empty store the
    /// synthetic default is generated. Errors opening the store are shown, not thrown.
    explicit MainWindow(const QString& databasePath, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Imports the files on the worker thread (what the dialog and drops call). When the batch is
    /// done, the Training tab's Series box selects the series it stored.
    bool importFiles(const QStringList& files);
    /// `foxhunt FILE...`: shows the Data tab (with the per-file import report) and imports the files.
    bool importFromCommandLine(const QStringList& files);
    /// The tabs, in order.
    enum Tab { kDataTab = 0, kTrainingTab = 1, kRunsTab = 2 };
    /// Reloads the series list from the store.
    void refreshSeries();
    /// Number of series listed.
    int seriesCount() const;
    /// The text of the last import report.
    QString lastImportReport() const { return m_lastReport; }
    /// The import worker (for tests: wait on its finished() signal).
    ImportController* importController() const { return m_import.get(); }
    /// The preview chart.
    BarsChartView* chartView() const { return m_chart; }
    /// Whether only synthetic data is stored (the banner is shown).
    bool showingSyntheticOnly() const;

    /// Training: which models the next run trains ("dqn", "ppo", "mamba2", "tft").
    void setTrainingModels(const QStringList& models);
    /// Training: steps per model of the next run.
    void setTrainingSteps(int steps);
    /// Starts a run with the configuration on the Training tab; false if one is running. With Seeds
    /// above 1 it starts a run group instead: the group is stored, then its members (one per seed)
    /// train one after another; a member that stops or fails ends the group there (its unfinished
    /// members resume with foxhunt-cli train --resume-group).
    bool startTraining();
    /// The run group being trained (0: none).
    qint64 trainingGroupId() const { return m_group ? m_group->id : 0; }
    /// The configuration the Training tab and Settings give the next run (what startTraining() starts).
    SessionConfig nextRunConfig() const;
    /// Help -> About Foxhunt: version, licence and third-party notices (non-modal, reused).
    void showAbout();
    AboutDialog* aboutDialog() const { return m_about; }
    /// Files imported before, newest first (File -> Open Recent; at most kMaxRecentFiles).
    QStringList recentFiles() const;
    static constexpr int kMaxRecentFiles = 10;
    /// What Help -> Foxhunt manual (F1) opens: the installed README, else the source tree's, else the web site.
    static QUrl manualUrl();
    /// The model preset chosen in the Training panel (Default, Small and fast, Seed scale).
    ModelPreset selectedPreset() const;
    /// SessionConfig::defaults() with the chosen preset's sizes.
    SessionConfig presetConfig() const;
    /// Run configuration controls, for tests: "whole series" box, from/to dates, preset,
    /// agent and forecaster learning rates, forecaster window length.
    QCheckBox* wholeSeriesBox() const;
    QDateEdit* fromDateEdit() const;
    QDateEdit* toDateEdit() const;
    QComboBox* presetBox() const;
    QDoubleSpinBox* agentLearningRateBox() const;
    QDoubleSpinBox* forecasterLearningRateBox() const;
    QSpinBox* pastLengthBox() const;
    /// The Training tab (the run configuration and the dashboard).
    TrainingTab* trainingTab() const { return m_trainingTab; }
    TrainingController* trainingController() const { return m_training.get(); }
    Dashboard* dashboard() const { return m_dashboard; }
    /// The Runs tab.
    RunHistory* runHistory() const { return m_history; }
    /// Continues stored run `runId` (stopped, failed or interrupted) with its stored config; false if one is running.
    bool resumeTraining(qint64 runId);

    /// Settings: what the next run uses (and the app's palette and refresh rate).
    const AppSettings& settings() const { return m_settings; }
    /// Saves `settings`, applies the palette and chart refresh rate now; the rest applies to the next run.
    void applySettings(const AppSettings& settings);
    /// Opens the Settings dialog (window-modal, returns at once); accepting it applies its settings.
    SettingsDialog* openSettings();
    /// Replay pace, applied live to a running run and to the next one: 0 = max, N = N x real time.
    void setSpeed(double speed);
    /// The pace chosen in the toolbar.
    double speed() const;
    /// What the running (or last) run was started with, as shown in the status bar.
    QString runSummary() const;
    /// The last error shown to the user (also when dialogs are suppressed for tests).
    QString lastErrorMessage() const { return m_lastError; }
    /// Time the UI thread spent in the window's own handlers ("charts", "status").
    const HandlerTimings& uiTimings() const { return m_uiTimings; }
    /// Writes window geometry, toolbar/dock state and splitter positions to QSettings.
    void saveLayout() const;
    /// Restores what saveLayout() wrote; false when nothing was saved.
    bool restoreLayout();

Q_SIGNALS:
    /// Emitted after an import batch finished and the list was refreshed.
    void importReportReady(const QString& report);
    /// A run group started from the Training tab ended: "finished", "stopped" or "failed".
    void trainingGroupEnded(qint64 groupId, const QString& status);
    /// Emitted when a problem was reported to the user (dialog or, with FOXHUNT_NO_DIALOGS, the log only).
    void errorReported(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void buildCentral();
    void openImportDialog();
    void showSelectedSeries();
    void rememberImported(const QStringList& files);
    void fillRecentMenu();
    void onImportFinished();
    void updateTrainingActions();
    void onTrainingFinished(const QString& status, const QString& error);
    /// Starts `config` as the running session (the dashboard, status and actions follow it).
    bool launchTraining(const SessionConfig& config);
    /// Starts the group's next member; false (and the group ends failed) when it cannot.
    bool startGroupMember();
    /// Stores the group's final status and forgets it.
    void endGroup(RunStatus status);
    void addRunHistory();
    void exportReport();

    QString m_databasePath;
    std::unique_ptr<BarStore> m_store;
    std::unique_ptr<ImportController> m_import;
    QTableWidget* m_seriesTable = nullptr;
    BarsChartView* m_chart = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QWidget* m_banner = nullptr;
    QLabel* m_bannerText = nullptr;
    QProgressBar* m_progress = nullptr;    ///< the import's progress, one figure over all stages
    QPushButton* m_importCancel = nullptr; ///< abandons the import in flight (nothing of its file is stored)
    QLabel* m_statusDb = nullptr;
    QLabel* m_statusSeries = nullptr;
    QString m_lastReport;

    std::unique_ptr<TrainingController> m_training;
    QTabWidget* m_tabs = nullptr;
    TrainingTab* m_trainingTab = nullptr;
    Dashboard* m_dashboard = nullptr; ///< the Training tab's
    QAction* m_startAction = nullptr;
    QAction* m_pauseAction = nullptr;
    QAction* m_stepAction = nullptr;
    QAction* m_stopAction = nullptr;
    QLabel* m_statusRun = nullptr;
    qint64 m_runId = 0;
    /// A run group started from the Training tab: its members train one after another.
    struct TrainingGroup {
        qint64 id = 0;
        std::vector<std::int64_t> seeds;
        std::size_t next = 0; ///< index of the member to start next
        SessionConfig config;
    };
    std::optional<TrainingGroup> m_group;
    RunHistory* m_history = nullptr;
    QWidget* m_undoOffer = nullptr; ///< the status bar's "Run N moved to trash · Undo", while the Runs tab offers it
    QLabel* m_undoText = nullptr;
    AboutDialog* m_about = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_exportReportAction = nullptr;

    // Settings, speed, run status, palette and layout (main_window_settings.cpp).
    QAction* createSettingsAction();
    void buildSpeedControl(QToolBar* bar);
    void buildRunStatus();
    void onRunSamples(const MetricBatch& batch);
    void updateRunStatus();
    void updateNextRunSummary();
    void reportError(const QString& title, const QString& message);
    QList<QSplitter*> layoutSplitters() const;

    AppSettings m_settings;
    QAction* m_settingsAction = nullptr;
    QComboBox* m_speed = nullptr;
    QLabel* m_statusRate = nullptr;
    QProgressBar* m_runProgress = nullptr; ///< bars replayed of the run's total
    QLabel* m_statusEta = nullptr;         ///< time left at the current bars/s
    QLabel* m_statusStep = nullptr;
    QLabel* m_statusElapsed = nullptr;
    QLabel* m_statusDevice = nullptr;
    QTimer m_statusTimer;
    QElapsedTimer m_rateClock;
    long long m_rateTick = 0;
    double m_barsPerSecond = 0.0;
    int m_themedCharts = 0;
    bool m_hadRun = false;
    HandlerTimings m_uiTimings;
    QString m_lastError;
};

} // namespace foxhunt
