// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/agent_runner.h"

#include <numeric>
#include <sstream>
#include <stdexcept>

namespace foxhunt {

namespace {

std::vector<int> allIfEmpty(std::vector<int> episodes, const TradingEnv& env)
{
    if (episodes.empty()) {
        episodes.resize(static_cast<std::size_t>(env.episodeCount()));
        std::iota(episodes.begin(), episodes.end(), 0);
    }
    for (int e : episodes) {
        if (e < 0 || e >= env.episodeCount())
            throw std::out_of_range("agent_runner: training episode " + std::to_string(e) + " out of range");
    }
    return episodes;
}

} // namespace

AgentRunner::AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, DqnOptions options)
    : m_env(&env), m_episodes(allIfEmpty(std::move(trainingEpisodes), env)),
      m_dqn(std::make_unique<Dqn>(env.observationSize(), env.actionCount(), std::move(options)))
{
}

AgentRunner::AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, PpoOptions options)
    : m_env(&env), m_episodes(allIfEmpty(std::move(trainingEpisodes), env)),
      m_ppo(std::make_unique<Ppo>(env.observationSize(), env.actionCount(), std::move(options)))
{
}

AgentRunner::~AgentRunner() = default;
AgentRunner::AgentRunner(AgentRunner&&) noexcept = default;

TrainStats AgentRunner::train(long long steps)
{
    TrainStats stats;
    double pnlSum = 0.0;
    for (long long i = 0; i < steps; ++i) {
        if (m_env->done()) {
            m_env->reset(m_episodes[m_cursor]);
            m_cursor = (m_cursor + 1) % m_episodes.size();
            m_episodePnl = 0.0;
        }
        const std::span<const float> current = m_env->observation();
        m_observation.assign(current.begin(), current.end());
        if (m_dqn) {
            const int action = m_dqn->act(m_observation);
            const StepResult r = m_env->step(action);
            m_episodePnl += r.pnlTicks;
            if (auto u = m_dqn->observe(m_observation, action, r.reward, m_env->observation(), r.terminated, false))
                stats.dqn = u;
        } else {
            const PpoAction action = m_ppo->act(m_observation);
            const StepResult r = m_env->step(action.action);
            m_episodePnl += r.pnlTicks;
            if (m_ppo->store(m_observation, action, r.reward, r.terminated, false, m_env->observation()))
                stats.ppo = m_ppo->update(m_env->observation());
        }
        if (m_env->done()) {
            ++stats.episodesFinished;
            pnlSum += m_episodePnl;
        }
    }
    stats.envSteps = m_dqn ? m_dqn->envSteps() : m_ppo->envSteps();
    stats.updates = m_dqn ? m_dqn->updates() : m_ppo->updates();
    stats.meanEpisodePnlTicks = stats.episodesFinished > 0 ? pnlSum / stats.episodesFinished : 0.0;
    return stats;
}

int AgentRunner::greedyAction(std::span<const float> observation) const
{
    return m_dqn ? m_dqn->greedyAction(observation) : m_ppo->greedyAction(observation);
}

int AgentRunner::int8GreedyAction(std::span<const float> observation)
{
    return m_dqn ? m_dqn->int8GreedyAction(observation) : m_ppo->int8GreedyAction(observation);
}

Int8Evaluation AgentRunner::evaluateInt8(const AgentInt8Options& options)
{
    return m_dqn ? m_dqn->evaluateInt8(options) : m_ppo->evaluateInt8({}, options);
}

ModelMemory AgentRunner::memoryBytes() const
{
    return m_dqn ? m_dqn->memoryBytes() : m_ppo->memoryBytes();
}

std::size_t AgentRunner::servingBytes(int batch) const
{
    return m_dqn ? m_dqn->servingBytes(batch) : m_ppo->servingBytes(batch);
}

PolicyTransitions AgentRunner::heldOutTransitions(std::vector<int> episodes, std::size_t maxSamples)
{
    return collectTransitions(
        *m_env, [this](std::span<const float> obs) { return greedyAction(obs); }, std::move(episodes), maxSamples);
}

EvaluationReport AgentRunner::evaluate(std::vector<int> episodes, InferenceWeights weights)
{
    if (weights == InferenceWeights::Int8)
        return evaluatePolicy(
            *m_env, [this](std::span<const float> obs) { return int8GreedyAction(obs); }, std::move(episodes));
    return evaluatePolicy(
        *m_env, [this](std::span<const float> obs) { return greedyAction(obs); }, std::move(episodes));
}

void AgentRunner::save(const std::string& path, const std::string& identity) const
{
    const TradingEnvState& s = m_env->state();
    std::ostringstream out;
    out.precision(17);
    out << m_cursor << ' ' << m_episodePnl << ' ' << s.episode << ' ' << s.bar << ' ' << s.position << ' '
        << s.entryPriceTicks << ' ' << s.equityTicks << ' ' << s.tradePnlTicks << ' ' << s.dsrA << ' ' << s.dsrB << ' '
        << s.done;
    if (m_dqn) m_dqn->save(path, out.str(), identity);
    else m_ppo->save(path, out.str(), identity);
}

void AgentRunner::load(const std::string& path, bool restoreEnvironment, const CheckpointCheck& checkIdentity)
{
    const std::string data = m_dqn ? m_dqn->load(path, checkIdentity) : m_ppo->load(path, checkIdentity);
    if (!restoreEnvironment) return;
    std::istringstream in(data);
    TradingEnvState s;
    in >> m_cursor >> m_episodePnl >> s.episode >> s.bar >> s.position >> s.entryPriceTicks >> s.equityTicks >>
        s.tradePnlTicks >> s.dsrA >> s.dsrB >> s.done;
    if (!in || m_cursor >= m_episodes.size())
        throw std::runtime_error(path + ": runner state in the checkpoint is malformed");
    m_env->restoreState(s);
}

} // namespace foxhunt
