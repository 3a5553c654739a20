// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/metric_chart.h"

#include "ui/chart_axes.h"

#include "engine/report/csv_field.h"
#include "engine/store/atomic_file.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <QBuffer>
#include <QDateTime>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QPainter>
#include <QStackedWidget>
#include <QStringList>
#include <QSvgGenerator>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace foxhunt {

namespace {

/// A chart whose every line has held one value for this many samples shows a one-line read-out instead.
constexpr std::size_t kConstantAfter = 3;
/// Ticks per value axis, at most (round values: 1, 2 or 5 times a power of ten apart).
constexpr int kMaxTicks = 6;
/// Share of the drawn points below and above the y range when outliers are ignored.
constexpr double kOutlierShare = 0.02;
/// A zoomed-in chart decimates into at most this many times its pixel columns.
constexpr double kMaxZoomDetail = 16.0;
/// Alpha of a smoothed chart's raw line while smoothing is on.
constexpr int kFadedAlpha = 70;
/// Lines with fewer points than this also draw their points: one update is a dot, not nothing.
constexpr std::size_t kMarkedBelow = 12;

/// The process RSS, which every model's memory chart draws and which alone says nothing about a model.
const QString& rssMetric()
{
    static const QString name = QString::fromUtf8(metrics::kRssBytes.data(),
                                                  static_cast<qsizetype>(metrics::kRssBytes.size()));
    return name;
}

const QList<QColor>& lineColors()
{
    static const QList<QColor> colors = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c),
                                         QColor(0xff, 0x7f, 0x0e), QColor(0x94, 0x67, 0xbd)};
    return colors;
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

// --- lines -------------------------------------------------------------------

void noteWallTime(WallTimes& wall, const BoundedSeries& raw, std::int64_t step, std::int64_t wallNs)
{
    if (!wall.empty() && wall.back().first == step) {
        wall.back().second = wallNs;
        return;
    }
    wall.emplace_back(step, wallNs);
    if (wall.size() <= 2 * raw.size() + 64) return;
    // Keep the wall times of the points still held (both are in step order).
    WallTimes kept;
    kept.reserve(raw.size());
    auto it = wall.begin();
    for (const QPointF& p : raw.points()) {
        const auto at = static_cast<std::int64_t>(p.x());
        while (it != wall.end() && it->first < at) ++it;
        if (it != wall.end() && it->first == at && (kept.empty() || kept.back().first != at)) kept.push_back(*it);
    }
    wall = std::move(kept);
}

void MetricLine::noteValue(double v)
{
    if (samples++ == 0) first = v;
    else if (v != first) varies = true;
    minSeen = std::min(minSeen, v);
}

void MetricLine::append(std::int64_t step, double v, std::int64_t wallNs)
{
    const double x = static_cast<double>(step);
    raw.append(x, v);
    noteValue(v);
    if (wallNs > 0) noteWallTime(wall, raw, step, wallNs);
    if (smoothable && owner->style().smoothing > 0) smooth.append(x, ema.push(v));
    dirty = true;
    owner->markDirty();
}

// --- the chart ---------------------------------------------------------------

