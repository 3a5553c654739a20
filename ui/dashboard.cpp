// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/dashboard.h"

#include "ui/chart_axes.h"

#include "engine/report/csv_field.h"
#include "engine/store/atomic_file.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/axis_scale.h"
#include "engine/telemetry/debiased_ema.h"
#include "engine/telemetry/metric_registry.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <QAbstractScrollArea>
#include <QApplication>
#include <QBuffer>
#include <QDateTime>
#include <QFileDialog>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QMenu>
#include <QPainter>
#include <QSvgGenerator>
#include <QWheelEvent>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMouseEvent>
#include <QResizeEvent>
#include <QStackedWidget>
#include <QToolButton>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <charconv>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace foxhunt {

namespace {

enum class ModelRole { Any, Agent, Forecaster };

/// A line of a chart, as the registry (engine/telemetry/metric_registry.h) defines it.
struct LineSpec {
    QString metric;
    QString label;
    bool session = false;   ///< fed by the "session" model (rss_bytes), drawn in every model's chart
    bool rightAxis = false; ///< against the right-hand axis (a much larger scale)
    BoundedSeries::Extremes extremes = BoundedSeries::Extremes::Both;
    bool perRank = false; ///< `metric` is a prefix: one line per "<metric><rank>", labelled "<label> <rank>"
    QString legend;       ///< a shorter name for the legend of a crowded chart (the read-out keeps `label`)
    const metrics::Metric* source = nullptr; ///< the registry's line
};

struct ChartSpec {
    QString key;
    QString title;
    metrics::Unit unit = metrics::Unit::None; ///< of every line; values are held in it and scaled for display
    ModelRole role = ModelRole::Any;
    bool smoothable = false;
    bool stepped = false;  ///< drawn as steps: a value holds until the next sample (memory)
    bool zeroLine = false; ///< a flat reference at 0 across the x range
    bool band = false;     ///< lines 0 and 1 are the lower and upper edge of an area
    std::vector<LineSpec> lines;
    /// Made when the model first emits one of its metrics, on the row under the model's charts:
    /// metrics only some runs have (multi-process ones) never leave an empty chart in the others.
    bool onDemand = false;
};

/// A chart whose every line has held one value for this many samples shows a one-line read-out instead.
constexpr std::size_t kConstantAfter = 3;
/// Ticks per value axis, at most (round values: 1, 2 or 5 times a power of ten apart).
constexpr int kMaxTicks = 6;
/// At most this many charts per row, however wide the window.
constexpr int kMaxColumns = 6;
/// The narrowest a chart gets (its minimum size); the grid wraps to as many such columns as fit.
constexpr int kChartMinWidth = 300;
constexpr int kChartMinHeight = 230;
/// Share of the drawn points below and above the y range when outliers are ignored.
constexpr double kOutlierShare = 0.02;
/// A zoomed-in chart decimates into at most this many times its pixel columns.
constexpr double kMaxZoomDetail = 16.0;
/// Alpha of a smoothed chart's raw line while smoothing is on.
constexpr int kFadedAlpha = 70;
/// Lines with fewer points than this also draw their points: one update is a dot, not nothing.
constexpr std::size_t kMarkedBelow = 12;

QString text(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// The pseudo-model of process-wide samples, and the one it records.
const QString& sessionModel()
{
    static const QString name = text(metrics::kSessionModel);
    return name;
}
const QString& rssMetric()
{
    static const QString name = text(metrics::kRssBytes);
    return name;
}

/// The charts of a model's section, from the metric registry. Values are held in the registry's unit
/// (bytes, milliseconds) and drawn in the display unit their magnitude reads best in.
const std::vector<ChartSpec>& chartSpecs()
{
    static const std::vector<ChartSpec> specs = [] {
        using metrics::Family;
        std::vector<ChartSpec> out;
        for (const metrics::Chart& c : metrics::charts()) {
            ChartSpec spec;
            spec.key = text(c.key);
            spec.title = text(c.title);
            spec.unit = c.unit;
            spec.stepped = c.unit == metrics::Unit::Bytes;
            spec.role = c.family == Family::Agent        ? ModelRole::Agent
                        : c.family == Family::Forecaster ? ModelRole::Forecaster
                                                         : ModelRole::Any;
            spec.smoothable = c.smoothable;
            spec.zeroLine = c.zeroLine;
            spec.band = c.band;
            spec.onDemand = c.onDemand;
            for (const metrics::Metric* m : metrics::inChart(c.key)) {
                LineSpec line;
                line.metric = text(m->name);
                line.label = text(m->label);
                line.session = m->family == Family::Session;
                line.rightAxis = m->rightAxis;
                line.extremes = m->edge == metrics::Edge::Lower   ? BoundedSeries::Extremes::Min
                                : m->edge == metrics::Edge::Upper ? BoundedSeries::Extremes::Max
                                                                  : BoundedSeries::Extremes::Both;
                line.perRank = m->perRank;
                line.legend = text(m->legend);
                line.source = m;
                spec.lines.push_back(std::move(line));
            }
            out.push_back(std::move(spec));
        }
        return out;
    }();
    return specs;
}

/// The rank a per-rank line's metric names ("throughput_rank3" -> 3), or -1 when it names none.
int rankOf(const QString& metric, const LineSpec& line)
{
    if (!line.perRank || !metric.startsWith(line.metric)) return -1;
    return metrics::rankOf(metric.toStdString(), *line.source);
}

ModelRole roleOf(const QString& model)
{
    if (model == QLatin1String("dqn") || model == QLatin1String("ppo")) return ModelRole::Agent;
    if (model == QLatin1String("mamba2") || model == QLatin1String("tft")) return ModelRole::Forecaster;
    return ModelRole::Any;
}

/// A model's section title.
QString displayName(const QString& model)
{
    if (model == QLatin1String("dqn")) return Dashboard::tr("DQN (agent)");
    if (model == QLatin1String("ppo")) return Dashboard::tr("PPO (agent)");
    if (model == QLatin1String("mamba2")) return Dashboard::tr("Mamba-2 (forecaster)");
    if (model == QLatin1String("tft")) return Dashboard::tr("TFT (forecaster)");
    return model;
}

bool isChartedMetric(const QString& metric)
{
    // Asked for every run of samples of a metric: remembered per name (the UI thread's alone).
    static QHash<QString, bool> known;
    if (const auto it = known.constFind(metric); it != known.constEnd()) return *it;
    bool charted = false;
    for (const ChartSpec& spec : chartSpecs())
        for (const LineSpec& line : spec.lines)
            charted = charted || (line.perRank ? rankOf(metric, line) >= 0 : metric == line.metric);
    known.insert(metric, charted);
    return charted;
}

const QString& pickedPrefix()
{
    static const QString prefix = QStringLiteral("metric:");
    return prefix;
}

/// The chart of a logged metric that no registry chart draws, for the metric picker: one line,
/// titled by its registry label, in its unit, smoothable like the loss. Node-based, so a chart's
/// pointer to its spec stays valid.
const ChartSpec& pickedSpec(const QString& metric)
{
    static std::map<QString, ChartSpec> specs;
    if (const auto it = specs.find(metric); it != specs.end()) return it->second;
    const metrics::Metric* m = metrics::find(metric.toStdString());
    ChartSpec spec;
    spec.key = pickedPrefix() + metric;
    spec.title = m ? text(m->label) : metric;
    spec.unit = m ? m->unit : metrics::Unit::None;
    spec.stepped = spec.unit == metrics::Unit::Bytes;
    spec.smoothable = true;
    LineSpec line;
    line.metric = metric;
    line.label = spec.title;
    line.source = m;
    spec.lines.push_back(std::move(line));
    return specs.emplace(metric, std::move(spec)).first->second;
}

const QList<QColor>& lineColors()
{
    static const QList<QColor> colors = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c),
                                         QColor(0xff, 0x7f, 0x0e), QColor(0x94, 0x67, 0xbd)};
    return colors;
}

QString key2(const QString& a, const QString& b)
{
    return a + QLatin1Char('/') + b;
}

/// A value axis's title: its display unit, or for unitless values what they are ("loss scale");
/// the right-hand axis names its line ("process RSS (MiB)").
QString axisTitle(const ChartSpec& spec, const axis::DisplayUnit& unit, bool secondary)
{
    const QString symbol = QString::fromStdString(unit.symbol);
    if (secondary) {
        for (const LineSpec& l : spec.lines)
            if (l.rightAxis) return symbol.isEmpty() ? l.label : QStringLiteral("%1 (%2)").arg(l.label, symbol);
    }
    return symbol.isEmpty() ? spec.title : symbol;
}

void roundTicks(QValueAxis* ax, double min, double max)
{
    applyRoundTicks(ax, min, max, kMaxTicks);
}

/// A value in the chart's unit, for read-outs ("40.0 KiB", "250 µs", "0.5300").
QString valueText(double value, metrics::Unit unit)
{
    return QString::fromStdString(axis::formatValue(value, unit, 4));
}

} // namespace

// ---------------------------------------------------------------------------

