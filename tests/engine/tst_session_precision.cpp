// SPDX-License-Identifier: GPL-3.0-or-later
// A session's precision, interpretation, live-dashboard and ensemble outputs on
// the synthetic default: AMP loss-scale telemetry and the "amp" object, INT8
// refreshes and the "int8" object, the TFT's "interpretation", equity and
// forecast series, and the forecasters' medians in the agents' observations.

#include "engine/session/memory_budget.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <cmath>
#include <numeric>

namespace tst_session_precision {

using namespace foxhunt;

class TestSessionPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void ampAndInt8InValidationDocument();
    void agentsAmpAndInt8();
    void int8CopyServesForecasts();
    void tftInterpretation();
    void liveDashboardSeries();
    void ensembleFeedsForecastsToAgents();
    void ensembleWithoutForecasterIsRejected();
    void ampAutoIsRecordedAndKeptOnResume();
    void int8GateFallsBackToFp32();
    void memoryBudgetFigures();
    void memoryBudgetRefusesOrWarnsBeforeTraining();

private:
    static SessionConfig smallConfig(std::vector<ModelKind> models, long long steps);
    std::string db(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }
    nlohmann::json storedValidation(const char* file, std::int64_t runId, const std::string& model) const;
    QTemporaryDir m_dir;
    nlohmann::json m_precisionDoc; ///< result of the AMP + INT8 run (mamba2, tft), reused by tftInterpretation
    std::int64_t m_precisionRun = 0;
};

void TestSessionPrecision::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

SessionConfig TestSessionPrecision::smallConfig(std::vector<ModelKind> models, long long steps)
{
    SessionConfig c = SessionConfig::defaults();
    c.models = std::move(models);
    c.steps = steps;
    c.seed = 7;
    c.checkpointEvery = 0;
    // Eight trading days of the synthetic default (2024-01-08 .. 01-17) keep the evaluations short.
    c.fromDay = 19'730;
    c.toDay = 19'739;
    c.dqn.learningStarts = 20;
    c.ppo.nSteps = 32;
    for (ForecasterConfig* f : {&c.mamba2, &c.tft}) {
        f->windowing.pastLength = 16;
        f->batchSize = 8;
        f->evalBatchSize = 512;
    }
    return c;
}

nlohmann::json TestSessionPrecision::storedValidation(const char* file, std::int64_t runId,
                                                      const std::string& model) const
{
    BarStore store(db(file));
    for (const EvaluationRecord& e : RunStore(store).evaluations(runId))
        if (e.model == model && e.split == "validation") return nlohmann::json::parse(e.resultJson);
    return {};
}

