// SPDX-License-Identifier: GPL-3.0-or-later
// The metric registry: one line per metric, every chart drawn from it, names
// unique, per-rank names parsed in their one canonical spelling.
#include "engine/telemetry/metric_registry.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <set>
#include <string>

namespace tst_metric_registry {

using namespace foxhunt;

class TestMetricRegistry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void namesAreUnique();
    void chartsAndMetricsPointAtEachOther();
    void bandEdgesComeFirst();
    void perRankNames();
    void labels();
};

void TestMetricRegistry::namesAreUnique()
{
    std::set<std::string_view> names;
    for (const metrics::Metric& m : metrics::all()) {
        QVERIFY2(names.insert(m.name).second, std::string(m.name).c_str());
        QVERIFY(!m.label.empty());
    }
    std::set<std::string_view> keys;
    for (const metrics::Chart& c : metrics::charts()) QVERIFY2(keys.insert(c.key).second, std::string(c.key).c_str());
}

void TestMetricRegistry::chartsAndMetricsPointAtEachOther()
{
    for (const metrics::Chart& c : metrics::charts())
        QVERIFY2(!metrics::inChart(c.key).empty(), std::string(c.key).c_str());
    for (const metrics::Metric& m : metrics::all())
        if (!m.chart.empty()) QVERIFY2(metrics::chart(m.chart), std::string(m.name).c_str());
    QVERIFY(!metrics::chart("no such chart"));
    // A chart drawn only for agents or forecasters holds only their metrics.
    for (const metrics::Chart& c : metrics::charts())
        if (c.family != metrics::Family::Any)
            for (const metrics::Metric* m : metrics::inChart(c.key)) QVERIFY(m->family == c.family);
}

void TestMetricRegistry::bandEdgesComeFirst()
{
    for (const metrics::Chart& c : metrics::charts()) {
        const auto lines = metrics::inChart(c.key);
        if (!c.band) {
            for (const metrics::Metric* m : lines) QVERIFY(m->edge == metrics::Edge::None);
            continue;
        }
        QVERIFY(lines.size() >= 2);
        QVERIFY(lines[0]->edge == metrics::Edge::Lower);
        QVERIFY(lines[1]->edge == metrics::Edge::Upper);
    }
}

void TestMetricRegistry::perRankNames()
{
    const metrics::Metric* t = metrics::find("throughput_rank3");
    QVERIFY(t);
    QCOMPARE(std::string(t->name), std::string(metrics::kThroughputRank));
    QCOMPARE(metrics::rankOf("throughput_rank3", *t), 3);
    QCOMPARE(metrics::rankOf("throughput_rank0", *t), 0);
    QCOMPARE(metrics::rankOf("throughput_rank255", *t), 255);
    for (const char* odd : {"throughput_rank", "throughput_rank01", "throughput_rank+1", "throughput_rank-1",
                            "throughput_rank256", "throughput_rank1x"}) {
        QCOMPARE(metrics::rankOf(odd, *t), -1);
        QVERIFY2(!metrics::find(odd), odd);
    }
    QCOMPARE(metrics::rankOf("loss", *metrics::find("loss")), -1);
}

void TestMetricRegistry::labels()
{
    QCOMPARE(metrics::label("grad_norm"), std::string("grad norm"));
    QCOMPARE(metrics::label("throughput_rank2"), std::string("rank 2"));
    QCOMPARE(metrics::label("made_up"), std::string("made_up"));
    QCOMPARE(std::string(metrics::symbol(metrics::find("latency_ms")->unit)), std::string("ms"));
    QCOMPARE(std::string(metrics::symbol(metrics::find("param_bytes")->unit)), std::string("bytes"));
}

} // namespace tst_metric_registry

FOXHUNT_TEST_APPLESS_MAIN(tst_metric_registry::TestMetricRegistry)
#include "tst_metric_registry.moc"
