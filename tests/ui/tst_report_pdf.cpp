// SPDX-License-Identifier: GPL-3.0-or-later
// PDF run reports: page count and text as poppler reads them, paper sizes,
// progress and cancel, and the one export entry point for all four formats.

#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/app/report_fixture.h"
#include "tests/engine/file_size_limit.h"
#include "ui/report_export.h"
#include "ui/report_pdf.h"
#include "tests/support/test_bundle.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace tst_report_pdf {

class TestReportPdf : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void pdfHasPagesAndText_data();
    void pdfHasPagesAndText();
    void progressRisesAndCancelLeavesNoFile();
    void exportDispatchesOnExtension_data();
    void exportDispatchesOnExtension();
    void exportRejectsBadRequests();
    void fullDiskLeavesNoTruncatedPdf();
    void everyFormatReportsProgressPerSection_data();
    void everyFormatReportsProgressPerSection();

private:
    static QByteArray tool(const QString& program, const QStringList& args);
    static int pages(const QByteArray& pdfinfo);
    QTemporaryDir m_dir;
    std::string m_db;
    std::int64_t m_run = 0;
    std::int64_t m_manyModels = 0; ///< a finished run of four models, with evaluations
};

QByteArray TestReportPdf::tool(const QString& program, const QStringList& args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
    return p.readAllStandardOutput();
}

int TestReportPdf::pages(const QByteArray& pdfinfo)
{
    const qsizetype at = pdfinfo.indexOf("Pages:");
    if (at < 0) return -1;
    return pdfinfo.mid(at + 6, pdfinfo.indexOf('\n', at) - at - 6).trimmed().toInt();
}

void TestReportPdf::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(!tool(QStringLiteral("pdfinfo"), {QStringLiteral("-v")}).isNull() ||
                 QFile::exists(QStringLiteral("/usr/bin/pdfinfo")),
             "pdfinfo missing: apt install poppler-utils");
    m_db = m_dir.filePath(QStringLiteral("runs.db")).toStdString();
    foxhunt::BarStore store(m_db);
    foxhunt::RunStore runs(store);
    m_run = runs.createRun("export", R"({"models":["dqn"],"seed":3,"device":"cpu"})", foxhunt::SeriesInfo{}, 0, 0,
                           R"({"foxhunt":"0.1.0","torch":"1.13.1","cuda":false})");
    foxhunt::MetricBatch batch;
    for (std::int64_t step = 1; step <= 500; ++step) {
        batch.push_back({"dqn", "loss", step, step, 1.0 / static_cast<double>(step)});
        batch.push_back({"dqn", "grad_norm", step, step, 0.5});
    }
    runs.appendMetrics(m_run, batch);
    runs.setStatus(m_run, foxhunt::RunStatus::Finished);

    m_manyModels = runs.createRun("four models", R"({"models":["dqn","ppo","mamba2","tft"],"seed":4,"device":"cpu"})",
                                  foxhunt::SeriesInfo{}, 0, 0, R"({"foxhunt":"0.1.0","torch":"1.13.1","cuda":false})");
    foxhunt::MetricBatch many;
    for (const char* model : {"dqn", "mamba2", "ppo", "tft"})
        for (std::int64_t step = 1; step <= 300; ++step) {
            many.push_back({model, "loss", step, step, 2.0 / static_cast<double>(step)});
            many.push_back({model, "grad_norm", step, step, 0.25});
            many.push_back({model, "latency_ms", step, step, 0.3});
        }
    runs.appendMetrics(m_manyModels, many);
    for (const char* model : {"dqn", "ppo"})
        runs.saveEvaluation(m_manyModels, model, "test", R"({"policy":{"sharpe":0.4,"pnl_usd":120}})");
    runs.setStatus(m_manyModels, foxhunt::RunStatus::Finished);
}

void TestReportPdf::pdfHasPagesAndText_data()
{
    QTest::addColumn<int>("runs");
    QTest::addColumn<bool>("letter");
    QTest::addColumn<QByteArray>("size");
    QTest::newRow("one run, A4") << 1 << false << QByteArray("595 x 842 pts (A4)");
    QTest::newRow("one run, Letter") << 1 << true << QByteArray("612 x 792 pts (letter)");
    QTest::newRow("comparison, A4") << 2 << false << QByteArray("(A4)");
}

