// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run's results in the window: the blocks of its report (the same
// ReportDocument the HTML and PDF exports render) as widgets. Headings,
// paragraphs and warnings are labels, key-value lists a two-column grid,
// tables read-only table widgets sized to their rows, and charts the report's
// own SVG drawn to the panel's width.

#include <QString>
#include <QStringList>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QLabel;
class QVBoxLayout;
QT_END_NAMESPACE

namespace foxhunt {

struct ReportDocument;

/// Shows one report document; scroll it by putting it in a QScrollArea.
class ReportView : public QWidget {
    Q_OBJECT
public:
    explicit ReportView(QWidget* parent = nullptr);

    /// Replaces what is shown with the document's blocks.
    void setDocument(const ReportDocument& document);
    /// Replaces what is shown with one line ("Reading run 7's results...", an error).
    void setMessage(const QString& text);
    /// Back to the first hint (no run open).
    void clear();
    /// The line setMessage() shows ("" while a document is shown).
    QString message() const;

    /// What is shown, for tests: the headings' texts in order, and the number of tables and charts.
    QStringList headings() const { return m_headings; }
    int tableCount() const { return m_tables; }
    int chartCount() const { return m_charts; }
    /// The cells of the n-th table shown (header first), for tests.
    QList<QStringList> tableText(int n) const;

private:
    void clearBlocks();

    QVBoxLayout* m_layout = nullptr;
    QLabel* m_message = nullptr;
    QList<QWidget*> m_blocks;
    QStringList m_headings;
    int m_tables = 0;
    int m_charts = 0;
};

} // namespace foxhunt
