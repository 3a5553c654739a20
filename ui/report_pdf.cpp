// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/report_pdf.h"

#include "engine/store/atomic_file.h"

#include <QBuffer>
#include <QFontMetricsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace foxhunt {

namespace {

constexpr double kPad = 3.0;          ///< cell padding, points
constexpr double kSmallChart = 520.0; ///< SVG widths up to this are laid out two to a row
constexpr double kFooter = 18.0;      ///< space kept for the page number

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

/// A block, or a run of a table's rows, placed on a page.
struct Placed {
    int page = 0;
    QRectF rect;
    std::size_t block = 0;
    std::size_t rowBegin = 0, rowEnd = 0; ///< table rows drawn in this piece
};

class PdfReport {
public:
    PdfReport(QPdfWriter& writer, const ReportDocument& doc) : m_writer(writer), m_doc(doc)
    {
        m_body.setFamily(QStringLiteral("DejaVu Sans"));
        m_body.setStyleHint(QFont::SansSerif);
        m_body.setPointSizeF(9);
        // No shaping means no ligatures: "fi" stays two letters, so the PDF's text can be searched and copied.
        m_body.setStyleStrategy(QFont::PreferNoShaping);
        m_small = m_body;
        m_small.setPointSizeF(7.5);
        m_bold = m_small;
        m_bold.setBold(true);
        for (int level = 1; level <= 3; ++level) {
            m_heading[level] = m_body;
            m_heading[level].setBold(true);
            m_heading[level].setPointSizeF(level == 1 ? 15 : level == 2 ? 12.5 : 10);
        }
        const QRectF paint = writer.pageLayout().paintRectPixels(writer.resolution());
        m_width = paint.width();
        m_bottom = paint.height() - kFooter;
    }

    void layout()
    {
        m_page = 0;
        m_y = 0;
        for (std::size_t i = 0; i < m_doc.blocks.size(); ++i) {
            const ReportBlock& b = m_doc.blocks[i];
            if (b.kind != ReportBlockKind::Chart) closeChartRow();
            switch (b.kind) {
            case ReportBlockKind::Heading: {
                const double before = m_y > 0 ? (b.level <= 2 ? 12.0 : 6.0) : 0.0;
                const double h = textHeight(m_heading[std::clamp(b.level, 1, 3)], b.text, m_width) + 4;
                // Keep a heading with the start of what follows it.
                if (m_y + before + h + 60 > m_bottom) newPage();
                else m_y += before;
                place(i, h);
                break;
            }
            case ReportBlockKind::Paragraph: place(i, textHeight(m_body, b.text, m_width) + 5); break;
            case ReportBlockKind::Warning:
                place(i, textHeight(m_body, b.text, m_width - 4 * kPad) + 4 * kPad + 4);
                break;
            case ReportBlockKind::KeyValue:
            case ReportBlockKind::Table: placeTable(i); break;
            case ReportBlockKind::Chart: placeChart(i); break;
            }
        }
        closeChartRow();
    }

    int pageCount() const { return m_page + 1; }

    void paint(QPainter& p, const ReportProgress& progress)
    {
        int page = 0;
        for (std::size_t k = 0; k < m_placed.size(); ++k) {
            const Placed& item = m_placed[k];
            while (page < item.page) {
                footer(p, page);
                if (!m_writer.newPage()) throw std::runtime_error("cannot add a page to the PDF");
                ++page;
            }
            draw(p, item);
            if (k % 8 == 0)
                checkReportProgress(progress, static_cast<double>(k) / static_cast<double>(m_placed.size()));
        }
        while (page < m_page) {
            footer(p, page);
            m_writer.newPage();
            ++page;
        }
        footer(p, page);
    }

private:
    double textHeight(const QFont& font, const std::string& text, double width) const
    {
        const QFontMetricsF fm(font, &m_writer);
        return fm.boundingRect(QRectF(0, 0, width, 1e6), Qt::TextWordWrap, qs(text)).height();
    }

    void newPage()
    {
        ++m_page;
        m_y = 0;
    }

    void place(std::size_t block, double h, std::size_t rowBegin = 0, std::size_t rowEnd = 0)
    {
        if (m_y > 0 && m_y + h > m_bottom) newPage();
        m_placed.push_back({m_page, QRectF(0, m_y, m_width, h), block, rowBegin, rowEnd});
        m_y += h;
    }

    // Tables --------------------------------------------------------------

    struct TableGeometry {
        std::vector<double> widths;
        double headerHeight = 0;
        std::vector<double> rowHeights;
    };