void TestSessionPrecision::ampAndInt8InValidationDocument()
{
    SessionConfig c = smallConfig({ModelKind::Mamba2, ModelKind::Tft}, 40);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
    c.precision.amp = models::precision::MixedPrecisionConfig::for_ampere();
    c.precision.int8 = true;
    c.precision.int8StaticActivations = true;
    c.precision.calibrationBars = 50;
    c.precision.int8RefreshEvery = 15;
    TrainingSession session(db("precision.db"), c);
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    m_precisionDoc = nlohmann::json::parse(r.json);
    m_precisionRun = r.runId;

    BarStore store(db("precision.db"));
    RunStore runs(store);
    for (const std::string model : {"mamba2", "tft"}) {
        const MetricBatch scale = runs.metrics(r.runId, model, "loss_scale");
        QCOMPARE(scale.size(), std::size_t(40));
        // BF16 as for_ampere(): no scaling, so the scale stays 1 and nothing is skipped.
        for (const MetricSample& s : scale) QCOMPARE(s.value, 1.0);
        const MetricBatch skipped = runs.metrics(r.runId, model, "skipped_steps");
        QCOMPARE(skipped.size(), std::size_t(40));
        QCOMPARE(skipped.back().value, 0.0);
        // Refreshes at ticks 15 and 30, then the full check at the end.
        const MetricBatch degradation = runs.metrics(r.runId, model, "int8_degradation");
        QCOMPARE(degradation.size(), std::size_t(3));
        QCOMPARE(degradation[0].step, 15LL);
        QCOMPARE(degradation[1].step, 30LL);
        for (const MetricSample& s : degradation) QVERIFY(std::isfinite(s.value));

        const nlohmann::json v = storedValidation("precision.db", r.runId, model);
        QVERIFY2(v.contains("amp"), model.c_str());
        QCOMPARE(v["amp"]["enabled"].get<bool>(), true);
        QCOMPARE(v["amp"]["dtype"].get<std::string>(), std::string("bf16"));
        QCOMPARE(v["amp"]["final_scale"].get<double>(), 1.0);
        QCOMPARE(v["amp"]["skipped_steps"].get<long long>(), 0LL);
        QCOMPARE(v["amp"]["scale_changes"].get<long long>(), 0LL);
        QVERIFY2(v.contains("int8") && !v["int8"].contains("error"), v.dump().c_str());
        const nlohmann::json& q = v["int8"];
        for (const char* key : {"fp32_loss", "int8_loss", "degradation", "fp32_bytes", "int8_bytes", "bytes_ratio",
                                "quantized_layers", "backend", "static_activations", "calibration_bars", "latency"})
            QVERIFY2(q.contains(key), key);
        QVERIFY(q["static_activations"].get<bool>());
        QCOMPARE(q["calibration_bars"].get<int>(), 50);
        QVERIFY(q["quantized_layers"].get<int>() > 0);
        QVERIFY(q["int8_bytes"].get<double>() < q["fp32_bytes"].get<double>());
        QCOMPARE(q["degradation"].get<double>(), degradation.back().value);
        for (const char* key : {"fp32_b1", "int8_b1", "fp32_b32", "int8_b32"}) {
            QVERIFY2(q["latency"][key]["count"].get<int>() > 0, key);
            QVERIFY2(q["latency"][key]["p50_ms"].get<double>() > 0.0, key);
        }
        QCOMPARE(m_precisionDoc["models"][model]["validation"]["int8"].dump(), q.dump());
    }
    QVERIFY(!m_precisionDoc["models"]["mamba2"]["validation"].contains("interpretation"));

    // With INT8 off there is no "int8" object, but the AMP state is still reported.
    SessionConfig plain = smallConfig({ModelKind::Mamba2}, 10);
    plain.checkpointDir = c.checkpointDir;
    TrainingSession fp32(db("fp32.db"), plain);
    const SessionResult f = fp32.run();
    QVERIFY2(f.status == RunStatus::Finished, f.error.c_str());
    const nlohmann::json v = nlohmann::json::parse(f.json)["models"]["mamba2"]["validation"];
    QVERIFY(!v.contains("int8"));
    QCOMPARE(v["amp"]["enabled"].get<bool>(), false);
    QCOMPARE(v["amp"]["dtype"].get<std::string>(), std::string("fp32"));
}

