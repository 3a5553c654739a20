// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Runs tab: every stored run in a sortable, filterable table, where runs
// are renamed, tagged and annotated. Opens one run's charts, overlays one
// metric of one model across several runs, moves runs to a trash (their
// checkpoint folders to the desktop's trash; Undo, which the main window's
// status bar offers, and Restore bring them back) or deletes them for good,
// asks for an interrupted or stopped run to be resumed, and exports run
// reports on a worker thread.

#include "engine/telemetry/metric_sample.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QPushButton;
class QSortFilterProxyModel;
class QStandardItem;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QTimer;
QT_END_NAMESPACE

namespace foxhunt {

class BarStore;
class Dashboard;
class RunCompare;
class RunStore;
class ReportView;
struct ReportDocument;

/// The run-history tab over the store at a database path (its own read connection).
class RunHistory : public QWidget {
    Q_OBJECT
public:
    /// Whether deleteRuns() asks the user first.
    enum class Confirm { Ask, Skip };
    /// Table columns, in order.
    /// Table columns, in order: these, then one per model and measure (resultColumn()).
    enum Column {
        ColId,
        ColName,
        ColTags,
        ColCreated,
        ColStatus,
        ColModels,
        ColSeries,
        ColSteps,
        ColDuration,
        ColPrecision,
        ColDevice,
        ColProcesses,
        ColGroup, ///< "3 seeds · seed 2": the run group it is a member of (train --seeds, --folds, --sweep)
        ColCount
    };
    /// The models whose results get columns, in column order.
    static const QStringList& resultModels();
    /// The column of a model's measure (foxhunt::measures()' key), or -1 for none.
    int resultColumn(const QString& model, const QString& measureKey) const;
    /// Every column's title, in model order.
    QStringList columnTitles() const;
    /// Shows or hides a column (the header's context menu does the same; kept in the settings).
    void setColumnShown(int column, bool shown);
    bool columnShown(int column) const;
    /// The text of a run's cell, "" when it is not listed.
    QString cellText(qint64 runId, int column) const;

    explicit RunHistory(const QString& databasePath, QWidget* parent = nullptr);
    ~RunHistory() override;

    /// Reloads the table from the store, keeping the selection.
    void refresh();
    /// Rows shown (after the filter).
    int rowCount() const;
    /// Case-insensitive filter over the shown columns (what the filter box sets): name, tags, status...
    void setFilterText(const QString& text);
    /// Run ids of the rows shown, in view order.
    QList<qint64> shownRunIds() const;
    /// Selected run ids, in view order.
    QList<qint64> selectedRunIds() const;
    /// Selects these runs (rows hidden by the filter are skipped).
    void selectRuns(const QList<qint64>& ids);

