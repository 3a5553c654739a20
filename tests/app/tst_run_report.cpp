// SPDX-License-Identifier: GPL-3.0-or-later
// Run reports: the HTML is well-formed XML with every section, the warnings
// flag what they should, the CSV carries exactly the stored numbers, and a run
// trained on real ES bars exports in all four formats through foxhunt-cli.

#include "engine/report/report_blocks.h"
#include "engine/report/run_report.h"
#include "engine/report/svg_chart.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/app/report_fixture.h"
#include "tests/engine/file_size_limit.h"
#include "tests/support/test_bundle.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <random>

namespace tst_run_report {

using foxhunt::testing::handBuiltReport;

class TestRunReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void htmlIsWellFormedWithEverySection_data();
    void htmlIsWellFormedWithEverySection();
    void wellFormedCheckCatchesBrokenDocuments_data();
    void wellFormedCheckCatchesBrokenDocuments();
    void warningsFlagProblems();
    void blocksCarryTheNewData();
    void csvRoundTripsStoredMetrics();
    void rejectsBadRequests();
    void realRunExportsEveryFormat();
    void timeAxisLabelsTellTicksApart();
    void constantSeriesIsCentredOnItsValue();
    void oneSampleIsDrawn();
    void legendAndTitleStayOutOfThePlot();
    void summaryComesFirst();
    void fullDiskFailsEveryFormat_data();
    void fullDiskFailsEveryFormat();

private:
    /// Parses `html` as XML; returns the error ("" when well-formed) and collects every id attribute.
    static QString parseXml(const QByteArray& html, QSet<QString>* ids = nullptr);
    struct Result {
        int exitCode = -1;
        QByteArray out, err;
    };
    static Result run(const QString& program, const QStringList& args, long fileSizeLimit = 0);
    static Result cli(const QStringList& args) { return run(QStringLiteral(FOXHUNT_CLI_PATH), args); }
    static QByteArray readAll(const QString& path);
    QTemporaryDir m_dir;
};

QString TestRunReport::parseXml(const QByteArray& html, QSet<QString>* ids)
{
    QXmlStreamReader xml(html);
    int elements = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            ++elements;
            if (ids && xml.attributes().hasAttribute(QStringLiteral("id")))
                ids->insert(xml.attributes().value(QStringLiteral("id")).toString());
        }
    }
    if (xml.hasError())
        return QStringLiteral("line %1, column %2: %3")
            .arg(xml.lineNumber())
            .arg(xml.columnNumber())
            .arg(xml.errorString());
    return elements > 0 ? QString() : QStringLiteral("no elements");
}

TestRunReport::Result TestRunReport::run(const QString& program, const QStringList& args, long fileSizeLimit)
{
    QProcess p;
    if (fileSizeLimit > 0)
        p.setChildProcessModifier([fileSizeLimit] { foxhunt::testing::FileSizeLimit::applyInChild(fileSizeLimit); });
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(300000)) return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QByteArray TestRunReport::readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void TestRunReport::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

void TestRunReport::htmlIsWellFormedWithEverySection_data()
{
    QTest::addColumn<int>("runs");
    QTest::addColumn<bool>("troubled");
    QTest::newRow("one run") << 1 << false;
    QTest::newRow("one troubled run") << 1 << true;
    QTest::newRow("comparison of three") << 3 << true;
}

void TestRunReport::htmlIsWellFormedWithEverySection()
{
    QFETCH(int, runs);
    QFETCH(bool, troubled);
    const std::string html = foxhunt::renderRunReportHtml(handBuiltReport(runs, troubled));
    QSet<QString> ids;
    const QString error = parseXml(QByteArray::fromStdString(html), &ids);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    for (const std::string& id : foxhunt::kReportSectionIds)
        QVERIFY2(ids.contains(QString::fromStdString(id)), id.c_str());
    for (const char* id : {"model-dqn", "model-tft", "precision", "model-dqn-int8", "model-tft-interpretation",
                           "model-dqn-test", "model-tft-validation", "model-dqn-latency", "model-dqn-amp"})
        QVERIFY2(ids.contains(QLatin1String(id)), id);
    // Escaped names survive as text; no scripts or remote resources.
    QVERIFY(html.find("hand-built &lt;1&gt; &amp; co") != std::string::npos);
    QVERIFY(html.find("<script") == std::string::npos);
    QVERIFY(html.find("http://") == html.find("http://www.w3.org"));
    if (runs > 1) QVERIFY(html.find("<th>run 3</th>") != std::string::npos);
}