struct Dashboard::Line {
    QString metric;
    QString label;
    bool smoothable = false;
    BoundedSeries::Extremes extremes = BoundedSeries::Extremes::Both;
    BoundedSeries raw;
    BoundedSeries smooth;
    DebiasedEma ema;
    QLineSeries* series = nullptr;
    QLineSeries* smoothSeries = nullptr;
    Chart* owner = nullptr;
    int rank = -1;          ///< the rank of a per-rank line
    int colorIndex = -1;    ///< in lineColors(); -1 for a band's edges (the area draws them)
    bool secondary = false; ///< drawn against the chart's right-hand axis
    bool dirty = false;
    bool rescale = false;                 ///< the axis's display unit changed: draw the kept decimation again
    std::vector<QPointF> decimated;       ///< what was last drawn, in the registry's unit
    std::vector<QPointF> smoothDecimated; ///< likewise of the smoothed line
    // Range of what was last drawn, so an untouched line is not decimated again.
    double x0 = 0, x1 = 0, lo = 0, hi = 0;
    double robustLo = 0, robustHi = 0; ///< lo and hi without the outliers (the 2nd and 98th percentile)
    bool drawn = false;
    // Every sample seen (not only those held): whether it ever changed, and its minimum.
    std::size_t samples = 0;
    double first = 0.0;
    bool varies = false;
    double minSeen = std::numeric_limits<double>::infinity();
    std::vector<std::pair<std::int64_t, std::int64_t>> wall; ///< (step, UNIX ns) of held points, in step order
};

struct Dashboard::Chart {
    QString model;
    QString key;
    QString title;
    const ChartSpec* spec = nullptr; ///< in chartSpecs(), or a picked metric's (pickedSpec())
    std::size_t order = 0;           ///< place in the section: registry charts first, then picked ones
    QStackedWidget* stack = nullptr;
    QLabel* placeholder = nullptr;
    QLabel* constant = nullptr; ///< the one-line read-out of a chart whose lines never change
    bool collapsed = false;     ///< showing `constant` instead of the chart
    QChartView* view = nullptr;
    QChart* chart = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    QValueAxis* y2 = nullptr;        ///< right-hand axis of the session-wide lines (process RSS)
    axis::DisplayUnit yUnit, y2Unit; ///< what the axes' values are divided by, and its symbol
    bool unitsSet = false;
    QLogValueAxis* ylog = nullptr; ///< replaces `y` while log scale is on
    bool zoomed = false;           ///< the x range is the user's (wheel, drag) until reset
    int zoomBuckets = 0; ///< while zoomed in: buckets over the whole series, so the part shown keeps its detail
    QGraphicsLineItem* cross = nullptr;           ///< the crosshair's vertical line
    QGraphicsSimpleTextItem* crossText = nullptr; ///< and the values beside it
    QLineSeries* zero = nullptr;
    QAreaSeries* band = nullptr;
    std::vector<std::unique_ptr<Line>> lines;
    bool dirty = false;
    bool refit = false;    ///< fit the y axes to the data at the next redraw, however well they fit now
    bool expanded = false; ///< shown across the whole width, twice as tall (double-click toggles)
    int decimatedFor = -1; ///< plot-area width the lines were last decimated for
};

const QStringList& Dashboard::chartKeys()
{
    static const QStringList keys = [] {
        QStringList k;
        for (const ChartSpec& spec : chartSpecs()) k << spec.key;
        return k;
    }();
    return keys;
}

Dashboard::Dashboard(QWidget* parent) : QWidget(parent)
{
    auto* outer = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Smoothing")));
    m_smoothingBox = new QDoubleSpinBox;
    m_smoothingBox->setObjectName(QStringLiteral("smoothing"));
    m_smoothingBox->setRange(0.0, 0.99);
    m_smoothingBox->setSingleStep(0.05);
    m_smoothingBox->setDecimals(2);
    m_smoothingBox->setToolTip(tr("Debiased exponential moving average of loss, gradient norm and latency "
                                  "(0 = off); the raw line stays, faint"));
    connect(m_smoothingBox, &QDoubleSpinBox::valueChanged, this, &Dashboard::setSmoothing);
    top->addWidget(m_smoothingBox);
    m_outliersBox = new QCheckBox(tr("Ignore outliers"));
    m_outliersBox->setObjectName(QStringLiteral("ignoreOutliers"));
    m_outliersBox->setChecked(m_ignoreOutliers);
    m_outliersBox->setToolTip(tr("Scale each y axis to the 2nd..98th percentile of what is drawn, so that one early "
                                 "spike does not flatten the rest of the line (TensorBoard's default)"));
    connect(m_outliersBox, &QCheckBox::toggled, this, &Dashboard::setIgnoreOutliers);
    top->addWidget(m_outliersBox);
    m_picker = new QToolButton;
    m_picker->setObjectName(QStringLiteral("metricPicker"));
    m_picker->setText(tr("Metrics"));
    m_picker->setToolTip(tr("Chart any other scalar a model logs (epsilon, TD error, Q mean, learning rate, KL, "
                            "entropy, clip fraction ...); picked charts come back in later runs"));
    m_picker->setPopupMode(QToolButton::InstantPopup);
    m_picker->setMenu(new QMenu(m_picker));
    connect(m_picker->menu(), &QMenu::aboutToShow, this, &Dashboard::fillPicker);
    top->addWidget(m_picker);
    m_readout = new QLabel;
    m_readout->setObjectName(QStringLiteral("hoverReadout"));
    m_readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(m_readout, 1);
    outer->addLayout(top);

    auto* gridHost = new QWidget;
    m_grid = new QGridLayout(gridHost);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_hint = new QLabel(tr("Start a run (Training -> Start) to see each model's loss, loss scale, gradient norm, "
                           "inference latency, memory and equity or forecast band live; runs with several worker "
                           "processes add each rank's throughput and the gradient all-reduce time. The full history "
                           "is kept in the run store (Runs tab)."));
    m_hint->setObjectName(QStringLiteral("dashboardHint"));
    m_hint->setWordWrap(true);
    outer->addWidget(gridHost, 1);
    relayout(true);
}

Dashboard::~Dashboard() = default;

void Dashboard::clear()
{
    for (auto& c : m_owned) {
        m_grid->removeWidget(c->stack);
        delete c->stack;
    }
    for (QLabel* header : std::as_const(m_headers)) {
        m_grid->removeWidget(header);
        delete header;
    }
    m_headers.clear();
    for (QLabel* summary : std::as_const(m_int8Summaries)) {
        m_grid->removeWidget(summary);
        delete summary;
    }
    m_int8Summaries.clear();
    m_owned.clear();
    m_charts.clear();
    m_routes.clear();
    m_held.clear(); // the picks stay: a new run shows them once logged
    m_order.clear();
    m_sessionRss.clear();
    m_readout->clear();
    m_hint->show();
    m_live = true;
    relayout(true);
}

void Dashboard::setModels(const QStringList& models)
{
    m_live = true;
    for (const QString& m : models)
        if (!m_order.contains(m)) addModel(m);
    for (auto& c : m_owned) updatePlaceholder(*c);
}

void Dashboard::setLive(bool live)
{
    m_live = live;
    for (auto& c : m_owned) updatePlaceholder(*c);
}

void Dashboard::setSeriesCapacity(std::size_t capacity)
{
    m_capacity = capacity;
    m_sessionRss.setCapacity(capacity);
    for (Held& h : m_held) h.raw.setCapacity(capacity);
    for (auto& c : m_owned) {
        for (auto& l : c->lines) {
            l->raw.setCapacity(capacity);
            l->smooth.setCapacity(capacity);
            if (l->smoothable && m_smoothing > 0) recomputeSmoothing(*l);
            l->dirty = true;
        }
        redraw(*c);
    }
}

void Dashboard::addModel(const QString& model)
{
    m_order << model;
    auto* header = new QLabel(QStringLiteral("<b>%1</b>").arg(displayName(model).toHtmlEscaped()));
    header->setObjectName(QStringLiteral("modelHeader"));
    m_headers.insert(model, header);
    const ModelRole role = roleOf(model);
    for (const ChartSpec& spec : chartSpecs()) {
        if (spec.onDemand || (spec.role != ModelRole::Any && spec.role != role)) continue;
        makeChart(model, spec.key);
    }
    m_hint->hide();
    relayout(true);
}

int Dashboard::availableWidth() const
{
    const QMargins margins = layout() ? layout()->contentsMargins() : QMargins();
    // Inside a scroll area our width is at least the grid's minimum, so it cannot tell that the
    // window got narrower: the viewport can.
    const QWidget* host = parentWidget();
    const bool inScrollArea = host && qobject_cast<const QAbstractScrollArea*>(host->parentWidget());
    return (inScrollArea ? host->width() : width()) - margins.left() - margins.right();
}

void Dashboard::relayout(bool force)
{
    const int spacing = std::max(0, m_grid->horizontalSpacing());
    const int columns = std::clamp((availableWidth() + spacing) / (kChartMinWidth + spacing), 1, kMaxColumns);
    if (!force && columns == m_columns) return;
    m_columns = columns;
    // Take every widget out (the widgets stay alive, only their layout items go), then put
    // them back in reading order: per model its title, then its charts in spec order.
    while (QLayoutItem* item = m_grid->takeAt(0)) delete item;
    int row = 0;
    if (m_order.isEmpty()) m_grid->addWidget(m_hint, row++, 0, 1, columns);
    for (const QString& model : std::as_const(m_order)) {
        m_grid->addWidget(m_headers.value(model), row++, 0, 1, columns);
        if (QLabel* summary = m_int8Summaries.value(model)) m_grid->addWidget(summary, row++, 0, 1, columns);
        std::vector<Chart*> charts;
        for (const auto& c : m_owned)
            if (c->model == model) charts.push_back(c.get());
        // One-line read-outs of constant series come after the charts, so they share short rows.
        std::stable_sort(charts.begin(), charts.end(), [](const Chart* a, const Chart* b) {
            return std::make_pair(a->collapsed, a->order) < std::make_pair(b->collapsed, b->order);
        });
        // An expanded chart takes a row of its own across every column; the others fill rows in turn.
        int column = 0;
        for (Chart* c : charts) {
            if (c->expanded && !c->collapsed) {
                if (column > 0) ++row;
                m_grid->addWidget(c->stack, row++, 0, 1, columns);
                column = 0;
                continue;
            }
            m_grid->addWidget(c->stack, row, column);
            if (++column == columns) {
                column = 0;
                ++row;
            }
        }
        if (column > 0) ++row;
    }
    for (int c = 0; c < kMaxColumns; ++c) m_grid->setColumnStretch(c, c < columns ? 1 : 0);
}