    const TableGeometry& geometry(std::size_t block)
    {
        auto it = m_tables.find(block);
        if (it != m_tables.end()) return it->second;
        const ReportBlock& b = m_doc.blocks[block];
        const QFontMetricsF fm(m_small, &m_writer), fb(m_bold, &m_writer);
        std::size_t cols = b.header.size();
        for (const auto& r : b.rows) cols = std::max(cols, r.size());
        TableGeometry g;
        std::vector<double> natural(cols, 24.0);
        for (std::size_t c = 0; c < b.header.size(); ++c)
            natural[c] = std::max(natural[c], fb.horizontalAdvance(qs(b.header[c])) + 2 * kPad + 1);
        for (const auto& r : b.rows)
            for (std::size_t c = 0; c < r.size(); ++c)
                natural[c] = std::max(natural[c], (c == 0 ? fb : fm).horizontalAdvance(qs(r[c])) + 2 * kPad + 1);
        double sum = 0;
        for (double& n : natural) sum += (n = std::min(n, m_width * 0.6));
        g.widths = natural;
        if (sum > 0)
            for (double& w : g.widths) w *= m_width / sum;
        auto rowHeight = [&](const std::vector<std::string>& cells, bool header) {
            double h = 0;
            for (std::size_t c = 0; c < cells.size() && c < cols; ++c)
                h = std::max(h, textHeight(header || c == 0 ? m_bold : m_small, cells[c], g.widths[c] - 2 * kPad));
            return h + 2 * kPad;
        };
        g.headerHeight = b.kind == ReportBlockKind::Table && !b.header.empty() ? rowHeight(b.header, true) : 0;
        for (const auto& r : b.rows) g.rowHeights.push_back(rowHeight(r, false));
        return m_tables.emplace(block, std::move(g)).first->second;
    }

    void placeTable(std::size_t block)
    {
        const TableGeometry& g = geometry(block);
        const std::size_t n = g.rowHeights.size();
        std::size_t begin = 0;
        do {
            if (m_y > 0 && m_y + g.headerHeight + (n ? g.rowHeights[begin] : 0) > m_bottom) newPage();
            double h = g.headerHeight;
            std::size_t end = begin;
            while (end < n && (end == begin || m_y + h + g.rowHeights[end] <= m_bottom)) h += g.rowHeights[end++];
            m_placed.push_back({m_page, QRectF(0, m_y, m_width, h), block, begin, end});
            m_y += h + 6;
            begin = end;
            if (begin < n) newPage();
        } while (begin < n);
    }

    // Charts --------------------------------------------------------------

    void placeChart(std::size_t block)
    {
        const ReportBlock& b = m_doc.blocks[block];
        const double aspect = b.width > 0 && b.height > 0 ? b.height / b.width : 0.45;
        const bool half = b.width > 0 && b.width <= kSmallChart;
        const double w = half ? (m_width - 8) / 2 : std::min(m_width, b.width > 0 ? b.width * 0.8 : m_width);
        const double h = w * aspect;
        if (half && m_halfOpen) {
            m_placed.push_back({m_halfPage, QRectF(m_width - w, m_halfY, w, h), block, 0, 0});
            m_halfH = std::max(m_halfH, h);
            closeChartRow();
            return;
        }
        closeChartRow();
        if (m_y > 0 && m_y + h > m_bottom) newPage();
        m_placed.push_back({m_page, QRectF(0, m_y, w, h), block, 0, 0});
        if (half) {
            m_halfOpen = true;
            m_halfPage = m_page;
            m_halfY = m_y;
            m_halfH = h;
        } else {
            m_y += h + 6;
        }
    }

    void closeChartRow()
    {
        if (!m_halfOpen) return;
        m_halfOpen = false;
        m_y = m_halfY + m_halfH + 6;
    }

    // Painting ------------------------------------------------------------

    void draw(QPainter& p, const Placed& item)
    {
        const ReportBlock& b = m_doc.blocks[item.block];
        switch (b.kind) {
        case ReportBlockKind::Heading: {
            const int level = std::clamp(b.level, 1, 3);
            p.setFont(m_heading[level]);
            p.setPen(Qt::black);
            p.drawText(item.rect, Qt::TextWordWrap, qs(b.text));
            if (level <= 2) {
                p.setPen(QPen(QColor(0xcc, 0xcc, 0xcc), 0.6));
                p.drawLine(QPointF(0, item.rect.bottom() - 1), QPointF(m_width, item.rect.bottom() - 1));
            }
            break;
        }
        case ReportBlockKind::Paragraph:
            p.setFont(m_body);
            p.setPen(Qt::black);
            p.drawText(item.rect, Qt::TextWordWrap, qs(b.text));
            break;
        case ReportBlockKind::Warning: {
            const QRectF box = item.rect.adjusted(0, 2, 0, -2);
            p.setPen(QPen(QColor(0xe0, 0xc0, 0x60), 0.8));
            p.setBrush(QColor(0xff, 0xf3, 0xcd));
            p.drawRect(box);
            p.setBrush(Qt::NoBrush);
            p.setFont(m_body);
            p.setPen(Qt::black);
            p.drawText(box.adjusted(2 * kPad, 2 * kPad, -2 * kPad, -2 * kPad), Qt::TextWordWrap, qs(b.text));
            break;
        }
        case ReportBlockKind::KeyValue:
        case ReportBlockKind::Table: drawTable(p, item); break;
        case ReportBlockKind::Chart: {
            QSvgRenderer svg(QByteArray::fromStdString(b.svg));
            if (svg.isValid()) {
                svg.render(&p, item.rect);
            } else {
                p.setFont(m_body);
                p.drawText(item.rect, Qt::AlignCenter, QStringLiteral("chart could not be drawn: ") + qs(b.text));
            }
            break;
        }
        }
    }