void TestReportPdf::pdfHasPagesAndText()
{
    QFETCH(int, runs);
    QFETCH(bool, letter);
    QFETCH(QByteArray, size);
    const foxhunt::ReportDocument doc = foxhunt::buildRunReport(foxhunt::testing::handBuiltReport(runs, true));
    const QString path = m_dir.filePath(
        QStringLiteral("hand-%1.pdf").arg(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_')));
    const int written = foxhunt::writeReportPdf(doc, path.toStdString(),
                                                letter ? foxhunt::ReportPageSize::Letter : foxhunt::ReportPageSize::A4);
    QVERIFY(written > 3);
    const QByteArray info = tool(QStringLiteral("pdfinfo"), {path});
    QVERIFY2(info.contains(size), info.constData());
    QCOMPARE(pages(info), written);
    const QByteArray text = tool(QStringLiteral("pdftotext"), {path, QStringLiteral("-")});
    // Every heading, in the order the blocks give them.
    qsizetype from = 0;
    for (const auto& b : doc.blocks) {
        if (b.kind != foxhunt::ReportBlockKind::Heading || b.level > 2) continue;
        const QByteArray words = QByteArray::fromStdString(b.text).left(20);
        const qsizetype at = text.indexOf(words, from);
        QVERIFY2(at >= 0, words.constData());
        from = at;
    }
    for (const QByteArray& s :
         {QByteArray("INT8 copy degrades the validation loss"), QByteArray("ESH1, ESM1, ESU1"),
          QByteArray("Interpretation, run 1"), QByteArray("INT8 vs FP32"),
          QByteArray("Page 1 of ") + QByteArray::number(written),
          QByteArray("Page ") + QByteArray::number(written) + " of " + QByteArray::number(written)})
        QVERIFY2(text.contains(s), s.constData());
    // Charts are drawn from their SVG as vectors: the PDF holds no raster image at all.
    // (Qt SVG 6.4 draws chart text as outlines, so chart labels are not in the text layer.)
    const QByteArray images = tool(QStringLiteral("pdfimages"), {QStringLiteral("-list"), path});
    QVERIFY(images.startsWith("page"));
    QCOMPARE(images.count('\n'), 2);
}

void TestReportPdf::progressRisesAndCancelLeavesNoFile()
{
    const foxhunt::ReportDocument doc = foxhunt::buildRunReport(foxhunt::testing::handBuiltReport(1, false));
    std::vector<double> seen;
    const QString path = m_dir.filePath(QStringLiteral("progress.pdf"));
    foxhunt::writeReportPdf(doc, path.toStdString(), foxhunt::ReportPageSize::A4, [&](double f) {
        seen.push_back(f);
        return true;
    });
    QVERIFY(seen.size() > 3);
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.front(), 0.0);
    QCOMPARE(seen.back(), 1.0);

    const QString cancelled = m_dir.filePath(QStringLiteral("cancelled.pdf"));
    QVERIFY_THROWS_EXCEPTION(foxhunt::ReportCancelled,
                             foxhunt::writeReportPdf(doc, cancelled.toStdString(), foxhunt::ReportPageSize::A4,
                                                     [](double f) { return f < 0.5; }));
    QVERIFY(!QFile::exists(cancelled));
    QVERIFY(!QFile::exists(cancelled + QStringLiteral(".part")));
}

void TestReportPdf::exportDispatchesOnExtension_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("start");
    QTest::newRow("html") << "r.html" << QByteArray("<!DOCTYPE html>");
    QTest::newRow("pdf") << "r.pdf" << QByteArray("%PDF-");
    QTest::newRow("json") << "r.json" << QByteArray("{");
    QTest::newRow("csv") << "r.CSV" << QByteArray("run,model,metric,step,time,value\n1,dqn,grad_norm,1,");
}

void TestReportPdf::exportDispatchesOnExtension()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, start);
    const QString path = m_dir.filePath(file);
    double last = -1;
    foxhunt::exportRunReport(m_db, {m_run}, path.toStdString(), [&](double f) {
        last = f;
        return true;
    });
    QCOMPARE(last, 1.0);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY2(f.readAll().startsWith(start), qPrintable(file));
}

