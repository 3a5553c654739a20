// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/run_compare.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QResizeEvent>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace foxhunt {

namespace {

QString fromStd(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QTableWidget* makeTable(const QString& objectName)
{
    auto* t = new QTableWidget;
    t->setObjectName(objectName);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionMode(QAbstractItemView::ContiguousSelection);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return t;
}

/// The width a table needs to show every column whole: row titles, columns, frame and a scroll bar.
int fullWidth(const QTableWidget* t)
{
    int width = 2 * t->frameWidth() + t->verticalScrollBar()->sizeHint().width() +
                t->verticalHeader()->sizeHint().width();
    for (int c = 0; c < t->columnCount(); ++c)
        width += std::max(static_cast<const QAbstractItemView*>(t)->sizeHintForColumn(c), // public there
                          t->horizontalHeader()->sectionSizeHint(c));
    return width;
}

/// A change as it reads beside the figure: "+0.42", "-1,200.00 USD", "+3.1 %" of a fraction's points.
QString deltaText(MeasureKind kind, double delta)
{
    const std::string magnitude = formatMeasure(kind, std::abs(delta));
    return (delta > 0   ? QStringLiteral("+")
            : delta < 0 ? QStringLiteral("-")
                        : QStringLiteral("±")) +
           fromStd(magnitude);
}

} // namespace

RunCompare::RunCompare(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_title = new QLabel(tr("Select two or more runs above, then Compare"));
    m_title->setObjectName(QStringLiteral("compareTitle"));
    m_baselineBox = new QComboBox;
    m_baselineBox->setObjectName(QStringLiteral("compareBaseline"));
    m_baselineBox->setToolTip(tr("The run the others are measured against"));
    bar->addWidget(m_title, 1);
    bar->addWidget(new QLabel(tr("Baseline:")));
    bar->addWidget(m_baselineBox);
    layout->addLayout(bar);
    m_settings = makeTable(QStringLiteral("compareSettings"));
    m_results = makeTable(QStringLiteral("compareResults"));
    auto* split = new QSplitter(Qt::Horizontal);
    m_split = split;
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(new QLabel(tr("<b>Settings that differ</b>")));
    leftLayout->addWidget(m_settings);
    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(new QLabel(tr("<b>Results</b> (change against the baseline in brackets)")));
    rightLayout->addWidget(m_results);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    connect(m_baselineBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0 && index != m_baseline) setBaseline(index);
    });
}

QColor RunCompare::runColour(int index)
{
    static const QList<QColor> colours = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c),
                                          QColor(0xff, 0x7f, 0x0e), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                          QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return colours.at(index % colours.size());
}

QString RunCompare::runLabel(const RunInfo& run, const RunSummary& summary, bool precisionDiffers)
{
    QString label = tr("run %1").arg(run.id);
    if (precisionDiffers) label += QStringLiteral(" · ") + QString::fromStdString(summary.precision);
    return label;
}

int RunCompare::setRuns(std::vector<RunInfo> runs, std::vector<RunSummary> summaries, int baseline)
{
    std::vector<std::string> configs;
    for (const RunInfo& r : runs) configs.push_back(r.configJson);
    const std::vector<ConfigDifference> diff = configDifferences(configs);
    m_runs = std::move(runs);
    m_summaries = std::move(summaries);
    m_baseline = std::clamp(baseline, 0, std::max(0, static_cast<int>(m_runs.size()) - 1));

    const bool precisionDiffers = std::any_of(m_summaries.begin(), m_summaries.end(), [&](const RunSummary& s) {
        return s.precision != m_summaries.front().precision;
    });
    QStringList headers;
    for (std::size_t i = 0; i < m_runs.size(); ++i) headers << runLabel(m_runs[i], m_summaries[i], precisionDiffers);
    {
        const QSignalBlocker block(m_baselineBox);
        m_baselineBox->clear();
        m_baselineBox->addItems(headers);
        m_baselineBox->setCurrentIndex(m_baseline);
    }
    m_title->setText(
        tr("%n run(s) compared: %1 setting(s) differ", nullptr, static_cast<int>(m_runs.size())).arg(diff.size()));

    m_settings->clear();
    m_settings->setColumnCount(static_cast<int>(m_runs.size()));
    m_settings->setRowCount(static_cast<int>(diff.size()));
    for (int c = 0; c < static_cast<int>(headers.size()); ++c) {
        auto* h = new QTableWidgetItem(headers[c]);
        h->setForeground(runColour(c));
        m_settings->setHorizontalHeaderItem(c, h);
    }
    for (int r = 0; r < static_cast<int>(diff.size()); ++r) {
        m_settings->setVerticalHeaderItem(
            r, new QTableWidgetItem(QString::fromStdString(diff[static_cast<std::size_t>(r)].key)));
        for (int c = 0; c < static_cast<int>(m_runs.size()); ++c) {
            const std::string& v = diff[static_cast<std::size_t>(r)].values[static_cast<std::size_t>(c)];
            m_settings->setItem(r, c, new QTableWidgetItem(v.empty() ? tr("(not set)") : QString::fromStdString(v)));
        }
    }
    fillResults();
    arrange();
    return static_cast<int>(diff.size());
}

