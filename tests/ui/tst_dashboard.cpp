// SPDX-License-Identifier: GPL-3.0-or-later
// The dashboard under the offscreen platform, fed with samples made here (the
// engine emits the newer metrics on another branch): series fill, decimation
// stays bounded and keeps extremes, the debiased EMA, hover, the forecast band,
// and the per-rank throughput and all-reduce charts of multi-process runs.

#include "ui/dashboard.h"

#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/debiased_ema.h"
#include "tests/support/test_bundle.h"

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <QAction>
#include <QDir>
#include <QImage>
#include <QMenu>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QSignalSpy>

#include <algorithm>
#include <cmath>
#include <memory>

namespace tst_dashboard {

using foxhunt::BoundedSeries;
using foxhunt::Dashboard;
using foxhunt::MetricBatch;
using foxhunt::MetricSample;

class TestDashboard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void samplesFillSeries_data();
    void samplesFillSeries();
    void emptyChartsSayWhy();
    void modelKindsGetTheirCharts();
    void decimationBoundsPointCount();
    void incrementalDecimationMatchesFresh_data();
    void incrementalDecimationMatchesFresh();
    void emaMatchesHandComputed();
    void smoothingAppliesToHeldPoints();
    void hoverReadsNearestPoint();
    void bandFromQuantiles();
    void sessionRssInMemoryChart();
    void scaleOutChartsFromRankMetrics_data();
    void scaleOutChartsFromRankMetrics();
    void ranksKeepOrderAndStrayNamesAreIgnored();
    void scaleOutChartsFromStore();
    void hoverReadsEveryRank();
    void outliersDoNotFlattenTheAxis();
    void doubleClickExpandsAChart();
    void chartsWrapToTheVisibleWidth_data();
    void chartsWrapToTheVisibleWidth();
    void int8SummaryFromStoreAndResult();
    void axesReadInTheirUnit();
    void memoryIsDrawnAsSteps();
    void constantSeriesCollapsesToAReadout();
    void rawLineIsFadedWhenSmoothingStartsOn();
    void logScaleOnlyWhereEveryValueIsPositive();
    void exportsCsvAndImages();
    void wheelZoomsDragPansAndResetRestores();
    void crosshairIsSharedByAModelsCharts();
    void metricPickerChartsAnyLoggedScalar();

private:
    static MetricSample sample(const char* model, const char* metric, long long step, double value)
    {
        return MetricSample{model, metric, step, 0, value};
    }
};

void TestDashboard::initTestCase()
{
    qputenv("FOXHUNT_NO_DIALOGS", "1");
}

void TestDashboard::samplesFillSeries_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("metric");
    QTest::addColumn<QString>("chart");
    QTest::newRow("dqn loss") << "dqn"
                              << "loss"
                              << "loss";
    QTest::newRow("ppo loss scale") << "ppo"
                                    << "loss_scale"
                                    << "loss_scale";
    QTest::newRow("tft grad norm") << "tft"
                                   << "grad_norm"
                                   << "grad_norm";
    QTest::newRow("mamba2 latency") << "mamba2"
                                    << "latency_ms"
                                    << "latency";
    QTest::newRow("dqn optimizer bytes") << "dqn"
                                         << "optimizer_bytes"
                                         << "memory";
    QTest::newRow("ppo equity") << "ppo"
                                << "equity_ticks"
                                << "equity";
    QTest::newRow("tft realised") << "tft"
                                  << "realised"
                                  << "forecast";
}

void TestDashboard::samplesFillSeries()
{
    QFETCH(QString, model);
    QFETCH(QString, metric);
    QFETCH(QString, chart);
    Dashboard d;
    d.setModels({model});
    MetricBatch batch;
    const std::string m = model.toStdString(), k = metric.toStdString();
    for (int i = 0; i < 50; ++i) batch.push_back(sample(m.c_str(), k.c_str(), i, std::sin(i * 0.3) + 2.0));
    batch.push_back(sample(m.c_str(), k.c_str(), 50, std::nan(""))); // never drawn
    d.addSamples(batch);
    QCOMPARE(d.pointCount(model, metric), 50);
    // Memory is drawn as steps: each sample after the first also starts at the previous value.
    const bool stepped = chart == QLatin1String("memory");
    QCOMPARE(d.shownPoints(model, metric).size(), stepped ? 99 : 50);
    QCOMPARE(d.chartMessage(model, chart), QString());
    // 1..3 bytes read as bytes.
    QCOMPARE(d.shownPoints(model, metric).at(stepped ? 14 : 7).y(), std::sin(7 * 0.3) + 2.0);
}

void TestDashboard::emptyChartsSayWhy()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("loss")), QStringLiteral("waiting for data"));
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("loss")).size(), 0); // no fake line
    d.addSamples({sample("dqn", "loss", 1, 0.5)});
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("loss")), QString());
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("loss_scale")), QStringLiteral("waiting for data"));
    d.setLive(false);
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("loss_scale")),
             QStringLiteral("no samples in this run"));
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("loss")), QString());
}

void TestDashboard::modelKindsGetTheirCharts()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn"), QStringLiteral("tft")});
    const QStringList agent = d.chartsOf(QStringLiteral("dqn"));
    const QStringList forecaster = d.chartsOf(QStringLiteral("tft"));
    QVERIFY(agent.contains(QStringLiteral("equity")));
    QVERIFY(!agent.contains(QStringLiteral("forecast")));
    QVERIFY(forecaster.contains(QStringLiteral("forecast")));
    QVERIFY(!forecaster.contains(QStringLiteral("equity")));
    for (const char* common : {"loss", "loss_scale", "grad_norm", "latency", "memory"}) {
        QVERIFY(agent.contains(QLatin1String(common)));
        QVERIFY(forecaster.contains(QLatin1String(common)));
    }
    QCOMPARE(d.chartCount(), 12);
    // A model never announced appears when it emits a charted metric.
    d.addSamples({sample("ppo", "loss", 1, 1.0), sample("replay", "loss", 1, 1.0)});
    QCOMPARE(d.models(), (QStringList{QStringLiteral("dqn"), QStringLiteral("tft"), QStringLiteral("ppo")}));
}

