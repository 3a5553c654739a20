// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/dashboard.h"

#include "ui/metric_chart.h"

#include "engine/store/run_store.h"
#include "engine/telemetry/metric_registry.h"

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>

#include <QAbstractScrollArea>
#include <QApplication>
#include <QFileDialog>
#include <QMenu>
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
#include <map>
#include <utility>

namespace foxhunt {

namespace {

/// At most this many charts per row, however wide the window.
constexpr int kMaxColumns = 6;

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

QString key2(const QString& a, const QString& b)
{
    return a + QLatin1Char('/') + b;
}

} // namespace

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
        m_grid->removeWidget(c->widget());
        delete c->widget();
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
    for (auto& c : m_owned) c->setCapacity(capacity);
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
    const int columns = std::clamp((availableWidth() + spacing) / (MetricChart::kMinWidth + spacing), 1, kMaxColumns);
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
        std::vector<MetricChart*> charts;
        for (const auto& c : m_owned)
            if (c->model() == model) charts.push_back(c.get());
        // One-line read-outs of constant series come after the charts, so they share short rows.
        std::stable_sort(charts.begin(), charts.end(), [](const MetricChart* a, const MetricChart* b) {
            return std::make_pair(a->collapsed(), a->order()) < std::make_pair(b->collapsed(), b->order());
        });
        // An expanded chart takes a row of its own across every column; the others fill rows in turn.
        int column = 0;
        for (MetricChart* c : charts) {
            if (c->expanded() && !c->collapsed()) {
                if (column > 0) ++row;
                m_grid->addWidget(c->widget(), row++, 0, 1, columns);
                column = 0;
                continue;
            }
            m_grid->addWidget(c->widget(), row, column);
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
    MetricChart* c = chart(model, key);
    if (!c || c->expanded() == expanded) return;
    c->setExpanded(expanded);
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
            for (auto& c : m_owned) c->redecimate();
        },
        Qt::QueuedConnection);
}

bool Dashboard::isExpanded(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c && c->expanded();
}

QRect Dashboard::gridCellOf(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    const int index = c ? m_grid->indexOf(c->widget()) : -1;
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

MetricChart* Dashboard::makeChart(const QString& model, const QString& key)
{
    const ChartSpec* spec = nullptr;
    std::size_t order = 0;
    if (key.startsWith(pickedPrefix())) {
        const QString metric = key.mid(pickedPrefix().size());
        spec = &pickedSpec(metric);
        order = chartSpecs().size() + static_cast<std::size_t>(m_picked.indexOf(key2(model, metric)));
    } else {
        const auto specIt = std::find_if(chartSpecs().begin(), chartSpecs().end(),
                                         [&](const ChartSpec& s) { return key == s.key; });
        spec = &*specIt;
        order = static_cast<std::size_t>(specIt - chartSpecs().begin());
    }
    auto c = std::make_unique<MetricChart>(model, *spec, order, ChartStyle{m_smoothing, m_ignoreOutliers, m_capacity});
    for (const auto& l : c->lines()) routeLine(*l);
    // A chart whose plot changed width (window resize, re-flow, expand) is decimated again for
    // its pixel columns, even when no new samples come (a stored run).
    connect(c->chart(), &QChart::plotAreaChanged, this, [this](const QRectF&) { redecimateLater(); });
    QChartView* view = c->view();
    view->viewport()->installEventFilter(this);
    view->viewport()->setProperty("dashboardChart", key2(model, key));
    connect(view, &QWidget::customContextMenuRequested, this, [this, model, key, view](const QPoint& pos) {
        QMenu* menu = contextMenu(model, key);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(view->viewport()->mapToGlobal(pos));
    });

    MetricChart* raw = c.get();
    m_charts.insert(key2(model, key), raw);
    m_owned.push_back(std::move(c));
    raw->redrawAll();
    updatePlaceholder(*raw);
    return raw;
}

void Dashboard::routeLine(MetricLine& line)
{
    const QString source = line.session ? sessionModel() : line.owner->model();
    m_routes[key2(source, line.metric)] << &line;
    if (line.session)
        for (const QPointF& p : m_sessionRss.points()) {
            line.raw.append(p.x(), p.y());
            line.noteValue(p.y());
        }
}

QList<MetricLine*> Dashboard::onDemandLines(const QString& model, const QString& metric)
{
    for (const ChartSpec& spec : chartSpecs()) {
        if (!spec.onDemand) continue;
        if (spec.role != ModelRole::Any && spec.role != roleOf(model)) continue;
        for (std::size_t i = 0; i < spec.lines.size(); ++i) {
            const LineSpec& ls = spec.lines[i];
            const int rank = rankOf(metric, ls);
            if (ls.perRank ? rank < 0 : metric != ls.metric) continue;
            MetricChart* c = chart(model, spec.key);
            if (!c) {
                c = makeChart(model, spec.key);
                relayout(true);
            }
            if (ls.perRank) routeLine(*c->addLine(i, rank));
            return m_routes.value(key2(model, metric));
        }
    }
    return {};
}

void Dashboard::updatePlaceholder(MetricChart& c)
{
    if (c.updatePlaceholder(m_live)) relayout(true); // read-outs go after the model's charts
}

void Dashboard::addSamples(const MetricBatch& batch)
{
    QString model, metric;
    std::string lastModel, lastMetric;
    QList<MetricLine*> lines;
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
        for (MetricLine* l : lines) l->append(s.step, s.value, s.wallNs);
    }
    for (auto& c : m_owned) {
        if (!c->takeDirty()) continue;
        c->redraw();
        updatePlaceholder(*c);
    }
}

