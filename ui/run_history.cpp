// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/run_history.h"

#include "ui/chart_axes.h"
#include "ui/dashboard.h"
#include "ui/run_compare.h"
#include "ui/series_label.h"

#include "ui/report_export.h"
#include "ui/report_view.h"

#include "engine/report/group_report.h"
#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"
#include "engine/report/run_summary.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/store/run_trash.h"
#include "engine/telemetry/axis_scale.h"
#include "engine/telemetry/debiased_ema.h"
#include "engine/telemetry/metric_registry.h"

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QScopedValueRollback>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace foxhunt {

namespace {

constexpr int kSortRole = Qt::UserRole;
constexpr int kIdRole = Qt::UserRole + 1;
constexpr int kGroupRole = Qt::UserRole + 2; ///< the Group cell's group id (0: none)

bool dialogsAllowed()
{
    return !qEnvironmentVariableIsSet("FOXHUNT_NO_DIALOGS");
}

QString durationText(std::int64_t ns)
{
    if (ns <= 0) return {};
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 1);
    const qint64 total = static_cast<qint64>(std::llround(s));
    const qint64 h = total / 3600, m = (total % 3600) / 60, sec = total % 60;
    if (h > 0) return QStringLiteral("%1 h %2 min").arg(h).arg(m, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 min %2 s").arg(m).arg(sec, 2, 10, QLatin1Char('0'));
}

QJsonObject configOf(const RunInfo& run)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(run.configJson)).object();
}

QStringList modelsIn(const QJsonObject& config)
{
    QStringList models;
    for (const QJsonValue& m : config.value(QStringLiteral("models")).toArray()) models << m.toString();
    return models;
}

/// Metric names offered for the overlay: every model metric of the registry
/// (engine/telemetry/metric_registry.h), the charted ones first. A per-rank one is
/// offered for rank 0; other ranks' can be typed in (throughput_rank1, ...).
const QStringList& overlayMetrics()
{
    static const QStringList names = [] {
        QStringList charted, rest;
        for (const metrics::Metric& m : metrics::all()) {
            if (m.family == metrics::Family::Session) continue; // not a model's
            QString name = QString::fromUtf8(m.name.data(), static_cast<qsizetype>(m.name.size()));
            if (m.perRank) name += QLatin1Char('0');
            (m.chart.empty() ? rest : charted) << name;
        }
        return charted + rest;
    }();
    return names;
}

/// The measures a model has (agents: Sharpe and P&L; forecasters: quantile losses; both the rest).
std::vector<const Measure*> measuresOf(const QString& model)
{
    const bool agent = model == QLatin1String("dqn") || model == QLatin1String("ppo");
    std::vector<const Measure*> out;
    for (const Measure& m : measures())
        if (agent ? m.agents : m.forecasters) out.push_back(&m);
    return out;
}

QString fromStd(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// A member's place in its group: "3 seeds · seed 2", "4 folds · seed 1, fold 0", "5 sweep · trial 3".
QString groupCellText(const RunInfo& run, const RunGroupInfo* group)
{
    const QString id = QString::number(run.groupId);
    if (!group) return id + QStringLiteral(" · ") + QString::number(run.groupMember);
    switch (group->kind) {
    case GroupKind::Seeds: return QObject::tr("%1 seeds · seed %2").arg(id).arg(run.groupMember);
    case GroupKind::Sweep: return QObject::tr("%1 sweep · trial %2").arg(id).arg(run.groupMember);
    case GroupKind::Folds: {
        const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(group->configJson)).object();
        const QJsonArray members =
            config.value(QStringLiteral("walk_forward")).toObject().value(QStringLiteral("members")).toArray();
        if (run.groupMember >= 0 && run.groupMember < members.size()) {
            const QJsonObject m = members.at(static_cast<qsizetype>(run.groupMember)).toObject();
            return QObject::tr("%1 folds · seed %2, fold %3")
                .arg(id)
                .arg(m.value(QStringLiteral("seed")).toInteger())
                .arg(m.value(QStringLiteral("fold")).toInteger());
        }
        return QObject::tr("%1 folds · member %2").arg(id).arg(run.groupMember);
    }
    }
    return id;
}

const char* kHiddenColumnsKey = "runs/hiddenColumns";

/// Keeps the rows with the filter text, in any case, in a cell of a column the user can see.
class ShownColumnsFilter : public QSortFilterProxyModel {
public:
    ShownColumnsFilter(std::function<bool(int column)> shown, QObject* parent)
        : QSortFilterProxyModel(parent), m_shown(std::move(shown))
    {
    }
    void setText(const QString& text)
    {
        m_text = text;
        invalidateFilter();
    }
    /// Call when a column is shown or hidden.
    void columnsChanged() { invalidateFilter(); }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override
    {
        if (m_text.isEmpty()) return true;
        for (int c = 0; c < sourceModel()->columnCount(parent); ++c)
            if (m_shown(c) &&
                sourceModel()->index(row, c, parent).data().toString().contains(m_text, Qt::CaseInsensitive))
                return true;
        return false;
    }

private:
    std::function<bool(int)> m_shown;
    QString m_text;
};
/// Alpha of an overlay's raw lines while smoothing is on (the dashboard's).
constexpr int kOverlayFadedAlpha = 70;
/// How long Undo is offered after runs were moved to the trash.
constexpr int kUndoMs = 15000;

} // namespace

RunHistory::RunHistory(const QString& databasePath, QWidget* parent) : QWidget(parent), m_databasePath(databasePath)
{
    buildUi();
    try {
        m_store = std::make_unique<BarStore>(databasePath.toStdString());
        m_runs = std::make_unique<RunStore>(*m_store);
    } catch (const std::exception& e) {
        m_status->setText(tr("Cannot open the run store: %1").arg(QString::fromStdString(e.what())));
    }
    if (m_runs) {
        try {
            // Runs whose process died show as interrupted (and resumable) without waiting for the next session.
            m_runs->markInterruptedRuns();
        } catch (const std::exception& e) {
            // A full disk: the runs are still listed, as they stand.
            m_status->setText(
                tr("Runs whose process ended still show as running: %1").arg(QString::fromStdString(e.what())));
        }
    }
    refresh();
}

RunHistory::~RunHistory()
{
    // A report still being written is cancelled (no partial file is left) and waited for.
    if (m_exportCancel) m_exportCancel->store(true);
    if (m_exportWorker.joinable()) m_exportWorker.join();
    if (m_resultsWorker.joinable()) m_resultsWorker.join();
    if (m_groupsWorker.joinable()) m_groupsWorker.join();
}