void Dashboard::setExpanded(const QString& model, const QString& key, bool expanded)
{
    Chart* c = chart(model, key);
    if (!c || c->expanded == expanded) return;
    c->expanded = expanded;
    const int height = expanded ? 2 * kChartMinHeight : kChartMinHeight;
    if (!c->collapsed) {
        c->view->setMinimumHeight(height);
        c->placeholder->setMinimumHeight(height);
    }
    c->view->setToolTip(chartToolTip(*c, QString()));
    relayout(true); // the view's resize then decimates it again for its new width
}

void Dashboard::redecimateLater()
{
    // Coalesced: a window resize moves every chart at once; one pass after the layout settles.
    if (m_redecimatePending) return;
    m_redecimatePending = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_redecimatePending = false;
            for (auto& c : m_owned) {
                const int plotWidth = static_cast<int>(c->chart->plotArea().width());
                if (plotWidth == c->decimatedFor) continue;
                for (auto& l : c->lines) l->dirty = !l->raw.empty();
                redraw(*c);
            }
        },
        Qt::QueuedConnection);
}

bool Dashboard::isExpanded(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && c->expanded;
}

QRect Dashboard::gridCellOf(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    const int index = c ? m_grid->indexOf(c->stack) : -1;
    if (index < 0) return {};
    int row = 0, column = 0, rowSpan = 0, columnSpan = 0;
    m_grid->getItemPosition(index, &row, &column, &rowSpan, &columnSpan);
    return {column, row, columnSpan, rowSpan};
}

int Dashboard::columnSpanOf(const QString& model, const QString& key) const
{
    return gridCellOf(model, key).width();
}

QPoint Dashboard::cellOf(const QString& model, const QString& key) const
{
    const QRect cell = gridCellOf(model, key);
    return cell.isNull() ? QPoint(-1, -1) : QPoint(cell.y(), cell.x());
}

QString Dashboard::chartToolTip(const Chart& c, const QString& readout) const
{
    const QString hint = c.expanded ? tr("Double-click to return to the grid") : tr("Double-click to expand");
    return readout.isEmpty() ? hint : readout + QLatin1Char('\n') + hint;
}

bool Dashboard::event(QEvent* event)
{
    if (event->type() == QEvent::ParentChange) {
        if (m_watchedParent) m_watchedParent->removeEventFilter(this);
        m_watchedParent = parentWidget();
        if (m_watchedParent) m_watchedParent->installEventFilter(this);
        relayout(false);
    }
    return QWidget::event(event);
}

void Dashboard::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    relayout(false);
}

Dashboard::Chart* Dashboard::makeChart(const QString& model, const QString& key)
{
    auto c = std::make_unique<Chart>();
    if (key.startsWith(pickedPrefix())) {
        const QString metric = key.mid(pickedPrefix().size());
        c->spec = &pickedSpec(metric);
        c->order = chartSpecs().size() + static_cast<std::size_t>(m_picked.indexOf(key2(model, metric)));
    } else {
        const auto specIt = std::find_if(chartSpecs().begin(), chartSpecs().end(),
                                         [&](const ChartSpec& s) { return key == s.key; });
        c->spec = &*specIt;
        c->order = static_cast<std::size_t>(specIt - chartSpecs().begin());
    }
    const ChartSpec& spec = *c->spec;
    c->model = model;
    c->key = key;
    c->title = model + QStringLiteral(" — ") + spec.title;
    c->chart = new QChart;
    c->chart->setTitle(c->title);
    const bool perRank = std::any_of(spec.lines.begin(), spec.lines.end(), [](const LineSpec& l) { return l.perRank; });
    // A smoothed chart has one line; its raw and smoothed series need no legend.
    c->chart->legend()->setVisible(!spec.smoothable && (spec.lines.size() > 1 || perRank));
    c->chart->legend()->setAlignment(Qt::AlignBottom);
    c->chart->legend()->setShowToolTips(true); // a label elided for width still reads in full
    QFont legendFont = c->chart->legend()->font();
    legendFont.setPointSizeF(std::max(6.0, legendFont.pointSizeF() - 1.0));
    c->chart->legend()->setFont(legendFont);
    // A card of many: the room goes to the plot, not to margins and rounded corners.
    c->chart->setMargins(QMargins(4, 2, 4, 2));
    c->chart->setBackgroundRoundness(0);
    c->x = new QValueAxis;
    c->y = new QValueAxis;
    c->x->setLabelFormat(QStringLiteral("%.0f"));
    c->x->setTitleText(tr("step"));
    c->yUnit = c->y2Unit = axis::displayUnit(spec.unit, 0.0);
    c->y->setTitleText(axisTitle(spec, c->yUnit, false));
    c->chart->addAxis(c->x, Qt::AlignBottom);
    c->chart->addAxis(c->y, Qt::AlignLeft);
    if (std::any_of(spec.lines.begin(), spec.lines.end(), [](const LineSpec& l) { return l.rightAxis; })) {
        c->y2 = new QValueAxis;
        c->y2->setGridLineVisible(false);
        c->y2->setTitleText(axisTitle(spec, c->y2Unit, true));
        c->chart->addAxis(c->y2, Qt::AlignRight);
    }

    auto attach = [&](QAbstractSeries* s) {
        c->chart->addSeries(s);
        s->attachAxis(c->x);
        s->attachAxis(c->y);
    };
    // Per-rank lines come with their ranks' first samples (addLine).
    for (std::size_t i = 0; i < spec.lines.size(); ++i)
        if (!spec.lines[i].perRank) addLine(*c, i, /*rank=*/-1);
    if (spec.band) {
        // The area owns neither edge's data: the edges are plain line series replaced once per tick.
        c->band = new QAreaSeries(c->lines[1]->series, c->lines[0]->series);
        c->band->setName(tr("q10..q90"));
        attach(c->band);
        c->lines[0]->series->setParent(c->band);
        c->lines[1]->series->setParent(c->band);
    }
    if (spec.zeroLine) {
        c->zero = new QLineSeries;
        c->zero->setName(tr("flat"));
        attach(c->zero);
    }
    styleChart(*c);
    // A chart whose plot changed width (window resize, re-flow, expand) is decimated again for
    // its pixel columns, even when no new samples come (a stored run).
    connect(c->chart, &QChart::plotAreaChanged, this, [this](const QRectF&) { redecimateLater(); });
    c->view = new QChartView(c->chart);
    c->view->setMinimumSize(kChartMinWidth, kChartMinHeight);
    c->view->setRenderHint(QPainter::Antialiasing, false);
    c->view->setMouseTracking(true);
    c->view->viewport()->setMouseTracking(true);
    c->view->viewport()->installEventFilter(this);
    c->view->setToolTip(chartToolTip(*c, QString()));
    c->view->viewport()->setProperty("dashboardChart", key2(model, key));
    c->view->setContextMenuPolicy(Qt::CustomContextMenu);
    QChartView* view = c->view;
    connect(view, &QWidget::customContextMenuRequested, this, [this, model, key, view](const QPoint& pos) {
        QMenu* menu = contextMenu(model, key);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(view->viewport()->mapToGlobal(pos));
    });

    c->placeholder = new QLabel;
    c->placeholder->setAlignment(Qt::AlignCenter);
    c->placeholder->setWordWrap(true);
    c->placeholder->setMinimumSize(kChartMinWidth, kChartMinHeight);
    c->placeholder->setFrameShape(QFrame::StyledPanel);
    c->constant = new QLabel;
    c->constant->setObjectName(QStringLiteral("constantReadout"));
    c->constant->setTextInteractionFlags(Qt::TextSelectableByMouse);
    c->constant->setFrameShape(QFrame::StyledPanel);
    c->stack = new QStackedWidget;
    c->stack->addWidget(c->placeholder);
    c->stack->addWidget(c->view);
    c->stack->addWidget(c->constant);

    Chart* raw = c.get();
    m_charts.insert(key2(model, key), raw);
    m_owned.push_back(std::move(c));
    for (auto& l : raw->lines) l->dirty = !l->raw.empty();
    redraw(*raw);
    updatePlaceholder(*raw);
    return raw;
}

Dashboard::Line* Dashboard::addLine(Chart& c, std::size_t index, int rank)
{
    const ChartSpec& spec = *c.spec;
    const LineSpec& ls = spec.lines[index];
    QValueAxis* y = ls.rightAxis && c.y2 ? c.y2 : c.y;
    auto attach = [&c, y](QAbstractSeries* s) {
        c.chart->addSeries(s);
        s->attachAxis(c.x);
        s->attachAxis(y);
    };
    auto line = std::make_unique<Line>();
    line->metric = ls.metric;
    line->label = ls.label;
    if (rank >= 0) {
        line->metric += QString::number(rank);
        line->label += QLatin1Char(' ') + QString::number(rank);
    }
    line->rank = rank;
    line->smoothable = spec.smoothable;
    line->extremes = ls.extremes;
    line->raw.setCapacity(m_capacity);
    line->smooth.setCapacity(m_capacity);
    line->ema = DebiasedEma(m_smoothing);
    line->owner = &c;
    line->secondary = y == c.y2;
    line->series = new QLineSeries;
    line->series->setName(!ls.legend.isEmpty() && rank < 0 ? ls.legend : line->label);
    line->series->setMarkerSize(5.0);
    // Ranks may report in any order: keep lines and legend in rank order.
    const auto at = std::find_if(c.lines.begin(), c.lines.end(),
                                 [rank](const auto& l) { return rank >= 0 && l->rank > rank; });
    if (!(spec.band && index < 2)) {
        // A rank keeps its colour whichever ranks came first; other lines take colours in spec order.
        line->colorIndex = rank >= 0 ? rank : static_cast<int>(spec.band ? index - 2 : index);
        std::vector<QLineSeries*> later;
        for (auto it = at; it != c.lines.end(); ++it) {
            c.chart->removeSeries((*it)->series);
            later.push_back((*it)->series);
        }
        attach(line->series);
        for (QLineSeries* s : later) attach(s);
    }
    if (spec.smoothable) {
        line->smoothSeries = new QLineSeries;
        line->smoothSeries->setName(line->label + tr(" (smoothed)"));
        line->smoothSeries->setVisible(m_smoothing > 0);
        attach(line->smoothSeries);
    }
    styleLine(*line);
    const QString source = ls.session ? sessionModel() : c.model;
    m_routes[key2(source, line->metric)] << line.get();
    if (ls.session)
        for (const QPointF& p : m_sessionRss.points()) {
            line->raw.append(p.x(), p.y());
            noteValue(*line, p.y());
        }
    return c.lines.insert(at, std::move(line))->get();
}

