// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The compare view of the Runs tab: two or more runs side by side. The settings
// that differ between them (only those), and each model's headline results
// with the change against a baseline run chosen from them. Columns carry each
// run's colour, the one its lines have in the overlay.

#include "engine/report/run_summary.h"

#include <QColor>
#include <QList>
#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QResizeEvent;
class QSplitter;
class QTableWidget;
QT_END_NAMESPACE

namespace foxhunt {

class RunCompare : public QWidget {
    Q_OBJECT
public:
    explicit RunCompare(QWidget* parent = nullptr);

    /// Shows these runs (two or more) against runs[baseline]. Returns how many settings differ.
    /// Throws std::invalid_argument when a stored config is not JSON.
    int setRuns(std::vector<RunInfo> runs, std::vector<RunSummary> summaries, int baseline = 0);
    /// Compares against another of the runs shown.
    void setBaseline(int index);
    int baseline() const { return m_baseline; }

    QTableWidget* settingsTable() const { return m_settings; }
    QTableWidget* resultsTable() const { return m_results; }

    /// Settings and results side by side (Qt::Horizontal) when both tables show every column at
    /// this width, else one above the other, each the full width (Qt::Vertical).
    Qt::Orientation arrangement() const;

    /// The colour of the i-th run compared (the overlay draws it in the same).
    static QColor runColour(int index);
    /// "run 7 · BF16 + INT8": the run and what sets it apart (its precision when the runs differ in it).
    static QString runLabel(const RunInfo& run, const RunSummary& summary, bool precisionDiffers);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fillResults();
    /// Chooses the arrangement for the current width and contents.
    void arrange();

    std::vector<RunInfo> m_runs;
    std::vector<RunSummary> m_summaries;
    int m_baseline = 0;
    QLabel* m_title = nullptr;
    QComboBox* m_baselineBox = nullptr;
    QTableWidget* m_settings = nullptr;
    QTableWidget* m_results = nullptr;
    QSplitter* m_split = nullptr;
};

} // namespace foxhunt