void TestSessionPrecision::agentsAmpAndInt8()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Ppo}, 60);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-agents")).toStdString();
    c.precision.amp = models::precision::MixedPrecisionConfig::for_ampere();
    c.precision.int8 = true;
    c.precision.int8RefreshEvery = 40;
    // Kernels by hand and a lenient gate, so the INT8 policy acts (auto would not serve a copy of
    // these small MLPs that is slower than FP32; int8GateFallsBackToFp32 covers that path).
    c.precision.int8Backend = "dequantize";
    c.precision.int8MaxDegradation = 10.0;
    TrainingSession session(db("agents.db"), c);
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());

    BarStore store(db("agents.db"));
    RunStore runs(store);
    for (const std::string model : {"dqn", "ppo"}) {
        const MetricBatch scale = runs.metrics(r.runId, model, "loss_scale");
        QVERIFY2(!scale.empty(), model.c_str());
        for (const MetricSample& s : scale) QCOMPARE(s.value, 1.0);
        QVERIFY(!runs.metrics(r.runId, model, "skipped_steps").empty());
        // Exact tensor bytes: Adam keeps two moments per parameter, so its state outweighs the gradients.
        const MetricBatch grads = runs.metrics(r.runId, model, "grad_bytes");
        const MetricBatch optimizer = runs.metrics(r.runId, model, "optimizer_bytes");
        QVERIFY(!grads.empty() && !optimizer.empty());
        // One refresh at tick 40 (both agents have updated by then), then the full check at the end.
        const MetricBatch degradation = runs.metrics(r.runId, model, "int8_degradation");
        QCOMPARE(degradation.size(), std::size_t(2));
        QCOMPARE(degradation[0].step, 40LL);

        const nlohmann::json v = storedValidation("agents.db", r.runId, model);
        QCOMPARE(v["amp"]["dtype"].get<std::string>(), std::string("bf16"));
        QCOMPARE(v["amp"]["final_scale"].get<double>(), 1.0);
        QCOMPARE(v["amp"]["skipped_steps"].get<long long>(), 0LL);
        QVERIFY2(v.contains("int8") && !v["int8"].contains("error"), v.dump().c_str());
        QVERIFY2(v["int8"]["served"].get<bool>(), v["int8"].dump().c_str());
        QCOMPARE(v["int8"]["kernel_mode"].get<std::string>(), std::string("dequantize"));
        const double agreement = v["int8"]["action_agreement"].get<double>();
        QVERIFY(agreement >= 0.0 && agreement <= 1.0);
        QVERIFY(v["int8"]["int8_bytes"].get<double>() < v["int8"]["fp32_bytes"].get<double>());
        QCOMPARE(v["int8"]["latency"]["int8_b32"]["count"].get<int>(), 50);
        // The greedy policy through the INT8 copy, with the same trading metrics as the FP32 policy.
        const nlohmann::json doc = nlohmann::json::parse(r.json)["models"][model];
        for (const nlohmann::json& split : {v, doc["test"]}) {
            QVERIFY2(split.contains("int8_policy"), split.dump().c_str());
            QCOMPARE(split["int8_policy"].size(), split["policy"].size());
            for (const auto& [key, value] : split["policy"].items())
                QVERIFY2(split["int8_policy"].contains(key), key.c_str());
        }
        // The report's equity chart: the policy and buy-and-hold curves over the same steps.
        QVERIFY(!v["equity_usd"].empty());
        QCOMPARE(v["buy_and_hold_equity_usd"].size(), v["equity_usd"].size());
    }
    // The run records the machine it trained on.
    const nlohmann::json versions = nlohmann::json::parse(runs.run(r.runId)->versionsJson);
    QVERIFY(!versions["cpu"].get<std::string>().empty());
    QCOMPARE(versions["device"].get<std::string>(), std::string("cpu"));
}