QList<Dashboard::Line*> Dashboard::onDemandLines(const QString& model, const QString& metric)
{
    for (const ChartSpec& spec : chartSpecs()) {
        if (!spec.onDemand) continue;
        if (spec.role != ModelRole::Any && spec.role != roleOf(model)) continue;
        for (std::size_t i = 0; i < spec.lines.size(); ++i) {
            const LineSpec& ls = spec.lines[i];
            const int rank = rankOf(metric, ls);
            if (ls.perRank ? rank < 0 : metric != ls.metric) continue;
            Chart* c = chart(model, spec.key);
            if (!c) {
                c = makeChart(model, spec.key);
                relayout(true);
            }
            if (ls.perRank) addLine(*c, i, rank);
            return m_routes.value(key2(model, metric));
        }
    }
    return {};
}

void Dashboard::noteValue(Line& l, double v)
{
    if (l.samples++ == 0) l.first = v;
    else if (v != l.first) l.varies = true;
    l.minSeen = std::min(l.minSeen, v);
}

QString Dashboard::constantText(const Chart& c) const
{
    // Every line with data has held one value for kConstantAfter samples or more.
    const ChartSpec& spec = *c.spec;
    QStringList parts;
    for (const auto& l : c.lines) {
        if (l->samples == 0) continue;
        if (l->varies || l->samples < kConstantAfter) return {};
        parts << (c.lines.size() == 1 ? valueText(l->first, spec.unit)
                                      : QStringLiteral("%1 %2").arg(l->label, valueText(l->first, spec.unit)));
    }
    if (parts.isEmpty()) return {};
    return tr("%1: %2 (constant)").arg(spec.title, parts.join(QStringLiteral(", ")));
}

void Dashboard::updatePlaceholder(Chart& c)
{
    const bool hasData = std::any_of(c.lines.begin(), c.lines.end(), [&](const auto& l) {
        // The process RSS alone says nothing about this model.
        return !l->raw.empty() && l->metric != rssMetric();
    });
    const QString message = hasData ? QString() : (m_live ? tr("waiting for data") : tr("no samples in this run"));
    if (c.placeholder->text().isEmpty() || c.placeholder->property("message").toString() != message) {
        c.placeholder->setText(QStringLiteral("<b>%1</b><br>%2").arg(c.title.toHtmlEscaped(), message));
        c.placeholder->setProperty("message", message);
    }
    // A chart of one value held throughout (the loss scale of an FP32 run) is a line of text, not a
    // flat chart; it becomes a chart again when the value changes.
    const QString constant = hasData ? constantText(c) : QString();
    const bool collapse = !constant.isEmpty();
    if (collapse && c.constant->text() != constant) c.constant->setText(constant);
    if (collapse != c.collapsed) {
        c.collapsed = collapse;
        const int height = c.expanded ? 2 * kChartMinHeight : kChartMinHeight;
        // A stack is as tall as its tallest page's minimum: the chart pages give theirs up meanwhile.
        c.view->setMinimumHeight(collapse ? 0 : height);
        c.placeholder->setMinimumHeight(collapse ? 0 : height);
        c.stack->setMaximumHeight(collapse ? c.constant->sizeHint().height() : QWIDGETSIZE_MAX);
        relayout(true); // read-outs go after the model's charts
    }
    const int page = collapse ? 2 : hasData ? 1 : 0;
    if (c.stack->currentIndex() != page) c.stack->setCurrentIndex(page);
}

void Dashboard::addSamples(const MetricBatch& batch)
{
    QString model, metric;
    std::string lastModel, lastMetric;
    QList<Line*> lines;
    Held* held = nullptr;
    for (const MetricSample& s : batch) {
        if (!std::isfinite(s.value)) continue;
        if (s.model != lastModel || s.metric != lastMetric) {
            lastModel = s.model;
            lastMetric = s.metric;
            model = QString::fromStdString(s.model);
            metric = QString::fromStdString(s.metric);
            if (model != sessionModel() && model != QLatin1String("replay") && !m_order.contains(model) &&
                isChartedMetric(metric))
                addModel(model);
            lines = m_routes.value(key2(model, metric));
            if (lines.isEmpty() && m_order.contains(model)) lines = onDemandLines(model, metric);
            held = nullptr;
            if (lines.isEmpty() && m_order.contains(model) && !isChartedMetric(metric)) {
                // A scalar no chart draws: held for the picker; a picked one gets its chart now.
                const QString key = key2(model, metric);
                auto it = m_held.find(key);
                if (it == m_held.end()) it = m_held.insert(key, Held{BoundedSeries(m_capacity), {}});
                held = &*it;
                if (m_picked.contains(key)) {
                    showPicked(model, metric); // takes the held samples over
                    lines = m_routes.value(key);
                    held = nullptr;
                }
            }
        }
        const double x = static_cast<double>(s.step);
        if (held) {
            held->raw.append(x, s.value);
            if (s.wallNs > 0) noteWallTime(held->wall, held->raw, s.step, s.wallNs);
        }
        if (model == sessionModel() && metric == rssMetric()) m_sessionRss.append(x, s.value);
        for (Line* l : lines) {
            const double v = s.value;
            l->raw.append(x, v);
            noteValue(*l, v);
            if (s.wallNs > 0) noteWallTime(l->wall, l->raw, s.step, s.wallNs);
            if (l->smoothable && m_smoothing > 0) l->smooth.append(x, l->ema.push(v));
            l->dirty = true;
            l->owner->dirty = true;
        }
    }
    for (auto& c : m_owned) {
        if (!c->dirty) continue;
        c->dirty = false;
        redraw(*c);
        updatePlaceholder(*c);
    }
}

void Dashboard::noteWallTime(std::vector<std::pair<std::int64_t, std::int64_t>>& wall, const BoundedSeries& raw,
                             std::int64_t step, std::int64_t wallNs)
{
    if (!wall.empty() && wall.back().first == step) {
        wall.back().second = wallNs;
        return;
    }
    wall.emplace_back(step, wallNs);
    if (wall.size() <= 2 * raw.size() + 64) return;
    // Keep the wall times of the points still held (both are in step order).
    std::vector<std::pair<std::int64_t, std::int64_t>> kept;
    kept.reserve(raw.size());
    auto it = wall.begin();
    for (const QPointF& p : raw.points()) {
        const auto at = static_cast<std::int64_t>(p.x());
        while (it != wall.end() && it->first < at) ++it;
        if (it != wall.end() && it->first == at && (kept.empty() || kept.back().first != at)) kept.push_back(*it);
    }
    wall = std::move(kept);
}