void Dashboard::restyle()
{
    for (auto& c : m_owned) c->restyle();
}

void Dashboard::setIgnoreOutliers(bool ignore)
{
    if (ignore == m_ignoreOutliers) return;
    m_ignoreOutliers = ignore;
    if (m_outliersBox->isChecked() != ignore) {
        const QSignalBlocker block(m_outliersBox);
        m_outliersBox->setChecked(ignore);
    }
    for (auto& c : m_owned) c->setIgnoreOutliers(ignore);
}

QPair<double, double> Dashboard::yRange(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->yRange() : QPair<double, double>(0.0, 0.0);
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
    for (auto& c : m_owned) c->setSmoothing(weight);
}

MetricChart* Dashboard::chart(const QString& model, const QString& key) const
{
    return m_charts.value(key2(model, key));
}

MetricLine* Dashboard::lineFor(const QString& model, const QString& metric) const
{
    const QString source = metric == rssMetric() ? sessionModel() : model;
    for (MetricLine* l : m_routes.value(key2(source, metric)))
        if (l->owner->model() == model) return l;
    return nullptr;
}

QStringList Dashboard::chartsOf(const QString& model) const
{
    QStringList keys;
    for (const auto& c : m_owned)
        if (c->model() == model) keys << c->key();
    return keys;
}

int Dashboard::pointCount(const QString& model, const QString& metric) const
{
    const MetricLine* l = lineFor(model, metric);
    return l ? static_cast<int>(l->raw.size()) : 0;
}

QList<QPointF> Dashboard::shownPoints(const QString& model, const QString& metric) const
{
    const MetricLine* l = lineFor(model, metric);
    return l ? l->series->points() : QList<QPointF>{};
}

QList<QPointF> Dashboard::smoothedPoints(const QString& model, const QString& metric) const
{
    const MetricLine* l = lineFor(model, metric);
    return l && l->smoothSeries ? l->smoothSeries->points() : QList<QPointF>{};
}

QList<QPointF> Dashboard::bandEdge(const QString& model, bool upper) const
{
    const MetricChart* c = chart(model, QStringLiteral("forecast"));
    return c ? c->bandEdge(upper) : QList<QPointF>{};
}