void TestSessionPrecision::int8CopyServesForecasts()
{
    // A learning rate of 0 keeps the FP32 weights fixed, so any change in a forecast is the INT8 copy's.
    SessionConfig c = smallConfig({ModelKind::Mamba2}, 40);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-serving")).toStdString();
    c.mamba2.learningRate = 0.0;
    SessionConfig int8 = c;
    int8.precision.int8 = true;
    int8.precision.int8RefreshEvery = 25;
    TrainingSession fp32Session(db("serving-fp32.db"), c);
    TrainingSession int8Session(db("serving-int8.db"), int8);
    const SessionResult f = fp32Session.run();
    const SessionResult q = int8Session.run();
    QVERIFY2(f.status == RunStatus::Finished, f.error.c_str());
    QVERIFY2(q.status == RunStatus::Finished, q.error.c_str());

    BarStore fp32Store(db("serving-fp32.db"));
    BarStore int8Store(db("serving-int8.db"));
    const MetricBatch a = RunStore(fp32Store).metrics(f.runId, "mamba2", "forecast_q50");
    const MetricBatch b = RunStore(int8Store).metrics(q.runId, "mamba2", "forecast_q50");
    QCOMPARE(b.size(), std::size_t(3));
    QCOMPARE(a.size(), b.size());
    // Tick 20: before the first refresh (tick 25) FP32 serves; ticks 30 and 40: the kept INT8 copy.
    QCOMPARE(b[0].step, 20LL);
    QCOMPARE(b[0].value, a[0].value);
    for (std::size_t i = 1; i < b.size(); ++i) {
        QCOMPARE(b[i].step, a[i].step);
        const double diff = std::abs(b[i].value - a[i].value);
        QVERIFY2(diff > 0.0, "the INT8 session forecast exactly like FP32");
        QVERIFY2(diff < 0.05 * std::abs(a[i].value) + 1e-9,
                 qPrintable(QStringLiteral("%1 vs %2").arg(b[i].value).arg(a[i].value)));
    }
    // Live forecasts at steps 10 and 20 came from FP32, at 30 and 40 from the INT8 copy; without INT8, all from FP32.
    const nlohmann::json served = nlohmann::json::parse(q.json)["models"]["mamba2"]["training"]["forecasts_served"];
    QCOMPARE(served["fp32"].get<long long>(), 2LL);
    QCOMPARE(served["int8"].get<long long>(), 2LL);
    const nlohmann::json plain = nlohmann::json::parse(f.json)["models"]["mamba2"]["training"]["forecasts_served"];
    QCOMPARE(plain["fp32"].get<long long>(), 4LL);
    QCOMPARE(plain["int8"].get<long long>(), 0LL);
}

void TestSessionPrecision::tftInterpretation()
{
    if (m_precisionDoc.is_null()) QSKIP("needs the run of ampAndInt8InValidationDocument");
    const nlohmann::json v = storedValidation("precision.db", m_precisionRun, "tft");
    QVERIFY(v.contains("interpretation"));
    const nlohmann::json& in = v["interpretation"];
    const auto encoder = in["encoder_variables"].get<std::vector<std::string>>();
    const auto encoderImportance = in["encoder_importance"].get<std::vector<double>>();
    const auto decoder = in["decoder_variables"].get<std::vector<std::string>>();
    const auto decoderImportance = in["decoder_importance"].get<std::vector<double>>();
    // Observed market features, then the clock features known in advance.
    QCOMPARE(encoder.size(), std::size_t(9));
    QCOMPARE(encoder.front(), std::string("log_return"));
    QCOMPARE(decoder.size(), std::size_t(4));
    QCOMPARE(decoder.front(), encoder[5]);
    QCOMPARE(encoderImportance.size(), encoder.size());
    QCOMPARE(decoderImportance.size(), decoder.size());
    // Selection weights are a softmax per window and step: their means still sum to 1.
    QVERIFY(std::abs(std::accumulate(encoderImportance.begin(), encoderImportance.end(), 0.0) - 1.0) < 1e-4);
    QVERIFY(std::abs(std::accumulate(decoderImportance.begin(), decoderImportance.end(), 0.0) - 1.0) < 1e-4);
    QVERIFY(in["static_variables"].empty());
    const auto attention = in["attention"].get<std::vector<std::vector<double>>>();
    QCOMPARE(attention.size(), std::size_t(5));
    for (std::size_t h = 0; h < attention.size(); ++h) {
        QCOMPARE(attention[h].size(), std::size_t(16 + 5));
        QVERIFY(std::abs(std::accumulate(attention[h].begin(), attention[h].end(), 0.0) - 1.0) < 1e-4);
        // Causal: decoder step h never attends to a later decoder step.
        for (std::size_t k = 16 + h + 1; k < attention[h].size(); ++k) QVERIFY(attention[h][k] < 1e-6);
    }
    QVERIFY(in["windows"].get<long long>() > 0);
}