void Dashboard::redraw(Chart& c)
{
    // Min/max per pixel column of the plot area (the axes' labels take the rest of the view).
    const int plotWidth = static_cast<int>(c.chart->plotArea().width());
    const int buckets = c.zoomBuckets > 0 ? c.zoomBuckets : std::max(100, plotWidth > 0 ? plotWidth : c.stack->width());
    c.decimatedFor = plotWidth;
    const ChartSpec& spec = *c.spec;
    // A value <= 0 has no place on a log axis: the chart goes back to linear before it is drawn.
    if (c.ylog && !logPossible(c)) switchLog(c, false);
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, lo = x0, hi = -x0, lo2 = x0, hi2 = -x0;
    for (auto& lp : c.lines) {
        Line& l = *lp;
        if (l.dirty) {
            l.dirty = false;
            l.rescale = true;
            l.decimated = l.raw.decimated(buckets, l.extremes);
            const std::vector<QPointF>& points = l.decimated;
            l.drawn = !points.empty();
            if (l.drawn) {
                l.x0 = points.front().x();
                l.x1 = points.back().x();
                l.lo = l.hi = points.front().y();
                for (const QPointF& p : points) {
                    l.lo = std::min(l.lo, p.y());
                    l.hi = std::max(l.hi, p.y());
                }
                // The percentiles of what is drawn: a few hundred values, so a selection is cheap.
                const std::size_t cut = static_cast<std::size_t>(kOutlierShare * static_cast<double>(points.size()));
                l.robustLo = l.lo;
                l.robustHi = l.hi;
                if (cut > 0) {
                    std::vector<double> ys(points.size());
                    std::transform(points.begin(), points.end(), ys.begin(), [](const QPointF& p) { return p.y(); });
                    std::nth_element(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(cut), ys.end());
                    l.robustLo = ys[cut];
                    std::nth_element(ys.begin(), ys.end() - 1 - static_cast<std::ptrdiff_t>(cut), ys.end());
                    l.robustHi = ys[ys.size() - 1 - cut];
                }
            }
            if (l.smoothSeries)
                l.smoothDecimated = m_smoothing > 0 ? l.smooth.decimated(buckets) : std::vector<QPointF>{};
        }
        if (!l.drawn) continue;
        x0 = std::min(x0, l.x0);
        x1 = std::max(x1, l.x1);
        const double low = m_ignoreOutliers ? l.robustLo : l.lo;
        const double high = m_ignoreOutliers ? l.robustHi : l.hi;
        if (l.secondary) {
            lo2 = std::min(lo2, low);
            hi2 = std::max(hi2, high);
            continue;
        }
        lo = std::min(lo, low);
        hi = std::max(hi, high);
    }
    // Each value axis reads in the unit its largest magnitude calls for (40 KiB of weights in KiB, a
    // 3 MiB peak in MiB); a change of unit draws the axis's lines again and refits it.
    auto chooseUnit = [&](axis::DisplayUnit& current, QValueAxis* ax, double low, double high, bool secondary) {
        if (!ax || !std::isfinite(low)) return;
        axis::DisplayUnit u = axis::displayUnit(spec.unit, std::max(std::abs(low), std::abs(high)));
        if (c.unitsSet && u.divisor == current.divisor) return;
        current = std::move(u);
        ax->setTitleText(axisTitle(spec, current, secondary));
        for (auto& l : c.lines)
            if (l->secondary == secondary) l->rescale = true;
        c.refit = true;
    };
    const bool wasSet = c.unitsSet;
    chooseUnit(c.yUnit, c.y, lo, hi, false);
    chooseUnit(c.y2Unit, c.y2, lo2, hi2, true);
    c.unitsSet = wasSet || std::isfinite(lo) || std::isfinite(lo2);
    for (auto& lp : c.lines) {
        Line& l = *lp;
        if (!l.rescale) continue;
        l.rescale = false;
        const double divisor = l.secondary ? c.y2Unit.divisor : c.yUnit.divisor;
        // Stepped (memory): a value holds until the next sample.
        l.series->replace(displayPoints(l.decimated, divisor, spec.stepped));
        const bool marked = l.decimated.size() < kMarkedBelow;
        if (l.series->pointsVisible() != marked) l.series->setPointsVisible(marked);
        if (l.smoothSeries) l.smoothSeries->replace(displayPoints(l.smoothDecimated, divisor, false));
    }
    if (!std::isfinite(x0)) return;
    lo /= c.yUnit.divisor;
    hi /= c.yUnit.divisor;
    lo2 /= c.y2Unit.divisor;
    hi2 /= c.y2Unit.divisor;
    if (c.zero) {
        c.zero->replace(QList<QPointF>{{x0, 0.0}, {x1, 0.0}});
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 0.0);
    }
    // Axes move only when the data leaves them (with headroom) or fills less than half
    // of them: a range change re-lays out the whole chart, which costs more than the data.
    const bool refit = std::exchange(c.refit, false);
    auto fit = [refit](QValueAxis* ax, double low, double high) {
        if (!ax || !std::isfinite(low)) return;
        const double pad = high > low ? (high - low) * 0.05 : std::max(1e-9, std::abs(high) * 0.05 + 1e-9);
        // Data that never goes negative (bytes, latency, most losses) keeps its axis at or above zero.
        const double floor = low >= 0 ? std::max(0.0, low - pad) : low - pad;
        const bool outside = low < ax->min() || high > ax->max();
        const bool loose = (high - low + 2 * pad) < 0.5 * (ax->max() - ax->min());
        if (outside || loose || refit) {
            ax->setRange(floor, high + pad);
            roundTicks(ax, floor, high + pad);
        }
    };
    if (c.ylog) fitLogAxis(c, lo, hi);
    else fit(c.y, lo, hi);
    fit(c.y2, lo2, hi2);
    const double xMax = c.x->max();
    if (!c.zoomed && (c.x->min() != x0 || x1 > xMax || (x1 - x0) < 0.8 * (xMax - x0))) {
        const double span = std::max(x1 - x0, 1.0);
        // A single step (one PPO update so far) gets a few steps either side, so its dot shows
        // between distinct tick labels.
        if (x1 - x0 < 1.0) c.x->setRange(x0 - 2.0, x1 + 2.0);
        else c.x->setRange(x0, x1 + span * 0.1);
        roundTicks(c.x, c.x->min(), c.x->max());
        c.x->setLabelFormat(QStringLiteral("%.0f")); // steps are whole
    }
}

void Dashboard::styleLine(Line& l) const
{
    const int index = std::max(0, l.colorIndex);
    const QColor base = lineColors().at(index % lineColors().size());
    if (l.colorIndex >= 0) {
        // With smoothing on the raw line is faint from the start (not only once the weight is edited),
        // in the colour of its smoothed line.
        QColor color = base;
        if (l.smoothable && m_smoothing > 0) color.setAlpha(kFadedAlpha);
        QPen pen(color);
        pen.setWidthF(1.5);
        l.series->setPen(pen);
    }
    if (l.smoothSeries) {
        QPen pen(base);
        pen.setWidthF(2.0);
        l.smoothSeries->setPen(pen);
    }
}

void Dashboard::styleChart(Chart& c) const
{
    for (auto& l : c.lines) styleLine(*l);
    if (c.band) {
        QColor fill = lineColors().at(0);
        fill.setAlpha(60);
        c.band->setBrush(fill);
        c.band->setPen(QPen(fill.darker(), 0.5));
    }
    if (c.zero) c.zero->setPen(QPen(Qt::gray, 1.0, Qt::DashLine));
}

void Dashboard::restyle()
{
    for (auto& c : m_owned) styleChart(*c);
}

void Dashboard::recomputeSmoothing(Line& l)
{
    l.ema = DebiasedEma(m_smoothing);
    l.smooth.clear();
    if (m_smoothing <= 0) return;
    for (const QPointF& p : l.raw.points()) l.smooth.append(p.x(), l.ema.push(p.y()));
}

void Dashboard::setIgnoreOutliers(bool ignore)
{
    if (ignore == m_ignoreOutliers) return;
    m_ignoreOutliers = ignore;
    if (m_outliersBox->isChecked() != ignore) {
        const QSignalBlocker block(m_outliersBox);
        m_outliersBox->setChecked(ignore);
    }
    for (auto& c : m_owned) {
        c->refit = true;
        redraw(*c);
    }
}

QPair<double, double> Dashboard::yRange(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    if (c && c->ylog) return qMakePair(c->ylog->min(), c->ylog->max());
    return c ? qMakePair(c->y->min(), c->y->max()) : QPair<double, double>(0.0, 0.0);
}

void Dashboard::setSmoothing(double weight)
{
    weight = std::clamp(weight, 0.0, 0.99);
    if (weight == m_smoothing) return;
    m_smoothing = weight;
    if (m_smoothingBox->value() != weight) {
        const QSignalBlocker block(m_smoothingBox);
        m_smoothingBox->setValue(weight);
    }
    for (auto& c : m_owned) {
        for (auto& l : c->lines) {
            if (!l->smoothable) continue;
            recomputeSmoothing(*l);
            styleLine(*l);
            l->smoothSeries->setVisible(weight > 0);
            l->dirty = true;
        }
        redraw(*c);
    }
}

Dashboard::Chart* Dashboard::chart(const QString& model, const QString& key) const
{
    return m_charts.value(key2(model, key));
}

Dashboard::Line* Dashboard::lineFor(const QString& model, const QString& metric) const
{
    const QString source = metric == rssMetric() ? sessionModel() : model;
    for (Line* l : m_routes.value(key2(source, metric)))
        if (l->owner->model == model) return l;
    return nullptr;
}

QStringList Dashboard::chartsOf(const QString& model) const
{
    QStringList keys;
    for (const auto& c : m_owned)
        if (c->model == model) keys << c->key;
    return keys;
}

int Dashboard::pointCount(const QString& model, const QString& metric) const
{
    const Line* l = lineFor(model, metric);
    return l ? static_cast<int>(l->raw.size()) : 0;
}

QList<QPointF> Dashboard::shownPoints(const QString& model, const QString& metric) const
{
    const Line* l = lineFor(model, metric);
    return l ? l->series->points() : QList<QPointF>{};
}

QList<QPointF> Dashboard::smoothedPoints(const QString& model, const QString& metric) const
{
    const Line* l = lineFor(model, metric);
    return l && l->smoothSeries ? l->smoothSeries->points() : QList<QPointF>{};
}

QList<QPointF> Dashboard::bandEdge(const QString& model, bool upper) const
{
    const Chart* c = chart(model, QStringLiteral("forecast"));
    if (!c || !c->band) return {};
    const QLineSeries* edge = upper ? c->band->upperSeries() : c->band->lowerSeries();
    return edge ? edge->points() : QList<QPointF>{};
}

QStringList Dashboard::lineLabels(const QString& model, const QString& key) const
{
    QStringList labels;
    if (const Chart* c = chart(model, key))
        for (const auto& l : c->lines) labels << l->label;
    return labels;
}

QString Dashboard::chartMessage(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c ? c->placeholder->property("message").toString() : QString();
}

QString Dashboard::constantReadout(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && c->collapsed ? c->constant->text() : QString();
}

QPair<QString, double> Dashboard::yAxisUnit(const QString& model, const QString& key, bool right) const
{
    const Chart* c = chart(model, key);
    const QValueAxis* ax = c ? (right ? c->y2 : c->y) : nullptr;
    if (!ax) return {QString(), 0.0};
    return {ax->titleText(), right ? c->y2Unit.divisor : c->yUnit.divisor};
}

QChartView* Dashboard::chartView(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c ? c->view : nullptr;
}