void TestDashboard::decimationBoundsPointCount()
{
    Dashboard d;
    d.setSeriesCapacity(20'000);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    long long step = 0;
    for (int tick = 0; tick < 40; ++tick) {
        batch.clear();
        for (int i = 0; i < 5'000; ++i, ++step)
            batch.push_back(sample("dqn", "loss", step, step == 123'456 ? 1e6 : std::sin(step * 0.001)));
        d.addSamples(batch);
    }
    QVERIFY(d.pointCount(QStringLiteral("dqn"), QStringLiteral("loss")) <= 20'000);
    const QList<QPointF> shown = d.shownPoints(QStringLiteral("dqn"), QStringLiteral("loss"));
    const int buckets = std::max(100,
                                 d.chartView(QStringLiteral("dqn"), QStringLiteral("loss"))->parentWidget()->width());
    QVERIFY2(shown.size() <= 2 * buckets, qPrintable(QString::number(shown.size())));
    QVERIFY(shown.size() > buckets / 2);
    QCOMPARE(shown.front().x(), 0.0);
    QCOMPARE(shown.back().x(), static_cast<double>(step - 1));
    bool spike = false;
    for (int i = 1; i < shown.size(); ++i) QVERIFY(shown[i].x() > shown[i - 1].x());
    for (const QPointF& p : shown) spike |= p.y() == 1e6;
    QVERIFY(spike);
}

void TestDashboard::incrementalDecimationMatchesFresh_data()
{
    QTest::addColumn<int>("chunk");
    QTest::addColumn<int>("buckets");
    QTest::newRow("one at a time") << 1 << 50;
    QTest::newRow("chunks of 37") << 37 << 100;
    QTest::newRow("chunks of 1000") << 1000 << 64;
}

void TestDashboard::incrementalDecimationMatchesFresh()
{
    QFETCH(int, chunk);
    QFETCH(int, buckets);
    BoundedSeries live(4'000);
    int i = 0;
    for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < chunk * 10 + 3; ++k, ++i)
            live.append(i, std::sin(i * 0.05) * std::cos(i * 0.0071) + (i % 97 == 0 ? 3 : 0));
        // The cached decimation after many appends equals one built from the same points at once.
        BoundedSeries fresh(4'000);
        for (const QPointF& p : live.points()) fresh.append(p.x(), p.y());
        const auto a = live.decimated(buckets);
        const auto b = fresh.decimated(buckets);
        QCOMPARE(a.size(), b.size());
        for (std::size_t j = 0; j < a.size(); ++j) QCOMPARE(a[j], b[j]);
        QVERIFY(a.size() <= static_cast<std::size_t>(2 * buckets));
        const auto lower = live.decimated(buckets, BoundedSeries::Extremes::Min);
        if (live.size() > static_cast<std::size_t>(2 * buckets))
            QVERIFY(lower.size() <= static_cast<std::size_t>(buckets + 2));
        else QCOMPARE(lower.size(), live.size()); // few points: every one is drawn
    }
}

void TestDashboard::emaMatchesHandComputed()
{
    // TensorBoard's rule with weight 0.6: last = 0.6 * last + 0.4 * v, shown as last / (1 - 0.6^n).
    const double values[] = {1, 2, 4, 3};
    const double expected[] = {1.0, 1.04 / 0.64, 2.224 / 0.784, 2.5344 / 0.8704};
    Dashboard d;
    d.setModels({QStringLiteral("ppo")});
    d.setSmoothing(0.6);
    MetricBatch batch;
    for (int i = 0; i < 4; ++i) batch.push_back(sample("ppo", "loss", i * 10, values[i]));
    d.addSamples(batch);
    const QList<QPointF> smooth = d.smoothedPoints(QStringLiteral("ppo"), QStringLiteral("loss"));
    QCOMPARE(smooth.size(), 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(smooth[i].x(), i * 10.0);
        QVERIFY2(std::abs(smooth[i].y() - expected[i]) < 1e-12, qPrintable(QString::number(smooth[i].y(), 'g', 17)));
    }
    // The raw line stays beside the smoothed one.
    QCOMPARE(d.shownPoints(QStringLiteral("ppo"), QStringLiteral("loss")).at(2).y(), 4.0);
    QCOMPARE(foxhunt::DebiasedEma(0.0).push(7.5), 7.5);
}

void TestDashboard::smoothingAppliesToHeldPoints()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    d.addSamples(
        {sample("dqn", "grad_norm", 0, 1), sample("dqn", "grad_norm", 1, 2), sample("dqn", "grad_norm", 2, 4)});
    QVERIFY(d.smoothedPoints(QStringLiteral("dqn"), QStringLiteral("grad_norm")).isEmpty());
    d.setSmoothing(0.6);
    const QList<QPointF> smooth = d.smoothedPoints(QStringLiteral("dqn"), QStringLiteral("grad_norm"));
    QCOMPARE(smooth.size(), 3);
    QVERIFY(std::abs(smooth[2].y() - 2.224 / 0.784) < 1e-12);
    d.setSmoothing(0.0);
    QVERIFY(d.smoothedPoints(QStringLiteral("dqn"), QStringLiteral("grad_norm")).isEmpty());
}

void TestDashboard::hoverReadsNearestPoint()
{
    Dashboard d;
    d.resize(1600, 900);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int s = 0; s <= 1000; s += 10) batch.push_back(sample("dqn", "loss", s, s * 0.5));
    d.addSamples(batch);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QChartView* view = d.chartView(QStringLiteral("dqn"), QStringLiteral("loss"));
    QVERIFY(view && view->isVisible());
    QChart* chart = view->chart();
    auto* series = chart->series().constFirst();
    // Step 421 on screen (a pixel spans about 4 steps here): the nearest stored point is step 420.
    const QPointF item = chart->mapToPosition(QPointF(421, 210.5), series);
    const QPoint pos = view->mapFromScene(chart->mapToScene(item)); // rounds to a whole pixel
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), view->viewport()->mapToGlobal(QPointF(pos)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view->viewport(), &move);
    const QString text = d.hoverText();
    QVERIFY2(text.contains(QStringLiteral("step 420")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("loss 210")), qPrintable(text));
    // Outside the plot area there is nothing to read.
    QCOMPARE(d.hoverAt(QStringLiteral("dqn"), QStringLiteral("loss"), QPoint(1, 1)), QString());
}

void TestDashboard::bandFromQuantiles()
{
    Dashboard d;
    d.setModels({QStringLiteral("tft")});
    QCOMPARE(d.chartMessage(QStringLiteral("tft"), QStringLiteral("forecast")), QStringLiteral("waiting for data"));
    MetricBatch batch;
    for (int s = 0; s < 60; ++s) {
        const double mid = 0.001 * std::sin(s * 0.2);
        batch.push_back(sample("tft", "forecast_q10", s, mid - 0.002));
        batch.push_back(sample("tft", "forecast_q50", s, mid));
        batch.push_back(sample("tft", "forecast_q90", s, mid + 0.002));
        batch.push_back(sample("tft", "realised", s, mid + 0.0005));
    }
    d.addSamples(batch);
    const QList<QPointF> upper = d.bandEdge(QStringLiteral("tft"), /*upper=*/true);
    const QList<QPointF> lower = d.bandEdge(QStringLiteral("tft"), /*upper=*/false);
    QCOMPARE(upper.size(), 60);
    QCOMPARE(lower.size(), 60);
    for (int s = 0; s < 60; ++s) {
        QVERIFY(upper[s].y() > lower[s].y());
        QCOMPARE(upper[s].y() - lower[s].y(),
                 (0.001 * std::sin(s * 0.2) + 0.002) - (0.001 * std::sin(s * 0.2) - 0.002));
    }
    QCOMPARE(d.shownPoints(QStringLiteral("tft"), QStringLiteral("forecast_q50")).size(), 60);
    QCOMPARE(d.shownPoints(QStringLiteral("tft"), QStringLiteral("realised")).size(), 60);
    QCOMPARE(d.chartMessage(QStringLiteral("tft"), QStringLiteral("forecast")), QString());
}

void TestDashboard::sessionRssInMemoryChart()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    d.addSamples({sample("session", "rss_bytes", 1, 64.0 * 1024 * 1024),
                  sample("session", "rss_bytes", 2, 128.0 * 1024 * 1024)});
    QCOMPARE(d.pointCount(QStringLiteral("dqn"), QStringLiteral("rss_bytes")), 2);
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("rss_bytes")).last().y(), 128.0); // MiB
    // The process RSS alone does not count as the model's memory.
    QCOMPARE(d.chartMessage(QStringLiteral("dqn"), QStringLiteral("memory")), QStringLiteral("waiting for data"));
    // A model added later gets the RSS seen so far.
    d.setModels({QStringLiteral("dqn"), QStringLiteral("ppo")});
    QCOMPARE(d.pointCount(QStringLiteral("ppo"), QStringLiteral("rss_bytes")), 2);
}

