// SPDX-License-Identifier: GPL-3.0-or-later
// A run in a line: precision as trained (by hand or auto's choice per model),
// results read from the stored evaluations, the settings that differ, and
// figures formatted as the runs table and the compare view show them.
#include "engine/report/run_summary.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace tst_run_summary {

using namespace foxhunt;

class TestRunSummary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void autoPrecisionNamesEachModelsChoice();
    void refusedInt8IsSaid();
    void forecasterResults();
    void onlyDifferingSettings();
    void formatsFigures();

private:
    RunSummary summaryOf(const std::string& config, const std::string& versions,
                         const std::vector<EvaluationRecord>& evaluations = {});
    QTemporaryDir m_dir;
    int m_n = 0;
};

RunSummary TestRunSummary::summaryOf(const std::string& config, const std::string& versions,
                                     const std::vector<EvaluationRecord>& evaluations)
{
    BarStore store(m_dir.filePath(QStringLiteral("s%1.db").arg(++m_n)).toStdString());
    RunStore runs(store);
    const std::int64_t id = runs.createRun("r", config, {}, 0, 0, versions);
    for (const EvaluationRecord& e : evaluations) runs.saveEvaluation(id, e.model, e.split, e.resultJson);
    runs.setStatus(id, RunStatus::Finished);
    return summarizeRun(runs, *runs.run(id));
}

void TestRunSummary::autoPrecisionNamesEachModelsChoice()
{
    const RunSummary s = summaryOf(
        R"({"models":["dqn","mamba2"],"device":"cpu","precision":{"amp":false}})",
        R"({"ranks":2,"amp_choice":{"dqn":{"enabled":false},"mamba2":{"enabled":true,"dtype":"bf16"}}})");
    QCOMPARE(QString::fromStdString(s.precision), QStringLiteral("auto: BF16 mamba2, FP32 dqn"));
    QCOMPARE(s.processes, 2);
    QCOMPARE(s.models.size(), std::size_t(2));
    QVERIFY(std::isnan(s.find("dqn")->testSharpe)); // nothing evaluated: no figure, not zero
    QVERIFY(!s.find("ppo"));
    QCOMPARE(QString::fromStdString(
                 summaryOf(R"({"models":["dqn"],"precision":{"amp":true,"amp_dtype":"fp16"}})", "{}").precision),
             QStringLiteral("FP16"));
}

void TestRunSummary::refusedInt8IsSaid()
{
    const std::string config = R"({"models":["dqn","tft"],"precision":{"amp":false,"int8":true}})";
    const RunSummary some = summaryOf(config, "{}",
                                      {{"dqn", "validation", R"({"int8":{"served":true,"degradation":0.01}})"},
                                       {"tft", "validation", R"({"int8":{"served":false,"degradation":0.2}})"}});
    QCOMPARE(QString::fromStdString(some.precision), QStringLiteral("FP32 + INT8 (some refused)"));
    QCOMPARE(some.find("tft")->int8Degradation, 0.2);
    const RunSummary none = summaryOf(config, "{}", {{"dqn", "validation", R"({"int8":{"served":false}})"}});
    QCOMPARE(QString::fromStdString(none.precision), QStringLiteral("FP32 + INT8 (refused)"));
}

void TestRunSummary::forecasterResults()
{
    const RunSummary s = summaryOf(
        R"({"models":["tft"]})", "{}",
        {{"tft", "test", R"({"model":{"quantile_loss":0.0123},"persistence":{"quantile_loss":0.02}})"},
         {"tft", "training", R"({"latency":{"p95_ms":1.5}})"}});
    QCOMPARE(s.find("tft")->quantileLoss, 0.0123);
    QCOMPARE(s.find("tft")->persistenceLoss, 0.02);
    QCOMPARE(s.find("tft")->p95LatencyMs, 1.5);
    QVERIFY(std::isnan(s.find("tft")->peakMemoryBytes));
}

void TestRunSummary::onlyDifferingSettings()
{
    const auto d = configDifferences(
        {R"({"steps":10,"precision":{"amp":false,"int8":false},"dqn":{"hidden":[64,64]}})",
         R"({"steps":10,"precision":{"amp":true,"int8":false},"dqn":{"hidden":[64,64]},"seed":3})",
         R"({"steps":10,"precision":{"amp":false,"int8":false},"dqn":{"hidden":[32]}})"});
    QCOMPARE(d.size(), std::size_t(3));
    QCOMPARE(QString::fromStdString(d[0].key), QStringLiteral("dqn.hidden"));
    QCOMPARE(QString::fromStdString(d[0].values[2]), QStringLiteral("[32]"));
    QCOMPARE(QString::fromStdString(d[1].key), QStringLiteral("precision.amp"));
    QCOMPARE(QString::fromStdString(d[2].key), QStringLiteral("seed"));
    QCOMPARE(QString::fromStdString(d[2].values[0]), QString()); // not set in that run
    QVERIFY(configDifferences({R"({"a":1})", R"({"a":1})"}).empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, configDifferences({"{", "{}"}));
}

void TestRunSummary::formatsFigures()
{
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Usd, -22937.5)), QStringLiteral("-22,937.50 USD"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Usd, 999.0)), QStringLiteral("999.00 USD"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Usd, 1234567.0)), QStringLiteral("1,234,567.00 USD"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Bytes, 512.0)), QStringLiteral("512 B"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Bytes, 3.0 * 1024 * 1024)), QStringLiteral("3.0 MiB"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Fraction, 0.041)), QStringLiteral("4.10 %"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Milliseconds, 0.10805)), QStringLiteral("0.108 ms"));
    QCOMPARE(QString::fromStdString(formatMeasure(MeasureKind::Number, std::nan(""))), QString());
}

} // namespace tst_run_summary

FOXHUNT_TEST_APPLESS_MAIN(tst_run_summary::TestRunSummary)
#include "tst_run_summary.moc"
