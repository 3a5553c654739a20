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

AgentRunner::AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, std::unique_ptr<Agent> agent)
    : m_env(&env), m_episodes(allIfEmpty(std::move(trainingEpisodes), env)), m_agent(std::move(agent))
{
    if (!m_agent) throw std::invalid_argument("agent_runner: no agent");
}

AgentRunner::AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, DqnOptions options)
    : AgentRunner(env, std::move(trainingEpisodes),
                  std::make_unique<Dqn>(env.observationSize(), env.actionCount(), std::move(options)))
{
}

AgentRunner::AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, PpoOptions options)
    : AgentRunner(env, std::move(trainingEpisodes),
                  std::make_unique<Ppo>(env.observationSize(), env.actionCount(), std::move(options)))
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
        AgentStep step = m_agent->step(*m_env);
        m_episodePnl += step.result.pnlTicks;
        if (step.update) stats.lastUpdate = std::move(step.update);
        if (m_env->done()) {
            ++stats.episodesFinished;
            pnlSum += m_episodePnl;
        }
    }
    stats.envSteps = m_agent->envSteps();
    stats.updates = m_agent->updates();
    stats.meanEpisodePnlTicks = stats.episodesFinished > 0 ? pnlSum / stats.episodesFinished : 0.0;
    return stats;
}

int AgentRunner::greedyAction(std::span<const float> observation) const
{
    return m_agent->greedyAction(observation);
}

int AgentRunner::int8GreedyAction(std::span<const float> observation)
{
    return m_agent->int8GreedyAction(observation);
}

Int8Evaluation AgentRunner::evaluateInt8(const AgentInt8Options& options)
{
    return m_agent->evaluateInt8(options);
}

ModelMemory AgentRunner::memoryBytes() const
{
    return m_agent->memoryBytes();
}

std::size_t AgentRunner::servingBytes(int batch) const
{
    return m_agent->servingBytes(batch);
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
    m_agent->save(path, out.str(), identity);
}

void AgentRunner::load(const std::string& path, bool restoreEnvironment, const CheckpointCheck& checkIdentity)
{
    const std::string data = m_agent->load(path, checkIdentity);
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
