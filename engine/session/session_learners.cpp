// SPDX-License-Identifier: GPL-3.0-or-later
// One learner per model of the run (learner.h), each with the precision it trains in, the memory
// budget of the served copies, the ensemble's forecasts as agent inputs, and the INT8 settings.

#include "engine/session/session_run.h"

#include "engine/precision/kernel_cache.h"
#include "engine/session/amp_auto.h"
#include "engine/session/memory_budget.h"
#include "engine/store/kernel_timings.h"

namespace foxhunt::session {

namespace mp = foxhunt::models::precision;

void SessionRun::buildLearners()
{
    const SessionConfig& c = cfg();
    m_effective = effectiveConfig(c);
    m_inputs.config = &c;
    m_inputs.effective = &m_effective;
    m_inputs.bars = &m_bars;
    m_inputs.features = &m_features;
    m_inputs.episodes = &m_episodes;
    m_inputs.split = &m_split;
    m_inputs.forecastData = &m_forecastData;
    m_inputs.trainEpisodes = &m_trainEpisodes;
    m_inputs.validationEpisodes = &m_validationEpisodes;
    m_inputs.testEpisodes = &m_testEpisodes;
    m_inputs.comm = m_comm;
    m_inputs.owner = m_owner;
    // The ensemble's extra inputs: H median log returns per forecaster, in the order of the models.
    m_inputs.agentEnv = c.env;
    m_inputs.agentEnv.extraObservationSize = 0;
    if (c.ensemble) {
        for (ModelKind kind : c.models)
            if (isForecaster(kind))
                m_inputs.agentEnv.extraObservationSize += static_cast<int>(
                    (kind == ModelKind::Mamba2 ? c.mamba2 : c.tft).windowing.horizon);
    }
    const AmpResolver resolve = [this](Learner& l, const detail::StepFactory& f) { resolveAmp(l, f); };
    for (ModelKind kind : c.models) m_learners.push_back(makeLearner(kind, m_inputs, m_tickBatch, resolve));
}

void SessionRun::resolveAmp(Learner& learner, const detail::StepFactory& timeStep)
{
    // "amp": "auto": rank 0 times the model's own step both ways and every rank trains as it chose.
    const SessionConfig& c = cfg();
    learner.amp = c.precision.amp;
    if (!c.precision.ampAuto) return;
    const auto capabilities = mp::capabilities_of(c.device.rfind("cuda", 0) == 0 ? mp::ComputeDevice::Cuda
                                                                                 : mp::ComputeDevice::Cpu,
                                                  c.device.rfind("cuda:", 0) == 0 ? std::stoi(c.device.substr(5)) : 0);
    nlohmann::json choice;
    // A resumed run trains on as it chose at its start (its checkpoints and loss scale are that
    // precision's); only a run that never recorded a choice measures again.
    nlohmann::json kept;
    if (m_owner && m_resumed) {
        const auto stored = nlohmann::json::parse(m_resumed->versionsJson, nullptr, false);
        if (stored.is_object() && stored.contains("amp_choice") && stored["amp_choice"].contains(learner.name()))
            kept = stored["amp_choice"][learner.name()];
    }
    if (m_owner && kept.is_object()) {
        choice = kept;
        choice["kept_from_start"] = true;
    } else if (m_owner) {
        const mp::AmpChoice ch = detail::chooseAmp(capabilities, timeStep);
        choice = {
            {"mode", "auto"},
            {"enabled", ch.config.enabled},
            {"measured", ch.measured},
            {"fp32_step_ms", ch.fp32_ms},
            {"amp_step_ms", ch.amp_ms},
            {"reason", ch.reason},
            {"dtype", ch.config.enabled ? mp::to_string(ch.config.dtype) : "fp32"},
            {"config", {{"loss_scale", ch.config.loss_scale}, {"dynamic_loss_scale", ch.config.dynamic_loss_scale}}}};
    }
    if (m_comm) choice = nlohmann::json::parse(shareFromOwner(choice.dump()));
    learner.ampChoice = choice;
    if (m_owner && !m_resumed) { // a resumed run keeps the record of where it started
        m_versions["amp_choice"][learner.name()] = choice;
        m_runs->setVersions(m_runId, m_versions.dump());
    }
    learner.amp = mp::MixedPrecisionConfig::disabled();
    if (choice.value("enabled", false)) learner.amp = mp::auto_amp_candidate(capabilities).config;
}

void SessionRun::checkMemoryBudget()
{
    // The served copies against the memory budget, before the first step: rank 0 measures
    // (weights plus activations at the serving batch) and every rank refuses or goes on alike.
    const SessionConfig& c = cfg();
    if (c.precision.memoryBudgetMb <= 0.0) return;
    nlohmann::json budget;
    if (m_owner) {
        std::vector<std::pair<std::string, std::size_t>> bytes;
        for (const std::unique_ptr<Learner>& l : m_learners)
            bytes.emplace_back(l->name(), l->servingBytes(kServingBatch));
        budget = memoryBudgetJson(c.precision, bytes);
        if (!m_resumed) { // a resumed run keeps the record of where it started
            m_versions["memory_budget"] = budget;
            m_runs->setVersions(m_runId, m_versions.dump());
        }
    }
    if (m_comm) budget = nlohmann::json::parse(shareFromOwner(budget.dump()));
    if (budget.value("refused", false)) {
        // Refused before it began: a new run leaves no row behind, a resumed one is as it was.
        if (m_owner) {
            if (m_resumed) m_runs->setStatus(m_runId, m_resumed->status, m_resumed->error);
            else m_runs->deleteRun(m_runId);
            m_runId = 0;
            m_result.runId = 0;
            m_session.m_progress.runId = 0;
            m_doc.erase("run_id");
        }
        throw std::invalid_argument(budget.value("message", std::string()));
    }
    m_doc["memory_budget"] = budget;
}

void SessionRun::connectEnsemble()
{
    if (cfg().ensemble) {
        m_feed.data = &m_forecastData;
        m_feed.size = static_cast<std::size_t>(m_inputs.agentEnv.extraObservationSize);
        for (const std::unique_ptr<Learner>& l : m_learners)
            if (ForecasterTrainer* f = l->forecaster()) m_feed.forecasters.push_back(f);
        for (const std::unique_ptr<Learner>& l : m_learners)
            if (TradingEnv* env = l->environment())
                env->setExtraObservationSource(
                    [this](std::size_t bar, std::span<float> out) { m_feed.fill(bar, m_tick, out); });
    }
    // With INT8 on, the forecasters' live forecasts (charted and fed to the agents) come from the kept
    // INT8 copy each refresh replaces; agents keep acting with FP32 while they learn.
    if (cfg().precision.int8)
        for (const std::unique_ptr<Learner>& l : m_learners)
            if (ForecasterTrainer* f = l->forecaster()) f->setInferenceWeights(InferenceWeights::Int8);
}

void SessionRun::prepareInt8()
{
    const PrecisionSettings& p = cfg().precision;
    // Kernel timings persist in the store (rank 0), so each layer shape is timed once per machine.
    if (m_owner && p.int8) {
        m_kernelTable = std::make_unique<KernelTimingTable>(*m_store);
        m_kernelCache = storedKernelTimings(*m_kernelTable);
    }
    m_int8.serving = Int8Serving{
        .backend = p.int8Backend, .maxDegradation = p.int8MaxDegradation, .cache = m_kernelCache.get()};
    const std::size_t calibration = p.int8StaticActivations ? static_cast<std::size_t>(p.calibrationBars) : 0;
    m_int8.forecasterRefresh = Int8RefreshOptions{
        .windows = 64, .calibrationSamples = calibration, .serving = m_int8.serving};
    // Agents' refreshes: a small fixed sample and few timed passes, so a refresh stays cheap.
    AgentInt8Options agents;
    agents.samples = 256;
    agents.calibrationSamples = calibration;
    agents.latencyRepeats = 5;
    agents.serving = m_int8.serving;
    m_int8.agentRefresh = agents;
}

} // namespace foxhunt::session
