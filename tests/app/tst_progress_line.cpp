// SPDX-License-Identifier: GPL-3.0-or-later
// The CLI's progress line as text: counts, percent, rate and ETA for known and unknown totals.

#include "app/cli/progress_line.h"
#include "tests/support/test_bundle.h"

#include <QTest>

namespace tst_progress_line {

using foxhunt::cli::formatProgressLine;

class TestProgressLine : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void formats_data();
    void formats();
};

void TestProgressLine::formats_data()
{
    QTest::addColumn<QString>("label");
    QTest::addColumn<qulonglong>("done");
    QTest::addColumn<qulonglong>("total");
    QTest::addColumn<QString>("unit");
    QTest::addColumn<double>("elapsed");
    QTest::addColumn<QString>("expected");

    QTest::newRow("quarter") << "import es.csv" << 120'000ULL << 480'000ULL << "bars" << 0.4
                             << "import es.csv: 120,000/480,000 bars  25 %  300k bars/s  ETA 0:02";
    QTest::newRow("zero elapsed") << "import es.csv" << 0ULL << 480'000ULL << "bars" << 0.0
                                  << "import es.csv: 0/480,000 bars  0 %  ETA -:--";
    QTest::newRow("done, no time yet") << "train" << 5ULL << 10ULL << "bars" << 0.0
                                       << "train: 5/10 bars  50 %  ETA -:--";
    QTest::newRow("unknown total") << "replay ES" << 1'234'567ULL << 0ULL << "bars" << 2.0
                                   << "replay ES: 1,234,567 bars  617k bars/s";
    QTest::newRow("unknown total, zero elapsed")
        << "replay ES" << 42ULL << 0ULL << "bars" << 0.0 << "replay ES: 42 bars";
    QTest::newRow("small rate, hours left")
        << "train" << 100ULL << 100'000ULL << "bars" << 12.5 << "train: 100/100,000 bars  0 %  8 bars/s  ETA 3:28:08";
    QTest::newRow("finished") << "import a.csv" << 2'000'000ULL << 2'000'000ULL << "bytes" << 0.5
                              << "import a.csv: 2,000,000/2,000,000 bytes  100 %  4.0M bytes/s  ETA 0:00";
    QTest::newRow("past the total") << "x" << 12ULL << 10ULL << "bars" << 1.0
                                    << "x: 10/10 bars  100 %  10 bars/s  ETA 0:00";
    QTest::newRow("fraction only") << "report r.html" << 250ULL << 1000ULL << "" << 1.0
                                   << "report r.html:  25 %  ETA 0:03";
}

void TestProgressLine::formats()
{
    QFETCH(QString, label);
    QFETCH(qulonglong, done);
    QFETCH(qulonglong, total);
    QFETCH(QString, unit);
    QFETCH(double, elapsed);
    QFETCH(QString, expected);
    const std::string line = formatProgressLine(label.toStdString(), done, total, unit.toStdString(), elapsed);
    QCOMPARE(QString::fromStdString(line), expected);
}

} // namespace tst_progress_line

FOXHUNT_TEST_APPLESS_MAIN(tst_progress_line::TestProgressLine)
#include "tst_progress_line.moc"