void TestDashboard::scaleOutChartsFromRankMetrics_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("other"); // a single-process model in the same dashboard
    QTest::newRow("dqn") << "dqn"
                         << "tft";
    QTest::newRow("ppo") << "ppo"
                         << "mamba2";
    QTest::newRow("mamba2") << "mamba2"
                            << "dqn";
    QTest::newRow("tft") << "tft"
                         << "ppo";
}

void TestDashboard::scaleOutChartsFromRankMetrics()
{
    QFETCH(QString, model);
    QFETCH(QString, other);
    Dashboard d;
    d.setModels({model, other});
    const int before = d.chartCount();
    for (const QString& m : {model, other}) {
        QVERIFY(!d.chartsOf(m).contains(QStringLiteral("throughput")));
        QVERIFY(!d.chartsOf(m).contains(QStringLiteral("allreduce")));
    }
    // Loss alone (a single-process run) makes no scale-out chart.
    const std::string m = model.toStdString(), o = other.toStdString();
    d.addSamples({sample(m.c_str(), "loss", 0, 1.0), sample(o.c_str(), "loss", 0, 1.0)});
    QCOMPARE(d.chartCount(), before);

    // Two batches, as two drains of a two-rank run: the session emits every few dozen steps.
    for (int half = 0; half < 2; ++half) {
        MetricBatch batch;
        for (int i = half * 15; i < (half + 1) * 15; ++i) {
            const long long step = 32LL * i;
            batch.push_back(sample(m.c_str(), "loss", step, 1.0 / (1 + i)));
            batch.push_back(sample(m.c_str(), "allreduce_ms", step, 2.0 + 0.1 * i));
            batch.push_back(sample(m.c_str(), "throughput_rank0", step, 1000.0 + i));
            batch.push_back(sample(m.c_str(), "throughput_rank1", step, 900.0 + i));
            batch.push_back(sample(o.c_str(), "loss", step, 0.5));
        }
        d.addSamples(batch);
    }
    QCOMPARE(d.chartCount(), before + 2);
    QVERIFY(d.chartsOf(model).contains(QStringLiteral("throughput")));
    QVERIFY(d.chartsOf(model).contains(QStringLiteral("allreduce")));
    QVERIFY(!d.chartsOf(other).contains(QStringLiteral("throughput")));
    QVERIFY(!d.chartsOf(other).contains(QStringLiteral("allreduce")));
    QCOMPARE(d.lineLabels(other, QStringLiteral("throughput")), QStringList());

    QCOMPARE(d.lineLabels(model, QStringLiteral("throughput")),
             (QStringList{QStringLiteral("rank 0"), QStringLiteral("rank 1")}));
    QCOMPARE(d.lineLabels(model, QStringLiteral("allreduce")).size(), 1);
    for (const char* metric : {"throughput_rank0", "throughput_rank1", "allreduce_ms"}) {
        QCOMPARE(d.pointCount(model, QLatin1String(metric)), 30);
        QCOMPARE(d.shownPoints(model, QLatin1String(metric)).size(), 30);
    }
    QCOMPARE(d.shownPoints(model, QStringLiteral("throughput_rank1")).at(4), QPointF(128.0, 904.0));
    QCOMPARE(d.shownPoints(model, QStringLiteral("allreduce_ms")).last(), QPointF(32.0 * 29, 2.0 + 0.1 * 29));
    QCOMPARE(d.chartMessage(model, QStringLiteral("throughput")), QString());
    QCOMPARE(d.chartMessage(model, QStringLiteral("allreduce")), QString());

    // What the chart draws: one visible series per rank with a legend; one for the all-reduce time.
    const auto visibleNames = [&](const char* key) {
        QStringList names;
        for (const QAbstractSeries* s : d.chartView(model, QLatin1String(key))->chart()->series())
            if (s->isVisible()) names << s->name();
        return names;
    };
    QCOMPARE(visibleNames("throughput"), (QStringList{QStringLiteral("rank 0"), QStringLiteral("rank 1")}));
    QVERIFY(d.chartView(model, QStringLiteral("throughput"))->chart()->legend()->isVisible());
    QCOMPARE(visibleNames("allreduce").size(), 1);
    // Rank samples never create or feed the other model's charts.
    QCOMPARE(d.pointCount(other, QStringLiteral("throughput_rank0")), 0);
    QCOMPARE(d.pointCount(other, QStringLiteral("loss")), 31);
    if (model == QLatin1String("dqn")) {
        d.resize(1800, 900);
        QVERIFY(d.grab().save(QStringLiteral(FOXHUNT_SCREENSHOT_DIR "/dashboard_scale_out.png")));
    }
}

void TestDashboard::ranksKeepOrderAndStrayNamesAreIgnored()
{
    Dashboard d;
    d.setModels({QStringLiteral("ppo")});
    const int before = d.chartCount();
    d.addSamples({sample("ppo", "throughput_rank", 0, 1.0), sample("ppo", "throughput_rank01", 0, 1.0),
                  sample("ppo", "throughput_rankx", 0, 1.0), sample("ppo", "throughput_rank-1", 0, 1.0)});
    QCOMPARE(d.chartCount(), before);
    d.addSamples({sample("ppo", "throughput_rank2", 0, 30.0), sample("ppo", "throughput_rank1", 0, 20.0)});
    d.addSamples({sample("ppo", "throughput_rank0", 64, 10.0), sample("ppo", "throughput_rank2", 64, 31.0)});
    const QStringList ranks{QStringLiteral("rank 0"), QStringLiteral("rank 1"), QStringLiteral("rank 2")};
    QCOMPARE(d.lineLabels(QStringLiteral("ppo"), QStringLiteral("throughput")), ranks);
    QStringList legend;
    for (const QAbstractSeries* s : d.chartView(QStringLiteral("ppo"), QStringLiteral("throughput"))->chart()->series())
        legend << s->name();
    QCOMPARE(legend, ranks);
    QCOMPARE(d.pointCount(QStringLiteral("ppo"), QStringLiteral("throughput_rank2")), 2);
    QCOMPARE(d.pointCount(QStringLiteral("ppo"), QStringLiteral("throughput_rank0")), 1);
    QVERIFY(!d.chartsOf(QStringLiteral("ppo")).contains(QStringLiteral("allreduce"))); // no fake all-reduce chart
    // A model first seen through a rank metric gets its row and the chart.
    d.addSamples({sample("tft", "throughput_rank0", 5, 12.0)});
    QVERIFY(d.models().contains(QStringLiteral("tft")));
    QCOMPARE(d.pointCount(QStringLiteral("tft"), QStringLiteral("throughput_rank0")), 1);
}