MetricChart::MetricChart(const QString& model, const ChartSpec& spec, std::size_t order, const ChartStyle& style)
    : m_model(model), m_title(model + QStringLiteral(" — ") + spec.title), m_spec(&spec), m_order(order), m_style(style)
{
    m_chart = new QChart;
    m_chart->setTitle(m_title);
    const bool perRank = std::any_of(spec.lines.begin(), spec.lines.end(), [](const LineSpec& l) { return l.perRank; });
    // A smoothed chart has one line; its raw and smoothed series need no legend.
    m_chart->legend()->setVisible(!spec.smoothable && (spec.lines.size() > 1 || perRank));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->legend()->setShowToolTips(true); // a label elided for width still reads in full
    QFont legendFont = m_chart->legend()->font();
    legendFont.setPointSizeF(std::max(6.0, legendFont.pointSizeF() - 1.0));
    m_chart->legend()->setFont(legendFont);
    // A card of many: the room goes to the plot, not to margins and rounded corners.
    m_chart->setMargins(QMargins(4, 2, 4, 2));
    m_chart->setBackgroundRoundness(0);
    m_x = new QValueAxis;
    m_y = new QValueAxis;
    m_x->setLabelFormat(QStringLiteral("%.0f"));
    m_x->setTitleText(tr("step"));
    m_yUnit = m_y2Unit = axis::displayUnit(spec.unit, 0.0);
    m_y->setTitleText(axisTitle(spec, m_yUnit, false));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    if (std::any_of(spec.lines.begin(), spec.lines.end(), [](const LineSpec& l) { return l.rightAxis; })) {
        m_y2 = new QValueAxis;
        m_y2->setGridLineVisible(false);
        m_y2->setTitleText(axisTitle(spec, m_y2Unit, true));
        m_chart->addAxis(m_y2, Qt::AlignRight);
    }

    auto attach = [this](QAbstractSeries* s) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    };
    // Per-rank lines come with their ranks' first samples (addLine).
    for (std::size_t i = 0; i < spec.lines.size(); ++i)
        if (!spec.lines[i].perRank) addLine(i, /*rank=*/-1);
    if (spec.band) {
        // The area owns neither edge's data: the edges are plain line series replaced once per tick.
        m_band = new QAreaSeries(m_lines[1]->series, m_lines[0]->series);
        m_band->setName(tr("q10..q90"));
        attach(m_band);
        m_lines[0]->series->setParent(m_band);
        m_lines[1]->series->setParent(m_band);
    }
    if (spec.zeroLine) {
        m_zero = new QLineSeries;
        m_zero->setName(tr("flat"));
        attach(m_zero);
    }
    restyle();
    m_view = new QChartView(m_chart);
    m_view->setMinimumSize(kMinWidth, kMinHeight);
    m_view->setRenderHint(QPainter::Antialiasing, false);
    m_view->setMouseTracking(true);
    m_view->viewport()->setMouseTracking(true);
    m_view->setToolTip(toolTip(QString()));
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);

    m_placeholder = new QLabel;
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setMinimumSize(kMinWidth, kMinHeight);
    m_placeholder->setFrameShape(QFrame::StyledPanel);
    m_constant = new QLabel;
    m_constant->setObjectName(QStringLiteral("constantReadout"));
    m_constant->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_constant->setFrameShape(QFrame::StyledPanel);
    m_stack = new QStackedWidget;
    m_stack->addWidget(m_placeholder);
    m_stack->addWidget(m_view);
    m_stack->addWidget(m_constant);
}

MetricLine* MetricChart::addLine(std::size_t index, int rank)
{
    const ChartSpec& spec = *m_spec;
    const LineSpec& ls = spec.lines[index];
    QValueAxis* y = ls.rightAxis && m_y2 ? m_y2 : m_y;
    auto attach = [this, y](QAbstractSeries* s) {
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(y);
    };
    auto line = std::make_unique<MetricLine>();
    line->metric = ls.metric;
    line->label = ls.label;
    if (rank >= 0) {
        line->metric += QString::number(rank);
        line->label += QLatin1Char(' ') + QString::number(rank);
    }
    line->rank = rank;
    line->smoothable = spec.smoothable;
    line->session = ls.session;
    line->extremes = ls.extremes;
    line->raw.setCapacity(m_style.capacity);
    line->smooth.setCapacity(m_style.capacity);
    line->ema = DebiasedEma(m_style.smoothing);
    line->owner = this;
    line->secondary = y == m_y2;
    line->series = new QLineSeries;
    line->series->setName(!ls.legend.isEmpty() && rank < 0 ? ls.legend : line->label);
    line->series->setMarkerSize(5.0);
    // Ranks may report in any order: keep lines and legend in rank order.
    const auto at = std::find_if(m_lines.begin(), m_lines.end(),
                                 [rank](const auto& l) { return rank >= 0 && l->rank > rank; });
    if (!(spec.band && index < 2)) {
        // A rank keeps its colour whichever ranks came first; other lines take colours in spec order.
        line->colorIndex = rank >= 0 ? rank : static_cast<int>(spec.band ? index - 2 : index);
        std::vector<QLineSeries*> later;
        for (auto it = at; it != m_lines.end(); ++it) {
            m_chart->removeSeries((*it)->series);
            later.push_back((*it)->series);
        }
        attach(line->series);
        for (QLineSeries* s : later) attach(s);
    }
    if (spec.smoothable) {
        line->smoothSeries = new QLineSeries;
        line->smoothSeries->setName(line->label + tr(" (smoothed)"));
        line->smoothSeries->setVisible(m_style.smoothing > 0);
        attach(line->smoothSeries);
    }
    styleLine(*line);
    return m_lines.insert(at, std::move(line))->get();
}

