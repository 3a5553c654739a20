// SPDX-License-Identifier: GPL-3.0-or-later
// A whole session on the synthetic default: all four models train, are
// evaluated beside their baselines, and land in the run store; samples reach
// the staging buffer; stop and determinism hold.

#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/metric_registry.h"
#include "models/runtime.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <set>

namespace tst_training_session {

using namespace foxhunt;

class TestTrainingSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void trainsAllFourModels();
    void stopEndsAsStopped();
    void sameSeedSameLosses();
    void badConfigFailsReadably();
    void impossibleSizesFailBeforeARunIsRecorded();
    void resumesFromCheckpoint();

private:
    static SessionConfig smallConfig(std::vector<ModelKind> models, long long steps);
    std::string db(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }
    QTemporaryDir m_dir;
};

void TestTrainingSession::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

SessionConfig TestTrainingSession::smallConfig(std::vector<ModelKind> models, long long steps)
{
    SessionConfig c = SessionConfig::defaults();
    c.models = std::move(models);
    c.steps = steps;
    c.seed = 7;
    c.checkpointEvery = 0;
    c.dqn.learningStarts = 50;
    c.ppo.nSteps = 64;
    c.mamba2.windowing.pastLength = 16;
    c.mamba2.batchSize = 8;
    c.mamba2.evalBatchSize = 512;
    c.tft.windowing.pastLength = 16;
    c.tft.batchSize = 8;
    c.tft.evalBatchSize = 512;
    return c;
}

void TestTrainingSession::trainsAllFourModels()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Ppo, ModelKind::Mamba2, ModelKind::Tft}, 40);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
    TrainingSession session(db("all.db"), c);
    std::atomic<int> notified{0};
    session.setSamplesReadyCallback([&] { ++notified; });
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    QVERIFY(notified > 0);
    QVERIFY(session.samples().size() > 0);

    const nlohmann::json doc = nlohmann::json::parse(r.json);
    for (const char* m : {"dqn", "ppo", "mamba2", "tft"}) {
        QVERIFY2(doc["models"].contains(m), m);
        QCOMPARE(doc["models"][m]["training"]["steps"].get<long long>(), 40LL);
        QVERIFY2(doc["models"][m].contains("test"), m);
    }
    QVERIFY(doc["models"]["dqn"]["test"].contains("buy_and_hold"));
    QVERIFY(doc["models"]["tft"]["test"].contains("persistence"));
    QVERIFY(doc["series"]["synthetic"].get<bool>());

    BarStore store(db("all.db"));
    RunStore runs(store);
    const auto info = runs.run(r.runId);
    QVERIFY(info);
    QVERIFY(info->status == RunStatus::Finished);
    QVERIFY(runs.metricCount(r.runId) > 0);
    QVERIFY(!runs.metrics(r.runId, "tft", "loss").empty());
    QCOMPARE(runs.evaluations(r.runId).size(), std::size_t(12));
    for (const char* m : {"dqn", "ppo", "mamba2", "tft"}) QVERIFY2(runs.lastCheckpoint(r.runId, m), m);
    // Every name the session recorded is defined in the registry, so the dashboard, run history,
    // report and CLI know its label, unit and chart; and every model-wide chart got its data.
    std::set<std::string> recorded;
    for (const MetricSample& s : runs.metrics(r.runId)) {
        QVERIFY2(metrics::find(s.metric), ("unregistered metric " + s.model + "/" + s.metric).c_str());
        recorded.insert(s.metric);
    }
    for (const metrics::Chart& chart : metrics::charts())
        if (!chart.onDemand)
            for (const metrics::Metric* m : metrics::inChart(chart.key))
                QVERIFY2(recorded.count(std::string(m->name)), std::string(m->name).c_str());

    // The stored config holds the values the models trained with, not the defaults the session overrode.
    const nlohmann::json stored = nlohmann::json::parse(info->configJson);
    for (const char* m : {"mamba2", "tft"}) {
        QCOMPARE(stored[m]["total_steps"].get<long long>(), 40LL);
        QCOMPARE(stored[m]["warmup_steps"].get<long long>(), 4LL);
        QCOMPARE(stored[m]["seed"].get<long long>(), 7LL);
    }
    QCOMPARE(stored["dqn"]["total_timesteps"].get<long long>(), 40LL);
    QCOMPARE(stored["dqn"]["seed"].get<long long>(), 7LL);
    QCOMPARE(stored["ppo"]["seed"].get<long long>(), 7LL);
    const SessionConfig back = sessionConfigFromJson(stored);
    QCOMPARE(toJson(effectiveConfig(back)).dump(), toJson(back).dump()); // applying it again changes nothing
}