void RunHistory::buildUi()
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_filter = new QLineEdit;
    m_filter->setObjectName(QStringLiteral("runFilter"));
    m_filter->setPlaceholderText(tr("Filter runs (name, tag, status, model, series...)"));
    m_filter->setClearButtonEnabled(true);
    bar->addWidget(m_filter, 1);
    auto* refreshButton = new QPushButton(tr("Refresh"));
    m_openButton = new QPushButton(tr("Open"));
    m_openButton->setToolTip(tr("Show the selected run's charts"));
    m_overlayModel = new QComboBox;
    m_overlayModel->addItems(
        {QStringLiteral("dqn"), QStringLiteral("ppo"), QStringLiteral("mamba2"), QStringLiteral("tft")});
    m_overlayMetric = new QComboBox;
    m_overlayMetric->setEditable(true);
    m_overlayMetric->addItems(overlayMetrics());
    m_overlayAxis = new QComboBox;
    m_overlayAxis->setObjectName(QStringLiteral("overlayAxis"));
    m_overlayAxis->addItem(tr("by step"), static_cast<int>(OverlayAxis::Step));
    m_overlayAxis->addItem(tr("by time"), static_cast<int>(OverlayAxis::RelativeSeconds));
    m_overlayAxis->addItem(tr("by wall time"), static_cast<int>(OverlayAxis::WallTime));
    m_overlayAxis->setToolTip(tr("Horizontal axis of the overlay: steps; seconds since each run's first sample "
                                 "(which run gets there sooner, e.g. with mixed precision); or the clock, "
                                 "which shows when runs ran and whether they overlapped"));
    m_overlaySmoothing = new QDoubleSpinBox;
    m_overlaySmoothing->setObjectName(QStringLiteral("overlaySmoothing"));
    m_overlaySmoothing->setRange(0.0, 0.99);
    m_overlaySmoothing->setSingleStep(0.05);
    m_overlaySmoothing->setDecimals(2);
    m_overlaySmoothing->setPrefix(tr("smoothing "));
    m_overlaySmoothing->setToolTip(tr("Debiased exponential moving average of each run's line, as on the "
                                      "dashboard (0 = off); the raw line stays, faint, behind it"));
    m_overlayButton = new QPushButton(tr("Overlay"));
    m_overlayButton->setToolTip(tr("Draw the chosen metric of the chosen model for every selected run in one chart"));
    m_compareButton = new QPushButton(tr("Compare"));
    m_compareButton->setObjectName(QStringLiteral("compareButton"));
    m_compareButton->setToolTip(
        tr("The selected runs side by side: the settings that differ and every model's results, "
           "with the change against a baseline run"));
    m_groupsButton = new QPushButton(tr("Groups"));
    m_groupsButton->setObjectName(QStringLiteral("groupsButton"));
    m_groupsButton->setToolTip(
        tr("The run groups of the selected runs (train --seeds, --folds, --sweep): each model's figures across "
           "the members with 95 % intervals beside the baselines, the deflated Sharpe of the best member, the "
           "folds; several groups are compared"));
    m_deleteButton = new QPushButton(tr("Delete"));
    m_deleteButton->setObjectName(QStringLiteral("deleteRuns"));
    m_restoreButton = new QPushButton(tr("Restore"));
    m_restoreButton->setObjectName(QStringLiteral("restoreRuns"));
    m_restoreButton->setToolTip(tr("Take the selected runs out of the trash, with their checkpoints"));
    m_restoreButton->hide();
    m_showTrash = new QCheckBox(tr("Show trash"));
    m_showTrash->setObjectName(QStringLiteral("showTrash"));
    m_showTrash->setToolTip(tr("List the runs in the trash, to restore them or delete them for good"));
    m_resumeButton = new QPushButton(tr("Resume"));
    m_resumeButton->setToolTip(tr("Continue a stopped, failed or interrupted run from its last checkpoints"));
    m_exportButton = new QPushButton(tr("Export report..."));
    for (QWidget* w :
         std::initializer_list<QWidget*>{refreshButton, m_openButton, m_overlayModel, m_overlayMetric, m_overlayAxis,
                                         m_overlaySmoothing, m_overlayButton, m_compareButton, m_groupsButton,
                                         m_deleteButton, m_restoreButton, m_resumeButton, m_exportButton, m_showTrash})
        bar->addWidget(w);
    layout->addLayout(bar);

    m_columnTitles = {tr("Run"),    tr("Name"),      tr("Tags"),  tr("Created (UTC)"), tr("Status"),
                      tr("Models"), tr("Series"),    tr("Steps"), tr("Duration"),      tr("Precision"),
                      tr("Device"), tr("Processes"), tr("Group")};
    std::vector<bool> shownByDefault(ColCount, true);
    for (const QString& model : resultModels())
        for (const Measure* m : measuresOf(model)) {
            m_columnTitles << model + QLatin1Char(' ') + fromStd(m->label);
            shownByDefault.push_back(m->shownByDefault);
        }
    m_model = new QStandardItemModel(0, static_cast<int>(m_columnTitles.size()), this);
    m_model->setHorizontalHeaderLabels(m_columnTitles);
    m_proxy = new ShownColumnsFilter([this](int column) { return !m_table || !m_table->isColumnHidden(column); }, this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(kSortRole);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("runTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(ColId, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Only the Name cell is editable (F2, or Rename... in the row's menu); a double click opens the run.
    m_table->setEditTriggers(QAbstractItemView::EditKeyPressed);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QTableView::customContextMenuRequested, this, &RunHistory::showRowMenu);
    connect(m_model, &QStandardItemModel::itemChanged, this, &RunHistory::nameEdited);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    // Which columns show is the user's: right-click the header to choose; kept across restarts.
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->horizontalHeader()->setToolTip(tr("Right-click to choose the columns"));
    connect(m_table->horizontalHeader(), &QHeaderView::customContextMenuRequested, this, &RunHistory::chooseColumns);
    {
        const QSettings settings;
        const QStringList hidden = settings.value(QLatin1String(kHiddenColumnsKey)).toStringList();
        const bool stored = settings.contains(QLatin1String(kHiddenColumnsKey));
        for (int c = 0; c < static_cast<int>(m_columnTitles.size()); ++c)
            m_table->setColumnHidden(c, stored ? hidden.contains(m_columnTitles[c])
                                               : !shownByDefault[static_cast<std::size_t>(c)]);
    }

    auto* bottom = new QTabWidget;
    m_dashboard = new Dashboard;
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_dashboard);
    bottom->addTab(scroll, tr("Run charts"));
    auto* overlayChart = new QChart;
    overlayChart->setTitle(tr("Select runs, a model and a metric, then Overlay"));
    m_overlayView = new QChartView(overlayChart);
    bottom->addTab(m_overlayView, tr("Overlay"));
    m_compare = new RunCompare;
    bottom->addTab(m_compare, tr("Compare"));
    m_results = new ReportView;
    m_results->setObjectName(QStringLiteral("runResults"));
    auto* resultsScroll = new QScrollArea;
    resultsScroll->setWidgetResizable(true);
    resultsScroll->setWidget(m_results);
    bottom->addTab(resultsScroll, tr("Results"));
    m_groups = new ReportView;
    m_groups->setObjectName(QStringLiteral("groupResults"));
    m_groups->setMessage(tr("Select runs of a group (train --seeds, --folds or --sweep), then Groups"));
    auto* groupsScroll = new QScrollArea;
    groupsScroll->setWidgetResizable(true);
    groupsScroll->setWidget(m_groups);
    bottom->addTab(groupsScroll, tr("Groups"));
    // The report reads every metric of the run: only when someone looks at it.
    connect(bottom, &QTabWidget::currentChanged, this, [this] {
        if (resultsInFront() && m_openRunId != 0 && m_resultsRunId != m_openRunId) loadResults(m_openRunId);
    });

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(bottom);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("runHistoryStatus"));
    m_undoTimer = new QTimer(this);
    m_undoTimer->setSingleShot(true);
    m_undoTimer->setInterval(kUndoMs);
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(m_status);
    statusRow->addStretch(1);
    layout->addLayout(statusRow);
    connect(m_undoTimer, &QTimer::timeout, this, [this] {
        const QList<qint64> all = m_undoable;
        dropUndoable(all);
    });
    connect(m_showTrash, &QCheckBox::toggled, this, &RunHistory::setShowTrash);
    connect(m_restoreButton, &QPushButton::clicked, this, [this] { restoreRuns(selectedRunIds()); });

    connect(m_filter, &QLineEdit::textChanged, this, &RunHistory::setFilterText);
    connect(refreshButton, &QPushButton::clicked, this, &RunHistory::refresh);
    connect(m_openButton, &QPushButton::clicked, this, [this] {
        if (const auto id = currentRunId()) openRun(*id);
    });
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        openRun(m_proxy->index(index.row(), ColId).data(kIdRole).toLongLong());
    });
    connect(m_overlayButton, &QPushButton::clicked, this, &RunHistory::overlaySelected);
    // The axis and the smoothing apply to the overlay shown at once, as the dashboard's smoothing does.
    connect(m_overlayAxis, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_lastOverlay.runIds.isEmpty())
            overlay(m_lastOverlay.runIds, m_lastOverlay.model, m_lastOverlay.metric,
                    static_cast<OverlayAxis>(m_overlayAxis->currentData().toInt()));
    });
    connect(m_overlaySmoothing, &QDoubleSpinBox::valueChanged, this, [this] {
        if (!m_lastOverlay.runIds.isEmpty())
            overlay(m_lastOverlay.runIds, m_lastOverlay.model, m_lastOverlay.metric, m_lastOverlay.axis);
    });
    connect(m_compareButton, &QPushButton::clicked, this, [this] { compare(selectedRunIds()); });
    connect(m_groupsButton, &QPushButton::clicked, this, [this] { showGroups(groupsOf(selectedRunIds())); });
    connect(m_deleteButton, &QPushButton::clicked, this, &RunHistory::deleteSelected);
    // The Delete key on the table does what the button does.
    auto* deleteKey = new QShortcut(QKeySequence::Delete, m_table, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(deleteKey, &QShortcut::activated, this, &RunHistory::deleteSelected);
    m_deleteButton->setToolTip(
        tr("Move the selected runs to the trash, their checkpoints to the desktop's trash (Delete)"));
    connect(m_resumeButton, &QPushButton::clicked, this, [this] {
        if (const auto id = currentRunId()) requestResume(*id);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &RunHistory::exportReport);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunHistory::updateButtons);
    bottom->setCurrentIndex(0);
    m_bottomTabs = bottom;
}