QStringList Dashboard::lineLabels(const QString& model, const QString& key) const
{
    QStringList labels;
    if (const MetricChart* c = chart(model, key))
        for (const auto& l : c->lines()) labels << l->label;
    return labels;
}

QString Dashboard::chartMessage(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->message() : QString();
}

QString Dashboard::constantReadout(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->constantReadout() : QString();
}

QPair<QString, double> Dashboard::yAxisUnit(const QString& model, const QString& key, bool right) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->yAxisUnit(right) : QPair<QString, double>(QString(), 0.0);
}

QChartView* Dashboard::chartView(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->view() : nullptr;
}

QString Dashboard::hoverAt(const QString& model, const QString& key, const QPoint& viewportPos)
{
    MetricChart* c = chart(model, key);
    const QString text = c ? c->readoutAt(viewportPos) : QString();
    if (text.isEmpty()) return {};
    m_readout->setText(text);
    c->view()->setToolTip(c->toolTip(text));
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
    MetricChart* c = slash > 0 ? chart(id.left(slash), id.mid(slash + 1)) : nullptr;
    if (!c) return QWidget::eventFilter(watched, event);
    const QString model = c->model(), key = c->key();
    switch (type) {
    case QEvent::MouseButtonDblClick:
        // A zoomed chart goes back to its whole range first; otherwise double-click expands.
        if (c->isZoomed()) resetZoom(model, key);
        else setExpanded(model, key, !isExpanded(model, key));
        return true;
    case QEvent::Wheel: {
        // The wheel zooms the steps axis around the mouse: a notch is 15 % in or out.
        // Outside the plot (axes, title, legend) the wheel still scrolls the dashboard.
        auto* wheel = static_cast<QWheelEvent*>(event);
        const int delta = wheel->angleDelta().y();
        if (delta == 0 || !c->inPlot(wheel->position())) return false;
        zoomX(model, key, std::pow(0.85, delta / 120.0), c->stepAt(wheel->position()));
        return true;
    }
    case QEvent::MouseButtonPress: {
        auto* mouse = static_cast<QMouseEvent*>(event);
        if (mouse->button() != Qt::LeftButton) break;
        m_dragChart = id;
        m_dragRange = c->xRange();
        m_dragStart = mouse->position();
        break;
    }
    case QEvent::MouseButtonRelease: m_dragChart.clear(); break;
    case QEvent::Leave: hideCrosshair(model); break;
    case QEvent::MouseMove: {
        auto* mouse = static_cast<QMouseEvent*>(event);
        if (m_dragChart == id && (mouse->buttons() & Qt::LeftButton)) {
            // Dragging pans: the data follows the mouse.
            const double width = c->chart()->plotArea().width();
            const double dx = mouse->position().x() - m_dragStart.x();
            // A click that moves a pixel or two is not a drag: it must not freeze the axis.
            if (width > 0 && (c->isZoomed() || std::abs(dx) >= QApplication::startDragDistance())) {
                const double steps = -dx * (m_dragRange.second - m_dragRange.first) / width;
                c->showXRange(m_dragRange.first + steps, m_dragRange.second + steps);
            }
            return true;
        }
        hoverAt(model, key, mouse->position().toPoint());
        if (c->inPlot(mouse->position())) setCrosshair(model, c->stepAt(mouse->position()));
        else hideCrosshair(model);
        break;
    }
    default: break;
    }
    return QWidget::eventFilter(watched, event);
}

// --- log scale, zoom and crosshair: the chart's own --------------------------

bool Dashboard::logScaleAvailable(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c && c->logPossible();
}

bool Dashboard::isLogScale(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c && c->isLogScale();
}

bool Dashboard::setLogScale(const QString& model, const QString& key, bool on)
{
    MetricChart* c = chart(model, key);
    return c && c->setLogScale(on);
}

QPair<double, double> Dashboard::xRange(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->xRange() : QPair<double, double>(0.0, 0.0);
}

bool Dashboard::isZoomed(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c && c->isZoomed();
}