void TestSessionPrecision::liveDashboardSeries()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Mamba2}, 40);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
    TrainingSession session(db("live.db"), c);
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    BarStore store(db("live.db"));
    RunStore runs(store);

    const MetricBatch equity = runs.metrics(r.runId, "dqn", "equity_ticks");
    const MetricBatch hold = runs.metrics(r.runId, "dqn", "buy_hold_equity_ticks");
    const MetricBatch position = runs.metrics(r.runId, "dqn", "position");
    QCOMPARE(equity.size(), std::size_t(4));
    QCOMPARE(hold.size(), std::size_t(4));
    QCOMPARE(position.size(), std::size_t(4));
    QCOMPARE(equity.front().step, 10LL);
    for (const MetricSample& s : position) QVERIFY(s.value == -1.0 || s.value == 0.0 || s.value == 1.0);
    // Holding long pays the entry costs first: slippage plus commission at the first fill.
    QVERIFY(hold.front().value != 0.0);
    for (std::size_t i = 0; i < hold.size(); ++i) {
        QVERIFY(std::isfinite(equity[i].value));
        QVERIFY(std::isfinite(hold[i].value));
    }

    // Windows of 16 bars: the replayed bars at ticks 20, 30, 40 have one, tick 10's does not.
    const MetricBatch q10 = runs.metrics(r.runId, "mamba2", "forecast_q10");
    const MetricBatch q50 = runs.metrics(r.runId, "mamba2", "forecast_q50");
    const MetricBatch q90 = runs.metrics(r.runId, "mamba2", "forecast_q90");
    const MetricBatch realised = runs.metrics(r.runId, "mamba2", "realised");
    QCOMPARE(q50.size(), std::size_t(3));
    QCOMPARE(q10.size(), q50.size());
    QCOMPARE(q90.size(), q50.size());
    QCOMPARE(realised.size(), q50.size());
    QCOMPARE(q50.front().step, 20LL);
    for (std::size_t i = 0; i < q50.size(); ++i) {
        QCOMPARE(realised[i].step, q50[i].step);
        QVERIFY(std::isfinite(q50[i].value));
        // Log returns of one-minute bars, not standardised units.
        QVERIFY(std::abs(realised[i].value) < 0.05);
    }
}

void TestSessionPrecision::ensembleFeedsForecastsToAgents()
{
    auto run = [&](const char* file, bool ensemble) {
        SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Mamba2}, 30);
        c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt")).toStdString();
        c.ensemble = ensemble;
        TrainingSession session(db(file), c);
        const SessionResult r = session.run();
        return std::pair{r, nlohmann::json::parse(r.json)};
    };
    const auto [plainResult, plain] = run("plain.db", false);
    const auto [ensembleResult, ens] = run("ensemble.db", true);
    QVERIFY2(plainResult.status == RunStatus::Finished, plainResult.error.c_str());
    QVERIFY2(ensembleResult.status == RunStatus::Finished, ensembleResult.error.c_str());
    QVERIFY(ens["config"]["ensemble"].get<bool>());
    BarStore store(db("ensemble.db"));
    const auto info = RunStore(store).run(ensembleResult.runId);
    QVERIFY(info);
    QVERIFY(nlohmann::json::parse(info->configJson)["ensemble"].get<bool>());

    const long long horizon = 5;
    const nlohmann::json& p = plain["models"]["dqn"]["training"];
    const nlohmann::json& e = ens["models"]["dqn"]["training"];
    QCOMPARE(p["extra_observation_size"].get<long long>(), 0LL);
    QCOMPARE(e["extra_observation_size"].get<long long>(), horizon);
    QCOMPARE(e["observation_size"].get<long long>(), p["observation_size"].get<long long>() + horizon);
    QCOMPARE(ens["models"]["dqn"]["training"]["steps"].get<long long>(), 30LL);
    QVERIFY(ens["models"]["dqn"].contains("validation"));
}

void TestSessionPrecision::ensembleWithoutForecasterIsRejected()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Ppo}, 10);
    c.ensemble = true;
    TrainingSession session(db("noforecaster.db"), c);
    const SessionResult r = session.run();
    QVERIFY(r.status == RunStatus::Failed);
    QVERIFY2(r.error.find("ensemble") != std::string::npos, r.error.c_str());
    QVERIFY2(r.error.find("forecaster") != std::string::npos, r.error.c_str());
}