void RunHistory::refresh()
{
    const QScopedValueRollback filling(m_filling, true);
    const QList<qint64> selected = selectedRunIds();
    m_model->removeRows(0, m_model->rowCount());
    if (!m_runs) {
        updateButtons();
        return;
    }
    std::vector<RunInfo> runs;
    try {
        runs = m_runs->runs(showingTrash() ? RunListing::Trashed : RunListing::Active);
    } catch (const std::exception& e) {
        m_status->setText(tr("Cannot read runs: %1").arg(QString::fromStdString(e.what())));
    }
    const std::int64_t now = wallClockNs();
    std::map<std::int64_t, RunGroupInfo> groups;
    try {
        for (RunGroupInfo& g : m_runs->groups()) groups.emplace(g.id, std::move(g));
    } catch (const std::exception& e) {
        m_status->setText(tr("Cannot read the run groups: %1").arg(QString::fromStdString(e.what())));
    }
    // Series named as the Series box names them (two ES series differ by interval and range).
    std::map<std::int64_t, QString> seriesLabels;
    try {
        for (const SeriesInfo& s : m_store->series()) seriesLabels.emplace(s.id, seriesLabel(s));
    } catch (const std::exception&) {
        // Symbols only, as stored with the runs.
    }
    for (const RunInfo& r : runs) {
        const QJsonObject config = configOf(r);
        const QStringList models = modelsIn(config);
        const qint64 steps = config.value(QStringLiteral("steps")).toInteger();
        const std::int64_t end = r.finishedNs > 0 ? r.finishedNs : (r.status == RunStatus::Running ? now : 0);
        const std::int64_t duration = end > r.createdNs ? end - r.createdNs : 0;
        const QDateTime created = QDateTime::fromMSecsSinceEpoch(r.createdNs / 1'000'000, Qt::UTC);
        QList<QStandardItem*> row;
        auto add = [&](const QString& text, const QVariant& sortKey) {
            auto* item = new QStandardItem(text);
            item->setEditable(false);
            item->setData(sortKey, kSortRole);
            item->setData(QVariant::fromValue<qint64>(r.id), kIdRole);
            row << item;
        };
        add(QString::number(r.id), QVariant::fromValue<qint64>(r.id));
        add(QString::fromStdString(r.name), QString::fromStdString(r.name).toLower());
        row.back()->setEditable(true);
        QStringList tags;
        for (const std::string& t : r.tags) tags << QString::fromStdString(t);
        add(tags.join(QStringLiteral(", ")), tags.join(QLatin1Char(',')).toLower());
        add(created.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), QVariant::fromValue<qint64>(r.createdNs));
        add(QString::fromStdString(toString(r.status)), QString::fromStdString(toString(r.status)));
        add(models.join(QStringLiteral(", ")), models.join(QLatin1Char(',')));
        const auto label = seriesLabels.find(r.seriesId);
        const QString series = label != seriesLabels.end() ? label->second : QString::fromStdString(r.series);
        add(series, series);
        add(steps > 0 ? QLocale().toString(steps) : QString(), QVariant::fromValue<qint64>(steps));
        add(durationText(duration), QVariant::fromValue<qint64>(duration));
        RunSummary summary;
        try {
            summary = summarizeRun(*m_runs, r);
        } catch (const std::exception& e) {
            m_status->setText(tr("Cannot read run %1's results: %2").arg(r.id).arg(QString::fromStdString(e.what())));
        }
        add(QString::fromStdString(summary.precision), QString::fromStdString(summary.precision));
        add(QString::fromStdString(summary.device), QString::fromStdString(summary.device));
        add(QString::number(summary.processes), summary.processes);
        {
            // Members sort together, in member order, groups by id.
            const auto group = groups.find(r.groupId);
            const QString text = r.groupId == 0 ? QString()
                                                : groupCellText(r, group != groups.end() ? &group->second : nullptr);
            add(text, r.groupId == 0
                          ? QVariant(-1.0)
                          : QVariant(static_cast<double>(r.groupId) * 1e6 + static_cast<double>(r.groupMember)));
            row.back()->setData(QVariant::fromValue<qint64>(r.groupId), kGroupRole);
        }
        for (const QString& model : resultModels()) {
            const ModelResults* results = summary.find(model.toStdString());
            for (const Measure* m : measuresOf(model)) {
                const double v = results ? results->*m->field : std::nan("");
                // Missing figures sort below every real one.
                add(QString::fromStdString(formatMeasure(m->kind, v)),
                    std::isfinite(v) ? v : -std::numeric_limits<double>::infinity());
            }
        }
        if (!r.error.empty())
            for (QStandardItem* item : row) item->setToolTip(QString::fromStdString(r.error));
        if (!r.notes.empty())
            row[ColName]->setToolTip(
                QString::fromStdString(r.notes) +
                (r.error.empty() ? QString() : QStringLiteral("\n\n") + QString::fromStdString(r.error)));
        m_model->appendRow(row);
    }
    selectRuns(selected);
    m_status->setText(showingTrash() ? tr("%n run(s) in the trash", nullptr, static_cast<int>(runs.size()))
                                     : tr("%n run(s)", nullptr, static_cast<int>(runs.size())));
    updateButtons();
}