    void drawTable(QPainter& p, const Placed& item)
    {
        const ReportBlock& b = m_doc.blocks[item.block];
        const TableGeometry& g = geometry(item.block);
        const QPen grid(QColor(0xdd, 0xdd, 0xdd), 0.6);
        double y = item.rect.top();
        auto row = [&](const std::vector<std::string>& cells, double h, bool header) {
            double x = 0;
            for (std::size_t c = 0; c < g.widths.size(); ++c) {
                const QRectF cell(x, y, g.widths[c], h);
                const bool label = header || (c == 0 && b.kind == ReportBlockKind::Table) ||
                                   (c == 0 && b.kind == ReportBlockKind::KeyValue);
                if (header || (c == 0 && b.kind == ReportBlockKind::KeyValue))
                    p.fillRect(cell, QColor(0xf4, 0xf4, 0xf4));
                p.setPen(grid);
                p.drawRect(cell);
                p.setPen(Qt::black);
                p.setFont(label ? m_bold : m_small);
                const Qt::Alignment align = (c == 0 || b.kind == ReportBlockKind::KeyValue ? Qt::AlignLeft
                                                                                           : Qt::AlignRight) |
                                            Qt::AlignTop;
                if (c < cells.size())
                    p.drawText(cell.adjusted(kPad, kPad, -kPad, -kPad), static_cast<int>(align) | Qt::TextWordWrap,
                               qs(cells[c]));
                x += g.widths[c];
            }
            y += h;
        };
        if (g.headerHeight > 0) row(b.header, g.headerHeight, true);
        for (std::size_t r = item.rowBegin; r < item.rowEnd; ++r) row(b.rows[r], g.rowHeights[r], false);
    }

    void footer(QPainter& p, int page)
    {
        p.setFont(m_small);
        p.setPen(QColor(0x66, 0x66, 0x66));
        const QRectF area(0, m_bottom + 4, m_width, kFooter - 4);
        p.drawText(area, Qt::AlignLeft | Qt::AlignBottom, qs(m_doc.title));
        p.drawText(area, Qt::AlignRight | Qt::AlignBottom,
                   QStringLiteral("Page %1 of %2").arg(page + 1).arg(pageCount()));
    }

    QPdfWriter& m_writer;
    const ReportDocument& m_doc;
    QFont m_body, m_small, m_bold, m_heading[4];
    double m_width = 0, m_bottom = 0;
    int m_page = 0;
    double m_y = 0;
    bool m_halfOpen = false;
    int m_halfPage = 0;
    double m_halfY = 0, m_halfH = 0;
    std::vector<Placed> m_placed;
    std::map<std::size_t, TableGeometry> m_tables;
};

} // namespace

int writeReportPdf(const ReportDocument& document, const std::string& path, ReportPageSize pageSize,
                   const ReportProgress& progress)
{
    checkReportProgress(progress, 0.0);
    // QPdfWriter ignores failed writes to its own file: a full disk gave a truncated PDF and no error.
    // The PDF is made in memory and written all or nothing, like every other report format.
    QByteArray pdf;
    int pages = 0;
    {
        QBuffer buffer(&pdf);
        buffer.open(QIODevice::WriteOnly);
        QPdfWriter writer(&buffer);
        // Points as device units: font sizes and layout constants read as print sizes.
        writer.setResolution(72);
        writer.setPageSize(QPageSize(pageSize == ReportPageSize::Letter ? QPageSize::Letter : QPageSize::A4));
        writer.setPageMargins(QMarginsF(15, 15, 15, 12), QPageLayout::Millimeter);
        writer.setTitle(qs(document.title));
        writer.setCreator(QStringLiteral("Foxhunt " FOXHUNT_VERSION));
        PdfReport report(writer, document);
        report.layout();
        pages = report.pageCount();
        QPainter painter;
        if (!painter.begin(&writer))
            throw std::runtime_error("cannot write " + path + ": the PDF could not be started");
        painter.setRenderHint(QPainter::Antialiasing);
        try {
            report.paint(painter, [&](double f) { return !progress || progress(0.05 + 0.9 * f); });
        } catch (...) {
            painter.end();
            throw;
        }
        if (!painter.end()) throw std::runtime_error("cannot write " + path + ": the PDF could not be finished");
    }
    checkReportProgress(progress, 0.97);
    writeFileAtomically(path, std::string_view(pdf.constData(), static_cast<std::size_t>(pdf.size())));
    if (progress) progress(1.0);
    return pages;
}

} // namespace foxhunt