Qt::Orientation RunCompare::arrangement() const
{
    return m_split->orientation();
}

void RunCompare::arrange()
{
    // Side by side cuts columns off on a narrow window: then each table gets the full width. Side
    // by side, each gets the width its columns need (the rest goes to the results).
    const QMargins margins = layout()->contentsMargins();
    const int settingsWidth = fullWidth(m_settings);
    const int available = width() - margins.left() - margins.right() - m_split->handleWidth();
    const Qt::Orientation wanted = settingsWidth + fullWidth(m_results) <= available ? Qt::Horizontal : Qt::Vertical;
    if (m_split->orientation() != wanted) m_split->setOrientation(wanted);
    if (wanted == Qt::Horizontal) {
        m_split->setSizes({settingsWidth, available - settingsWidth});
    } else {
        // The settings that differ are a few rows: the results get the larger share.
        const int total = height();
        m_split->setSizes({total / 3, total - total / 3});
    }
}

void RunCompare::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    arrange();
}

void RunCompare::setBaseline(int index)
{
    if (index < 0 || index >= static_cast<int>(m_runs.size())) return;
    m_baseline = index;
    {
        const QSignalBlocker block(m_baselineBox);
        m_baselineBox->setCurrentIndex(index);
    }
    fillResults();
    arrange();
}

void RunCompare::fillResults()
{
    // Rows: what each run trained with, then each model's measures that some run has.
    struct Row {
        QString label;
        std::vector<QString> cells;
    };
    std::vector<Row> rows;
    auto settingRow = [&](const QString& label, auto value) {
        Row row{label, {}};
        for (const RunSummary& s : m_summaries) row.cells.push_back(value(s));
        rows.push_back(std::move(row));
    };
    settingRow(tr("precision"), [](const RunSummary& s) { return QString::fromStdString(s.precision); });
    settingRow(tr("device"), [](const RunSummary& s) { return QString::fromStdString(s.device); });
    settingRow(tr("processes"), [](const RunSummary& s) { return QString::number(s.processes); });

    std::vector<std::string> models;
    for (const RunSummary& s : m_summaries)
        for (const ModelResults& m : s.models)
            if (std::find(models.begin(), models.end(), m.model) == models.end()) models.push_back(m.model);
    const RunSummary& base = m_summaries[static_cast<std::size_t>(m_baseline)];
    for (const std::string& model : models)
        for (const Measure& measure : foxhunt::measures()) {
            Row row{QString::fromStdString(model) + QStringLiteral(" · ") + fromStd(measure.label), {}};
            bool any = false;
            const ModelResults* b = base.find(model);
            const double baseValue = b ? b->*measure.field : std::nan("");
            for (std::size_t i = 0; i < m_summaries.size(); ++i) {
                const ModelResults* m = m_summaries[i].find(model);
                const double v = m ? m->*measure.field : std::nan("");
                QString cell = QString::fromStdString(formatMeasure(measure.kind, v));
                any |= std::isfinite(v);
                if (std::isfinite(v) && std::isfinite(baseValue) && static_cast<int>(i) != m_baseline)
                    cell += QStringLiteral(" (") + deltaText(measure.kind, v - baseValue) + QLatin1Char(')');
                row.cells.push_back(cell);
            }
            if (any) rows.push_back(std::move(row));
        }

    m_results->clear();
    m_results->setColumnCount(static_cast<int>(m_summaries.size()));
    m_results->setRowCount(static_cast<int>(rows.size()));
    for (int c = 0; c < m_settings->columnCount(); ++c) {
        auto* h = new QTableWidgetItem(m_baselineBox->itemText(c) + (c == m_baseline ? tr(" (baseline)") : QString()));
        h->setForeground(runColour(c));
        m_results->setHorizontalHeaderItem(c, h);
    }
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        m_results->setVerticalHeaderItem(r, new QTableWidgetItem(rows[static_cast<std::size_t>(r)].label));
        for (int c = 0; c < static_cast<int>(rows[static_cast<std::size_t>(r)].cells.size()); ++c) {
            auto* item = new QTableWidgetItem(rows[static_cast<std::size_t>(r)].cells[static_cast<std::size_t>(c)]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_results->setItem(r, c, item);
        }
    }
}

} // namespace foxhunt