void TestDashboard::scaleOutChartsFromStore()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    foxhunt::BarStore store(dir.filePath(QStringLiteral("runs.db")).toStdString());
    QVERIFY(foxhunt::ensureDefaultData(store));
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    const auto storedRun = [&](const char* name, int ranks) {
        const std::int64_t id = runs.createRun(name, R"({"models":["dqn","tft"],"steps":500})", series, series.firstTs,
                                               series.lastTs, "{}");
        MetricBatch batch;
        for (int i = 0; i < 40; ++i) {
            batch.push_back(sample("dqn", "loss", i * 25, 1.0 / (1 + i)));
            batch.push_back(sample("tft", "loss", i * 25, 2.0 / (1 + i)));
            if (ranks < 2) continue;
            batch.push_back(sample("tft", "allreduce_ms", i * 25, 3.0));
            for (int r = 0; r < ranks; ++r) {
                const std::string metric = "throughput_rank" + std::to_string(r);
                batch.push_back(MetricSample{"tft", metric, i * 25, 0, 100.0 * (r + 1)});
            }
        }
        runs.appendMetrics(id, batch);
        runs.setStatus(id, foxhunt::RunStatus::Finished);
        return id;
    };
    const std::int64_t multi = storedRun("two ranks", 2);
    const std::int64_t single = storedRun("one process", 1);

    Dashboard d;
    QVERIFY(d.fromStore(runs, multi));
    QCOMPARE(d.lineLabels(QStringLiteral("tft"), QStringLiteral("throughput")).size(), 2);
    QCOMPARE(d.lineLabels(QStringLiteral("tft"), QStringLiteral("allreduce")).size(), 1);
    QCOMPARE(d.pointCount(QStringLiteral("tft"), QStringLiteral("throughput_rank1")), 40);
    QCOMPARE(d.pointCount(QStringLiteral("tft"), QStringLiteral("allreduce_ms")), 40);
    QVERIFY(!d.chartsOf(QStringLiteral("dqn")).contains(QStringLiteral("throughput")));
    // A single-process run shows no empty scale-out chart, stored or not.
    QVERIFY(d.fromStore(runs, single));
    for (const char* model : {"dqn", "tft"}) {
        QVERIFY(!d.chartsOf(QLatin1String(model)).contains(QStringLiteral("throughput")));
        QVERIFY(!d.chartsOf(QLatin1String(model)).contains(QStringLiteral("allreduce")));
    }
}

void TestDashboard::hoverReadsEveryRank()
{
    Dashboard d;
    d.resize(1600, 900);
    d.setModels({QStringLiteral("mamba2")});
    MetricBatch batch;
    for (int s = 0; s <= 640; s += 32) {
        batch.push_back(sample("mamba2", "throughput_rank0", s, 500.0 + s));
        batch.push_back(sample("mamba2", "throughput_rank1", s, 400.0 + s));
        batch.push_back(sample("mamba2", "allreduce_ms", s, 1.5));
    }
    d.addSamples(batch);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QChartView* view = d.chartView(QStringLiteral("mamba2"), QStringLiteral("throughput"));
    QVERIFY(view && view->isVisible());
    QChart* chart = view->chart();
    // Step 330 on screen: the nearest sample of both ranks is step 320.
    const QPointF item = chart->mapToPosition(QPointF(330, 750.0), chart->series().constFirst());
    const QString text = d.hoverAt(QStringLiteral("mamba2"), QStringLiteral("throughput"),
                                   view->mapFromScene(chart->mapToScene(item)));
    QVERIFY2(text.contains(QStringLiteral("step 320")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("rank 0 820")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("rank 1 720")), qPrintable(text));
    QCOMPARE(d.hoverText(), text);
}

void TestDashboard::outliersDoNotFlattenTheAxis()
{
    Dashboard d;
    d.setModels({QStringLiteral("tft")});
    MetricBatch batch;
    for (int i = 0; i < 1000; ++i)
        batch.push_back(sample("tft", "loss", i, i == 3 ? 100.0 : 1.0 + 0.1 * std::sin(i * 0.1)));
    d.addSamples(batch);
    QVERIFY(d.ignoresOutliers()); // TensorBoard's default
    auto range = d.yRange(QStringLiteral("tft"), QStringLiteral("loss"));
    QVERIFY2(range.second < 2.0 && range.first > 0.5,
             qPrintable(QStringLiteral("%1..%2").arg(range.first).arg(range.second)));
    QCOMPARE(d.pointCount(QStringLiteral("tft"), QStringLiteral("loss")), 1000); // clipped from view, not dropped
    d.setIgnoreOutliers(false);
    range = d.yRange(QStringLiteral("tft"), QStringLiteral("loss"));
    QVERIFY(range.second >= 100.0);
    d.setIgnoreOutliers(true);
    QVERIFY(d.yRange(QStringLiteral("tft"), QStringLiteral("loss")).second < 2.0);

    // A short line keeps every point in view: there is nothing to call an outlier among a few.
    Dashboard few;
    few.setModels({QStringLiteral("dqn")});
    MetricBatch shortBatch;
    for (int i = 0; i < 20; ++i) shortBatch.push_back(sample("dqn", "loss", i, i == 3 ? 100.0 : 1.0));
    few.addSamples(shortBatch);
    QVERIFY(few.yRange(QStringLiteral("dqn"), QStringLiteral("loss")).second >= 100.0);
}

void TestDashboard::doubleClickExpandsAChart()
{
    QScrollArea scroll;
    scroll.setWidgetResizable(true);
    auto* d = new Dashboard;
    scroll.setWidget(d);
    scroll.resize(1060 + scroll.verticalScrollBar()->sizeHint().width() + 2 * scroll.frameWidth(), 700);
    scroll.show();
    QVERIFY(QTest::qWaitForWindowExposed(&scroll));
    d->setModels({QStringLiteral("dqn")});
    MetricBatch noisy;
    for (int i = 0; i < 20000; ++i) noisy.push_back(sample("dqn", "grad_norm", i, 0.5 + 0.3 * std::sin(i * 0.7)));
    d->addSamples(noisy);
    d->setLive(false); // no more samples will come: only a resize can re-decimate
    QCoreApplication::processEvents();
    const auto narrowPoints = d->shownPoints(QStringLiteral("dqn"), QStringLiteral("grad_norm")).size();
    QCOMPARE(d->columns(), 3);
    const QPoint lossCell = d->cellOf(QStringLiteral("dqn"), QStringLiteral("loss"));
    QCOMPARE(d->cellOf(QStringLiteral("dqn"), QStringLiteral("grad_norm")), lossCell + QPoint(0, 2));

    // Double-click the gradient norm: it gets a row of its own across the three columns, twice as
    // tall, and the charts after it continue on the next row.
    QTest::mouseDClick(d->chartView(QStringLiteral("dqn"), QStringLiteral("grad_norm"))->viewport(), Qt::LeftButton);
    QVERIFY(d->isExpanded(QStringLiteral("dqn"), QStringLiteral("grad_norm")));
    const QPoint expanded = d->cellOf(QStringLiteral("dqn"), QStringLiteral("grad_norm"));
    QCOMPARE(expanded, QPoint(lossCell.x() + 1, 0));
    QCOMPARE(d->columnSpanOf(QStringLiteral("dqn"), QStringLiteral("grad_norm")), 3);
    QCOMPARE(d->cellOf(QStringLiteral("dqn"), QStringLiteral("latency")), QPoint(expanded.x() + 1, 0));
    QCOMPARE(d->columnSpanOf(QStringLiteral("dqn"), QStringLiteral("latency")), 1);
    QCoreApplication::processEvents();
    QCoreApplication::processEvents(); // the layout, then the coalesced re-decimation
    QVERIFY(d->chartView(QStringLiteral("dqn"), QStringLiteral("grad_norm"))->height() >= 2 * 230);
    // Three times the width, so about three times the pixel columns' min/max points.
    const auto widePoints = d->shownPoints(QStringLiteral("dqn"), QStringLiteral("grad_norm")).size();
    QVERIFY2(widePoints > 2 * narrowPoints, qPrintable(QStringLiteral("%1 -> %2").arg(narrowPoints).arg(widePoints)));
    // Hovering keeps the way back in the tooltip, under the read-out.
    QChartView* view = d->chartView(QStringLiteral("dqn"), QStringLiteral("grad_norm"));
    const QString readout = d->hoverAt(QStringLiteral("dqn"), QStringLiteral("grad_norm"),
                                       view->viewport()->rect().center());
    QVERIFY(!readout.isEmpty());
    QCOMPARE(view->toolTip(), readout + QStringLiteral("\nDouble-click to return to the grid"));

    // And back.
    QTest::mouseDClick(d->chartView(QStringLiteral("dqn"), QStringLiteral("grad_norm"))->viewport(), Qt::LeftButton);
    QVERIFY(!d->isExpanded(QStringLiteral("dqn"), QStringLiteral("grad_norm")));
    QCOMPARE(d->cellOf(QStringLiteral("dqn"), QStringLiteral("grad_norm")), lossCell + QPoint(0, 2));
    QCOMPARE(d->columnSpanOf(QStringLiteral("dqn"), QStringLiteral("grad_norm")), 1);
    QVERIFY(view->toolTip().endsWith(QStringLiteral("Double-click to expand")));
}

