// SPDX-License-Identifier: GPL-3.0-or-later
// The agents' learner (DQN, PPO): a runner on its own trading environment, the same bars held long
// beside it for the buy-and-hold line, greedy latencies sampled as it trains, and the evaluation
// on validation and test against the baselines.

#include "engine/agents/agent_runner.h"
#include "engine/replay/features.h"
#include "engine/session/amp_auto.h"
#include "engine/session/learner.h"
#include "engine/session/session_json.h"
#include "engine/telemetry/metric_registry.h"

#include <chrono>

namespace foxhunt::session {

namespace {

using Clock = std::chrono::steady_clock;

/// Live dashboard series (equity, position) every this many steps.
constexpr long long kLiveEvery = 10;
/// A greedy action is timed every this many steps.
constexpr long long kLatencyEvery = 100;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// An agent's options on the run's device.
template <class Options>
Options onDevice(Options o, const SessionConfig& config)
{
    o.device = config.device;
    return o;
}

class AgentLearner final : public Learner {
public:
    AgentLearner(ModelKind kind, const RunInputs& run, MetricBatch& out, const AmpResolver& resolveAmp)
        : Learner(kind, run, out)
    {
        const int featureCount = static_cast<int>(run.features->cols);
        m_env = std::make_unique<TradingEnv>(*run.bars, run.features->values, featureCount, *run.episodes,
                                             run.agentEnv);
        TradingEnvOptions holdOptions = m_config.env;
        holdOptions.extraObservationSize = 0;
        m_holdEnv = std::make_unique<TradingEnv>(*run.bars, run.features->values, featureCount, *run.episodes,
                                                 holdOptions);
        m_agent = std::make_unique<AgentRunner>(*m_env, *run.trainEpisodes, makeAgent(kind, run, resolveAmp));
        if (run.comm) m_agent->agent().setCommunicator(run.comm);
        m_paramBytes = static_cast<double>(m_agent->memoryBytes().parameterBytes);
    }

    std::size_t servingBytes(int batch) override { return m_agent->servingBytes(batch); }

    /// The agent of `kind` on the run's device, with the mixed precision `resolveAmp` settles from a
    /// measure of its update at these sizes. A new agent is one more case here.
    std::unique_ptr<Agent> makeAgent(ModelKind kind, const RunInputs& run, const AmpResolver& resolveAmp)
    {
        const int observations = m_env->observationSize(), actions = m_env->actionCount();
        switch (kind) {
        case ModelKind::Dqn: {
            DqnOptions o = onDevice(run.effective->dqn, m_config);
            resolveAmp(*this, detail::dqnUpdateSteps(observations, actions, o));
            o.mixedPrecision = amp;
            return std::make_unique<Dqn>(observations, actions, std::move(o));
        }
        case ModelKind::Ppo: {
            PpoOptions o = onDevice(run.effective->ppo, m_config);
            resolveAmp(*this, detail::ppoUpdateSteps(observations, actions, o));
            o.mixedPrecision = amp;
            return std::make_unique<Ppo>(observations, actions, std::move(o));
        }
        default: throw std::invalid_argument("not an agent: " + toString(kind));
        }
    }
    void save(const std::string& path, const std::string& identity) const override { m_agent->save(path, identity); }
    void load(const std::string& path, bool restoreEnvironment, const CheckpointCheck& check) override
    {
        m_agent->load(path, restoreEnvironment, check);
    }
    void resumeAt(long long step) override
    {
        Learner::resumeAt(step);
        m_episodeEquityTicks = m_env->state().equityTicks;
        m_lastUpdates = m_agent->agent().updates();
    }
    TradingEnv* environment() override { return m_env.get(); }

protected:
    void trainStep(long long, std::size_t) override
    {
        const auto t0 = Clock::now();
        const bool freshEpisode = m_env->done();
        const TrainStats st = m_agent->train(1);
        m_steps = st.envSteps;
        const double ms = msSince(t0);
        // Equity of this session's training steps; the hold env mirrors the agent's bars.
        const TradingEnvState& es = m_env->state();
        m_equityTicks += es.equityTicks - (freshEpisode ? 0.0 : m_episodeEquityTicks);
        m_episodeEquityTicks = es.equityTicks;
        const TradingEnvState& hs = m_holdEnv->state();
        if (hs.done || hs.episode != es.episode || hs.bar + 1 != es.bar) {
            TradingEnvState flat;
            flat.episode = es.episode;
            flat.bar = es.bar - 1;
            flat.done = false;
            m_holdEnv->restoreState(flat);
        }
        m_holdEquityTicks += m_holdEnv->step(m_holdEnv->actionForPosition(1)).pnlTicks;
        if (m_steps % kLiveEvery == 0) {
            emit(metrics::kEquityTicks, m_equityTicks);
            emit(metrics::kBuyHoldEquityTicks, m_holdEquityTicks);
            emit(metrics::kPosition, es.position);
        }
        blockSamples += 1;
        if (st.updates != m_lastUpdates && st.lastUpdate) sawUpdate(st.updates, *st.lastUpdate, ms);
        if (st.episodesFinished > 0) emit(metrics::kEpisodePnlTicks, st.meanEpisodePnlTicks);
        if (m_run.owner && m_steps % kLatencyEvery == 0) {
            const auto l0 = Clock::now();
            (void)m_agent->greedyAction(m_env->observation());
            sawLatency(msSince(l0));
        }
    }