void TestSessionPrecision::ampAutoIsRecordedAndKeptOnResume()
{
    SessionConfig c = smallConfig({ModelKind::Dqn}, 120);
    c.checkpointEvery = 40;
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-auto")).toStdString();
    c.precision.ampAuto = true;
    std::int64_t runId = 0;
    {
        TrainingSession first(db("auto.db"), c);
        first.setSamplesReadyCallback([&] {
            MetricBatch drained;
            first.samples().drain(drained);
            if (first.progress().tick >= 60) first.stop();
        });
        const SessionResult r = first.run();
        QVERIFY(r.status == RunStatus::Stopped);
        runId = r.runId;
    }
    // The choice is stored with the run's machine record as soon as it is made, with its reason.
    nlohmann::json versions;
    {
        BarStore store(db("auto.db"));
        RunStore runs(store);
        versions = nlohmann::json::parse(runs.run(runId)->versionsJson);
        QVERIFY2(versions.contains("amp_choice") && versions["amp_choice"].contains("dqn"), versions.dump().c_str());
        const nlohmann::json& choice = versions["amp_choice"]["dqn"];
        QCOMPARE(choice["mode"].get<std::string>(), std::string("auto"));
        QVERIFY(!choice["reason"].get<std::string>().empty());
        // Plant a different decision: a resume must train on with the stored one, not measure again.
        versions["amp_choice"]["dqn"] = {
            {"mode", "auto"}, {"enabled", false}, {"measured", true}, {"reason", "planted by the test"}};
        runs.setVersions(runId, versions.dump());
    }
    TrainingSession second(db("auto.db"), c);
    second.resumeRun(runId);
    const SessionResult r = second.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    const nlohmann::json amp = nlohmann::json::parse(r.json)["models"]["dqn"]["validation"]["amp"];
    QCOMPARE(amp["enabled"].get<bool>(), false);
    QCOMPARE(amp["choice"]["reason"].get<std::string>(), std::string("planted by the test"));
    QVERIFY(amp["choice"]["kept_from_start"].get<bool>());
    // The record of the start is not rewritten by the resume.
    BarStore store(db("auto.db"));
    QCOMPARE(nlohmann::json::parse(RunStore(store).run(runId)->versionsJson)["amp_choice"].dump(),
             versions["amp_choice"].dump());
}

void TestSessionPrecision::memoryBudgetFigures()
{
    PrecisionSettings p;
    p.memoryBudgetMb = 880.0;
    const std::size_t mib = 1024 * 1024;
    const nlohmann::json fits = memoryBudgetJson(p, {{"tft", 300 * mib}, {"mamba2", 500 * mib}});
    QCOMPARE(fits["total_mb"].get<double>(), 800.0);
    QCOMPARE(fits["headroom_mb"].get<double>(), 80.0);
    QVERIFY(!fits["over"].get<bool>() && !fits["refused"].get<bool>() && !fits.contains("message"));
    QCOMPARE(fits["models"]["tft"].get<double>(), 300.0);

    const nlohmann::json over = memoryBudgetJson(p, {{"tft", 300 * mib}, {"mamba2", 600 * mib}});
    QVERIFY(over["over"].get<bool>() && over["refused"].get<bool>());
    QCOMPARE(over["headroom_mb"].get<double>(), -20.0);
    const std::string message = over["message"].get<std::string>();
    for (const char* part : {"880.00 MiB", "900.00 MiB", "tft 300.00 MiB", "mamba2 600.00 MiB", "20.00 MiB over"})
        QVERIFY2(message.find(part) != std::string::npos, message.c_str());

    p.memoryBudgetAction = MemoryBudgetAction::Warn;
    const nlohmann::json warned = memoryBudgetJson(p, {{"tft", 300 * mib}, {"mamba2", 600 * mib}});
    QVERIFY(warned["over"].get<bool>() && !warned["refused"].get<bool>());
    QCOMPARE(warned["action"].get<std::string>(), std::string("warn"));
}