void TestTrainingSession::stopEndsAsStopped()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 1'000'000);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
    TrainingSession session(db("stop.db"), c);
    // Stop from the worker's own notification, draining like the UI does:
    // deterministic, no timing.
    session.setSamplesReadyCallback([&] {
        MetricBatch drained;
        session.samples().drain(drained);
        if (session.progress().tick >= 500) session.stop();
    });
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Stopped, r.error.c_str());
    QVERIFY(session.progress().tick < 1'000'000);
    BarStore store(db("stop.db"));
    QVERIFY(RunStore(store).run(r.runId)->status == RunStatus::Stopped);
}

void TestTrainingSession::sameSeedSameLosses()
{
    auto lossOf = [&](const char* name) {
        SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Mamba2}, 80);
        c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
        TrainingSession session(db(name), c);
        const SessionResult r = session.run();
        BarStore store(db(name));
        RunStore runs(store);
        MetricBatch all = runs.metrics(r.runId, "dqn", "loss");
        const MetricBatch m = runs.metrics(r.runId, "mamba2", "loss");
        all.insert(all.end(), m.begin(), m.end());
        std::vector<double> v;
        for (const MetricSample& s : all) v.push_back(s.value);
        return v;
    };
    const std::vector<double> a = lossOf("seed-a.db"), b = lossOf("seed-b.db");
    QVERIFY(!a.empty());
    QCOMPARE(a, b);
}

void TestTrainingSession::badConfigFailsReadably()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 10);
    c.series = "NO.SUCH";
    TrainingSession session(db("bad.db"), c);
    const SessionResult r = session.run();
    QVERIFY(r.status == RunStatus::Failed);
    QVERIFY2(r.error.find("NO.SUCH") != std::string::npos, r.error.c_str());
    QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json{{"models", {"lstm"}}}), std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json{{"dqn", {{"no_such_key", 1}}}}),
                             std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json{{"precision", {{"amp_dtype", "fp8"}}}}),
                             std::invalid_argument);
    QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json{{"device", "tpu"}}), std::invalid_argument);
    SessionConfig p = c;
    p.precision.amp = models::precision::MixedPrecisionConfig::for_ampere();
    p.precision.int8 = true;
    p.precision.calibrationBars = 250;
    p.ensemble = true;
    const SessionConfig round = sessionConfigFromJson(toJson(p));
    QCOMPARE(toJson(round).dump(), toJson(p).dump());
    QVERIFY(round.precision.amp == p.precision.amp);
    QCOMPARE(round.precision.calibrationBars, 250);
    QVERIFY(round.ensemble);

    // FP16 autocast does not exist on this CPU build: the run says so and names the fix.
    SessionConfig fp16 = smallConfig({ModelKind::Tft}, 50);
    fp16.precision.amp = models::precision::MixedPrecisionConfig::for_volta_turing();
    TrainingSession halfSession(db("fp16.db"), fp16);
    const SessionResult h = halfSession.run();
    if (!models::cudaAvailable()) {
        QVERIFY(h.status == RunStatus::Failed);
        QVERIFY2(h.error.find("BF16") != std::string::npos, h.error.c_str());
    }
}