void TestRunReport::wellFormedCheckCatchesBrokenDocuments_data()
{
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<bool>("truncate");
    QTest::newRow("unclosed table") << "</table>"
                                    << "" << false;
    QTest::newRow("raw ampersand") << "&amp;"
                                   << "&" << false;
    QTest::newRow("html-only entity") << "&lt;"
                                      << "&nbsp;" << false;
    QTest::newRow("void element not closed") << "<meta charset=\"utf-8\"/>"
                                             << "<meta charset=\"utf-8\">" << false;
    QTest::newRow("truncated") << ""
                               << "" << true;
}

void TestRunReport::wellFormedCheckCatchesBrokenDocuments()
{
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(bool, truncate);
    QByteArray html = QByteArray::fromStdString(foxhunt::renderRunReportHtml(handBuiltReport(1, false)));
    QVERIFY(parseXml(html).isEmpty());
    if (truncate) {
        html.truncate(html.size() / 2);
    } else {
        const qsizetype at = html.indexOf(from.toUtf8());
        QVERIFY(at >= 0);
        html.replace(at, from.toUtf8().size(), to.toUtf8());
    }
    QVERIFY(!parseXml(html).isEmpty());
}

void TestRunReport::warningsFlagProblems()
{
    const foxhunt::ReportDocument clean = foxhunt::buildRunReport(handBuiltReport(1, false));
    const foxhunt::ReportDocument troubled = foxhunt::buildRunReport(handBuiltReport(1, true));
    auto warnings = [](const foxhunt::ReportDocument& d) {
        QStringList w;
        for (const auto& b : d.blocks)
            if (b.kind == foxhunt::ReportBlockKind::Warning) w << QString::fromStdString(b.text);
        return w;
    };
    QVERIFY2(warnings(clean).isEmpty(), qPrintable(warnings(clean).join(QLatin1Char('\n'))));
    const QString all = warnings(troubled).join(QLatin1Char('\n'));
    for (const char* expected :
         {"synthetic", "failed: tft: loss became NaN", "INT8 copy degrades the validation loss by 9.0 %",
          "loss-scale storm", "non-finite loss value", "run 1, tft"})
        QVERIFY2(all.contains(QLatin1String(expected)),
                 qPrintable(expected + QStringLiteral(" missing from:\n") + all));
    // DQN has no NaN loss: divergence is reported for the TFT only.
    QVERIFY(!all.contains(QLatin1String("run 1, dqn: 1 non-finite")));
}

void TestRunReport::blocksCarryTheNewData()
{
    const foxhunt::ReportDocument doc = foxhunt::buildRunReport(handBuiltReport(1, false));
    QStringList charts;
    QString text;
    for (const auto& b : doc.blocks) {
        if (b.kind == foxhunt::ReportBlockKind::Chart) {
            charts << QString::fromStdString(b.text);
            QVERIFY(b.svg.rfind("<svg", 0) == 0 && b.width > 0 && b.height > 0);
        }
        text += QString::fromStdString(b.text) + QLatin1Char('\n');
        for (const auto& row : b.rows)
            for (const auto& cell : row) text += QString::fromStdString(cell) + QLatin1Char('\t');
    }
    for (const char* c :
         {"loss", "loss_scale", "grad_norm", "latency_ms", "Memory (bytes)", "Training equity (ticks, net of costs)",
          "Forecast quantiles vs realised log return", "Encoder variable importance",
          "Attention (mean over heads and windows)", "Equity on the test split (USD) vs flat and buy and hold"})
        QVERIFY2(charts.contains(QLatin1String(c)), c);
    for (const char* t :
         {"ESH1, ESM1, ESU1",
          "14000 bars",
          "static (calibrated)",
          "bf16",
          "0.210",
          "97.00 %",
          "468.8 KiB",
          "peak session rss_bytes",
          "none",
          "1.13.1",
          "real market bars",
          "2 (gradients all-reduced in place by NCCL)",
          "Sharpe and Sortino are of the daily P&L",
          "over 3 trading days",
          "annualised with sqrt(252)",
          "climatology",
          "CRPS",
          "Skill vs climatology (1 - loss / climatology's loss, > 0 is better): quantile loss 0.031, CRPS 0.027",
          "best baseline, climatology: p = 0.41, not significant",
          "the q10-q90 interval holds 0.830 of the outcomes (nominal 0.80",
          "0.09 / 0.10, 0.41 / 0.40"})
        QVERIFY2(text.contains(QLatin1String(t)), t);
}