void Dashboard::zoomX(const QString& model, const QString& key, double factor, double centre)
{
    if (MetricChart* c = chart(model, key)) c->zoomX(factor, centre);
}

void Dashboard::panX(const QString& model, const QString& key, double steps)
{
    MetricChart* c = chart(model, key);
    if (!c) return;
    const QPair<double, double> range = c->xRange();
    c->showXRange(range.first + steps, range.second + steps);
}

void Dashboard::resetZoom(const QString& model, const QString& key)
{
    if (MetricChart* c = chart(model, key)) c->resetZoom();
}

void Dashboard::setCrosshair(const QString& model, double x)
{
    for (auto& c : m_owned)
        if (c->model() == model) c->setCrosshair(x);
}

void Dashboard::hideCrosshair(const QString& model)
{
    for (auto& c : m_owned)
        if (c->model() == model) c->hideCrosshair();
}

QString Dashboard::crosshairText(const QString& model, const QString& key) const
{
    const MetricChart* c = chart(model, key);
    return c ? c->crosshairText() : QString();
}

// --- export ------------------------------------------------------------------

bool Dashboard::exportCsv(const QString& model, const QString& key, const QString& path, QString* error) const
{
    const MetricChart* c = chart(model, key);
    if (!c) {
        if (error) *error = tr("no chart %1 of %2").arg(key, model);
        return false;
    }
    return c->exportCsv(path, error);
}

bool Dashboard::exportImage(const QString& model, const QString& key, const QString& path, QString* error) const
{
    const MetricChart* c = chart(model, key);
    if (!c) {
        if (error) *error = tr("no chart %1 of %2").arg(key, model);
        return false;
    }
    return c->exportImage(path, error);
}

void Dashboard::exportWithDialog(const QString& model, const QString& key, const QString& kind)
{
    const MetricChart* c = chart(model, key);
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
    MetricChart* c = chart(model, key);
    if (!c) return nullptr;
    auto* menu = new QMenu(this);
    QAction* log = menu->addAction(tr("Log scale"));
    log->setObjectName(QStringLiteral("logScale"));
    log->setCheckable(true);
    log->setChecked(c->isLogScale());
    // Offered only where every value is > 0.
    log->setEnabled(c->logPossible());
    if (!log->isEnabled()) log->setToolTip(tr("Only for charts whose every value is above zero"));
    connect(log, &QAction::toggled, this, [this, model, key](bool on) { setLogScale(model, key, on); });
    QAction* reset = menu->addAction(tr("Reset zoom"));
    reset->setObjectName(QStringLiteral("resetZoom"));
    reset->setEnabled(c->isZoomed());
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
        if (c->model() == model && c->key().startsWith(pickedPrefix())) names << c->key().mid(pickedPrefix().size());
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
    MetricChart* c = makeChart(model, key);
    // The chart's line holds the samples from now on (removeChart() gives them back).
    if (const auto it = m_held.find(key2(model, metric)); it != m_held.end()) {
        c->takeSamples(std::move(it->raw), std::move(it->wall));
        m_held.erase(it);
    }
    c->redraw();
    updatePlaceholder(*c);
    relayout(true);
}

void Dashboard::removeChart(const QString& model, const QString& key)
{
    MetricChart* c = chart(model, key);
    if (!c) return;
    if (key.startsWith(pickedPrefix())) {
        // A picked metric's samples stay on offer in the picker.
        MetricLine& l = *c->lines().front();
        m_held.insert(key2(model, l.metric), Held{std::move(l.raw), std::move(l.wall)});
    }
    for (const auto& l : c->lines()) {
        const QString route = key2(l->metric == rssMetric() ? sessionModel() : model, l->metric);
        auto it = m_routes.find(route);
        if (it == m_routes.end()) continue;
        it->removeAll(l.get());
        if (it->isEmpty()) m_routes.erase(it);
    }
    if (m_dragChart == key2(model, key)) m_dragChart.clear();
    m_grid->removeWidget(c->widget());
    delete c->widget(); // the view, the chart and its series with it
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