void TestTrainingSession::resumesFromCheckpoint()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Tft}, 300);
    c.checkpointEvery = 100;
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-resume")).toStdString();
    std::int64_t runId = 0;
    {
        TrainingSession first(db("resume.db"), c);
        first.setSamplesReadyCallback([&] {
            MetricBatch drained;
            first.samples().drain(drained);
            if (first.progress().tick >= 150) first.stop();
        });
        const SessionResult r = first.run();
        QVERIFY(r.status == RunStatus::Stopped);
        runId = r.runId;
    }
    BarStore store(db("resume.db"));
    RunStore runs(store);
    const auto before = runs.lastCheckpoint(runId, "dqn");
    QVERIFY(before);

    TrainingSession second(db("resume.db"), c);
    second.resumeRun(runId);
    const SessionResult r = second.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    QCOMPARE(r.runId, runId);
    const nlohmann::json doc = nlohmann::json::parse(r.json);
    QVERIFY(doc["resumed"].get<bool>());
    QCOMPARE(doc["models"]["dqn"]["training"]["steps"].get<long long>(), 300LL);
    QCOMPARE(doc["models"]["tft"]["training"]["steps"].get<long long>(), 300LL);
    // The second session replayed only what was left after the checkpoint.
    QVERIFY(doc["ticks"].get<long long>() <= 300 - before->step);
    QVERIFY(runs.run(runId)->status == RunStatus::Finished);

    TrainingSession again(db("resume.db"), c);
    again.resumeRun(runId);
    QVERIFY(again.run().status == RunStatus::Failed);
}

void TestTrainingSession::impossibleSizesFailBeforeARunIsRecorded()
{
    // head_dim 0 divided by zero inside the Mamba-2 block (SIGFPE) and left the run "running".
    SessionConfig c = smallConfig({ModelKind::Mamba2, ModelKind::Tft}, 10);
    c.mamba2.headDim = 0;
    c.tft.heads = 3; // does not divide hidden_size 16
    c.dqn.hidden = {64, 0};
    TrainingSession session(db("sizes.db"), c);
    const SessionResult r = session.run();
    QVERIFY(r.status == RunStatus::Failed);
    for (const char* part : {"mamba2.head_dim must be at least 1", "tft.heads (3) must divide hidden_size (16)",
                             "dqn.hidden must list one or more positive layer widths"})
        QVERIFY2(r.error.find(part) != std::string::npos, r.error.c_str());
    BarStore store(db("sizes.db"));
    QVERIFY(RunStore(store).runs().empty());

    QVERIFY(configProblems(SessionConfig::defaults()).empty());
    SessionConfig seed = SessionConfig::defaults();
    applyModelPreset(seed, ModelPreset::Seed);
    QVERIFY(configProblems(seed).empty());
    // Whole numbers only, and no key the config does not know, at any level.
    for (const char* text : {R"({"steps": 1e300})", R"({"steps": 2.5})", R"({"seed": -1})", R"({"stepz": 1})",
                             R"({"mamba2": {"d_model": "big"}})", R"({"steps": 0})", R"({"models": []})"})
        QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json::parse(text)), std::invalid_argument);
    QCOMPARE(sessionConfigFromJson(nlohmann::json::parse(R"({"steps": 1e3})")).steps, 1000LL);
    // An explicit split (a fold member's): both days or neither, in order, inside the run's days.
    const SessionConfig split = sessionConfigFromJson(
        nlohmann::json::parse(R"({"validation_from_day": 19800, "test_from_day": 19810})"));
    QCOMPARE(split.validationFromDay.value_or(0), std::int64_t(19800));
    QCOMPARE(split.testFromDay.value_or(0), std::int64_t(19810));
    QCOMPARE(toJson(sessionConfigFromJson(toJson(split))).dump(), toJson(split).dump());
    QVERIFY(!toJson(SessionConfig::defaults()).contains("test_from_day")); // other configs stay as they were
    for (const char* text : {R"({"validation_from_day": 19800})", R"({"test_from_day": 19800})",
                             R"({"validation_from_day": 19810, "test_from_day": 19800})",
                             R"({"from_day": 19800, "validation_from_day": 19800, "test_from_day": 19810})",
                             R"({"to_day": 19805, "validation_from_day": 19800, "test_from_day": 19810})"})
        QVERIFY_EXCEPTION_THROWN(sessionConfigFromJson(nlohmann::json::parse(text)), std::invalid_argument);
}

} // namespace tst_training_session

FOXHUNT_TEST_APPLESS_MAIN(tst_training_session::TestTrainingSession)
#include "tst_training_session.moc"