void TestRunReport::csvRoundTripsStoredMetrics()
{
    const std::string db = m_dir.filePath(QStringLiteral("csv.db")).toStdString();
    std::vector<std::int64_t> ids;
    foxhunt::MetricBatch stored;
    {
        foxhunt::BarStore store(db);
        foxhunt::RunStore runs(store);
        std::mt19937_64 rng(11);
        std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
        std::uniform_int_distribution<int> exponent(-300, 300);
        for (int r = 0; r < 2; ++r) {
            const std::int64_t id = runs.createRun("csv " + std::to_string(r), "{}", foxhunt::SeriesInfo{}, 0, 0, "{}");
            foxhunt::MetricBatch batch;
            for (const char* model : {"dqn", "tft"})
                for (const char* metric : {"loss", "grad_norm"})
                    for (std::int64_t step = 1; step <= 300; ++step)
                        batch.push_back({model, metric, step, 1'700'000'000'000'000'000 + step,
                                         std::ldexp(mantissa(rng), exponent(rng) / 4)});
            runs.appendMetrics(id, batch);
            ids.push_back(id);
        }
        for (std::int64_t id : ids)
            for (const auto& s : runs.metrics(id)) stored.push_back(s);
    }
    const std::string path = m_dir.filePath(QStringLiteral("metrics.csv")).toStdString();
    foxhunt::writeRunReport(db, ids, path);
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readLine(), QByteArray("run,model,metric,step,time,value\n"));
    std::size_t i = 0;
    for (QByteArray line = f.readLine(); !line.isEmpty(); line = f.readLine(), ++i) {
        const QList<QByteArray> cells = line.trimmed().split(',');
        QCOMPARE(cells.size(), 6);
        QVERIFY(i < stored.size());
        const foxhunt::MetricSample& s = stored[i];
        QCOMPARE(cells[1].toStdString(), s.model);
        QCOMPARE(cells[2].toStdString(), s.metric);
        QCOMPARE(cells[3].toLongLong(), s.step);
        double v = 0;
        const auto [end, ec] = std::from_chars(cells[5].constData(), cells[5].constData() + cells[5].size(), v);
        QVERIFY(ec == std::errc());
        // Bit-exact: the CSV carries the stored double, not a rounding of it.
        QVERIFY2(std::memcmp(&v, &s.value, sizeof v) == 0, cells[5].constData());
    }
    QCOMPARE(i, stored.size());
}

void TestRunReport::rejectsBadRequests()
{
    const std::string db = m_dir.filePath(QStringLiteral("bad.db")).toStdString();
    std::int64_t id = 0;
    {
        foxhunt::BarStore store(db);
        id = foxhunt::RunStore(store).createRun("bad", "{}", foxhunt::SeriesInfo{}, 0, 0, "{}");
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             foxhunt::writeRunReport(db, {id}, m_dir.filePath(QStringLiteral("x.txt")).toStdString()));
    QVERIFY_THROWS_EXCEPTION(
        std::invalid_argument,
        foxhunt::writeRunReport(db, {id + 41}, m_dir.filePath(QStringLiteral("x.html")).toStdString()));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.html"))));
    QVERIFY_THROWS_EXCEPTION(
        std::runtime_error,
        foxhunt::writeRunReport(db, {id}, m_dir.filePath(QStringLiteral("no/such/dir/x.csv")).toStdString()));
    // A cancelled export leaves nothing behind.
    QVERIFY_THROWS_EXCEPTION(foxhunt::ReportCancelled,
                             foxhunt::writeRunReport(db, {id}, m_dir.filePath(QStringLiteral("c.json")).toStdString(),
                                                     [](double f) { return f < 0.5; }));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("c.json"))));
}

