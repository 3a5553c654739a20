// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/report_view.h"

#include "engine/report/report_blocks.h"

#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace foxhunt {

namespace {

QString fromStd(const std::string& s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// One report chart: its SVG scaled to the panel's width (no wider than twice its own), aspect kept.
class SvgChart : public QWidget {
public:
    SvgChart(const std::string& svg, double width, double height, QWidget* parent = nullptr)
        : QWidget(parent), m_renderer(QByteArray::fromStdString(svg), this),
          m_aspect(width > 0 && height > 0 ? height / width : 0.5), m_width(width > 0 ? width : 640)
    {
        QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
        policy.setHeightForWidth(true);
        setSizePolicy(policy);
        setMinimumWidth(240);
    }
    bool valid() const { return m_renderer.isValid(); }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int w) const override { return static_cast<int>(std::min<double>(w, 2 * m_width) * m_aspect); }
    QSize sizeHint() const override
    {
        const int w = static_cast<int>(m_width);
        return {w, heightForWidth(w)};
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        const double w = std::min<double>(width(), 2 * m_width);
        m_renderer.render(&p, QRectF(0, 0, w, w * m_aspect));
    }

private:
    QSvgRenderer m_renderer;
    double m_aspect;
    double m_width;
};

/// A table as tall as its rows: the panel scrolls, not each table.
QTableWidget* makeTable(const ReportBlock& b)
{
    const int columns = static_cast<int>(std::max<std::size_t>(
        b.header.size(),
        b.rows.empty() ? 0 : std::max_element(b.rows.begin(), b.rows.end(), [](const auto& x, const auto& y) {
                                 return x.size() < y.size();
                             })->size()));
    auto* t = new QTableWidget(static_cast<int>(b.rows.size()), columns);
    t->setObjectName(QStringLiteral("reportTable"));
    QStringList header;
    for (const std::string& h : b.header) header << fromStd(h);
    t->setHorizontalHeaderLabels(header);
    for (int r = 0; r < t->rowCount(); ++r)
        for (int c = 0; c < static_cast<int>(b.rows[static_cast<std::size_t>(r)].size()); ++c) {
            auto* item = new QTableWidgetItem(
                fromStd(b.rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]));
            item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
            if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            t->setItem(r, c, item);
        }
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    t->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->resizeRowsToContents();
    int height = t->horizontalHeader()->sizeHint().height() + 2 * t->frameWidth();
    for (int r = 0; r < t->rowCount(); ++r) height += t->rowHeight(r);
    // A horizontal scroll bar when the table is wider than the panel.
    height += t->horizontalScrollBar()->sizeHint().height();
    t->setFixedHeight(height);
    return t;
}

} // namespace

ReportView::ReportView(QWidget* parent) : QWidget(parent)
{
    m_layout = new QVBoxLayout(this);
    m_message = new QLabel;
    m_message->setObjectName(QStringLiteral("reportMessage"));
    m_message->setWordWrap(true);
    m_layout->addWidget(m_message);
    m_layout->addStretch(1);
    clear();
}

void ReportView::clear()
{
    setMessage(tr("Open a run (double-click it, or Open) to see its results here."));
}

void ReportView::clearBlocks()
{
    for (QWidget* w : std::as_const(m_blocks)) {
        m_layout->removeWidget(w);
        delete w;
    }
    m_blocks.clear();
    m_headings.clear();
    m_tables = m_charts = 0;
}

void ReportView::setMessage(const QString& text)
{
    clearBlocks();
    m_message->setText(text);
    m_message->show();
}

QString ReportView::message() const
{
    return m_message->isHidden() ? QString() : m_message->text();
}

void ReportView::setDocument(const ReportDocument& document)
{
    setUpdatesEnabled(false);
    clearBlocks();
    m_message->clear();
    m_message->hide();
    int at = m_layout->count() - 1; // before the stretch
    const auto add = [&](QWidget* w) {
        m_layout->insertWidget(at++, w);
        m_blocks << w;
    };
    for (const ReportBlock& b : document.blocks) {
        switch (b.kind) {
        case ReportBlockKind::Heading: {
            auto* label = new QLabel(fromStd(b.text));
            label->setObjectName(QStringLiteral("reportHeading"));
            QFont f = label->font();
            f.setBold(true);
            f.setPointSizeF(f.pointSizeF() * (b.level <= 1 ? 1.5 : b.level == 2 ? 1.25 : 1.1));
            label->setFont(f);
            label->setWordWrap(true);
            label->setTextInteractionFlags(Qt::TextSelectableByMouse);
            m_headings << label->text();
            add(label);
            break;
        }
        case ReportBlockKind::Paragraph:
        case ReportBlockKind::Warning: {
            auto* label = new QLabel(fromStd(b.text));
            label->setWordWrap(true);
            label->setTextFormat(Qt::PlainText);
            label->setTextInteractionFlags(Qt::TextSelectableByMouse);
            if (b.kind == ReportBlockKind::Warning) {
                label->setObjectName(QStringLiteral("reportWarning"));
                label->setFrameShape(QFrame::StyledPanel);
                label->setStyleSheet(QStringLiteral("QLabel { background: #fff4e5; color: #663c00; padding: 4px; }"));
            }
            add(label);
            break;
        }
        case ReportBlockKind::KeyValue: {
            auto* box = new QWidget;
            auto* grid = new QGridLayout(box);
            grid->setContentsMargins(0, 0, 0, 0);
            grid->setColumnStretch(1, 1);
            int row = 0;
            for (const auto& kv : b.rows) {
                auto* key = new QLabel(kv.empty() ? QString() : fromStd(kv[0]));
                auto* value = new QLabel(kv.size() < 2 ? QString() : fromStd(kv[1]));
                value->setWordWrap(true);
                value->setTextInteractionFlags(Qt::TextSelectableByMouse);
                key->setStyleSheet(QStringLiteral("QLabel { color: palette(mid); }"));
                grid->addWidget(key, row, 0, Qt::AlignTop);
                grid->addWidget(value, row++, 1);
            }
            add(box);
            break;
        }
        case ReportBlockKind::Table:
            add(makeTable(b));
            ++m_tables;
            break;
        case ReportBlockKind::Chart: {
            auto* title = new QLabel(fromStd(b.text));
            title->setWordWrap(true);
            add(title);
            auto* chart = new SvgChart(b.svg, b.width, b.height);
            chart->setObjectName(QStringLiteral("reportChart"));
            chart->setToolTip(fromStd(b.text));
            add(chart);
            ++m_charts;
            break;
        }
        }
    }
    setUpdatesEnabled(true);
}

QList<QStringList> ReportView::tableText(int n) const
{
    QList<QStringList> out;
    const QList<QTableWidget*> tables = findChildren<QTableWidget*>(QStringLiteral("reportTable"));
    // findChildren's order is creation order within one parent: the blocks' order.
    if (n < 0 || n >= tables.size()) return out;
    const QTableWidget* t = tables.at(n);
    QStringList header;
    for (int c = 0; c < t->columnCount(); ++c)
        header << (t->horizontalHeaderItem(c) ? t->horizontalHeaderItem(c)->text() : QString());
    out << header;
    for (int r = 0; r < t->rowCount(); ++r) {
        QStringList row;
        for (int c = 0; c < t->columnCount(); ++c) row << (t->item(r, c) ? t->item(r, c)->text() : QString());
        out << row;
    }
    return out;
}

} // namespace foxhunt