void MetricChart::takeSamples(BoundedSeries raw, WallTimes wall)
{
    MetricLine& l = *m_lines.front();
    l.raw = std::move(raw);
    l.wall = std::move(wall);
    for (const QPointF& p : l.raw.points()) l.noteValue(p.y());
    if (m_style.smoothing > 0) recomputeSmoothing(l);
    l.dirty = !l.raw.empty();
}

void MetricChart::markAllDirty()
{
    for (auto& l : m_lines) l->dirty = !l->raw.empty();
}

void MetricChart::redrawAll()
{
    markAllDirty();
    redraw();
}

void MetricChart::redecimate()
{
    const int plotWidth = static_cast<int>(m_chart->plotArea().width());
    if (plotWidth != m_decimatedFor) redrawAll();
}

// --- placeholder and constant read-out ---------------------------------------

QString MetricChart::constantText() const
{
    // Every line with data has held one value for kConstantAfter samples or more.
    const ChartSpec& spec = *m_spec;
    QStringList parts;
    for (const auto& l : m_lines) {
        if (l->samples == 0) continue;
        if (l->varies || l->samples < kConstantAfter) return {};
        parts << (m_lines.size() == 1 ? valueText(l->first, spec.unit)
                                      : QStringLiteral("%1 %2").arg(l->label, valueText(l->first, spec.unit)));
    }
    if (parts.isEmpty()) return {};
    return tr("%1: %2 (constant)").arg(spec.title, parts.join(QStringLiteral(", ")));
}

bool MetricChart::updatePlaceholder(bool live)
{
    const bool hasData = std::any_of(m_lines.begin(), m_lines.end(), [&](const auto& l) {
        // The process RSS alone says nothing about this model.
        return !l->raw.empty() && l->metric != rssMetric();
    });
    const QString message = hasData ? QString() : (live ? tr("waiting for data") : tr("no samples in this run"));
    if (m_placeholder->text().isEmpty() || m_placeholder->property("message").toString() != message) {
        m_placeholder->setText(QStringLiteral("<b>%1</b><br>%2").arg(m_title.toHtmlEscaped(), message));
        m_placeholder->setProperty("message", message);
    }
    // A chart of one value held throughout (the loss scale of an FP32 run) is a line of text, not a
    // flat chart; it becomes a chart again when the value changes.
    const QString constant = hasData ? constantText() : QString();
    const bool collapse = !constant.isEmpty();
    if (collapse && m_constant->text() != constant) m_constant->setText(constant);
    const bool changed = collapse != m_collapsed;
    if (changed) {
        m_collapsed = collapse;
        const int height = m_expanded ? 2 * kMinHeight : kMinHeight;
        // A stack is as tall as its tallest page's minimum: the chart pages give theirs up meanwhile.
        m_view->setMinimumHeight(collapse ? 0 : height);
        m_placeholder->setMinimumHeight(collapse ? 0 : height);
        m_stack->setMaximumHeight(collapse ? m_constant->sizeHint().height() : QWIDGETSIZE_MAX);
    }
    const int page = collapse ? 2 : hasData ? 1 : 0;
    if (m_stack->currentIndex() != page) m_stack->setCurrentIndex(page);
    return changed;
}

QString MetricChart::message() const
{
    return m_placeholder->property("message").toString();
}

QString MetricChart::constantReadout() const
{
    return m_collapsed ? m_constant->text() : QString();
}

// --- drawing -----------------------------------------------------------------