    /// Draws a stored run's charts in the dashboard below the table; false if unknown. Its results
    /// (the report's blocks: evaluations against the baselines, AMP and INT8, latency, memory) are
    /// read into the Results tab on a worker thread once that tab is shown (resultsShown() follows).
    bool openRun(qint64 runId);
    /// Brings the Results tab to the front (reading the open run's results if not read yet).
    void showResults();
    /// The Results tab's view of the open run.
    ReportView* resultsView() const { return m_results; }
    /// The run shown below the table (0 = none).
    qint64 openRunId() const { return m_openRunId; }
    /// The dashboard that shows opened runs.
    Dashboard* runDashboard() const { return m_dashboard; }
    /// The overlay's horizontal axis: optimizer/environment step; seconds since each run's first
    /// sample of the metric (TensorBoard's "relative"), which compares how fast runs get there; or
    /// wall time (TensorBoard's "wall"), which shows when runs ran and whether they overlapped.
    enum class OverlayAxis { Step, RelativeSeconds, WallTime };
    /// Overlays `metric` of `model` of each run in one chart (the axis box follows `axis`); returns
    /// the number of runs drawn. With overlaySmoothing() above 0 each run has two series, its raw
    /// line (faded, out of the legend) and then its smoothed line; else one.
    int overlay(const QList<qint64>& runIds, const QString& model, const QString& metric,
                OverlayAxis axis = OverlayAxis::Step);
    /// The overlay chart.
    QChart* overlayChart() const;
    /// The overlay's smoothing weight in [0, 0.99] (the "smoothing" box; 0 = off); redraws the overlay shown.
    void setOverlaySmoothing(double weight);
    double overlaySmoothing() const;
    /// One sample of an overlaid line: where it is drawn, its value and its smoothed value.
    struct OverlayPoint {
        double x = 0;
        double raw = 0;
        double smoothed = 0;
    };
    /// A run's samples as the overlay draws them: x by `axis` (the step; seconds since the first
    /// sample; milliseconds since the epoch, a QDateTimeAxis's unit), never back in time on the two
    /// clocks, and the debiased EMA of the values with weight `smoothing` (DebiasedEma, as the
    /// dashboard smooths). Non-finite values are skipped.
    static std::vector<OverlayPoint> overlayPoints(const MetricBatch& samples, OverlayAxis axis, double smoothing);
    /// Shows the compare view of these runs (two or more) against the first; returns how many
    /// settings differ, or -1 when fewer than two runs could be read.
    int compare(const QList<qint64>& runIds);
    /// The compare view below the table.
    RunCompare* compareView() const { return m_compare; }
    /// The run groups the runs belong to (each once, in the runs' order; runs outside a group add none).
    QList<qint64> groupsOf(const QList<qint64>& runIds) const;
    /// Shows the report of these run groups in the Groups tab (one group's figures across its members,
    /// or several groups compared), read on a worker thread; groupsShown() follows. A request made
    /// while one is read waits for it; the last one asked for is shown. False for no groups.
    bool showGroups(const QList<qint64>& groupIds);
    /// The Groups tab's view.
    ReportView* groupsView() const { return m_groups; }
    /// Deletes runs for good with their metrics and checkpoint files; false if refused or cancelled.
    bool deleteRuns(const QList<qint64>& runIds, Confirm confirm = Confirm::Ask);
    /// What Delete (button or key) does outside the trash: hides the runs from the table (kept in the
    /// store, RunStore::trashRun) and moves each one's checkpoint folder to the desktop trash
    /// (QFile::moveToTrash), then offers Undo (undoOffered()) for undoOfferMs(). False if any was refused.
    bool trashRuns(const QList<qint64>& runIds);
    /// Takes runs out of the trash, their checkpoint folders back from the desktop trash. False if any failed.
    bool restoreRuns(const QList<qint64>& runIds);
    /// Restores the runs the last trashRuns() moved (what the Undo button does); false when there are none.
    bool undoTrash();
    /// The runs Undo would restore (empty once Undo is used, expired or the runs are restored otherwise).
    QList<qint64> undoableRunIds() const { return m_undoable; }
    /// How long Undo is offered after trashRuns() (15 s).
    void setUndoOfferMs(int ms);
    int undoOfferMs() const;
    /// Lists the runs in the trash instead of the others (the "Show trash" box); Delete then deletes for good.
    void setShowTrash(bool shown);
    bool showingTrash() const;
    /// The status row's text (what happened last).
    QString statusText() const;
    /// Emits resumeRequested() for a stopped, failed or interrupted run; false otherwise.
    bool requestResume(qint64 runId);
    /// Renames a run (RunStore::checkedName's rules; what editing its Name cell does); false, with
    /// the reason in the status line, when refused.
    bool renameRun(qint64 runId, const QString& name);
    /// Makes `tags` the run's whole set of tags; false, with the reason, when one is refused.
    bool setRunTags(qint64 runId, const QStringList& tags);
    /// Replaces a run's notes (shown as its name's tooltip); false when refused.
    bool setRunNotes(qint64 runId, const QString& notes);
    /// Asks for a run's tags (comma-separated) and stores them.
    void editTags(qint64 runId);
    /// Asks for a run's notes and stores them.
    void editNotes(qint64 runId);

    /// Models a stored run was configured with.
    QStringList modelsOfRun(qint64 runId) const;