int RunHistory::rowCount() const
{
    return m_proxy->rowCount();
}

QStandardItem* RunHistory::itemOf(qint64 runId, int column) const
{
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (m_model->item(row, ColId)->data(kIdRole).toLongLong() == runId) return m_model->item(row, column);
    return nullptr;
}

void RunHistory::nameEdited(QStandardItem* item)
{
    if (m_filling || item->column() != ColName) return;
    const qint64 id = item->data(kIdRole).toLongLong();
    if (!renameRun(id, item->text())) {
        // Refused: the cell shows the stored name again.
        const QScopedValueRollback filling(m_filling, true);
        if (const auto info = m_runs ? m_runs->run(id) : std::nullopt)
            item->setText(QString::fromStdString(info->name));
    }
}

bool RunHistory::renameRun(qint64 runId, const QString& name)
{
    if (!m_runs) return false;
    try {
        m_runs->setName(runId, name.toStdString());
    } catch (const std::exception& e) {
        showError(tr("Rename run"), tr("Cannot rename run %1: %2").arg(runId).arg(QString::fromStdString(e.what())));
        return false;
    }
    // The cell shows the name as stored (trimmed) and sorts by it, without a reload under the editor.
    if (QStandardItem* item = itemOf(runId, ColName)) {
        const QScopedValueRollback filling(m_filling, true);
        const QString stored = QString::fromStdString(m_runs->run(runId)->name);
        item->setText(stored);
        item->setData(stored.toLower(), kSortRole);
    }
    m_status->setText(tr("Renamed run %1").arg(runId));
    return true;
}

bool RunHistory::setRunTags(qint64 runId, const QStringList& tags)
{
    if (!m_runs) return false;
    std::vector<std::string> list;
    for (const QString& t : tags) list.push_back(t.toStdString());
    try {
        m_runs->setTags(runId, list);
    } catch (const std::exception& e) {
        showError(tr("Tags"), tr("Cannot tag run %1: %2").arg(runId).arg(QString::fromStdString(e.what())));
        return false;
    }
    refresh();
    return true;
}

bool RunHistory::setRunNotes(qint64 runId, const QString& notes)
{
    if (!m_runs) return false;
    try {
        m_runs->setNotes(runId, notes.toStdString());
    } catch (const std::exception& e) {
        showError(tr("Notes"), tr("Cannot store run %1's notes: %2").arg(runId).arg(QString::fromStdString(e.what())));
        return false;
    }
    refresh();
    return true;
}

void RunHistory::editTags(qint64 runId)
{
    if (!m_runs || !dialogsAllowed()) return;
    const auto info = m_runs->run(runId);
    if (!info) return;
    QStringList current;
    for (const std::string& t : info->tags) current << QString::fromStdString(t);
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, tr("Tags of run %1").arg(runId),
        tr("Tags, separated by commas (at most %1 characters each):").arg(RunStore::kMaxTagLength), QLineEdit::Normal,
        current.join(QStringLiteral(", ")), &ok);
    if (!ok) return;
    QStringList tags;
    for (const QString& t : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!t.trimmed().isEmpty()) tags << t.trimmed();
    setRunTags(runId, tags);
}

void RunHistory::editNotes(qint64 runId)
{
    if (!m_runs || !dialogsAllowed()) return;
    const auto info = m_runs->run(runId);
    if (!info) return;
    bool ok = false;
    const QString text = QInputDialog::getMultiLineText(this, tr("Notes on run %1").arg(runId), tr("Notes:"),
                                                        QString::fromStdString(info->notes), &ok);
    if (ok) setRunNotes(runId, text);
}

void RunHistory::showRowMenu(const QPoint& at)
{
    const QModelIndex index = m_table->indexAt(at);
    if (!index.isValid()) return;
    const qint64 id = m_proxy->index(index.row(), ColId).data(kIdRole).toLongLong();
    QMenu menu(this);
    connect(menu.addAction(tr("Open")), &QAction::triggered, this, [this, id] { openRun(id); });
    connect(menu.addAction(tr("Rename...")), &QAction::triggered, this, [this, index] {
        m_table->setCurrentIndex(m_proxy->index(index.row(), ColName));
        m_table->edit(m_proxy->index(index.row(), ColName));
    });
    connect(menu.addAction(tr("Tags...")), &QAction::triggered, this, [this, id] { editTags(id); });
    connect(menu.addAction(tr("Notes...")), &QAction::triggered, this, [this, id] { editNotes(id); });
    menu.exec(m_table->viewport()->mapToGlobal(at));
}

void RunHistory::setFilterText(const QString& text)
{
    if (m_filter->text() != text) m_filter->setText(text); // re-enters through textChanged
    else static_cast<ShownColumnsFilter*>(m_proxy)->setText(text);
}

QList<qint64> RunHistory::shownRunIds() const
{
    QList<qint64> ids;
    for (int r = 0; r < m_proxy->rowCount(); ++r) ids << m_proxy->index(r, ColId).data(kIdRole).toLongLong();
    return ids;
}

QList<qint64> RunHistory::selectedRunIds() const
{
    QList<qint64> ids;
    if (!m_table->selectionModel()) return ids;
    QModelIndexList rows = m_table->selectionModel()->selectedRows(ColId);
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    for (const QModelIndex& index : rows) ids << index.data(kIdRole).toLongLong();
    return ids;
}

void RunHistory::selectRuns(const QList<qint64>& ids)
{
    QItemSelection selection;
    for (int r = 0; r < m_proxy->rowCount(); ++r) {
        const QModelIndex index = m_proxy->index(r, ColId);
        if (ids.contains(index.data(kIdRole).toLongLong())) selection.select(index, m_proxy->index(r, ColCount - 1));
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    updateButtons();
}

std::optional<qint64> RunHistory::currentRunId() const
{
    const QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty()) return std::nullopt;
    return ids.first();
}

void RunHistory::updateButtons()
{
    const QList<qint64> ids = selectedRunIds();
    m_openButton->setEnabled(ids.size() == 1);
    m_overlayButton->setEnabled(!ids.isEmpty());
    m_compareButton->setEnabled(ids.size() >= 2);
    m_groupsButton->setEnabled(!groupsOf(ids).isEmpty());
    m_deleteButton->setEnabled(!ids.isEmpty());
    m_restoreButton->setEnabled(!ids.isEmpty());
    m_exportButton->setEnabled(!ids.isEmpty() || m_openRunId > 0);
    bool resumable = false;
    if (ids.size() == 1 && m_runs) {
        if (const auto info = m_runs->run(ids.first()))
            resumable = info->trashedNs == 0 &&
                        (info->status == RunStatus::Stopped || info->status == RunStatus::Interrupted ||
                         info->status == RunStatus::Failed);
    }
    m_resumeButton->setEnabled(resumable);
}

void RunHistory::showError(const QString& title, const QString& text)
{
    m_status->setText(text);
    if (isVisible() && dialogsAllowed()) QMessageBox::warning(this, title, text);
}