QString Dashboard::hoverAt(const QString& model, const QString& key, const QPoint& viewportPos)
{
    Chart* c = chart(model, key);
    if (!c || c->lines.empty()) return {};
    const QPointF itemPos = c->chart->mapFromScene(c->view->mapToScene(viewportPos));
    if (!c->chart->plotArea().contains(itemPos)) return {};
    Line* primary = nullptr;
    for (auto& l : c->lines)
        if (!l->raw.empty()) {
            primary = l.get();
            break;
        }
    if (!primary) return {};
    const QPointF value = c->chart->mapToValue(itemPos); // every series shares the chart's axes
    const std::optional<QPointF> anchor = primary->raw.nearest(value.x());
    const metrics::Unit unit = c->spec->unit;
    QStringList parts;
    for (auto& l : c->lines) {
        const std::optional<QPointF> p = l->raw.nearest(anchor->x());
        if (!p) continue;
        parts << QStringLiteral("%1 %2").arg(l->label, valueText(p->y(), unit));
        if (l->smoothable && m_smoothing > 0)
            if (const auto s = l->smooth.nearest(anchor->x())) parts << tr("smoothed %1").arg(valueText(s->y(), unit));
    }
    const QString text = QStringLiteral("%1 · step %2 · %3")
                             .arg(c->title, QString::number(static_cast<qlonglong>(anchor->x())),
                                  parts.join(QStringLiteral(", ")));
    m_readout->setText(text);
    c->view->setToolTip(chartToolTip(*c, text));
    return text;
}

QString Dashboard::hoverText() const
{
    return m_readout->text();
}

bool Dashboard::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_watchedParent && event->type() == QEvent::Resize) relayout(false);
    const QEvent::Type type = event->type();
    if (type != QEvent::MouseButtonDblClick && type != QEvent::MouseMove && type != QEvent::Wheel &&
        type != QEvent::MouseButtonPress && type != QEvent::MouseButtonRelease && type != QEvent::Leave)
        return QWidget::eventFilter(watched, event);
    // A chart's viewport carries "model/key".
    const QString id = watched->property("dashboardChart").toString();
    const qsizetype slash = id.indexOf(QLatin1Char('/'));
    Chart* c = slash > 0 ? chart(id.left(slash), id.mid(slash + 1)) : nullptr;
    if (!c) return QWidget::eventFilter(watched, event);
    const QString model = c->model, key = c->key;
    auto valueAt = [c](const QPointF& viewportPos) {
        return c->chart->mapToValue(c->chart->mapFromScene(c->view->mapToScene(viewportPos.toPoint()))).x();
    };
    switch (type) {
    case QEvent::MouseButtonDblClick:
        // A zoomed chart goes back to its whole range first; otherwise double-click expands.
        if (c->zoomed) resetZoom(model, key);
        else setExpanded(model, key, !isExpanded(model, key));
        return true;
    case QEvent::Wheel: {
        // The wheel zooms the steps axis around the mouse: a notch is 15 % in or out.
        // Outside the plot (axes, title, legend) the wheel still scrolls the dashboard.
        auto* wheel = static_cast<QWheelEvent*>(event);
        const int delta = wheel->angleDelta().y();
        const QPointF item = c->chart->mapFromScene(c->view->mapToScene(wheel->position().toPoint()));
        if (delta == 0 || !c->chart->plotArea().contains(item)) return false;
        zoomX(model, key, std::pow(0.85, delta / 120.0), valueAt(wheel->position()));
        return true;
    }
    case QEvent::MouseButtonPress: {
        auto* mouse = static_cast<QMouseEvent*>(event);
        if (mouse->button() != Qt::LeftButton) break;
        m_dragChart = id;
        m_dragRange = qMakePair(c->x->min(), c->x->max());
        m_dragStart = mouse->position();
        break;
    }
    case QEvent::MouseButtonRelease: m_dragChart.clear(); break;
    case QEvent::Leave: hideCrosshair(model); break;
    case QEvent::MouseMove: {
        auto* mouse = static_cast<QMouseEvent*>(event);
        if (m_dragChart == id && (mouse->buttons() & Qt::LeftButton)) {
            // Dragging pans: the data follows the mouse.
            const double width = c->chart->plotArea().width();
            const double dx = mouse->position().x() - m_dragStart.x();
            // A click that moves a pixel or two is not a drag: it must not freeze the axis.
            if (width > 0 && (c->zoomed || std::abs(dx) >= QApplication::startDragDistance())) {
                const double steps = -dx * (m_dragRange.second - m_dragRange.first) / width;
                c->zoomed = true;
                c->x->setRange(m_dragRange.first + steps, m_dragRange.second + steps);
            }
            return true;
        }
        hoverAt(model, key, mouse->position().toPoint());
        const QPointF item = c->chart->mapFromScene(c->view->mapToScene(mouse->position().toPoint()));
        if (c->chart->plotArea().contains(item)) setCrosshair(model, valueAt(mouse->position()));
        else hideCrosshair(model);
        break;
    }
    default: break;
    }
    return QWidget::eventFilter(watched, event);
}

// --- log scale ---------------------------------------------------------------

bool Dashboard::logPossible(const Chart& c) const
{
    if (c.zero || c.band) return false;
    bool any = false;
    for (const auto& l : c.lines) {
        if (l->secondary || l->samples == 0) continue;
        if (!(l->minSeen > 0.0)) return false;
        any = true;
    }
    return any;
}

bool Dashboard::logScaleAvailable(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && logPossible(*c);
}

bool Dashboard::isLogScale(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && c->ylog;
}

void Dashboard::switchLog(Chart& c, bool on)
{
    if (on == (c.ylog != nullptr)) return;
    std::vector<QAbstractSeries*> left;
    for (auto& l : c.lines) {
        if (l->secondary) continue;
        left.push_back(l->series);
        if (l->smoothSeries) left.push_back(l->smoothSeries);
    }
    if (on) {
        c.ylog = new QLogValueAxis;
        c.ylog->setBase(10.0);
        c.ylog->setLabelFormat(QStringLiteral("%g"));
        c.ylog->setMinorTickCount(8);
        c.ylog->setTitleText(c.y->titleText() + tr(", log"));
        c.chart->addAxis(c.ylog, Qt::AlignLeft);
        for (QAbstractSeries* s : left) {
            s->detachAxis(c.y);
            s->attachAxis(c.ylog);
        }
        c.y->setVisible(false);
    } else {
        for (QAbstractSeries* s : left) {
            s->detachAxis(c.ylog);
            s->attachAxis(c.y);
        }
        c.chart->removeAxis(c.ylog);
        delete c.ylog;
        c.ylog = nullptr;
        c.y->setVisible(true);
    }
    c.refit = true;
}

bool Dashboard::setLogScale(const QString& model, const QString& key, bool on)
{
    Chart* c = chart(model, key);
    if (!c || (on && !logPossible(*c))) return false;
    switchLog(*c, on);
    redraw(*c);
    return true;
}

void Dashboard::fitLogAxis(Chart& c, double lo, double hi)
{
    if (!(lo > 0.0) || !std::isfinite(hi)) return;
    // Whole decades, so every major tick is a power of ten.
    const double min = std::pow(10.0, std::floor(std::log10(lo)));
    double max = std::pow(10.0, std::ceil(std::log10(hi)));
    if (max <= min) max = min * 10.0;
    if (c.ylog->min() != min || c.ylog->max() != max) c.ylog->setRange(min, max);
    c.refit = false;
}

// --- zoom and pan ------------------------------------------------------------

QPair<double, double> Dashboard::xRange(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c ? qMakePair(c->x->min(), c->x->max()) : QPair<double, double>(0.0, 0.0);
}

bool Dashboard::isZoomed(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && c->zoomed;
}

void Dashboard::zoomX(const QString& model, const QString& key, double factor, double centre)
{
    Chart* c = chart(model, key);
    if (!c || !(factor > 0.0)) return;
    const double min = c->x->min(), max = c->x->max();
    // Not narrower than two steps: a step is the finest thing a series holds.
    const double span = std::max(2.0, (max - min) * factor);
    const double share = max > min ? std::clamp((centre - min) / (max - min), 0.0, 1.0) : 0.5;
    const double newMin = centre - share * span;
    c->zoomed = true;
    c->x->setRange(newMin, newMin + span);
    roundTicks(c->x, newMin, newMin + span);
    c->x->setLabelFormat(QStringLiteral("%.0f"));
    // Decimate the whole series into as many more buckets as the zoom shows less of it (up to
    // kMaxZoomDetail times), so the part on screen keeps about one min/max pair per pixel. Fixed
    // until the next zoom, so the incremental decimation keeps its cache while samples arrive.
    double first = std::numeric_limits<double>::infinity(), last = -first;
    for (const auto& l : c->lines)
        if (!l->raw.empty()) {
            first = std::min(first, l->raw.points().front().x());
            last = std::max(last, l->raw.points().back().x());
        }
    const int plotArea = static_cast<int>(c->chart->plotArea().width());
    const int plotWidth = std::max(100, plotArea > 0 ? plotArea : c->stack->width()); // as redraw() counts
    const double detail = std::isfinite(first) ? std::clamp((last - first) / span, 1.0, kMaxZoomDetail) : 1.0;
    const int buckets = detail > 1.0 ? static_cast<int>(plotWidth * detail) : 0;
    if (buckets != c->zoomBuckets) {
        c->zoomBuckets = buckets;
        for (auto& l : c->lines) l->dirty = !l->raw.empty();
        redraw(*c);
    }
}

void Dashboard::panX(const QString& model, const QString& key, double steps)
{
    Chart* c = chart(model, key);
    if (!c) return;
    c->zoomed = true;
    c->x->setRange(c->x->min() + steps, c->x->max() + steps);
}