void MetricChart::redraw()
{
    // Min/max per pixel column of the plot area (the axes' labels take the rest of the view).
    const int plotWidth = static_cast<int>(m_chart->plotArea().width());
    const int buckets = m_zoomBuckets > 0 ? m_zoomBuckets : std::max(100, plotWidth > 0 ? plotWidth : m_stack->width());
    m_decimatedFor = plotWidth;
    const ChartSpec& spec = *m_spec;
    // A value <= 0 has no place on a log axis: the chart goes back to linear before it is drawn.
    if (m_ylog && !logPossible()) switchLog(false);
    double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, lo = x0, hi = -x0, lo2 = x0, hi2 = -x0;
    for (auto& lp : m_lines) {
        MetricLine& l = *lp;
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
                l.smoothDecimated = m_style.smoothing > 0 ? l.smooth.decimated(buckets) : std::vector<QPointF>{};
        }
        if (!l.drawn) continue;
        x0 = std::min(x0, l.x0);
        x1 = std::max(x1, l.x1);
        const double low = m_style.ignoreOutliers ? l.robustLo : l.lo;
        const double high = m_style.ignoreOutliers ? l.robustHi : l.hi;
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
        if (m_unitsSet && u.divisor == current.divisor) return;
        current = std::move(u);
        ax->setTitleText(axisTitle(spec, current, secondary));
        for (auto& l : m_lines)
            if (l->secondary == secondary) l->rescale = true;
        m_refit = true;
    };
    const bool wasSet = m_unitsSet;
    chooseUnit(m_yUnit, m_y, lo, hi, false);
    chooseUnit(m_y2Unit, m_y2, lo2, hi2, true);
    m_unitsSet = wasSet || std::isfinite(lo) || std::isfinite(lo2);
    for (auto& lp : m_lines) {
        MetricLine& l = *lp;
        if (!l.rescale) continue;
        l.rescale = false;
        const double divisor = l.secondary ? m_y2Unit.divisor : m_yUnit.divisor;
        // Stepped (memory): a value holds until the next sample.
        l.series->replace(displayPoints(l.decimated, divisor, spec.stepped));
        const bool marked = l.decimated.size() < kMarkedBelow;
        if (l.series->pointsVisible() != marked) l.series->setPointsVisible(marked);
        if (l.smoothSeries) l.smoothSeries->replace(displayPoints(l.smoothDecimated, divisor, false));
    }
    if (!std::isfinite(x0)) return;
    lo /= m_yUnit.divisor;
    hi /= m_yUnit.divisor;
    lo2 /= m_y2Unit.divisor;
    hi2 /= m_y2Unit.divisor;
    if (m_zero) {
        m_zero->replace(QList<QPointF>{{x0, 0.0}, {x1, 0.0}});
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 0.0);
    }
    // Axes move only when the data leaves them (with headroom) or fills less than half
    // of them: a range change re-lays out the whole chart, which costs more than the data.
    const bool refit = std::exchange(m_refit, false);
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
    if (m_ylog) fitLogAxis(lo, hi);
    else fit(m_y, lo, hi);
    fit(m_y2, lo2, hi2);
    const double xMax = m_x->max();
    if (!m_zoomed && (m_x->min() != x0 || x1 > xMax || (x1 - x0) < 0.8 * (xMax - x0))) {
        const double span = std::max(x1 - x0, 1.0);
        // A single step (one PPO update so far) gets a few steps either side, so its dot shows
        // between distinct tick labels.
        if (x1 - x0 < 1.0) m_x->setRange(x0 - 2.0, x1 + 2.0);
        else m_x->setRange(x0, x1 + span * 0.1);
        roundTicks(m_x, m_x->min(), m_x->max());
        m_x->setLabelFormat(QStringLiteral("%.0f")); // steps are whole
    }
}