bool RunHistory::openRun(qint64 runId)
{
    if (!m_runs) return false;
    try {
        if (!m_dashboard->fromStore(*m_runs, runId)) {
            showError(tr("Open run"), tr("Run %1 is not in the store.").arg(runId));
            return false;
        }
    } catch (const std::exception& e) {
        showError(tr("Open run"), tr("Cannot read run %1: %2").arg(runId).arg(QString::fromStdString(e.what())));
        return false;
    }
    m_openRunId = runId;
    if (resultsInFront()) {
        loadResults(runId);
    } else {
        m_bottomTabs->setCurrentIndex(0);
        m_resultsRunId = 0; // read when the tab is shown; an answer on its way is dropped
        m_results->setMessage(tr("Reading the results of run %1...").arg(runId));
    }
    m_status->setText(tr("Showing run %1").arg(runId));
    updateButtons();
    return true;
}

bool RunHistory::resultsInFront() const
{
    return m_bottomTabs->currentWidget() == m_results->parentWidget()->parentWidget(); // the scroll area
}

void RunHistory::showResults()
{
    m_bottomTabs->setCurrentWidget(m_results->parentWidget()->parentWidget());
}

void RunHistory::closeOpenRun()
{
    m_dashboard->clear();
    m_openRunId = 0;
    m_resultsRunId = 0;
    m_results->clear();
}