void Dashboard::resetZoom(const QString& model, const QString& key)
{
    Chart* c = chart(model, key);
    if (!c || !c->zoomed) return;
    c->zoomed = false;
    if (std::exchange(c->zoomBuckets, 0) > 0)
        for (auto& l : c->lines) l->dirty = !l->raw.empty();
    // Any range the data does not start at is refitted by the next redraw.
    c->x->setRange(c->x->min() - 1.0, c->x->max());
    redraw(*c);
}

// --- crosshair ---------------------------------------------------------------

void Dashboard::setCrosshair(const QString& model, double x)
{
    for (auto& cp : m_owned) {
        Chart& c = *cp;
        if (c.model != model) continue;
        const bool inside = !c.collapsed && !c.lines.empty() && x >= c.x->min() && x <= c.x->max();
        const Line* anchor = nullptr;
        for (const auto& l : c.lines)
            if (!l->raw.empty()) {
                anchor = l.get();
                break;
            }
        if (!inside || !anchor) {
            if (c.cross) c.cross->hide();
            if (c.crossText) c.crossText->hide();
            continue;
        }
        if (!c.cross) {
            c.cross = new QGraphicsLineItem(c.chart);
            c.cross->setPen(QPen(QColor(128, 128, 128, 180), 1.0, Qt::DashLine));
            c.cross->setZValue(10);
            c.crossText = new QGraphicsSimpleTextItem(c.chart);
            c.crossText->setZValue(11);
            QFont font = c.crossText->font();
            font.setPointSizeF(std::max(6.0, font.pointSizeF() - 1.0));
            c.crossText->setFont(font);
        }
        const QRectF plot = c.chart->plotArea();
        // The steps axis is linear whatever the value axis.
        const double px = plot.left() + (x - c.x->min()) / (c.x->max() - c.x->min()) * plot.width();
        c.cross->setLine(px, plot.top(), px, plot.bottom());
        const metrics::Unit unit = c.spec->unit;
        QStringList parts;
        for (const auto& l : c.lines) {
            const std::optional<QPointF> p = l->raw.nearest(x);
            if (p) parts << QStringLiteral("%1 %2").arg(l->label, valueText(p->y(), unit));
        }
        c.crossText->setText(
            QStringLiteral("step %1\n%2").arg(QString::number(std::llround(x)), parts.join(QLatin1Char('\n'))));
        c.crossText->setBrush(c.chart->titleBrush());
        // Beside the line, on the side with room.
        const QRectF box = c.crossText->boundingRect();
        const double tx = px + 4 + box.width() <= plot.right() ? px + 4 : px - 4 - box.width();
        c.crossText->setPos(tx, plot.top() + 2);
        c.cross->show();
        c.crossText->show();
    }
}

void Dashboard::hideCrosshair(const QString& model)
{
    for (auto& c : m_owned) {
        if (c->model != model) continue;
        if (c->cross) c->cross->hide();
        if (c->crossText) c->crossText->hide();
    }
}

QString Dashboard::crosshairText(const QString& model, const QString& key) const
{
    const Chart* c = chart(model, key);
    return c && c->crossText && c->crossText->isVisible() ? c->crossText->text() : QString();
}

// --- export ------------------------------------------------------------------

namespace {

std::string number(double v)
{
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v); // shortest text that reads back the same
    return std::string(buf, r.ptr);
}

bool writeAtomically(const QString& path, std::string_view bytes, QString* error)
{
    try {
        writeFileAtomically(path.toStdString(), bytes);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
}

} // namespace

bool Dashboard::exportCsv(const QString& model, const QString& key, const QString& path, QString* error) const
{
    const Chart* c = chart(model, key);
    if (!c) {
        if (error) *error = tr("no chart %1 of %2").arg(key, model);
        return false;
    }
    const std::string unit(metrics::symbol(c->spec->unit));
    std::string out = "step,wall_time";
    for (const auto& l : c->lines) {
        out += ',';
        const std::string label = l->label.toStdString();
        appendCsvField(out, unit.empty() ? label : label + " (" + unit + ")");
    }
    out += '\n';
    // One row per step any line holds; a line without that step leaves its cell empty.
    struct Row {
        std::vector<std::optional<double>> values;
        std::int64_t wallNs = 0;
    };
    std::map<std::int64_t, Row> rows;
    for (std::size_t i = 0; i < c->lines.size(); ++i) {
        const Line& l = *c->lines[i];
        for (const QPointF& p : l.raw.points()) {
            Row& row = rows[static_cast<std::int64_t>(p.x())];
            row.values.resize(c->lines.size());
            row.values[i] = p.y();
        }
        for (const auto& [step, wallNs] : l.wall) {
            const auto it = rows.find(step);
            if (it != rows.end() && it->second.wallNs == 0) it->second.wallNs = wallNs;
        }
    }
    for (const auto& [step, row] : rows) {
        out += std::to_string(step);
        out += ',';
        if (row.wallNs > 0)
            out +=
                QDateTime::fromMSecsSinceEpoch(row.wallNs / 1000000, Qt::UTC).toString(Qt::ISODateWithMs).toStdString();
        for (std::size_t i = 0; i < c->lines.size(); ++i) {
            out += ',';
            if (i < row.values.size() && row.values[i]) out += number(*row.values[i]);
        }
        out += '\n';
    }
    return writeAtomically(path, out, error);
}

bool Dashboard::exportImage(const QString& model, const QString& key, const QString& path, QString* error) const
{
    const Chart* c = chart(model, key);
    if (!c) {
        if (error) *error = tr("no chart %1 of %2").arg(key, model);
        return false;
    }
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    // The chart as laid out on screen; a chart never shown yet gets its minimum size.
    const QSize size =
        c->view->size().expandedTo(c->view->minimumSize()).expandedTo(QSize(kChartMinWidth, kChartMinHeight));
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(c->title);
        QPainter painter(&svg);
        c->view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)),
                        QRect(QPoint(0, 0), c->view->viewport()->size()));
        painter.end();
    } else {
        QPixmap pixmap(size);
        pixmap.fill(Qt::white);
        QPainter painter(&pixmap);
        c->view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)),
                        QRect(QPoint(0, 0), c->view->viewport()->size()));
        painter.end();
        if (!pixmap.save(&buffer, "PNG")) {
            if (error) *error = tr("cannot encode %1 as PNG").arg(path);
            return false;
        }
    }
    return writeAtomically(path, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), error);
}

void Dashboard::exportWithDialog(const QString& model, const QString& key, const QString& kind)
{
    const Chart* c = chart(model, key);
    if (!c || qEnvironmentVariableIsSet("FOXHUNT_NO_DIALOGS")) return;
    const QString filter = kind == QLatin1String("csv")   ? tr("CSV (*.csv)")
                           : kind == QLatin1String("svg") ? tr("SVG image (*.svg)")
                                                          : tr("PNG image (*.png)");
    QString path = QFileDialog::getSaveFileName(this, tr("Export chart"),
                                                QStringLiteral("%1-%2.%3").arg(model, key, kind), filter);
    if (path.isEmpty()) return;
    if (!path.endsWith(QLatin1Char('.') + kind, Qt::CaseInsensitive)) path += QLatin1Char('.') + kind;
    QString error;
    const bool ok = kind == QLatin1String("csv") ? exportCsv(model, key, path, &error)
                                                 : exportImage(model, key, path, &error);
    m_readout->setText(ok ? tr("Wrote %1").arg(path) : tr("Export failed: %1").arg(error));
}

QMenu* Dashboard::contextMenu(const QString& model, const QString& key)
{
    Chart* c = chart(model, key);
    if (!c) return nullptr;
    auto* menu = new QMenu(this);
    QAction* log = menu->addAction(tr("Log scale"));
    log->setObjectName(QStringLiteral("logScale"));
    log->setCheckable(true);
    log->setChecked(c->ylog != nullptr);
    // Offered only where every value is > 0.
    log->setEnabled(logPossible(*c));
    if (!log->isEnabled()) log->setToolTip(tr("Only for charts whose every value is above zero"));
    connect(log, &QAction::toggled, this, [this, model, key](bool on) { setLogScale(model, key, on); });
    QAction* reset = menu->addAction(tr("Reset zoom"));
    reset->setObjectName(QStringLiteral("resetZoom"));
    reset->setEnabled(c->zoomed);
    connect(reset, &QAction::triggered, this, [this, model, key] { resetZoom(model, key); });
    menu->addSeparator();
    for (const char* kind : {"csv", "png", "svg"}) {
        const QString k = QLatin1String(kind);
        QAction* a = menu->addAction(k == QLatin1String("csv")   ? tr("Export data as CSV…")
                                     : k == QLatin1String("png") ? tr("Export chart as PNG…")
                                                                 : tr("Export chart as SVG…"));
        a->setObjectName(QStringLiteral("export_") + k);
        connect(a, &QAction::triggered, this, [this, model, key, k] { exportWithDialog(model, key, k); });
    }
    return menu;
}

QString Dashboard::pickedChartKey(const QString& metric)
{
    return pickedPrefix() + metric;
}

QStringList Dashboard::pickableMetrics(const QString& model) const
{
    QStringList names;
    const QString prefix = model + QLatin1Char('/');
    for (auto it = m_held.begin(); it != m_held.end(); ++it)
        if (it.key().startsWith(prefix) && !it->raw.empty()) names << it.key().mid(prefix.size());
    for (const auto& c : m_owned) // picked and shown: their line holds the samples
        if (c->model == model && c->key.startsWith(pickedPrefix())) names << c->key.mid(pickedPrefix().size());
    // The registry's order (tables list them so); names it does not know after, by name.
    const auto rank = [](const QString& name) {
        const auto& all = metrics::all();
        const std::string n = name.toStdString();
        const auto at = std::find_if(all.begin(), all.end(), [&](const metrics::Metric& m) { return m.name == n; });
        return static_cast<std::size_t>(at - all.begin());
    };
    std::sort(names.begin(), names.end(), [&](const QString& a, const QString& b) {
        return std::make_pair(rank(a), a) < std::make_pair(rank(b), b);
    });
    return names;
}