void MetricChart::styleLine(MetricLine& l) const
{
    const int index = std::max(0, l.colorIndex);
    const QColor base = lineColors().at(index % lineColors().size());
    if (l.colorIndex >= 0) {
        // With smoothing on the raw line is faint from the start (not only once the weight is edited),
        // in the colour of its smoothed line.
        QColor color = base;
        if (l.smoothable && m_style.smoothing > 0) color.setAlpha(kFadedAlpha);
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

void MetricChart::restyle()
{
    for (auto& l : m_lines) styleLine(*l);
    if (m_band) {
        QColor fill = lineColors().at(0);
        fill.setAlpha(60);
        m_band->setBrush(fill);
        m_band->setPen(QPen(fill.darker(), 0.5));
    }
    if (m_zero) m_zero->setPen(QPen(Qt::gray, 1.0, Qt::DashLine));
}

void MetricChart::recomputeSmoothing(MetricLine& l) const
{
    l.ema = DebiasedEma(m_style.smoothing);
    l.smooth.clear();
    if (m_style.smoothing <= 0) return;
    for (const QPointF& p : l.raw.points()) l.smooth.append(p.x(), l.ema.push(p.y()));
}

// --- what the dashboard sets for every chart ---------------------------------

void MetricChart::setSmoothing(double weight)
{
    m_style.smoothing = weight;
    for (auto& l : m_lines) {
        if (!l->smoothable) continue;
        recomputeSmoothing(*l);
        styleLine(*l);
        l->smoothSeries->setVisible(weight > 0);
        l->dirty = true;
    }
    redraw();
}

void MetricChart::setIgnoreOutliers(bool ignore)
{
    m_style.ignoreOutliers = ignore;
    m_refit = true;
    redraw();
}

void MetricChart::setCapacity(std::size_t capacity)
{
    m_style.capacity = capacity;
    for (auto& l : m_lines) {
        l->raw.setCapacity(capacity);
        l->smooth.setCapacity(capacity);
        if (l->smoothable && m_style.smoothing > 0) recomputeSmoothing(*l);
        l->dirty = true;
    }
    redraw();
}

// --- expansion and axes ------------------------------------------------------

void MetricChart::setExpanded(bool expanded)
{
    m_expanded = expanded;
    const int height = expanded ? 2 * kMinHeight : kMinHeight;
    if (!m_collapsed) {
        m_view->setMinimumHeight(height);
        m_placeholder->setMinimumHeight(height);
    }
    m_view->setToolTip(toolTip(QString()));
}

QString MetricChart::toolTip(const QString& readout) const
{
    const QString hint = m_expanded ? tr("Double-click to return to the grid") : tr("Double-click to expand");
    return readout.isEmpty() ? hint : readout + QLatin1Char('\n') + hint;
}

QPair<double, double> MetricChart::yRange() const
{
    if (m_ylog) return qMakePair(m_ylog->min(), m_ylog->max());
    return qMakePair(m_y->min(), m_y->max());
}

QPair<QString, double> MetricChart::yAxisUnit(bool right) const
{
    const QValueAxis* ax = right ? m_y2 : m_y;
    if (!ax) return {QString(), 0.0};
    return {ax->titleText(), right ? m_y2Unit.divisor : m_yUnit.divisor};
}

QList<QPointF> MetricChart::bandEdge(bool upper) const
{
    if (!m_band) return {};
    const QLineSeries* edge = upper ? m_band->upperSeries() : m_band->lowerSeries();
    return edge ? edge->points() : QList<QPointF>{};
}

// --- log scale ---------------------------------------------------------------

bool MetricChart::logPossible() const
{
    if (m_zero || m_band) return false;
    bool any = false;
    for (const auto& l : m_lines) {
        if (l->secondary || l->samples == 0) continue;
        if (!(l->minSeen > 0.0)) return false;
        any = true;
    }
    return any;
}

void MetricChart::switchLog(bool on)
{
    if (on == (m_ylog != nullptr)) return;
    std::vector<QAbstractSeries*> left;
    for (auto& l : m_lines) {
        if (l->secondary) continue;
        left.push_back(l->series);
        if (l->smoothSeries) left.push_back(l->smoothSeries);
    }
    if (on) {
        m_ylog = new QLogValueAxis;
        m_ylog->setBase(10.0);
        m_ylog->setLabelFormat(QStringLiteral("%g"));
        m_ylog->setMinorTickCount(8);
        m_ylog->setTitleText(m_y->titleText() + tr(", log"));
        m_chart->addAxis(m_ylog, Qt::AlignLeft);
        for (QAbstractSeries* s : left) {
            s->detachAxis(m_y);
            s->attachAxis(m_ylog);
        }
        m_y->setVisible(false);
    } else {
        for (QAbstractSeries* s : left) {
            s->detachAxis(m_ylog);
            s->attachAxis(m_y);
        }
        m_chart->removeAxis(m_ylog);
        delete m_ylog;
        m_ylog = nullptr;
        m_y->setVisible(true);
    }
    m_refit = true;
}

bool MetricChart::setLogScale(bool on)
{
    if (on && !logPossible()) return false;
    switchLog(on);
    redraw();
    return true;
}

void MetricChart::fitLogAxis(double lo, double hi)
{
    if (!(lo > 0.0) || !std::isfinite(hi)) return;
    // Whole decades, so every major tick is a power of ten.
    const double min = std::pow(10.0, std::floor(std::log10(lo)));
    double max = std::pow(10.0, std::ceil(std::log10(hi)));
    if (max <= min) max = min * 10.0;
    if (m_ylog->min() != min || m_ylog->max() != max) m_ylog->setRange(min, max);
    m_refit = false;
}

// --- zoom and pan ------------------------------------------------------------

QPair<double, double> MetricChart::xRange() const
{
    return qMakePair(m_x->min(), m_x->max());
}

void MetricChart::zoomX(double factor, double centre)
{
    if (!(factor > 0.0)) return;
    const double min = m_x->min(), max = m_x->max();
    // Not narrower than two steps: a step is the finest thing a series holds.
    const double span = std::max(2.0, (max - min) * factor);
    const double share = max > min ? std::clamp((centre - min) / (max - min), 0.0, 1.0) : 0.5;
    const double newMin = centre - share * span;
    m_zoomed = true;
    m_x->setRange(newMin, newMin + span);
    roundTicks(m_x, newMin, newMin + span);
    m_x->setLabelFormat(QStringLiteral("%.0f"));
    // Decimate the whole series into as many more buckets as the zoom shows less of it (up to
    // kMaxZoomDetail times), so the part on screen keeps about one min/max pair per pixel. Fixed
    // until the next zoom, so the incremental decimation keeps its cache while samples arrive.
    double first = std::numeric_limits<double>::infinity(), last = -first;
    for (const auto& l : m_lines)
        if (!l->raw.empty()) {
            first = std::min(first, l->raw.points().front().x());
            last = std::max(last, l->raw.points().back().x());
        }
    const int plotArea = static_cast<int>(m_chart->plotArea().width());
    const int plotWidth = std::max(100, plotArea > 0 ? plotArea : m_stack->width()); // as redraw() counts
    const double detail = std::isfinite(first) ? std::clamp((last - first) / span, 1.0, kMaxZoomDetail) : 1.0;
    const int buckets = detail > 1.0 ? static_cast<int>(plotWidth * detail) : 0;
    if (buckets != m_zoomBuckets) {
        m_zoomBuckets = buckets;
        redrawAll();
    }
}

void MetricChart::showXRange(double min, double max)
{
    m_zoomed = true;
    m_x->setRange(min, max);
}

void MetricChart::resetZoom()
{
    if (!m_zoomed) return;
    m_zoomed = false;
    if (std::exchange(m_zoomBuckets, 0) > 0) markAllDirty();
    // Any range the data does not start at is refitted by the next redraw.
    m_x->setRange(m_x->min() - 1.0, m_x->max());
    redraw();
}

// --- pointer -----------------------------------------------------------------

bool MetricChart::inPlot(const QPointF& viewportPos) const
{
    const QPointF item = m_chart->mapFromScene(m_view->mapToScene(viewportPos.toPoint()));
    return m_chart->plotArea().contains(item);
}

double MetricChart::stepAt(const QPointF& viewportPos) const
{
    return m_chart->mapToValue(m_chart->mapFromScene(m_view->mapToScene(viewportPos.toPoint()))).x();
}

QString MetricChart::readoutAt(const QPoint& viewportPos) const
{
    if (m_lines.empty()) return {};
    const QPointF itemPos = m_chart->mapFromScene(m_view->mapToScene(viewportPos));
    if (!m_chart->plotArea().contains(itemPos)) return {};
    const MetricLine* primary = nullptr;
    for (const auto& l : m_lines)
        if (!l->raw.empty()) {
            primary = l.get();
            break;
        }
    if (!primary) return {};
    const QPointF value = m_chart->mapToValue(itemPos); // every series shares the chart's axes
    const std::optional<QPointF> anchor = primary->raw.nearest(value.x());
    const metrics::Unit unit = m_spec->unit;
    QStringList parts;
    for (const auto& l : m_lines) {
        const std::optional<QPointF> p = l->raw.nearest(anchor->x());
        if (!p) continue;
        parts << QStringLiteral("%1 %2").arg(l->label, valueText(p->y(), unit));
        if (l->smoothable && m_style.smoothing > 0)
            if (const auto s = l->smooth.nearest(anchor->x())) parts << tr("smoothed %1").arg(valueText(s->y(), unit));
    }
    return QStringLiteral("%1 · step %2 · %3")
        .arg(m_title, QString::number(static_cast<qlonglong>(anchor->x())), parts.join(QStringLiteral(", ")));
}

// --- crosshair ---------------------------------------------------------------

void MetricChart::setCrosshair(double x)
{
    const bool inside = !m_collapsed && !m_lines.empty() && x >= m_x->min() && x <= m_x->max();
    const MetricLine* anchor = nullptr;
    for (const auto& l : m_lines)
        if (!l->raw.empty()) {
            anchor = l.get();
            break;
        }
    if (!inside || !anchor) {
        hideCrosshair();
        return;
    }
    if (!m_cross) {
        m_cross = new QGraphicsLineItem(m_chart);
        m_cross->setPen(QPen(QColor(128, 128, 128, 180), 1.0, Qt::DashLine));
        m_cross->setZValue(10);
        m_crossText = new QGraphicsSimpleTextItem(m_chart);
        m_crossText->setZValue(11);
        QFont font = m_crossText->font();
        font.setPointSizeF(std::max(6.0, font.pointSizeF() - 1.0));
        m_crossText->setFont(font);
    }
    const QRectF plot = m_chart->plotArea();
    // The steps axis is linear whatever the value axis.
    const double px = plot.left() + (x - m_x->min()) / (m_x->max() - m_x->min()) * plot.width();
    m_cross->setLine(px, plot.top(), px, plot.bottom());
    const metrics::Unit unit = m_spec->unit;
    QStringList parts;
    for (const auto& l : m_lines) {
        const std::optional<QPointF> p = l->raw.nearest(x);
        if (p) parts << QStringLiteral("%1 %2").arg(l->label, valueText(p->y(), unit));
    }
    m_crossText->setText(
        QStringLiteral("step %1\n%2").arg(QString::number(std::llround(x)), parts.join(QLatin1Char('\n'))));
    m_crossText->setBrush(m_chart->titleBrush());
    // Beside the line, on the side with room.
    const QRectF box = m_crossText->boundingRect();
    const double tx = px + 4 + box.width() <= plot.right() ? px + 4 : px - 4 - box.width();
    m_crossText->setPos(tx, plot.top() + 2);
    m_cross->show();
    m_crossText->show();
}

void MetricChart::hideCrosshair()
{
    if (m_cross) m_cross->hide();
    if (m_crossText) m_crossText->hide();
}

QString MetricChart::crosshairText() const
{
    return m_crossText && m_crossText->isVisible() ? m_crossText->text() : QString();
}

// --- export ------------------------------------------------------------------

bool MetricChart::exportCsv(const QString& path, QString* error) const
{
    const std::string unit(metrics::symbol(m_spec->unit));
    std::string out = "step,wall_time";
    for (const auto& l : m_lines) {
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
    for (std::size_t i = 0; i < m_lines.size(); ++i) {
        const MetricLine& l = *m_lines[i];
        for (const QPointF& p : l.raw.points()) {
            Row& row = rows[static_cast<std::int64_t>(p.x())];
            row.values.resize(m_lines.size());
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
        for (std::size_t i = 0; i < m_lines.size(); ++i) {
            out += ',';
            if (i < row.values.size() && row.values[i]) out += number(*row.values[i]);
        }
        out += '\n';
    }
    return writeAtomically(path, out, error);
}

bool MetricChart::exportImage(const QString& path, QString* error) const
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    // The chart as laid out on screen; a chart never shown yet gets its minimum size.
    const QSize size = m_view->size().expandedTo(m_view->minimumSize()).expandedTo(QSize(kMinWidth, kMinHeight));
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(m_title);
        QPainter painter(&svg);
        m_view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), QRect(QPoint(0, 0), m_view->viewport()->size()));
        painter.end();
    } else {
        QPixmap pixmap(size);
        pixmap.fill(Qt::white);
        QPainter painter(&pixmap);
        m_view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), QRect(QPoint(0, 0), m_view->viewport()->size()));
        painter.end();
        if (!pixmap.save(&buffer, "PNG")) {
            if (error) *error = tr("cannot encode %1 as PNG").arg(path);
            return false;
        }
    }
    return writeAtomically(path, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), error);
}

} // namespace foxhunt