void TestDashboard::chartsWrapToTheVisibleWidth_data()
{
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("columns");
    // 300 px per chart plus the grid's spacing, up to six.
    QTest::newRow("narrow") << 640 << 2;
    QTest::newRow("laptop") << 1060 << 3;
    QTest::newRow("wide") << 2400 << 6;
}

void TestDashboard::chartsWrapToTheVisibleWidth()
{
    QFETCH(int, width);
    QFETCH(int, columns);
    QScrollArea scroll;
    scroll.setWidgetResizable(true);
    auto* d = new Dashboard;
    scroll.setWidget(d);
    scroll.resize(1800, 700); // start wide, then narrow: the grid must shrink with the window
    scroll.show();
    QVERIFY(QTest::qWaitForWindowExposed(&scroll));
    d->setModels({QStringLiteral("dqn"), QStringLiteral("tft")});
    d->addSamples({sample("dqn", "throughput_rank0", 1, 10.0), sample("dqn", "throughput_rank1", 1, 9.0)});
    scroll.resize(width + scroll.verticalScrollBar()->sizeHint().width() + 2 * scroll.frameWidth(), 700);
    QCoreApplication::processEvents();
    QCOMPARE(d->columns(), columns);
    // Nothing to scroll sideways: every chart fits the viewport.
    QVERIFY(d->width() <= scroll.viewport()->width());
    // Reading order per model: its charts in spec order, wrapped; the next model starts on a new row.
    int lastRow = -1;
    for (const QString& model : {QStringLiteral("dqn"), QStringLiteral("tft")}) {
        const QStringList charts = d->chartsOf(model);
        const QPoint first = d->cellOf(model, charts.first());
        QVERIFY2(first.x() > lastRow, qPrintable(model));
        QCOMPARE(first.y(), 0);
        QStringList ordered = Dashboard::chartKeys();
        ordered.erase(
            std::remove_if(ordered.begin(), ordered.end(), [&](const QString& k) { return !charts.contains(k); }),
            ordered.end());
        QCOMPARE(ordered.size(), charts.size());
        for (int i = 0; i < ordered.size(); ++i) {
            const QPoint cell = d->cellOf(model, ordered.at(i));
            QCOMPARE(cell, QPoint(first.x() + i / columns, i % columns));
            lastRow = std::max(lastRow, cell.x());
        }
    }
    QVERIFY(d->chartsOf(QStringLiteral("dqn")).contains(QStringLiteral("throughput")));
}

void TestDashboard::int8SummaryFromStoreAndResult()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    foxhunt::BarStore store(dir.filePath(QStringLiteral("int8.db")).toStdString());
    QVERIFY(foxhunt::ensureDefaultData(store));
    foxhunt::RunStore runs(store);
    const foxhunt::SeriesInfo series = store.series().front();
    const std::int64_t id = runs.createRun("int8", R"({"models":["dqn","tft"],"steps":10})", series, series.firstTs,
                                           series.lastTs, "{}");
    // A copy the gate refused: the summary says so, with its figures and the backend.
    const std::string rejected = R"({"int8":{"degradation":0.1,"backend":"onednn","served":false,
        "verdict":"rejected: degradation 10.00 % > 5.00 %, FP32 serves instead",
        "fp32_bytes":4194304,"int8_bytes":1048576,"fp32_serving_bytes":5242880,"int8_serving_bytes":2097152,
        "throughput":{"fp32_b32":1200.0,"int8_b32":4100.0},
        "latency":{"fp32_b1":{"p50_ms":0.5,"p95_ms":0.75,"p99_ms":0.9},"int8_b1":{"p50_ms":0.125,"p95_ms":0.25,"p99_ms":0.3},
                   "fp32_b32":{"p50_ms":26.5,"p95_ms":27.0,"p99_ms":28.0},"int8_b32":{"p50_ms":7.5,"p95_ms":7.75,"p99_ms":8.0}}}})";
    runs.saveEvaluation(id, "tft", "validation", rejected);
    runs.saveEvaluation(id, "dqn", "validation", R"({"policy":{}})");
    runs.setStatus(id, foxhunt::RunStatus::Finished);

    Dashboard d;
    QVERIFY(d.fromStore(runs, id));
    const QString tft = d.int8Summary(QStringLiteral("tft"));
    QVERIFY2(tft.contains(QStringLiteral("rejected: degradation 10.00 %")), qPrintable(tft));
    QVERIFY2(tft.contains(QStringLiteral("10.00 %, backend onednn")), qPrintable(tft));
    QVERIFY(tft.contains(QStringLiteral("27.000 ms")) && tft.contains(QStringLiteral("7.750 ms")));
    QVERIFY(tft.contains(QStringLiteral("4100")) && tft.contains(QStringLiteral("4.00 MiB")));
    QVERIFY(tft.contains(QStringLiteral("2.00 MiB")));
    QVERIFY(d.int8Summary(QStringLiteral("dqn")).isEmpty()); // no INT8 check, no summary

    // A live run's result document fills the same summary when the run ends.
    Dashboard live;
    live.setModels({QStringLiteral("dqn")});
    live.setResultDocument(R"({"models":{"dqn":{"validation":{"int8":{"degradation":0.01,"backend":"auto",
        "served":true,"verdict":"served: degradation 1.00 % <= 5.00 %"}}}}})");
    QVERIFY(live.int8Summary(QStringLiteral("dqn")).contains(QStringLiteral("served: degradation 1.00 %")));
    live.clear();
    QVERIFY(live.int8Summary(QStringLiteral("dqn")).isEmpty());
}