void RunHistory::loadResults(qint64 runId)
{
    m_resultsRunId = runId;
    if (m_resultsBusy) {
        m_resultsPending = runId; // read next; the answer on its way is for another run
        return;
    }
    m_resultsBusy = true;
    m_resultsPending = 0;
    m_results->setMessage(tr("Reading the results of run %1...").arg(runId));
    if (m_resultsWorker.joinable()) m_resultsWorker.join(); // its answer has arrived: it has ended
    const std::string path = m_databasePath.toStdString();
    m_resultsWorker = std::jthread([this, path, runId] {
        std::shared_ptr<const ReportDocument> document;
        QString error;
        try {
            BarStore store(path);
            document = std::make_shared<const ReportDocument>(buildRunReport(runReportJson(store, {runId})));
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        // Queued to this object: dropped if it is gone (its destructor waits for this thread first).
        QMetaObject::invokeMethod(
            this, [this, runId, document, error] { resultsRead(runId, document, error); }, Qt::QueuedConnection);
    });
}

void RunHistory::resultsRead(qint64 runId, const std::shared_ptr<const ReportDocument>& document, const QString& error)
{
    m_resultsBusy = false;
    if (m_resultsPending != 0) {
        loadResults(m_resultsPending);
        return;
    }
    if (runId != m_resultsRunId) return;
    if (document) m_results->setDocument(*document);
    else m_results->setMessage(tr("Cannot read the results of run %1: %2").arg(runId).arg(error));
    Q_EMIT resultsShown(runId);
}

QList<qint64> RunHistory::groupsOf(const QList<qint64>& runIds) const
{
    QList<qint64> groups;
    if (!m_runs) return groups;
    for (const qint64 id : runIds) {
        // The table's cells know the group; the store is asked only for runs not listed.
        qint64 group = 0;
        if (const QStandardItem* cell = itemOf(id, ColGroup)) {
            group = cell->data(kGroupRole).toLongLong();
        } else {
            try {
                if (const auto info = m_runs->run(id)) group = info->groupId;
            } catch (const std::exception&) {
                continue;
            }
        }
        if (group > 0 && !groups.contains(group)) groups << group;
    }
    return groups;
}

bool RunHistory::showGroups(const QList<qint64>& groupIds)
{
    if (groupIds.isEmpty()) {
        m_status->setText(tr("None of the selected runs belongs to a run group"));
        return false;
    }
    m_bottomTabs->setCurrentWidget(m_groups->parentWidget()->parentWidget()); // the scroll area
    m_groupsShown = groupIds;
    QStringList names;
    for (const qint64 g : groupIds) names << QString::number(g);
    m_groups->setMessage(tr("Reading run group(s) %1...").arg(names.join(QStringLiteral(", "))));
    if (m_groupsBusy) {
        m_groupsPending = groupIds; // read next; the answer on its way is for others
        return true;
    }
    m_groupsBusy = true;
    m_groupsPending.clear();
    if (m_groupsWorker.joinable()) m_groupsWorker.join(); // its answer has arrived: it has ended
    const std::string path = m_databasePath.toStdString();
    const std::vector<std::int64_t> ids(groupIds.begin(), groupIds.end());
    m_groupsWorker = std::jthread([this, path, ids, groupIds] {
        std::shared_ptr<const ReportDocument> document;
        QString error;
        try {
            BarStore store(path);
            RunStore runs(store);
            document = std::make_shared<const ReportDocument>(buildGroupReport(groupReportJson(runs, ids)));
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        // Queued to this object: dropped if it is gone (its destructor waits for this thread first).
        QMetaObject::invokeMethod(
            this, [this, groupIds, document, error] { groupsRead(groupIds, document, error); }, Qt::QueuedConnection);
    });
    return true;
}

void RunHistory::groupsRead(const QList<qint64>& groupIds, const std::shared_ptr<const ReportDocument>& document,
                            const QString& error)
{
    m_groupsBusy = false;
    if (!m_groupsPending.isEmpty()) {
        showGroups(std::exchange(m_groupsPending, {}));
        return;
    }
    if (groupIds != m_groupsShown) return;
    if (document) {
        m_groups->setDocument(*document);
        m_status->setText(tr("Showing %n run group(s)", nullptr, static_cast<int>(groupIds.size())));
    } else {
        m_groups->setMessage(tr("Cannot read the run groups: %1").arg(error));
        m_status->setText(tr("Cannot read the run groups: %1").arg(error));
    }
    Q_EMIT groupsShown(groupIds);
}

QChart* RunHistory::overlayChart() const
{
    return m_overlayView->chart();
}

void RunHistory::setOverlaySmoothing(double weight)
{
    m_overlaySmoothing->setValue(weight); // redraws the overlay shown through valueChanged
}

double RunHistory::overlaySmoothing() const
{
    return m_overlaySmoothing->value();
}

const QStringList& RunHistory::resultModels()
{
    static const QStringList models = {QStringLiteral("dqn"), QStringLiteral("ppo"), QStringLiteral("mamba2"),
                                       QStringLiteral("tft")};
    return models;
}

int RunHistory::resultColumn(const QString& model, const QString& measureKey) const
{
    int column = ColCount;
    for (const QString& m : resultModels())
        for (const Measure* measure : measuresOf(m)) {
            if (m == model && fromStd(measure->key) == measureKey) return column;
            ++column;
        }
    return -1;
}

QStringList RunHistory::columnTitles() const
{
    return m_columnTitles;
}

void RunHistory::setColumnShown(int column, bool shown)
{
    if (column < 0 || column >= m_model->columnCount() || (column == ColId && !shown)) return; // the id always shows
    m_table->setColumnHidden(column, !shown);
    static_cast<ShownColumnsFilter*>(m_proxy)->columnsChanged(); // hidden text no longer matches
    saveHiddenColumns();
}

bool RunHistory::columnShown(int column) const
{
    return !m_table->isColumnHidden(column);
}

void RunHistory::saveHiddenColumns() const
{
    QStringList hidden;
    for (int c = 0; c < m_model->columnCount(); ++c)
        if (m_table->isColumnHidden(c)) hidden << m_columnTitles[c];
    QSettings().setValue(QLatin1String(kHiddenColumnsKey), hidden);
}

void RunHistory::chooseColumns(const QPoint& at)
{
    QMenu menu(this);
    for (int c = ColId + 1; c < m_model->columnCount(); ++c) {
        QAction* action = menu.addAction(m_columnTitles[c]);
        action->setCheckable(true);
        action->setChecked(columnShown(c));
        connect(action, &QAction::toggled, this, [this, c](bool on) { setColumnShown(c, on); });
        if (c == ColCount - 1) menu.addSeparator(); // settings above, results below
    }
    menu.exec(m_table->horizontalHeader()->mapToGlobal(at));
}

QString RunHistory::cellText(qint64 runId, int column) const
{
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (m_model->item(row, ColId)->data(kIdRole).toLongLong() == runId)
            return column >= 0 && column < m_model->columnCount() ? m_model->item(row, column)->text() : QString();
    return {};
}

int RunHistory::compare(const QList<qint64>& runIds)
{
    if (!m_runs) return -1;
    std::vector<RunInfo> runs;
    std::vector<RunSummary> summaries;
    try {
        for (const qint64 id : runIds)
            if (const auto info = m_runs->run(id)) {
                summaries.push_back(summarizeRun(*m_runs, *info));
                runs.push_back(*info);
            }
        if (runs.size() < 2) {
            m_status->setText(tr("Compare needs two or more runs"));
            return -1;
        }
        const int differ = m_compare->setRuns(std::move(runs), std::move(summaries));
        m_bottomTabs->setCurrentWidget(m_compare);
        m_status->setText(tr("Compared %n run(s)", nullptr, static_cast<int>(runIds.size())));
        return differ;
    } catch (const std::exception& e) {
        showError(tr("Compare"), tr("Cannot compare these runs: %1").arg(QString::fromStdString(e.what())));
        return -1;
    }
}

void RunHistory::overlaySelected()
{
    const QList<qint64> ids = selectedRunIds();
    const auto axis = static_cast<OverlayAxis>(m_overlayAxis->currentData().toInt());
    if (overlay(ids, m_overlayModel->currentText(), m_overlayMetric->currentText(), axis) == 0 && !ids.isEmpty())
        showError(tr("Overlay"), tr("None of the selected runs stored %1 for %2.")
                                     .arg(m_overlayMetric->currentText(), m_overlayModel->currentText()));
}

int RunHistory::overlay(const QList<qint64>& runIds, const QString& model, const QString& metric, OverlayAxis axis)
{
    m_lastOverlay = {runIds, model, metric, axis};
    if (m_overlayAxis->currentData().toInt() != static_cast<int>(axis)) {
        const QSignalBlocker block(m_overlayAxis); // the box follows; its own change would redraw again
        m_overlayAxis->setCurrentIndex(m_overlayAxis->findData(static_cast<int>(axis)));
    }
    QChart* chart = m_overlayView->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    chart->setTitle(tr("%1 — %2 across runs").arg(model, metric));
    if (!m_runs) return 0;
    const bool byTime = axis == OverlayAxis::RelativeSeconds;
    const bool byWallClock = axis == OverlayAxis::WallTime;
    // Wall time is drawn on a date-time axis (milliseconds since the epoch); steps and seconds on a value axis.
    QAbstractAxis* x = nullptr;
    QValueAxis* valueX = nullptr;
    QDateTimeAxis* timeX = nullptr;
    if (byWallClock) {
        timeX = new QDateTimeAxis;
        timeX->setTitleText(tr("wall time"));
        x = timeX;
    } else {
        valueX = new QValueAxis;
        valueX->setTitleText(byTime ? tr("seconds since the run's first sample") : tr("step"));
        valueX->setLabelFormat(byTime ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
        x = valueX;
    }
    auto* y = new QValueAxis;
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, lo = x0, hi = -x0;
    int drawn = 0;
    const double smoothing = m_overlaySmoothing->value();
    /// Each drawn line with its decimated points, in the metric's registry unit.
    std::vector<std::pair<QLineSeries*, std::vector<QPointF>>> lines;
    // Each run's label, as the compare view gives it: read once, before any series is drawn.
    std::map<qint64, QString> labels;
    {
        std::vector<std::pair<RunInfo, RunSummary>> read;
        std::set<std::string> precisions;
        for (const qint64 id : runIds)
            if (const auto info = m_runs->run(id)) {
                read.emplace_back(*info, summarizeRun(*m_runs, *info));
                precisions.insert(read.back().second.precision);
            }
        for (const auto& [info, summary] : read) {
            QString label = RunCompare::runLabel(info, summary, precisions.size() > 1);
            if (!info.name.empty()) label += QStringLiteral(" (%1)").arg(QString::fromStdString(info.name));
            labels[info.id] = label;
        }
    }
    for (const qint64 id : runIds) {
        MetricBatch samples;
        try {
            samples = m_runs->metrics(id, model.toStdString(), metric.toStdString());
        } catch (const std::exception& e) {
            m_status->setText(tr("Cannot read run %1: %2").arg(id).arg(QString::fromStdString(e.what())));
            continue;
        }
        const std::vector<OverlayPoint> points = overlayPoints(samples, axis, smoothing);
        if (points.empty()) continue;
        BoundedSeries raw(std::max<std::size_t>(points.size(), 2)), smooth(raw.capacity());
        for (const OverlayPoint& p : points) {
            raw.append(p.x, p.raw);
            if (smoothing > 0) smooth.append(p.x, p.smoothed);
        }
        const int buckets = std::max(200, m_overlayView->width());
        const std::vector<QPointF> rawPoints = raw.decimated(buckets);
        // The run's colour and label are the compare view's: "run 7 · BF16 + INT8" where precision differs.
        const int index = static_cast<int>(runIds.indexOf(id));
        const auto label = labels.find(id);
        const QString name = label != labels.end() ? label->second : tr("run %1").arg(id);
        const QColor colour = RunCompare::runColour(index);
        auto addLine = [&](const QString& lineName, const QColor& lineColour, double width,
                           std::vector<QPointF> linePoints) {
            auto* series = new QLineSeries;
            series->setName(lineName);
            QPen pen(lineColour);
            pen.setWidthF(width);
            series->setPen(pen);
            chart->addSeries(series);
            series->attachAxis(x);
            series->attachAxis(y);
            lines.emplace_back(series, std::move(linePoints));
            return series;
        };
        // With smoothing the raw line stays, faint, behind the smoothed one (the dashboard's look), and only
        // the smoothed line is in the legend.
        QColor rawColour = colour;
        if (smoothing > 0) rawColour.setAlpha(kOverlayFadedAlpha);
        QLineSeries* rawSeries = addLine(smoothing > 0 ? name + tr(" (raw)") : name, rawColour, 1.5, rawPoints);
        if (smoothing > 0) {
            addLine(name, colour, 2.0, smooth.decimated(buckets));
            for (QLegendMarker* marker : chart->legend()->markers(rawSeries)) marker->setVisible(false);
        }
        for (const QPointF& p : rawPoints) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
        x0 = std::min(x0, rawPoints.front().x());
        x1 = std::max(x1, rawPoints.back().x());
        ++drawn;
    }
    // As on the dashboard: the y axis reads in the unit the values' magnitude calls for (KiB, MiB, µs,
    // ms, s), with round ticks, and memory is drawn as steps.
    const metrics::Metric* known = metrics::find(metric.toStdString());
    const metrics::Unit unit = known ? known->unit : metrics::Unit::None;
    const foxhunt::axis::DisplayUnit shown = foxhunt::axis::displayUnit(
        unit, std::isfinite(lo) ? std::max(std::abs(lo), std::abs(hi)) : 0.0);
    const QString symbol = QString::fromStdString(shown.symbol);
    const QString quantity = known ? QString::fromStdString(metrics::label(metric.toStdString())) : metric;
    y->setTitleText(symbol.isEmpty() ? quantity : QStringLiteral("%1 (%2)").arg(quantity, symbol));
    for (const auto& [series, points] : lines)
        series->replace(displayPoints(points, shown.divisor, unit == metrics::Unit::Bytes));
    if (drawn > 0) {
        lo /= shown.divisor;
        hi /= shown.divisor;
        const double pad = hi > lo ? (hi - lo) * 0.05 : std::abs(hi) * 0.05 + 1e-9;
        y->setRange(lo - pad, hi + pad);
        applyRoundTicks(y, lo - pad, hi + pad);
        if (timeX) {
            const qint64 from = static_cast<qint64>(std::floor(x0)), to = static_cast<qint64>(std::ceil(x1));
            const qint64 span = std::max<qint64>(to - from, 1000);
            // Runs of one day read by the clock; longer spans need the date too.
            timeX->setFormat(span > 86'400'000 ? QStringLiteral("MM-dd HH:mm")
                             : span > 120'000  ? QStringLiteral("HH:mm")
                                               : QStringLiteral("HH:mm:ss"));
            timeX->setRange(QDateTime::fromMSecsSinceEpoch(from), QDateTime::fromMSecsSinceEpoch(from + span));
        } else {
            valueX->setRange(x0, std::max(x1, x0 + (byTime ? 1e-3 : 1.0)));
            applyRoundTicks(valueX, valueX->min(), valueX->max());
        }
        m_bottomTabs->setCurrentIndex(1);
    }
    m_status->setText(tr("Overlay of %1 %2: %n run(s)", nullptr, drawn).arg(model, metric));
    return drawn;
}

std::vector<RunHistory::OverlayPoint> RunHistory::overlayPoints(const MetricBatch& samples, OverlayAxis axis,
                                                                double smoothing)
{
    std::vector<OverlayPoint> out;
    out.reserve(samples.size());
    DebiasedEma ema(std::clamp(smoothing, 0.0, 0.999));
    const std::int64_t t0 = samples.empty() ? 0 : samples.front().wallNs;
    double lastX = -std::numeric_limits<double>::infinity();
    for (const MetricSample& s : samples) {
        if (!std::isfinite(s.value)) continue;
        double at = static_cast<double>(s.step);
        if (axis == OverlayAxis::RelativeSeconds) at = static_cast<double>(s.wallNs - t0) / 1e9;
        else if (axis == OverlayAxis::WallTime) at = static_cast<double>(s.wallNs) / 1e6;
        // Wall time can step back (a clock change): the line stays in order.
        if (axis != OverlayAxis::Step) at = std::max(at, lastX);
        lastX = at;
        out.push_back({at, s.value, ema.push(s.value)});
    }
    return out;
}

bool RunHistory::deleteRuns(const QList<qint64>& runIds, Confirm confirm)
{
    if (runIds.isEmpty() || !m_runs) return false;
    QStringList names;
    for (const qint64 id : runIds) {
        const auto info = m_runs->run(id);
        if (!info) continue;
        if (info->status == RunStatus::Running) {
            showError(tr("Delete runs"), tr("Run %1 is still running; stop it before deleting it.").arg(id));
            return false;
        }
        names << QStringLiteral("%1 %2").arg(id).arg(QString::fromStdString(info->name));
    }
    if (confirm == Confirm::Ask) {
        if (!dialogsAllowed()) return false;
        const auto answer = QMessageBox::question(
            this, tr("Delete runs"),
            tr("Delete %n run(s) with their metrics, evaluations and checkpoint files?\n\n%1", nullptr,
               static_cast<int>(runIds.size()))
                .arg(names.join(QLatin1Char('\n'))),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Yes) return false;
    }
    QStringList problems, inDesktopTrash;
    QList<qint64> deleted;
    for (const qint64 id : runIds) {
        try {
            const auto info = m_runs->run(id);
            if (info && !info->trashPath.empty() && QFileInfo::exists(QString::fromStdString(info->trashPath)))
                inDesktopTrash << QString::fromStdString(info->trashPath);
            // The engine removes only this database's files and says which it left in place.
            const RunDeletion deletion = m_runs->deleteRun(id);
            deleted << id;
            for (const std::string& kept : deletion.kept)
                problems << tr("Checkpoint file kept: %1").arg(QString::fromStdString(kept));
        } catch (const std::exception& e) {
            problems << tr("run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
        }
    }
    if (deleted.contains(m_openRunId)) {
        closeOpenRun();
    }
    dropUndoable(deleted);
    refresh();
    if (!inDesktopTrash.isEmpty())
        m_status->setText(tr("Deleted; the checkpoint folders of runs moved to the trash earlier stay in the desktop's "
                             "trash: %1")
                              .arg(inDesktopTrash.join(QStringLiteral(", "))));
    if (!problems.isEmpty()) showError(tr("Delete runs"), problems.join(QLatin1Char('\n')));
    if (!deleted.isEmpty()) Q_EMIT runsDeleted(deleted);
    return problems.isEmpty();
}

QString RunHistory::statusText() const
{
    return m_status->text();
}

bool RunHistory::showingTrash() const
{
    return m_showTrash->isChecked();
}

void RunHistory::setShowTrash(bool shown)
{
    if (m_showTrash->isChecked() != shown) {
        m_showTrash->setChecked(shown); // re-enters through toggled
        return;
    }
    m_deleteButton->setText(shown ? tr("Delete permanently...") : tr("Delete"));
    m_deleteButton->setToolTip(
        shown ? tr("Delete the selected runs for good, with their metrics (Delete)")
              : tr("Move the selected runs to the trash, their checkpoints to the desktop's trash (Delete)"));
    m_restoreButton->setVisible(shown);
    refresh();
}

void RunHistory::deleteSelected()
{
    const QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty()) return;
    if (showingTrash()) deleteRuns(ids, Confirm::Ask);
    else trashRuns(ids);
}

QString RunHistory::runCheckpointFolder(qint64 runId) const
{
    const auto info = m_runs ? m_runs->run(runId) : std::nullopt;
    return info ? QString::fromStdString(foxhunt::runCheckpointFolder(*m_runs, *info)) : QString();
}

bool RunHistory::trashRuns(const QList<qint64>& runIds)
{
    if (runIds.isEmpty() || !m_runs) return false;
    QStringList problems, notes;
    QList<qint64> trashed;
    for (const qint64 id : runIds) {
        const auto info = m_runs->run(id);
        if (!info || info->trashedNs > 0) continue;
        if (info->status == RunStatus::Running) {
            problems << tr("Run %1 is still running; stop it before deleting it.").arg(id);
            continue;
        }
        // The folder goes first: the run is hidden only once its files are where a restore looks for them.
        const QString folder = runCheckpointFolder(id);
        QString inTrash;
        if (!folder.isEmpty() && QFileInfo(folder).isDir() && !QFile::moveToTrash(folder, &inTrash)) {
            inTrash.clear();
            notes << tr("Run %1: this desktop has no trash for %2; its checkpoint files stay there until the run is "
                        "deleted permanently.")
                         .arg(id)
                         .arg(folder);
        }
        try {
            m_runs->trashRun(id, inTrash.toStdString());
            trashed << id;
        } catch (const std::exception& e) {
            if (!inTrash.isEmpty()) moveBackFromTrash(inTrash.toStdString(), folder.toStdString());
            problems << tr("run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
        }
    }
    if (trashed.contains(m_openRunId)) {
        closeOpenRun();
    }
    refresh();
    if (!trashed.isEmpty()) {
        QStringList idText;
        for (const qint64 id : trashed) idText << QString::number(id);
        const QString moved = trashed.size() == 1 ? tr("Run %1 moved to trash").arg(idText.first())
                                                  : tr("Runs %1 moved to trash").arg(idText.join(QStringLiteral(", ")));
        m_status->setText(moved + (notes.isEmpty() ? QString() : QLatin1Char(' ') + notes.join(QLatin1Char(' '))));
        // A new offer replaces the last one: Undo restores what was deleted last, as in a file manager.
        m_undoable = trashed;
        m_undoTimer->start();
        Q_EMIT runsDeleted(trashed);
        Q_EMIT undoOffered(moved);
    }
    if (!problems.isEmpty()) showError(tr("Delete runs"), problems.join(QLatin1Char('\n')));
    return problems.isEmpty();
}

bool RunHistory::restoreRuns(const QList<qint64>& runIds)
{
    if (runIds.isEmpty() || !m_runs) return false;
    QStringList problems;
    QList<qint64> restored;
    for (const qint64 id : runIds) {
        const auto info = m_runs->run(id);
        if (!info || info->trashedNs == 0) continue;
        try {
            // The same restore as foxhunt-cli runs restore: the folder goes back where the run looks for it.
            const TrashRestore restore = restoreFromTrash(*m_runs, id);
            restored << id;
            if (!restore.problem.empty())
                problems << tr("Run %1 is back, but not its checkpoint folder: %2")
                                .arg(id)
                                .arg(QString::fromStdString(restore.problem));
        } catch (const std::exception& e) {
            problems << tr("run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
        }
    }
    dropUndoable(restored);
    refresh();
    if (!restored.isEmpty()) {
        selectRuns(restored);
        m_status->setText(tr("%n run(s) restored from the trash", nullptr, static_cast<int>(restored.size())));
    }
    if (!problems.isEmpty()) showError(tr("Restore runs"), problems.join(QLatin1Char('\n')));
    return !restored.isEmpty() && problems.isEmpty();
}

void RunHistory::dropUndoable(const QList<qint64>& runIds)
{
    if (m_undoable.isEmpty()) return;
    for (const qint64 id : runIds) m_undoable.removeAll(id);
    if (!m_undoable.isEmpty()) return;
    m_undoTimer->stop();
    Q_EMIT undoOfferEnded();
}

void RunHistory::setUndoOfferMs(int ms)
{
    m_undoTimer->setInterval(ms);
}

int RunHistory::undoOfferMs() const
{
    return m_undoTimer->interval();
}

bool RunHistory::undoTrash()
{
    const QList<qint64> ids = m_undoable;
    if (ids.isEmpty()) return false;
    return restoreRuns(ids);
}

bool RunHistory::requestResume(qint64 runId)
{
    const auto info = m_runs ? m_runs->run(runId) : std::nullopt;
    if (!info) return false;
    if (info->trashedNs > 0) {
        showError(tr("Resume run"), tr("Run %1 is in the trash; restore it before resuming it.").arg(runId));
        return false;
    }
    if (info->status != RunStatus::Stopped && info->status != RunStatus::Interrupted &&
        info->status != RunStatus::Failed) {
        showError(tr("Resume run"), tr("Run %1 is %2: only stopped, failed or interrupted runs resume.")
                                        .arg(runId)
                                        .arg(QString::fromStdString(toString(info->status))));
        return false;
    }
    Q_EMIT resumeRequested(runId);
    return true;
}

QStringList RunHistory::modelsOfRun(qint64 runId) const
{
    const auto info = m_runs ? m_runs->run(runId) : std::nullopt;
    return info ? modelsIn(configOf(*info)) : QStringList{};
}

QList<qint64> RunHistory::reportRunIds() const
{
    QList<qint64> ids = selectedRunIds();
    if (ids.isEmpty() && m_openRunId > 0) ids << m_openRunId;
    return ids;
}

void RunHistory::exportReport()
{
    const QList<qint64> ids = reportRunIds();
    if (ids.isEmpty()) {
        showError(tr("Export report"), tr("Select one or more runs (or open one) to export a report."));
        return;
    }
    QStringList idText;
    for (const qint64 id : ids) idText << QString::number(id);
    QString filter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export run report"), QStringLiteral("foxhunt-run-%1.html").arg(idText.join(QLatin1Char('-'))),
        tr("HTML report (*.html);;PDF report (*.pdf);;JSON (*.json);;CSV, every metric (*.csv)"), &filter);
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter.contains(QLatin1String("json"))  ? QStringLiteral(".json")
                : filter.contains(QLatin1String("csv")) ? QStringLiteral(".csv")
                : filter.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf")
                                                        : QStringLiteral(".html");
    exportReportTo(ids, path, /*openResult=*/true);
}

bool RunHistory::exportReportTo(const QList<qint64>& runIds, const QString& path, bool openResult)
{
    if (m_exporting || runIds.isEmpty()) return false;
    m_exporting = true;
    m_progress = new QProgressDialog(tr("Writing %1...").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 1000, this);
    m_progress->setWindowTitle(tr("Export report"));
    m_progress->setMinimumDuration(300);
    m_progress->setWindowModality(Qt::WindowModal);
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    m_exportCancel = cancelled;
    connect(m_progress, &QProgressDialog::canceled, this, [cancelled] { cancelled->store(true); });
    if (m_exportWorker.joinable()) m_exportWorker.join();
    std::vector<std::int64_t> ids(runIds.begin(), runIds.end());
    m_exportWorker = std::jthread(
        [this, ids = std::move(ids), path, openResult, cancelled, db = m_databasePath.toStdString()] {
            QString error;
            // Progress crosses to the UI thread queued, at most once per 1/1000 step; returning false cancels.
            auto lastShown = std::make_shared<int>(-1);
            auto progress = [this, cancelled, lastShown](double fraction) {
                const int value = static_cast<int>(fraction * 1000.0);
                if (value != *lastShown) {
                    *lastShown = value;
                    QMetaObject::invokeMethod(
                        this,
                        [this, value] {
                            if (m_progress) m_progress->setValue(value);
                        },
                        Qt::QueuedConnection);
                }
                return !cancelled->load();
            };
            try {
                exportRunReport(db, ids, path.toStdString(), progress);
            } catch (const ReportCancelled&) {
                error = tr("Cancelled; no file was written.");
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            QMetaObject::invokeMethod(
                this,
                [this, path, error, openResult] {
                    m_exporting = false;
                    if (m_progress) {
                        m_progress->close();
                        m_progress->deleteLater();
                        m_progress = nullptr;
                    }
                    if (!error.isEmpty())
                        showError(tr("Export report"), tr("Cannot export the report to %1:\n%2").arg(path, error));
                    else {
                        m_status->setText(tr("Report written to %1").arg(path));
                        if (openResult && dialogsAllowed() && !QDesktopServices::openUrl(QUrl::fromLocalFile(path)))
                            showError(tr("Export report"),
                                      tr("The report was written to %1, but no application opens it.").arg(path));
                    }
                    Q_EMIT exportFinished(path, error);
                },
                Qt::QueuedConnection);
        });
    return true;
}

} // namespace foxhunt
