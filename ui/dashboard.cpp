#include "ui/dashboard.h"

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QGridLayout>
#include <QLabel>

#include <algorithm>
#include <cmath>

namespace foxhunt {

namespace {

/// The metrics charted per model, in column order.
const QStringList kCharted = {QStringLiteral("loss"), QStringLiteral("grad_norm"), QStringLiteral("latency_ms"),
                              QStringLiteral("episode_pnl_ticks")};

} // namespace

void BoundedSeries::append(double x, double y)
{
    if (m_points.size() >= m_capacity) {
        // Thin the older half by two so the window keeps its whole span in bounded memory.
        const std::size_t half = m_points.size() / 2;
        std::size_t w = 0;
        for (std::size_t i = 0; i < half; i += 2) m_points[w++] = m_points[i];
        for (std::size_t i = half; i < m_points.size(); ++i) m_points[w++] = m_points[i];
        m_points.resize(w);
    }
    m_points.emplace_back(x, y);
}

std::vector<QPointF> BoundedSeries::decimated(int buckets) const
{
    const std::size_t n = m_points.size();
    if (buckets <= 0 || n <= static_cast<std::size_t>(2 * buckets)) return m_points;
    std::vector<QPointF> out;
    out.reserve(2 * static_cast<std::size_t>(buckets));
    for (int k = 0; k < buckets; ++k) {
        const std::size_t b = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(buckets);
        const std::size_t e = n * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(buckets);
        if (b >= e) continue;
        std::size_t lo = b, hi = b;
        for (std::size_t i = b; i < e; ++i) {
            if (m_points[i].y() < m_points[lo].y()) lo = i;
            if (m_points[i].y() > m_points[hi].y()) hi = i;
        }
        out.push_back(m_points[std::min(lo, hi)]);
        if (lo != hi) out.push_back(m_points[std::max(lo, hi)]);
    }
    return out;
}

Dashboard::Dashboard(QWidget* parent) : QWidget(parent)
{
    m_grid = new QGridLayout(this);
    auto* hint = new QLabel(tr("Start a run (Training -> Start) to see each model's loss, gradient norm, inference "
                               "latency and episode PnL live. The full history is kept in the run store."));
    hint->setObjectName(QStringLiteral("dashboardHint"));
    hint->setWordWrap(true);
    m_grid->addWidget(hint, 0, 0, 1, kCharted.size());
}

void Dashboard::clear()
{
    for (auto& c : m_owned) {
        m_grid->removeWidget(c->view);
        delete c->view;
    }
    m_owned.clear();
    m_charts.clear();
    m_rows.clear();
}

Dashboard::Chart& Dashboard::chartFor(const QString& model, const QString& metric)
{
    const QString key = model + QLatin1Char('/') + metric;
    if (Chart* c = m_charts.value(key)) return *c;
    if (!m_rows.contains(model)) m_rows.insert(model, static_cast<int>(m_rows.size()) + 1);
    auto chart = std::make_unique<Chart>();
    auto* qc = new QChart;
    qc->setTitle(model + QStringLiteral(" — ") + metric);
    qc->legend()->hide();
    chart->series = new QLineSeries;
    qc->addSeries(chart->series);
    chart->x = new QValueAxis;
    chart->y = new QValueAxis;
    chart->x->setLabelFormat(QStringLiteral("%.0f"));
    chart->x->setTitleText(tr("step"));
    qc->addAxis(chart->x, Qt::AlignBottom);
    qc->addAxis(chart->y, Qt::AlignLeft);
    chart->series->attachAxis(chart->x);
    chart->series->attachAxis(chart->y);
    chart->view = new QChartView(qc);
    chart->view->setMinimumSize(240, 180);
    m_grid->addWidget(chart->view, m_rows.value(model), static_cast<int>(kCharted.indexOf(metric)));
    Chart* raw = chart.get();
    m_owned.push_back(std::move(chart));
    m_charts.insert(key, raw);
    if (QWidget* hint = findChild<QWidget*>(QStringLiteral("dashboardHint"))) hint->hide();
    return *raw;
}

void Dashboard::addSamples(const MetricBatch& batch)
{
    for (const MetricSample& s : batch) {
        const QString metric = QString::fromStdString(s.metric);
        if (!kCharted.contains(metric) || !std::isfinite(s.value)) continue;
        Chart& c = chartFor(QString::fromStdString(s.model), metric);
        c.data.append(static_cast<double>(s.step), s.value);
        c.dirty = true;
    }
    for (auto& c : m_owned) {
        if (!c->dirty) continue;
        c->dirty = false;
        const std::vector<QPointF> points = c->data.decimated(std::max(100, c->view->width()));
        c->series->replace(QList<QPointF>(points.begin(), points.end()));
        double lo = points.front().y(), hi = lo;
        for (const QPointF& p : points) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
        const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(1e-9, std::abs(hi) * 0.05 + 1e-9);
        c->y->setRange(lo - pad, hi + pad);
        c->x->setRange(points.front().x(), std::max(points.back().x(), points.front().x() + 1));
    }
}

int Dashboard::pointCount(const QString& model, const QString& metric) const
{
    const Chart* c = m_charts.value(model + QLatin1Char('/') + metric);
    return c ? static_cast<int>(c->data.size()) : 0;
}

} // namespace foxhunt