namespace {

QLineSeries* seriesNamed(QChartView* view, const QString& name)
{
    for (QAbstractSeries* s : view->chart()->series())
        if (s->name() == name) return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

} // namespace

void TestDashboard::axesReadInTheirUnit()
{
    Dashboard d;
    d.resize(1200, 900);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    // A 40 KiB model beside a 3 MiB activation peak: the axis reads MiB, the read-out each in its own unit.
    for (int i = 0; i < 20; ++i) {
        batch.push_back(sample("dqn", "param_bytes", i, 40.0 * 1024));
        batch.push_back(sample("dqn", "activation_bytes", i, (1.0 + i / 10.0) * 1024 * 1024));
        batch.push_back(sample("dqn", "latency_ms", i, 0.2 + 0.01 * i));
    }
    d.addSamples(batch);
    const auto memory = d.yAxisUnit(QStringLiteral("dqn"), QStringLiteral("memory"));
    QCOMPARE(memory.first, QStringLiteral("MiB"));
    QCOMPARE(memory.second, 1024.0 * 1024.0);
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("param_bytes")).first().y(), 40.0 / 1024.0);
    const auto range = d.yRange(QStringLiteral("dqn"), QStringLiteral("memory"));
    QVERIFY2(range.second > 2.9 && range.second < 4.0, qPrintable(QString::number(range.second)));
    // Round ticks: one every 1, 2 or 5 times a power of ten, with the decimals that step needs.
    auto* y = qobject_cast<QValueAxis*>(
        d.chartView(QStringLiteral("dqn"), QStringLiteral("memory"))->chart()->axes(Qt::Vertical).first());
    QVERIFY(y);
    QVERIFY(y->tickType() == QValueAxis::TicksDynamic);
    QCOMPARE(y->tickInterval(), 1.0); // 0 .. 3.04 MiB
    QCOMPARE(y->labelFormat(), QStringLiteral("%.0f"));
    // The right-hand axis names its line.
    QCOMPARE(d.yAxisUnit(QStringLiteral("dqn"), QStringLiteral("memory"), true).first,
             QStringLiteral("process RSS (B)"));
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QChartView* view = d.chartView(QStringLiteral("dqn"), QStringLiteral("memory"));
    const QString readout = d.hoverAt(QStringLiteral("dqn"), QStringLiteral("memory"),
                                      view->viewport()->rect().center());
    QVERIFY2(readout.contains(QStringLiteral("params 40.00 KiB")), qPrintable(readout));
    QVERIFY2(readout.contains(QStringLiteral(" MiB")), qPrintable(readout));
    QVERIFY2(!readout.contains(QStringLiteral(" 0.0 ")), qPrintable(readout));

    // Sub-millisecond latency reads in µs, on both the axis and the read-out.
    QCOMPARE(d.yAxisUnit(QStringLiteral("dqn"), QStringLiteral("latency")).first, QStringLiteral("µs"));
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("latency_ms")).first().y(), 200.0);
    // Only KiB: the axis follows the data down.
    Dashboard small;
    small.setModels({QStringLiteral("ppo")});
    MetricBatch kib;
    for (int i = 0; i < 5; ++i) kib.push_back(sample("ppo", "param_bytes", i, (30.0 + i) * 1024));
    small.addSamples(kib);
    QCOMPARE(small.yAxisUnit(QStringLiteral("ppo"), QStringLiteral("memory")).first, QStringLiteral("KiB"));
    // Every chart titles both axes.
    for (const QString& key : d.chartsOf(QStringLiteral("dqn"))) {
        const QChart* chart = d.chartView(QStringLiteral("dqn"), key)->chart();
        QCOMPARE(chart->axes(Qt::Horizontal).first()->titleText(), QStringLiteral("step"));
        QVERIFY2(!chart->axes(Qt::Vertical).first()->titleText().isEmpty(), qPrintable(key));
    }
}

void TestDashboard::memoryIsDrawnAsSteps()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    d.addSamples({sample("dqn", "activation_bytes", 10, 100.0), sample("dqn", "activation_bytes", 20, 300.0),
                  sample("dqn", "activation_bytes", 30, 200.0)});
    const QList<QPointF> expected = {{10, 100}, {20, 100}, {20, 300}, {30, 300}, {30, 200}};
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("activation_bytes")), expected);
    // Lines of other charts are not.
    d.addSamples({sample("dqn", "loss", 10, 1.0), sample("dqn", "loss", 20, 2.0)});
    QCOMPARE(d.shownPoints(QStringLiteral("dqn"), QStringLiteral("loss")).size(), 2);
}

void TestDashboard::constantSeriesCollapsesToAReadout()
{
    Dashboard d;
    d.setModels({QStringLiteral("ppo")});
    const QString ppo = QStringLiteral("ppo"), lossScale = QStringLiteral("loss_scale");
    // Two samples are not yet "never changes".
    d.addSamples({sample("ppo", "loss_scale", 1, 1.0), sample("ppo", "loss_scale", 2, 1.0)});
    QCOMPARE(d.constantReadout(ppo, lossScale), QString());
    QVERIFY(d.chartView(ppo, lossScale)->isVisibleTo(d.chartView(ppo, lossScale)->parentWidget()));
    d.addSamples({sample("ppo", "loss_scale", 3, 1.0), sample("ppo", "loss_scale", 4, 1.0)});
    QCOMPARE(d.constantReadout(ppo, lossScale), QStringLiteral("loss scale: 1 (constant)"));
    QCOMPARE(d.chartMessage(ppo, lossScale), QString());
    auto* stack = qobject_cast<QStackedWidget*>(d.chartView(ppo, lossScale)->parentWidget());
    QVERIFY(stack);
    QCOMPARE(stack->currentWidget()->objectName(), QStringLiteral("constantReadout"));
    QVERIFY(stack->maximumHeight() < 100);
    // The read-out goes after the charts that are drawn.
    d.addSamples({sample("ppo", "loss", 1, 1.0), sample("ppo", "loss", 2, 0.5)});
    QVERIFY(d.cellOf(ppo, lossScale).x() > d.cellOf(ppo, QStringLiteral("loss")).x());
    // A change brings the chart back.
    d.addSamples({sample("ppo", "loss_scale", 5, 2.0)});
    QCOMPARE(d.constantReadout(ppo, lossScale), QString());
    QCOMPARE(stack->currentWidget(), static_cast<QWidget*>(d.chartView(ppo, lossScale)));
    QVERIFY(stack->maximumHeight() > 1000);
    QCOMPARE(d.shownPoints(ppo, QStringLiteral("loss_scale")).size(), 5);
    // Several lines: each is named, in its unit.
    Dashboard m;
    m.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int i = 0; i < 4; ++i) {
        batch.push_back(sample("dqn", "param_bytes", i, 40.0 * 1024));
        batch.push_back(sample("dqn", "grad_bytes", i, 40.0 * 1024));
    }
    m.addSamples(batch);
    QCOMPARE(m.constantReadout(QStringLiteral("dqn"), QStringLiteral("memory")),
             QStringLiteral("memory: params 40.00 KiB, grads 40.00 KiB (constant)"));
}

void TestDashboard::rawLineIsFadedWhenSmoothingStartsOn()
{
    // Smoothing on before the run's charts exist (a run started or opened with it on).
    Dashboard d;
    d.setSmoothing(0.6);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int i = 0; i < 30; ++i) batch.push_back(sample("dqn", "loss", i, 1.0 + std::sin(i)));
    d.addSamples(batch);
    QChartView* view = d.chartView(QStringLiteral("dqn"), QStringLiteral("loss"));
    QLineSeries* raw = seriesNamed(view, QStringLiteral("loss"));
    QLineSeries* smooth = seriesNamed(view, QStringLiteral("loss (smoothed)"));
    QVERIFY(raw && smooth);
    QVERIFY2(raw->pen().color().alpha() < 128, qPrintable(QString::number(raw->pen().color().alpha())));
    QCOMPARE(smooth->pen().color().alpha(), 255);
    QVERIFY(smooth->isVisible());
    // The smoothed line is in the raw line's colour.
    QCOMPARE(smooth->pen().color().rgb(), raw->pen().color().rgb());
    // A chart theme (the dark palette) resets every series' pen; restyle() puts them back.
    view->chart()->setTheme(QChart::ChartThemeDark);
    QCOMPARE(raw->pen().color().alpha(), 255); // what the theme did
    d.restyle();
    QVERIFY(raw->pen().color().alpha() < 128);
    QCOMPARE(smooth->pen().color().rgb(), raw->pen().color().rgb());
    // Off and on again keeps it so.
    d.setSmoothing(0.0);
    QCOMPARE(raw->pen().color().alpha(), 255);
    d.setSmoothing(0.3);
    QVERIFY(raw->pen().color().alpha() < 128);
}