    /// The runs a report covers: the selection, else the open run.
    QList<qint64> reportRunIds() const;
    /// Asks for a file (.html, .json, .csv) and exports the report of reportRunIds().
    void exportReport();
    /// Writes the report of `runIds` to `path` on a worker thread; exportFinished() follows.
    /// With openResult the file is opened with the desktop's viewer. False while one is running.
    bool exportReportTo(const QList<qint64>& runIds, const QString& path, bool openResult);
    /// Whether an export is running.
    bool exporting() const { return m_exporting; }

Q_SIGNALS:
    /// The user asked to resume this run (the main window starts a session with resumeRun(id)).
    void resumeRequested(qint64 runId);
    /// An export ended; error is empty on success.
    void exportFinished(const QString& path, const QString& error);
    /// The Results tab shows run `runId`'s results (or why they could not be read).
    void resultsShown(qint64 runId);
    /// The Groups tab shows these groups' report (or why it could not be read).
    void groupsShown(const QList<qint64>& groupIds);
    /// Runs were deleted for good, or moved to the trash (they are gone from the table either way).
    void runsDeleted(const QList<qint64>& runIds);
    /// Runs were moved to the trash and undoTrash() would restore them until undoOfferEnded(); `text`
    /// says what happened ("Run 7 moved to trash"). The main window shows it with an Undo button.
    void undoOffered(const QString& text);
    /// Undo is offered no longer: it was used, it expired, or its runs were restored or deleted otherwise.
    void undoOfferEnded();

private:
    void buildUi();
    void updateButtons();
    /// Reads a run's report on the worker thread; a request while one is read waits for it.
    void loadResults(qint64 runId);
    /// Whether the Results tab is the one in front.
    bool resultsInFront() const;
    /// Forgets the open run (it was deleted or moved to the trash): charts and results go.
    void closeOpenRun();
    void resultsRead(qint64 runId, const std::shared_ptr<const ReportDocument>& document, const QString& error);
    void groupsRead(const QList<qint64>& groupIds, const std::shared_ptr<const ReportDocument>& document,
                    const QString& error);
    void showError(const QString& title, const QString& text);
    void overlaySelected();
    void chooseColumns(const QPoint& at);
    void showRowMenu(const QPoint& at);
    void nameEdited(QStandardItem* item);
    QStandardItem* itemOf(qint64 runId, int column) const;
    void saveHiddenColumns() const;
    std::optional<qint64> currentRunId() const;
    /// The Delete button and key: to the trash, or (showing the trash) for good after asking.
    void deleteSelected();
    /// Takes runs off the Undo offer; the offer ends (undoOfferEnded()) when none is left.
    void dropUndoable(const QList<qint64>& runIds);
    /// The run's own checkpoint folder beside the database ("" when it has no UUID).
    QString runCheckpointFolder(qint64 runId) const;

    QString m_databasePath;
    std::unique_ptr<BarStore> m_store;
    std::unique_ptr<RunStore> m_runs;
    QStandardItemModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_table = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_overlayModel = nullptr;
    QComboBox* m_overlayMetric = nullptr;
    QComboBox* m_overlayAxis = nullptr;
    QDoubleSpinBox* m_overlaySmoothing = nullptr;
    /// What the overlay shows, drawn again when the axis or the smoothing changes (no runs: nothing shown).
    struct {
        QList<qint64> runIds;
        QString model, metric;
        OverlayAxis axis = OverlayAxis::Step;
    } m_lastOverlay;
    QPushButton* m_openButton = nullptr;
    QPushButton* m_overlayButton = nullptr;
    QPushButton* m_compareButton = nullptr;
    RunCompare* m_compare = nullptr;
    QStringList m_columnTitles;
    QPushButton* m_deleteButton = nullptr;
    QPushButton* m_resumeButton = nullptr;
    QPushButton* m_exportButton = nullptr;
    QPushButton* m_restoreButton = nullptr;
    QCheckBox* m_showTrash = nullptr;
    QLabel* m_status = nullptr;
    QTimer* m_undoTimer = nullptr;
    QList<qint64> m_undoable; ///< the runs the last trashRuns() moved, while Undo is offered
    Dashboard* m_dashboard = nullptr;
    QChartView* m_overlayView = nullptr;
    QTabWidget* m_bottomTabs = nullptr;
    qint64 m_openRunId = 0;
    bool m_exporting = false;
    bool m_filling = false; ///< refresh() or a stored edit is writing cells: not the user's edit
    QProgressDialog* m_progress = nullptr;
    std::shared_ptr<std::atomic<bool>> m_exportCancel; ///< set by Cancel or by closing the window
    std::jthread m_exportWorker;
    ReportView* m_results = nullptr;
    std::jthread m_resultsWorker;
    bool m_resultsBusy = false;
    qint64 m_resultsRunId = 0;   ///< the run the Results tab is for
    qint64 m_resultsPending = 0; ///< asked for while another was read
    QPushButton* m_groupsButton = nullptr;
    ReportView* m_groups = nullptr;
    std::jthread m_groupsWorker;
    bool m_groupsBusy = false;
    QList<qint64> m_groupsShown;   ///< the groups the Groups tab is for
    QList<qint64> m_groupsPending; ///< asked for while others were read
};

} // namespace foxhunt
