// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/report/csv_field.cpp and the run report CSV that uses it.

#include "engine/data/market_time.h"
#include "engine/report/csv_field.h"
#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <string>

namespace tst_csv_field {

using namespace foxhunt;

class TestCsvField : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void field_data();
    void field();
    void runReportQuotesNames();
};

void TestCsvField::field_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << "loss"
                           << "loss";
    QTest::newRow("empty") << ""
                           << "";
    QTest::newRow("comma") << "a,b"
                           << "\"a,b\"";
    QTest::newRow("quote") << "say \"hi\""
                           << "\"say \"\"hi\"\"\"";
    QTest::newRow("newline") << "two\nlines"
                             << "\"two\nlines\"";
    QTest::newRow("carriage return") << "a\rb"
                                     << "\"a\rb\"";
    QTest::newRow("spaces stay plain") << " x y "
                                       << " x y ";
}

void TestCsvField::field()
{
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(csvField(text.toStdString())), expected);
}

void TestCsvField::runReportQuotesNames()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    BarStore store(dir.filePath(QStringLiteral("r.db")).toStdString());
    RunStore runs(store);
    const std::int64_t id = runs.createRun("quoted", "{}", SeriesInfo{}, 0, 0, "{}");
    runs.appendMetrics(id, {{"tft, small", "loss \"q50\"", 3, 1'700'000'000'000'000'000, 0.5}});
    const std::string csv = renderRunReportCsv(store, {id});
    const std::string expected = "run,model,metric,step,time,value\n" + std::to_string(id) +
                                 ",\"tft, small\",\"loss \"\"q50\"\"\",3," + formatUtc(1'700'000'000'000'000'000) +
                                 ",0.5\n";
    QCOMPARE(QString::fromStdString(csv), QString::fromStdString(expected));
}

} // namespace tst_csv_field

FOXHUNT_TEST_APPLESS_MAIN(tst_csv_field::TestCsvField)
#include "tst_csv_field.moc"