void TestDashboard::logScaleOnlyWhereEveryValueIsPositive()
{
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int i = 0; i < 30; ++i) batch.push_back(sample("dqn", "loss", i, std::pow(10.0, -i / 10.0)));
    for (int i = 0; i < 30; ++i) batch.push_back(sample("dqn", "equity_ticks", i, i - 10.0));
    d.addSamples(batch);
    const QString dqn = QStringLiteral("dqn"), loss = QStringLiteral("loss"), equity = QStringLiteral("equity");
    QVERIFY(d.logScaleAvailable(dqn, loss));
    QVERIFY(!d.logScaleAvailable(dqn, equity)); // values <= 0, and a zero line
    QVERIFY(!d.setLogScale(dqn, equity, true));
    std::unique_ptr<QMenu> menu(d.contextMenu(dqn, equity));
    QVERIFY(!menu->findChild<QAction*>(QStringLiteral("logScale"))->isEnabled());
    menu.reset(d.contextMenu(dqn, loss));
    QAction* log = menu->findChild<QAction*>(QStringLiteral("logScale"));
    QVERIFY(log->isEnabled() && !log->isChecked());
    log->trigger(); // the menu's toggle
    QVERIFY(d.isLogScale(dqn, loss));
    // Whole decades around 1e-2.9 .. 1.
    QCOMPARE(d.yRange(dqn, loss), qMakePair(0.001, 1.0));
    const QChart* chart = d.chartView(dqn, loss)->chart();
    const QList<QAbstractAxis*> vertical = chart->axes(Qt::Vertical);
    QVERIFY(std::any_of(vertical.begin(), vertical.end(), [](QAbstractAxis* a) {
        return a->type() == QAbstractAxis::AxisTypeLogValue && a->isVisible();
    }));
    // A value <= 0 turns it back to linear and withdraws the offer.
    d.addSamples({sample("dqn", "loss", 30, 0.0)});
    QVERIFY(!d.isLogScale(dqn, loss));
    QVERIFY(!d.logScaleAvailable(dqn, loss));
    QVERIFY(d.yRange(dqn, loss).first <= 0.0);
}

void TestDashboard::exportsCsvAndImages()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Dashboard d;
    d.setModels({QStringLiteral("dqn")});
    const std::int64_t wall = 1764639643123000000; // 2025-12-02T01:40:43.123Z
    MetricBatch batch;
    batch.push_back(MetricSample{"dqn", "param_bytes", 1, wall, 40960.0});
    batch.push_back(MetricSample{"dqn", "param_bytes", 2, 0, 40960.0});
    batch.push_back(MetricSample{"dqn", "activation_bytes", 2, wall + 1000000, 3145728.5});
    d.addSamples(batch);
    const QString csv = dir.filePath(QStringLiteral("memory.csv"));
    QString error;
    QVERIFY2(d.exportCsv(QStringLiteral("dqn"), QStringLiteral("memory"), csv, &error), qPrintable(error));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(
        lines.at(0),
        QStringLiteral(
            "step,wall_time,params (bytes),grads (bytes),optimizer (bytes),activations (bytes),process RSS (bytes)"));
    QCOMPARE(lines.at(1), QStringLiteral("1,2025-12-02T01:40:43.123Z,40960,,,,"));
    QCOMPARE(lines.at(2), QStringLiteral("2,2025-12-02T01:40:43.124Z,40960,,,3145728.5,"));
    // Nothing but the file: it went through a temporary and a rename.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("memory.csv")});
    // A folder that does not exist: an error, no file.
    QVERIFY(!d.exportCsv(QStringLiteral("dqn"), QStringLiteral("memory"), dir.filePath(QStringLiteral("no/such.csv")),
                         &error));
    QVERIFY(error.contains(QStringLiteral("cannot write")));

    const QString png = dir.filePath(QStringLiteral("memory.png")), svg = dir.filePath(QStringLiteral("memory.svg"));
    QVERIFY2(d.exportImage(QStringLiteral("dqn"), QStringLiteral("memory"), png, &error), qPrintable(error));
    QVERIFY2(d.exportImage(QStringLiteral("dqn"), QStringLiteral("memory"), svg, &error), qPrintable(error));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 300 && image.height() >= 230);
    QFile s(svg);
    QVERIFY(s.open(QIODevice::ReadOnly));
    const QByteArray svgText = s.readAll();
    QVERIFY(svgText.contains("<svg"));
    QVERIFY(svgText.contains("dqn — memory"));
    // The menu offers all three.
    std::unique_ptr<QMenu> menu(d.contextMenu(QStringLiteral("dqn"), QStringLiteral("memory")));
    for (const char* name : {"export_csv", "export_png", "export_svg"})
        QVERIFY(menu->findChild<QAction*>(QLatin1String(name)));
}

void TestDashboard::wheelZoomsDragPansAndResetRestores()
{
    Dashboard d;
    d.resize(1600, 900);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int s = 0; s <= 1000; s += 10) batch.push_back(sample("dqn", "loss", s, 1.0 + s * 0.001));
    d.addSamples(batch);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    const QString dqn = QStringLiteral("dqn"), loss = QStringLiteral("loss");
    const auto whole = d.xRange(dqn, loss);
    QChartView* view = d.chartView(dqn, loss);
    QChart* chart = view->chart();
    const QPoint centre = view->mapFromScene(chart->mapToScene(chart->plotArea().center()));
    const double centreStep = chart->mapToValue(chart->plotArea().center()).x();
    // Over the title or the axes the wheel is left to the scroll area.
    QWheelEvent outside(QPointF(2, 2), view->viewport()->mapToGlobal(QPointF(2, 2)), QPoint(), QPoint(0, 120),
                        Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(view->viewport(), &outside);
    QVERIFY(!d.isZoomed(dqn, loss));
    // One notch in: 15 % narrower, around the step under the mouse.
    QWheelEvent wheel(QPointF(centre), view->viewport()->mapToGlobal(QPointF(centre)), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(view->viewport(), &wheel);
    QVERIFY(d.isZoomed(dqn, loss));
    const auto zoomed = d.xRange(dqn, loss);
    QVERIFY(std::abs((zoomed.second - zoomed.first) - 0.85 * (whole.second - whole.first)) < 1e-6);
    QVERIFY(zoomed.first < centreStep && zoomed.second > centreStep);
    // New samples do not move a zoomed axis.
    d.addSamples({sample("dqn", "loss", 2000, 3.0)});
    QCOMPARE(d.xRange(dqn, loss), zoomed);
    // Dragging left by 100 pixels moves the range right by 100 pixels' worth of steps.
    const double perPixel = (zoomed.second - zoomed.first) / chart->plotArea().width();
    QTest::mousePress(view->viewport(), Qt::LeftButton, Qt::NoModifier, centre);
    QMouseEvent move(QEvent::MouseMove, QPointF(centre - QPoint(100, 0)),
                     view->viewport()->mapToGlobal(QPointF(centre - QPoint(100, 0))), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QCoreApplication::sendEvent(view->viewport(), &move);
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::NoModifier, centre - QPoint(100, 0));
    const auto panned = d.xRange(dqn, loss);
    QVERIFY2(std::abs(panned.first - (zoomed.first + 100 * perPixel)) < 1e-6,
             qPrintable(QString::number(panned.first)));
    // Reset (the menu's entry, or a double-click on a zoomed chart) follows the data again.
    std::unique_ptr<QMenu> menu(d.contextMenu(dqn, loss));
    QAction* reset = menu->findChild<QAction*>(QStringLiteral("resetZoom"));
    QVERIFY(reset->isEnabled());
    reset->trigger();
    QVERIFY(!d.isZoomed(dqn, loss));
    QCOMPARE(d.xRange(dqn, loss).first, 0.0);
    QVERIFY(d.xRange(dqn, loss).second >= 2000.0);
    d.zoomX(dqn, loss, 0.5, 500.0);
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, centre);
    QVERIFY(!d.isZoomed(dqn, loss));
    QVERIFY(!d.isExpanded(dqn, loss)); // that double-click reset, it did not expand

    // Zoomed in, a long series keeps its detail: more of its points are drawn.
    Dashboard big;
    big.setSeriesCapacity(100000);
    big.setModels({dqn});
    MetricBatch many;
    for (int s = 0; s < 20000; ++s) many.push_back(sample("dqn", "loss", s, std::sin(s * 0.01) + 0.001 * (s % 7)));
    big.addSamples(many);
    big.resize(1600, 900);
    big.show();
    QVERIFY(QTest::qWaitForWindowExposed(&big));
    QCoreApplication::processEvents();
    QCoreApplication::processEvents(); // the coalesced re-decimation for the shown width
    const auto before = big.shownPoints(dqn, loss).size();
    big.zoomX(dqn, loss, 0.1, 10000.0);
    const auto after = big.shownPoints(dqn, loss).size();
    QVERIFY2(after > 4 * before, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));
    big.resetZoom(dqn, loss);
    QCOMPARE(big.shownPoints(dqn, loss).size(), before);
}