void TestReportPdf::exportRejectsBadRequests()
{
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        foxhunt::exportRunReport(m_db, {m_run}, m_dir.filePath(QStringLiteral("r.docx")).toStdString()));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        foxhunt::exportRunReport(m_db, {m_run + 100}, m_dir.filePath(QStringLiteral("x.pdf")).toStdString()));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             foxhunt::exportRunReport(m_db, {}, m_dir.filePath(QStringLiteral("x.pdf")).toStdString()));
    QVERIFY_THROWS_EXCEPTION(
        std::runtime_error,
        foxhunt::exportRunReport(m_db, {m_run}, m_dir.filePath(QStringLiteral("no/dir/x.pdf")).toStdString()));
    QVERIFY_THROWS_EXCEPTION(foxhunt::ReportCancelled,
                             foxhunt::exportRunReport(m_db, {m_run},
                                                      m_dir.filePath(QStringLiteral("c.pdf")).toStdString(),
                                                      [](double f) { return f < 0.6; }));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.pdf"))));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("c.pdf"))));
}

void TestReportPdf::fullDiskLeavesNoTruncatedPdf()
{
    const foxhunt::ReportDocument doc = foxhunt::buildRunReport(foxhunt::testing::handBuiltReport(2, true));
    QDir folder(m_dir.filePath(QStringLiteral("full-disk")));
    QVERIFY(folder.mkpath(QStringLiteral(".")));
    const QString path = folder.filePath(QStringLiteral("r.pdf"));
    foxhunt::writeReportPdf(doc, path.toStdString());
    const qint64 size = QFileInfo(path).size();
    QVERIFY(size > 4096);
    const QByteArray old = QByteArray("%PDF-1.4 an older report that must survive\n");
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(old);
    }
    // The disk fills half way through the report; QPdfWriter alone never noticed.
    QString error;
    {
        const foxhunt::testing::FileSizeLimit limit(static_cast<rlim_t>(size / 2));
        QVERIFY(limit.active());
        try {
            foxhunt::writeReportPdf(doc, path.toStdString());
        } catch (const std::runtime_error& e) {
            error = QString::fromStdString(e.what());
        }
    }
    QVERIFY2(!error.isEmpty(), "a PDF cut short by a full disk was reported as written");
    QVERIFY2(error.contains(QString::fromLatin1(std::strerror(EFBIG))), qPrintable(error));
    QCOMPARE(folder.entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("r.pdf")});
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), old);
}

void TestReportPdf::everyFormatReportsProgressPerSection_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("html") << "steps.html";
    QTest::newRow("pdf") << "steps.pdf";
    QTest::newRow("json") << "steps.json";
    QTest::newRow("csv") << "steps.csv";
}

void TestReportPdf::everyFormatReportsProgressPerSection()
{
    QFETCH(QString, file);
    // Sections of the page formats; the data formats go by run and model (four models here).
    int sections = 0;
    {
        foxhunt::BarStore store(m_db);
        sections = foxhunt::reportSectionCount(foxhunt::buildRunReport(foxhunt::runReportJson(store, {m_manyModels})));
    }
    const bool page = file.endsWith(QLatin1String(".html")) || file.endsWith(QLatin1String(".pdf"));
    const int wanted = page ? sections : 4;
    QVERIFY(sections >= 6);

    std::vector<double> seen;
    const QString path = m_dir.filePath(file);
    foxhunt::exportRunReport(m_db, {m_manyModels}, path.toStdString(), [&](double f) {
        seen.push_back(f);
        return true;
    });
    QVERIFY(QFileInfo(path).size() > 0);
    QVERIFY(!seen.empty());
    QVERIFY2(std::is_sorted(seen.begin(), seen.end()), "progress went back");
    QCOMPARE(seen.front(), 0.0);
    QCOMPARE(seen.back(), 1.0);
    std::vector<double> distinct = seen;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    // Strictly between the start and the end: at least one step per section, and more than 0, .5, .9.
    const int inner = static_cast<int>(
        std::count_if(distinct.begin(), distinct.end(), [](double f) { return f > 0 && f < 1; }));
    QVERIFY2(inner >= wanted, qPrintable(QStringLiteral("%1 steps for %2 sections").arg(inner).arg(wanted)));
    QVERIFY(inner > 3);
}

} // namespace tst_report_pdf

FOXHUNT_TEST_MAIN(tst_report_pdf::TestReportPdf)
#include "tst_report_pdf.moc"