void TestSessionPrecision::memoryBudgetRefusesOrWarnsBeforeTraining()
{
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Tft}, 20);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-budget")).toStdString();
    c.precision.memoryBudgetMb = 0.001; // 1 KiB: no model serves in that
    {
        TrainingSession refused(db("budget.db"), c);
        const SessionResult r = refused.run();
        QVERIFY(r.status == RunStatus::Failed);
        QVERIFY2(r.error.find("memory budget") != std::string::npos && r.error.find("dqn") != std::string::npos &&
                     r.error.find("tft") != std::string::npos,
                 r.error.c_str());
        BarStore store(db("budget.db"));
        RunStore runs(store);
        // Refused before it began: no run is left behind to clutter the history.
        QCOMPARE(r.runId, std::int64_t{0});
        QVERIFY(runs.runs().empty());
        QVERIFY(!std::filesystem::exists(runs.checkpointFolder()) ||
                std::filesystem::is_empty(runs.checkpointFolder()));
    }
    c.precision.memoryBudgetAction = MemoryBudgetAction::Warn;
    TrainingSession warned(db("budget.db"), c);
    const SessionResult w = warned.run();
    QVERIFY2(w.status == RunStatus::Finished, w.error.c_str());
    const nlohmann::json budget = nlohmann::json::parse(w.json)["memory_budget"];
    QVERIFY(budget["over"].get<bool>());
    // Measured: weights plus activations, so every model needs more than nothing.
    QVERIFY(budget["models"]["dqn"].get<double>() > 0.0 && budget["models"]["tft"].get<double>() > 0.0);
    BarStore store(db("budget.db"));
    const nlohmann::json versions = nlohmann::json::parse(RunStore(store).run(w.runId)->versionsJson);
    QCOMPARE(versions["memory_budget"]["total_mb"].get<double>(), budget["total_mb"].get<double>());

    c.precision.memoryBudgetMb = 4096.0;
    TrainingSession fits(db("budget.db"), c);
    const SessionResult f = fits.run();
    QVERIFY2(f.status == RunStatus::Finished, f.error.c_str());
    QVERIFY(nlohmann::json::parse(f.json)["memory_budget"]["headroom_mb"].get<double>() > 4000.0);
}

void TestSessionPrecision::int8GateFallsBackToFp32()
{
    // A gate no copy can pass: every model's INT8 copy is refused, and the run says so everywhere.
    SessionConfig c = smallConfig({ModelKind::Dqn, ModelKind::Tft}, 40);
    c.checkpointDir = m_dir.filePath(QStringLiteral("ckpt-gate")).toStdString();
    c.precision.int8 = true;
    c.precision.int8RefreshEvery = 20;
    c.precision.calibrationBars = 50;
    c.precision.int8MaxDegradation = -1.0; // validate() refuses it from a config; set here to force refusal
    TrainingSession session(db("gate.db"), c);
    const SessionResult r = session.run();
    QVERIFY2(r.status == RunStatus::Finished, r.error.c_str());
    const nlohmann::json doc = nlohmann::json::parse(r.json)["models"];
    BarStore store(db("gate.db"));
    RunStore runs(store);
    for (const std::string model : {"dqn", "tft"}) {
        const nlohmann::json q = storedValidation("gate.db", r.runId, model)["int8"];
        QVERIFY2(!q["served"].get<bool>(), q.dump().c_str());
        QVERIFY2(q["verdict"].get<std::string>().find("FP32 serves instead") != std::string::npos, q.dump().c_str());
        const MetricBatch rejected = runs.metrics(r.runId, model, "int8_rejected");
        QVERIFY(!rejected.empty());
        QCOMPARE(rejected.back().value, 1.0);
    }
    // No INT8 policy acts for a refused agent copy, and the forecaster serves FP32 forecasts only.
    QVERIFY(!doc["dqn"]["validation"].contains("int8_policy"));
    QCOMPARE(doc["tft"]["training"]["forecasts_served"]["int8"].get<long long>(), 0LL);
}

} // namespace tst_session_precision

FOXHUNT_TEST_APPLESS_MAIN(tst_session_precision::TestSessionPrecision)
#include "tst_session_precision.moc"