void TestDashboard::crosshairIsSharedByAModelsCharts()
{
    Dashboard d;
    d.resize(1600, 900);
    d.setModels({QStringLiteral("dqn"), QStringLiteral("ppo")});
    MetricBatch batch;
    for (int s = 0; s <= 1000; s += 10) {
        batch.push_back(sample("dqn", "loss", s, s * 0.5));
        batch.push_back(sample("dqn", "grad_norm", s, 2.0));
        batch.push_back(sample("dqn", "grad_norm", s, s < 500 ? 2.0 : 3.0));
        batch.push_back(sample("ppo", "loss", s, 1.0 + s));
    }
    d.addSamples(batch);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QChartView* view = d.chartView(QStringLiteral("dqn"), QStringLiteral("loss"));
    QChart* chart = view->chart();
    const QPointF item = chart->mapToPosition(QPointF(420, 210), chart->series().constFirst());
    const QPoint pos = view->mapFromScene(chart->mapToScene(item));
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), view->viewport()->mapToGlobal(QPointF(pos)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(view->viewport(), &move);
    const QString here = d.crosshairText(QStringLiteral("dqn"), QStringLiteral("loss"));
    const QString there = d.crosshairText(QStringLiteral("dqn"), QStringLiteral("grad_norm"));
    QVERIFY2(here.startsWith(QStringLiteral("step 4")) && here.contains(QStringLiteral("loss 2")), qPrintable(here));
    QVERIFY2(there.contains(QStringLiteral("grad norm 2")), qPrintable(there));
    // Only that model's section.
    QCOMPARE(d.crosshairText(QStringLiteral("ppo"), QStringLiteral("loss")), QString());
    QEvent leave(QEvent::Leave);
    QCoreApplication::sendEvent(view->viewport(), &leave);
    QCOMPARE(d.crosshairText(QStringLiteral("dqn"), QStringLiteral("grad_norm")), QString());
}

// Issue 19.4: the "Metrics" picker puts any logged scalar the registry does not chart on the
// dashboard, with what was logged before it was picked, and the pick lasts into later runs.
void TestDashboard::metricPickerChartsAnyLoggedScalar()
{
    Dashboard d;
    d.resize(1400, 900);
    d.setModels({QStringLiteral("dqn")});
    MetricBatch batch;
    for (int i = 0; i < 40; ++i) {
        batch.push_back(sample("dqn", "loss", i, 1.0 / (1 + i)));
        batch.push_back(sample("dqn", "epsilon", i, 1.0 - 0.02 * i));
        batch.push_back(sample("dqn", "td_error", i, 0.5 + 0.01 * i));
    }
    d.addSamples(batch);
    const QString dqn = QStringLiteral("dqn"), epsilon = QStringLiteral("epsilon");
    const QString key = Dashboard::pickedChartKey(epsilon);
    // Offered in the registry's order; charted metrics are not offered.
    const QStringList offered = d.pickableMetrics(dqn);
    QVERIFY2(offered.contains(epsilon) && offered.contains(QStringLiteral("td_error")), qPrintable(offered.join(',')));
    QVERIFY(!offered.contains(QStringLiteral("loss")));
    QVERIFY(!d.chartsOf(dqn).contains(key));
    QVERIFY(!d.setMetricShown(dqn, QStringLiteral("loss"), true));

    // The picker's menu lists them, unticked; ticking one makes its chart with the history.
    auto* picker = d.findChild<QToolButton*>(QStringLiteral("metricPicker"));
    QVERIFY(picker && picker->menu());
    QSignalSpy changed(&d, &Dashboard::pickedMetricsChanged);
    Q_EMIT picker->menu()->aboutToShow();
    QAction* tick = picker->menu()->findChild<QAction*>(QStringLiteral("dqn/epsilon"));
    QVERIFY(tick && tick->isCheckable() && !tick->isChecked());
    tick->setChecked(true);
    QCOMPARE(changed.count(), 1);
    QVERIFY(d.isMetricShown(dqn, epsilon));
    QVERIFY(d.chartsOf(dqn).contains(key));
    QCOMPARE(d.pointCount(dqn, epsilon), 40);
    QCOMPARE(d.chartMessage(dqn, key), QString());
    // Its chart comes after the registry's in the section.
    const auto place = [&](const QString& chart) {
        const QPoint cell = d.cellOf(dqn, chart); // (row, column)
        return std::make_pair(cell.x(), cell.y());
    };
    for (const QString& chart : d.chartsOf(dqn))
        if (chart != key && d.constantReadout(dqn, chart).isEmpty())
            QVERIFY2(place(chart) < place(key), qPrintable(chart));
    d.addSamples({sample("dqn", "epsilon", 40, 0.2)});
    QCOMPARE(d.pointCount(dqn, epsilon), 41);
    QCOMPARE(d.shownPoints(dqn, epsilon).back(), QPointF(40, 0.2));
    QCOMPARE(d.pickedMetrics(), QStringList{QStringLiteral("dqn/epsilon")});

    // A new run: the chart is back as soon as the model logs the metric, from its first sample.
    d.clear();
    d.setModels({dqn});
    QVERIFY(!d.chartsOf(dqn).contains(key));
    d.addSamples({sample("dqn", "epsilon", 0, 1.0), sample("dqn", "epsilon", 1, 0.98)});
    QVERIFY(d.chartsOf(dqn).contains(key));
    QCOMPARE(d.pointCount(dqn, epsilon), 2);

    // Unticked: the chart goes, the pick is forgotten, the samples stay on offer.
    const int charts = d.chartCount();
    QVERIFY(d.setMetricShown(dqn, epsilon, false));
    QCOMPARE(d.chartCount(), charts - 1);
    QCOMPARE(d.pointCount(dqn, epsilon), 0);
    QVERIFY(d.pickedMetrics().isEmpty());
    QVERIFY(d.pickableMetrics(dqn).contains(epsilon));
    d.addSamples({sample("dqn", "epsilon", 2, 0.96)});
    QVERIFY(!d.chartsOf(dqn).contains(key));
    // Picked again, it has everything logged in this run.
    d.setPickedMetrics({QStringLiteral("dqn/epsilon"), QStringLiteral("dqn/loss")}); // a charted one is dropped
    QCOMPARE(d.pickedMetrics(), QStringList{QStringLiteral("dqn/epsilon")});
    QCOMPARE(d.pointCount(dqn, epsilon), 3);
}

} // namespace tst_dashboard

FOXHUNT_TEST_MAIN(tst_dashboard::TestDashboard)
#include "tst_dashboard.moc"