void TestRunReport::realRunExportsEveryFormat()
{
    const QString real = QStringLiteral(FOXHUNT_REAL_DATA_DIR "/ES_1min_sample.csv");
    QVERIFY2(QFile::exists(real), "real data missing: ../shared/data/real");
    const QString store = m_dir.filePath(QStringLiteral("real.db"));
    Result r = cli({QStringLiteral("import"), real, QStringLiteral("--db"), store});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString trainPdf = m_dir.filePath(QStringLiteral("train.pdf"));
    // Five trading days and a small Mamba-2 keep this test to seconds.
    const QString config = m_dir.filePath(QStringLiteral("small.json"));
    {
        QFile f(config);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"mamba2": {"d_model": 16, "layers": 1, "head_dim": 8, "batch_size": 16, "past_length": 30}})");
    }
    r = cli({QStringLiteral("train"), QStringLiteral("--db"), store, QStringLiteral("--models"),
             QStringLiteral("dqn,mamba2"), QStringLiteral("--steps"), QStringLiteral("300"), QStringLiteral("--seed"),
             QStringLiteral("5"), QStringLiteral("--from"), QStringLiteral("2026-01-26"), QStringLiteral("--to"),
             QStringLiteral("2026-01-30"), QStringLiteral("--config"), config, QStringLiteral("--report"), trainPdf,
             QStringLiteral("--json")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject result = QJsonDocument::fromJson(r.out).object();
    const QString id = QString::number(result.value(QStringLiteral("run_id")).toInt());
    QVERIFY(QFile::exists(trainPdf));

    const QString html = m_dir.filePath(QStringLiteral("real.html")),
                  json = m_dir.filePath(QStringLiteral("real.json")), csv = m_dir.filePath(QStringLiteral("real.csv")),
                  pdf = m_dir.filePath(QStringLiteral("real.pdf"));
    for (const QString& out : {html, json, csv, pdf}) {
        r = cli({QStringLiteral("report"), id, QStringLiteral("--db"), store, QStringLiteral("--out"), out,
                 QStringLiteral("--paper"), QStringLiteral("letter")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
    }

    QSet<QString> ids;
    const QByteArray page = readAll(html);
    const QString error = parseXml(page, &ids);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    for (const char* s :
         {"header", "summary", "warnings", "data", "configuration", "model-dqn", "model-mamba2", "model-dqn-test"})
        QVERIFY2(ids.contains(QLatin1String(s)), s);
    QVERIFY(page.indexOf("id=\"summary\"") < page.indexOf("id=\"configuration\""));
    QVERIFY(page.contains("real market bars"));
    QVERIFY(!page.contains("synthetic (bundled"));

    // The split the report recomputes is the one the session trained on.
    const QJsonObject runDoc =
        QJsonDocument::fromJson(readAll(json)).object().value(QStringLiteral("runs")).toArray().at(0).toObject();
    const QJsonObject split = runDoc.value(QStringLiteral("split")).toObject();
    const QJsonObject trained = result.value(QStringLiteral("split")).toObject();
    for (const char* part : {"train", "validation", "test"})
        QCOMPARE(split.value(QLatin1String(part)).toObject(), trained.value(QLatin1String(part)).toObject());
    // The JSON carries the same headline results per model as the summary section.
    const QJsonArray summaryModels =
        runDoc.value(QStringLiteral("summary")).toObject().value(QStringLiteral("models")).toArray();
    QCOMPARE(summaryModels.size(), 2);
    QCOMPARE(summaryModels.at(0).toObject().value(QStringLiteral("model")).toString(), QStringLiteral("dqn"));
    // The Sharpe is of daily P&L: with fewer than two test days it is undefined (null), not 0.
    const QJsonValue testSharpe = summaryModels.at(0).toObject().value(QStringLiteral("test_sharpe"));
    const int testDays = result.value(QStringLiteral("models"))
                             .toObject()
                             .value(QStringLiteral("dqn"))
                             .toObject()
                             .value(QStringLiteral("test"))
                             .toObject()
                             .value(QStringLiteral("policy"))
                             .toObject()
                             .value(QStringLiteral("days"))
                             .toInt(-1);
    QVERIFY2(testDays >= 1, "the test split has trading days");
    QVERIFY(testDays >= 2 ? testSharpe.isDouble() : testSharpe.isNull());
    QVERIFY(summaryModels.at(1).toObject().value(QStringLiteral("quantile_loss")).isDouble());

    QByteArray lines = readAll(csv);
    QVERIFY(lines.startsWith("run,model,metric,step,time,value\n"));
    QVERIFY(lines.count('\n') > 100);

    const Result info = run(QStringLiteral("pdfinfo"), {pdf});
    QVERIFY2(info.exitCode == 0, info.err.constData());
    QVERIFY2(info.out.contains("612 x 792 pts (letter)"), info.out.constData());
    const qsizetype at = info.out.indexOf("Pages:");
    QVERIFY(at >= 0);
    const int pages = info.out.mid(at + 6, info.out.indexOf('\n', at) - at - 6).trimmed().toInt();
    QVERIFY2(pages >= 3, info.out.constData());
    const Result text = run(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
    QCOMPARE(text.exitCode, 0);
    for (const QByteArray& s : {QByteArray("Warnings"), QByteArray("Configuration"), QByteArray("Precision"),
                                QByteArray("DQN (agent)"), QByteArray("Mamba-2 (forecaster)"),
                                QByteArray("real market bars"), QByteArray("Page 1 of ") + QByteArray::number(pages),
                                QByteArray("Page ") + QByteArray::number(pages) + " of " + QByteArray::number(pages)})
        QVERIFY2(text.out.contains(s), s.constData());
    // The PDF opens with the results: the summary before the hyperparameters.
    QVERIFY(text.out.contains("Summary"));
    // (a one-day test split has no Sharpe row: a Sharpe of daily P&L needs two days)
    QVERIFY2(text.out.contains("test P&L"), text.out.left(3000).constData());
    QVERIFY(text.out.indexOf("Summary") < text.out.indexOf("Configuration"));
}

void TestRunReport::timeAxisLabelsTellTicksApart()
{
    using foxhunt::timeTickLabels;
    // An intraday run: six ticks inside one session used to print the same date six times.
    const double open = 1704205800; // 2024-01-02 14:30:00 UTC
    std::vector<double> intraday;
    for (int k = 0; k <= 5; ++k) intraday.push_back(open + k * 4680.0); // every 78 minutes
    const std::vector<std::string> l = timeTickLabels(intraday);
    QCOMPARE(l.front(), std::string("2024-01-02 14:30"));
    QCOMPARE(l[1], std::string("15:48"));
    for (std::size_t i = 1; i < l.size(); ++i) QVERIFY(l[i] != l[i - 1]);
    // Across midnight the new day gets its date back.
    const std::vector<std::string> night = timeTickLabels({open + 8 * 3600.0, open + 10 * 3600.0, open + 12 * 3600.0});
    QCOMPARE(night[0], std::string("2024-01-02 22:30"));
    QCOMPARE(night[1], std::string("2024-01-03 00:30"));
    QCOMPARE(night[2], std::string("02:30"));
    // A run over weeks keeps plain dates.
    const std::vector<std::string> weeks = timeTickLabels({open, open + 7 * 86400.0, open + 14 * 86400.0});
    QCOMPARE(weeks[1], std::string("2024-01-09"));
    // Ticks seconds apart show seconds.
    QCOMPARE(timeTickLabels({open, open + 20.0})[1], std::string("14:30:20"));
}

namespace {

/// The numbers in attribute `name` of every element `tag` with class `cls` (any class when empty).
std::vector<double> attributeValues(const std::string& svg, const char* tag, const char* cls, const char* name)
{
    std::vector<double> out;
    QXmlStreamReader xml(QByteArray::fromStdString(svg));
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String(tag) &&
            (!*cls || xml.attributes().value(QStringLiteral("class")) == QLatin1String(cls)))
            out.push_back(xml.attributes().value(QLatin1String(name)).toDouble());
    return out;
}

/// The texts of every <text> element with class `cls`.
QStringList texts(const std::string& svg, const char* cls)
{
    QStringList out;
    QXmlStreamReader xml(QByteArray::fromStdString(svg));
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text") &&
            xml.attributes().value(QStringLiteral("class")) == QLatin1String(cls))
            out << xml.readElementText();
    return out;
}

} // namespace

void TestRunReport::constantSeriesIsCentredOnItsValue()
{
    // A fixed learning rate used to sit on the 0 line of a -0.4 .. 0.4 axis.
    foxhunt::SvgSeries lr{"lr", "#1f77b4", {}, {}};
    for (int i = 0; i < 20; ++i) {
        lr.x.push_back(i * 100);
        lr.y.push_back(3e-4);
    }
    foxhunt::SvgChartOptions o;
    o.title = "learning rate";
    const std::string svg = foxhunt::renderSvgLineChart({lr}, o);
    const QStringList ticks = texts(svg, "ytick");
    QVERIFY(ticks.size() >= 2);
    double lo = 1, hi = -1;
    for (const QString& t : ticks) {
        bool ok = false;
        const double v = t.toDouble(&ok);
        QVERIFY2(ok, qPrintable(t));
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    // Ticks on both sides of the value, none further than half of it away.
    QVERIFY2(lo < 3e-4 && hi > 3e-4 && lo > 1.5e-4 && hi < 4.5e-4, qPrintable(ticks.join(QLatin1Char(' '))));
    // The line runs through the middle of the plot.
    const double top = attributeValues(svg, "rect", "plot", "y").at(0);
    const double height = attributeValues(svg, "rect", "plot", "height").at(0);
    const std::size_t at = svg.find("points=\"");
    QVERIFY(at != std::string::npos);
    const double y = std::stod(svg.substr(svg.find(',', at) + 1));
    QVERIFY2(std::fabs(y - (top + height / 2)) < 1.0, qPrintable(QString::number(y)));
}

void TestRunReport::oneSampleIsDrawn()
{
    foxhunt::SvgChartOptions o;
    o.title = "validation loss";
    const std::string svg = foxhunt::renderSvgLineChart({{"loss", "#d62728", {500}, {0.25}}}, o);
    QVERIFY(svg.find("no data") == std::string::npos);
    QCOMPARE(attributeValues(svg, "circle", "", "cx").size(), std::size_t{1});
    QVERIFY(svg.find("1 sample") != std::string::npos);
    const QString error = parseXml(QByteArray::fromStdString(svg));
    QVERIFY2(error.isEmpty(), qPrintable(error));
}

void TestRunReport::legendAndTitleStayOutOfThePlot()
{
    std::vector<foxhunt::SvgSeries> lines;
    for (const char* name :
         {"weights (bytes)", "activations (bytes)", "optimizer state (bytes)", "replay buffer (bytes)"}) {
        foxhunt::SvgSeries s{name, "#1f77b4", {}, {}};
        for (int i = 0; i < 50; ++i) {
            s.x.push_back(i);
            s.y.push_back(std::sin(i * 0.2) * 1000 + 5000);
        }
        lines.push_back(std::move(s));
    }
    foxhunt::SvgChartOptions o;
    o.width = 480;
    o.height = 220;
    o.title = "Equity on the test split (USD) vs flat and buy and hold, with every cost and slippage counted, run 12";
    const std::string svg = foxhunt::renderSvgLineChart(lines, o);
    const double top = attributeValues(svg, "rect", "plot", "y").at(0);
    const double bottom = top + attributeValues(svg, "rect", "plot", "height").at(0);
    // Every legend entry below the plot (and the x tick labels), inside the picture.
    const std::vector<double> legend = attributeValues(svg, "text", "legend", "y");
    QCOMPARE(legend.size(), lines.size());
    for (double y : legend) QVERIFY2(y - 11 > bottom && y <= o.height, qPrintable(QString::number(y)));
    for (double x : attributeValues(svg, "text", "legend", "x")) QVERIFY(x >= 0 && x < o.width);
    // The title wraps: every word is there, each line short enough for the width, all above the plot.
    const QStringList title = texts(svg, "title");
    QVERIFY2(title.size() >= 2, qPrintable(title.join(QLatin1Char('|'))));
    QCOMPARE(title.join(QLatin1Char(' ')), QString::fromStdString(o.title));
    for (const QString& line : title) QVERIFY2(line.size() * 13 * 0.62 <= o.width - 16, qPrintable(line));
    for (double y : attributeValues(svg, "text", "title", "y")) QVERIFY(y < top);
}

void TestRunReport::summaryComesFirst()
{
    for (int runs : {1, 3}) {
        const foxhunt::ReportDocument doc = foxhunt::buildRunReport(handBuiltReport(runs, false));
        // Right after the title: the summary, a table with each model's headline results.
        QVERIFY(doc.blocks.size() > 3);
        QVERIFY(doc.blocks[0].kind == foxhunt::ReportBlockKind::Heading && doc.blocks[0].id == "header");
        QVERIFY(doc.blocks[1].kind == foxhunt::ReportBlockKind::Heading && doc.blocks[1].id == "summary");
        const foxhunt::ReportBlock& table = doc.blocks[2];
        QVERIFY(table.kind == foxhunt::ReportBlockKind::Table);
        QVERIFY2(table.header.size() >= 3, "a column per model"); // "", DQN, TFT (per run)
        QCOMPARE(table.header[1].rfind("DQN", 0), std::size_t{0});
        QStringList labels;
        for (const auto& row : table.rows) labels << QString::fromStdString(row.front());
        for (const char* l : {"Precision", "test Sharpe (daily, annualised)", "test P&L", "test quantile loss"})
            QVERIFY2(labels.contains(QLatin1String(l)), l);
        const auto& sharpe =
            table.rows[static_cast<std::size_t>(labels.indexOf(QStringLiteral("test Sharpe (daily, annualised)")))];
        QCOMPARE(sharpe[1], std::string("0.8"));
        // Before anything about the configuration.
        std::size_t summaryAt = 0, configurationAt = 0;
        for (std::size_t i = 0; i < doc.blocks.size(); ++i) {
            if (doc.blocks[i].id == "summary") summaryAt = i;
            if (doc.blocks[i].id == "configuration") configurationAt = i;
        }
        QVERIFY(summaryAt < configurationAt);
    }
}

void TestRunReport::fullDiskFailsEveryFormat_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("existing");
    for (const char* ext : {"html", "json", "csv", "pdf"}) {
        QTest::addRow("%s", ext) << QStringLiteral("full.%1").arg(QLatin1String(ext)) << false;
        QTest::addRow("%s over an old report", ext) << QStringLiteral("old.%1").arg(QLatin1String(ext)) << true;
    }
}

void TestRunReport::fullDiskFailsEveryFormat()
{
    QFETCH(QString, file);
    QFETCH(bool, existing);
    // A run with enough metrics that every format is well over the limit below.
    const QString db = m_dir.filePath(QStringLiteral("full.db"));
    if (!QFile::exists(db)) {
        foxhunt::BarStore store(db.toStdString());
        foxhunt::RunStore runs(store);
        const std::int64_t id = runs.createRun("full disk", "{}", foxhunt::SeriesInfo{}, 0, 0, "{}");
        QCOMPARE(id, std::int64_t{1});
        foxhunt::MetricBatch batch;
        for (const char* model : {"dqn", "ppo", "tft"})
            for (const char* metric : {"loss", "grad_norm", "latency_ms"})
                for (std::int64_t step = 1; step <= 4000; ++step)
                    batch.push_back(
                        {model, metric, step, 1'700'000'000'000'000'000 + step,
                         std::sin(0.01 * static_cast<double>(step)) + 1e-3 * static_cast<double>(step % 97)});
        runs.appendMetrics(id, batch);
    }
    // One folder per row, so "nothing left behind" is a listing.
    const QDir folder(m_dir.filePath(QStringLiteral("out-") + file));
    QVERIFY(folder.mkpath(QStringLiteral(".")));
    const QString out = folder.filePath(file);

    // Written once without a limit, for its size.
    Result r = cli(
        {QStringLiteral("report"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("--out"), out});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const qint64 size = QFileInfo(out).size();
    // SQLite's shared-memory file needs 32 KiB, so the "disk" fills at half the report, but no lower than 64 KiB.
    const long limit = std::max<long>(64 * 1024, static_cast<long>(size / 2));
    QVERIFY2(size > limit, qPrintable(QStringLiteral("the fixture's %1 is only %2 bytes").arg(file).arg(size)));

    const QByteArray old("an older report that must survive\n");
    QFile::remove(out);
    if (existing) {
        QFile f(out);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(old);
    }
    r = run(QStringLiteral(FOXHUNT_CLI_PATH),
            {QStringLiteral("report"), QStringLiteral("1"), QStringLiteral("--db"), db, QStringLiteral("--out"), out},
            limit);
    QVERIFY2(r.exitCode != 0, "a report cut short by a full disk was reported as written");
    QVERIFY2(r.err.contains(std::strerror(EFBIG)), r.err.constData());
    const QStringList left = folder.entryList(QDir::Files | QDir::Hidden);
    if (existing) {
        QCOMPARE(left, QStringList{file});
        QCOMPARE(readAll(out), old);
    } else {
        QCOMPARE(left, QStringList{});
    }
}

} // namespace tst_run_report

FOXHUNT_TEST_GUILESS_MAIN(tst_run_report::TestRunReport)
#include "tst_run_report.moc"
