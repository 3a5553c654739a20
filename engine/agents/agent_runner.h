// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The std-only facade a UI or CLI drives: one agent (engine/agents/agent.h: DQN
// or PPO) training on a TradingEnv over a list of episodes, cycled in order,
// with checkpoints that include the environment's position so a run resumes exactly.

#include "engine/agents/agent.h"
#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/env/evaluation.h"
#include "engine/env/trading_env.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace foxhunt {

/// What a train() call did.
struct TrainStats {
    long long envSteps = 0;                ///< total environment steps of the agent
    long long updates = 0;                 ///< total updates (DQN gradient steps / PPO rollouts learned)
    int episodesFinished = 0;              ///< episodes that ended during this call
    double meanEpisodePnlTicks = 0.0;      ///< mean net PnL of those episodes
    std::optional<AgentUpdate> lastUpdate; ///< the last update in this call
};

/// Trains one agent on an environment it does not own.
class AgentRunner {
public:
    /// Runner of `agent` over `trainingEpisodes` (all episodes when empty); the agent must have
    /// been built for `env`'s observation size and actions.
    AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, std::unique_ptr<Agent> agent);
    /// DQN runner over `trainingEpisodes` (all episodes when empty).
    AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, DqnOptions options);
    /// PPO runner over `trainingEpisodes` (all episodes when empty).
    AgentRunner(TradingEnv& env, std::vector<int> trainingEpisodes, PpoOptions options);
    ~AgentRunner();
    AgentRunner(AgentRunner&&) noexcept;

    /// The algorithm.
    AgentKind kind() const { return m_agent->kind(); }
    /// The agent.
    Agent& agent() { return *m_agent; }
    const Agent& agent() const { return *m_agent; }
    /// Runs `steps` environment steps with learning.
    TrainStats train(long long steps);
    /// The agent's deterministic action.
    int greedyAction(std::span<const float> observation) const;
    /// The agent's deterministic action through its INT8 inference copy (built on first use).
    int int8GreedyAction(std::span<const float> observation);
    /// The agent's INT8 copy against FP32 (DQN: on its replay buffer; PPO: on its last rollout);
    /// see Dqn::evaluateInt8 and Ppo::evaluateInt8 for the losses.
    Int8Evaluation evaluateInt8(const AgentInt8Options& options = {});
    /// Transitions of the FP32 greedy policy over `episodes` (at most maxSamples, spread evenly), for
    /// checks on held-out data such as evaluateInt8's (options.heldOut); the env's position is kept.
    PolicyTransitions heldOutTransitions(std::vector<int> episodes, std::size_t maxSamples);
    /// Exact bytes of the agent's parameters, gradients and optimizer state.
    ModelMemory memoryBytes() const;
    /// Bytes the FP32 policy needs to serve `batch` observations (Dqn::servingBytes, Ppo::servingBytes).
    std::size_t servingBytes(int batch) const;
    /// Evaluates the greedy policy beside the baselines (the env's training position is kept).
    /// With InferenceWeights::Int8 the policy acts through the INT8 copy the last evaluateInt8() kept
    /// (int8GreedyAction()); training always acts with FP32.
    EvaluationReport evaluate(std::vector<int> episodes, InferenceWeights weights = InferenceWeights::Fp32);
    /// Agent checkpoint plus the environment state and episode cursor, stamped with `identity`.
    void save(const std::string& path, const std::string& identity = {}) const;
    /// Restores save()'s checkpoint into this runner (same options and env inputs). Without
    /// `restoreEnvironment` only the agent is restored (weights, optimizer, RNG, buffers) and the
    /// runner keeps its own episodes and position: a data-parallel rank resuming from rank 0's checkpoint.
    /// `checkIdentity` sees the file's identity text before anything is restored and throws to refuse it.
    void load(const std::string& path, bool restoreEnvironment = true, const CheckpointCheck& checkIdentity = {});
    /// The agent as a DQN, for what only DQN has (nullptr for another algorithm).
    Dqn* dqn() { return dynamic_cast<Dqn*>(m_agent.get()); }
    /// The agent as a PPO, for what only PPO has (nullptr for another algorithm).
    Ppo* ppo() { return dynamic_cast<Ppo*>(m_agent.get()); }

private:
    TradingEnv* m_env;
    std::vector<int> m_episodes;
    std::size_t m_cursor = 0;
    std::unique_ptr<Agent> m_agent;
    double m_episodePnl = 0.0;
};

} // namespace foxhunt