bool Dashboard::isMetricShown(const QString& model, const QString& metric) const
{
    return chart(model, pickedChartKey(metric)) != nullptr;
}

bool Dashboard::setMetricShown(const QString& model, const QString& metric, bool shown)
{
    if (metric.isEmpty() || isChartedMetric(metric) || model == sessionModel()) return false;
    const QString key = key2(model, metric);
    if (shown == m_picked.contains(key)) return true;
    if (shown) {
        m_picked << key;
        if (m_order.contains(model) && m_held.contains(key)) showPicked(model, metric);
    } else {
        m_picked.removeAll(key);
        removeChart(model, pickedChartKey(metric));
    }
    Q_EMIT pickedMetricsChanged(m_picked);
    return true;
}

void Dashboard::setPickedMetrics(const QStringList& picked)
{
    for (const QString& key : m_picked)
        if (!picked.contains(key)) {
            const qsizetype slash = key.indexOf(QLatin1Char('/'));
            removeChart(key.left(slash), pickedChartKey(key.mid(slash + 1)));
        }
    m_picked.clear();
    for (const QString& key : picked) {
        const qsizetype slash = key.indexOf(QLatin1Char('/'));
        if (slash <= 0 || isChartedMetric(key.mid(slash + 1)) || m_picked.contains(key)) continue;
        m_picked << key;
        const QString model = key.left(slash), metric = key.mid(slash + 1);
        if (m_order.contains(model) && m_held.contains(key) && !isMetricShown(model, metric)) showPicked(model, metric);
    }
}

void Dashboard::showPicked(const QString& model, const QString& metric)
{
    const QString key = pickedChartKey(metric);
    if (chart(model, key)) return;
    Chart* c = makeChart(model, key);
    // The chart's line holds the samples from now on (removeChart() gives them back).
    if (const auto it = m_held.find(key2(model, metric)); it != m_held.end()) {
        Line& l = *c->lines.front();
        l.raw = std::move(it->raw);
        l.wall = std::move(it->wall);
        for (const QPointF& p : l.raw.points()) noteValue(l, p.y());
        if (m_smoothing > 0) recomputeSmoothing(l);
        l.dirty = !l.raw.empty();
        m_held.erase(it);
    }
    redraw(*c);
    updatePlaceholder(*c);
    relayout(true);
}

void Dashboard::removeChart(const QString& model, const QString& key)
{
    Chart* c = chart(model, key);
    if (!c) return;
    if (key.startsWith(pickedPrefix())) {
        // A picked metric's samples stay on offer in the picker.
        Line& l = *c->lines.front();
        m_held.insert(key2(model, l.metric), Held{std::move(l.raw), std::move(l.wall)});
    }
    for (const auto& l : c->lines) {
        const QString route = key2(l->metric == rssMetric() ? sessionModel() : model, l->metric);
        auto it = m_routes.find(route);
        if (it == m_routes.end()) continue;
        it->removeAll(l.get());
        if (it->isEmpty()) m_routes.erase(it);
    }
    if (m_dragChart == key2(model, key)) m_dragChart.clear();
    m_grid->removeWidget(c->stack);
    delete c->stack; // the view, the chart and its series with it
    m_charts.remove(key2(model, key));
    m_owned.erase(std::find_if(m_owned.begin(), m_owned.end(), [c](const auto& owned) { return owned.get() == c; }));
    relayout(true);
}

void Dashboard::fillPicker()
{
    QMenu* menu = m_picker->menu();
    menu->clear();
    bool any = false;
    for (const QString& model : std::as_const(m_order)) {
        const QStringList names = pickableMetrics(model);
        if (names.isEmpty()) continue;
        menu->addSection(displayName(model));
        for (const QString& name : names) {
            QAction* a = menu->addAction(QString::fromStdString(metrics::label(name.toStdString())));
            a->setObjectName(key2(model, name));
            a->setCheckable(true);
            a->setChecked(isMetricShown(model, name));
            connect(a, &QAction::toggled, this, [this, model, name](bool on) { setMetricShown(model, name, on); });
            any = true;
        }
    }
    if (!any)
        menu->addAction(m_order.isEmpty() ? tr("No run shown") : tr("No other metrics logged yet"))->setEnabled(false);
}

bool Dashboard::fromStore(const RunStore& store, std::int64_t runId)
{
    const std::optional<RunInfo> info = store.run(runId);
    if (!info) return false;
    clear();
    QStringList models;
    const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(info->configJson)).object();
    for (const QJsonValue& m : config.value(QStringLiteral("models")).toArray()) models << m.toString();
    setModels(models);
    m_live = false;
    addSamples(store.metrics(runId));
    for (const EvaluationRecord& e : store.evaluations(runId)) {
        if (e.split != "validation") continue;
        const QJsonObject v = QJsonDocument::fromJson(QByteArray::fromStdString(e.resultJson)).object();
        setInt8Summary(QString::fromStdString(e.model), v.value(QStringLiteral("int8")).toObject());
    }
    setLive(info->status == RunStatus::Running);
    return true;
}

void Dashboard::setResultDocument(const QByteArray& resultJson)
{
    const QJsonObject models = QJsonDocument::fromJson(resultJson).object().value(QStringLiteral("models")).toObject();
    for (auto it = models.begin(); it != models.end(); ++it)
        setInt8Summary(it.key(), it.value()
                                     .toObject()
                                     .value(QStringLiteral("validation"))
                                     .toObject()
                                     .value(QStringLiteral("int8"))
                                     .toObject());
}

namespace {

QString milliseconds(const QJsonObject& latency, const QString& key, const char* percentile)
{
    const QJsonValue v = latency.value(key).toObject().value(QLatin1String(percentile));
    return v.isDouble() ? QString::number(v.toDouble(), 'f', 3) : QStringLiteral("n/a");
}

QString megabytes(const QJsonValue& v)
{
    return v.isDouble() ? QString::number(v.toDouble() / (1024.0 * 1024.0), 'f', 2) + QStringLiteral(" MiB")
                        : QStringLiteral("n/a");
}

/// The seed-style INT8 summary of one model as an HTML table plus one line of verdict.
QString int8SummaryHtml(const QJsonObject& q)
{
    if (q.contains(QStringLiteral("error")))
        return Dashboard::tr("INT8: %1").arg(q.value(QStringLiteral("error")).toString().toHtmlEscaped());
    const QJsonObject latency = q.value(QStringLiteral("latency")).toObject();
    const QJsonObject throughput = q.value(QStringLiteral("throughput")).toObject();
    QString html = QStringLiteral(
        "<table cellspacing=\"0\" cellpadding=\"2\" border=\"1\"><tr><th></th>"
        "<th>P50 b1</th><th>P95 b1</th><th>P99 b1</th><th>P50 b32</th><th>P95 b32</th>"
        "<th>P99 b32</th><th>inferences/s b32</th><th>weights</th><th>at serving batch</th></tr>");
    for (const char* prec : {"fp32", "int8"}) {
        const QString p = QLatin1String(prec);
        html += QStringLiteral("<tr><td><b>%1</b></td>").arg(p.toUpper());
        for (const char* batch : {"_b1", "_b32"})
            for (const char* pct : {"p50_ms", "p95_ms", "p99_ms"})
                html += QStringLiteral("<td>%1 ms</td>").arg(milliseconds(latency, p + QLatin1String(batch), pct));
        const QJsonValue tp = throughput.value(p + QStringLiteral("_b32"));
        html += QStringLiteral("<td>%1</td><td>%2</td><td>%3</td></tr>")
                    .arg(tp.isDouble() ? QString::number(tp.toDouble(), 'f', 0) : QStringLiteral("n/a"),
                         megabytes(q.value(p + QStringLiteral("_bytes"))),
                         megabytes(q.value(p + QStringLiteral("_serving_bytes"))));
    }
    html += QStringLiteral("</table>");
    const QJsonValue degradation = q.value(QStringLiteral("degradation"));
    QString verdict = q.value(QStringLiteral("verdict")).toString();
    if (verdict.isEmpty())
        verdict = q.value(QStringLiteral("served")).toBool(true) ? Dashboard::tr("served")
                                                                 : Dashboard::tr("not served");
    html += Dashboard::tr("INT8 degradation %1, backend %2: %3")
                .arg(degradation.isDouble()
                         ? QString::number(100.0 * degradation.toDouble(), 'f', 2) + QStringLiteral(" %")
                         : QStringLiteral("n/a"),
                     q.value(QStringLiteral("backend")).toString().toHtmlEscaped(), verdict.toHtmlEscaped());
    return html;
}

} // namespace

void Dashboard::setInt8Summary(const QString& model, const QJsonObject& int8)
{
    if (int8.isEmpty() || !m_order.contains(model)) return;
    QLabel* label = m_int8Summaries.value(model);
    if (!label) {
        label = new QLabel;
        label->setObjectName(QStringLiteral("int8Summary"));
        label->setTextFormat(Qt::RichText);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_int8Summaries.insert(model, label);
        relayout(true);
    }
    label->setText(int8SummaryHtml(int8));
}

QString Dashboard::int8Summary(const QString& model) const
{
    const QLabel* label = m_int8Summaries.value(model);
    if (!label) return {};
    QTextDocument doc;
    doc.setHtml(label->text());
    return doc.toPlainText();
}

} // namespace foxhunt