    /// An update happened in this step: its losses and statistics.
    void sawUpdate(long long updates, const AgentUpdate& u, double stepMs)
    {
        m_lastUpdates = updates;
        blockUpdates += 1;
        blockAllreduceMs += u.allreduceMs;
        emit(metrics::kLoss, u.loss);
        for (const auto& [name, value] : u.figures) emit(name, value);
        emit(metrics::kGradNorm, u.gradNorm);
        emit(metrics::kLearningRate, u.learningRate);
        emit(metrics::kUpdateMs, u.stepTimeMs);
        sawLossScale(u.lossScale);
        m_skippedSteps = u.skippedSteps;
        emit(metrics::kSkippedSteps, static_cast<double>(m_skippedSteps));
        emit(metrics::kStepMs, stepMs);
    }

    ModelMemory memory() const override { return m_agent->memoryBytes(); }

    std::optional<Int8Check> checkInt8(const Int8Settings& settings) override
    {
        if (m_lastUpdates == 0) return std::nullopt; // nothing learned, no rollout to measure on yet
        // Measured on the validation split as the FP32 greedy policy walks it.
        AgentInt8Options o = settings.agentRefresh;
        const PolicyTransitions held = m_agent->heldOutTransitions(*m_run.validationEpisodes, o.samples);
        o.heldOut = &held;
        const Int8Evaluation e = m_agent->evaluateInt8(o);
        return Int8Check{e.degradation, e.served};
    }

    void evaluateInto(nlohmann::json& m, const Int8Settings& settings) override
    {
        const std::vector<int>& validation = *m_run.validationEpisodes;
        const std::vector<int>& test = *m_run.testEpisodes;
        m["training"]["updates"] = m_lastUpdates;
        m["training"]["observation_size"] = m_env->observationSize();
        m["training"]["extra_observation_size"] = m_env->options().extraObservationSize;
        m["validation"] = toJson(m_agent->evaluate(validation));
        m["test"] = toJson(m_agent->evaluate(test));
        const double scale = m_agent->agent().lossScale();
        m["validation"]["amp"] = ampDocument(scale, m_skippedSteps);
        if (!m_config.precision.int8) return;
        AgentInt8Options o = settings.agentRefresh;
        o.samples = 1024;
        o.latencyRepeats = 50;
        const PolicyTransitions held = m_agent->heldOutTransitions(validation, o.samples);
        o.heldOut = &held;
        m["validation"]["int8"] = int8Document([&] { return m_agent->evaluateInt8(o); }, o.latencyRepeats);
        // The greedy policy through the INT8 copy just checked, on the same episodes; a copy the
        // gate refused has no INT8 policy (FP32 acts for it).
        if (!m["validation"]["int8"].contains("error") && m["validation"]["int8"].value("served", false)) {
            m["validation"]["int8_policy"] = toJson(m_agent->evaluate(validation, InferenceWeights::Int8).policy);
            m["test"]["int8_policy"] = toJson(m_agent->evaluate(test, InferenceWeights::Int8).policy);
        }
    }

private:
    std::unique_ptr<TradingEnv> m_env;
    std::unique_ptr<TradingEnv> m_holdEnv; ///< the same bars held long 1 contract, for buy_hold_equity_ticks
    std::unique_ptr<AgentRunner> m_agent;
    long long m_lastUpdates = 0;     ///< updates already reported
    long long m_skippedSteps = 0;    ///< optimizer steps skipped for inf/NaN gradients so far
    double m_equityTicks = 0;        ///< cumulative training equity of this session, net of costs
    double m_holdEquityTicks = 0;    ///< the same for the hold env
    double m_episodeEquityTicks = 0; ///< env equity of the running episode at the last step
};

} // namespace

std::unique_ptr<Learner> makeAgentLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                          const AmpResolver& resolveAmp)
{
    return std::make_unique<AgentLearner>(kind, run, out, resolveAmp);
}

} // namespace foxhunt::session
