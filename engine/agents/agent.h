// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A trading agent as the runner and the session see it (DQN, PPO): one
// environment step with learning, its greedy action in FP32 and through its
// INT8 copy, the INT8 check, memory, counters, data-parallel learning and
// checkpoints. An update reports the figures every agent has (loss, gradient
// norm, learning rate, loss scale ...) and its algorithm's own under their
// metric names, so whoever charts them needs no branch on the algorithm.
// Std-only header.

#include "engine/agents/agent_precision.h"
#include "engine/env/trading_env.h"
#include "engine/store/checkpoint_identity.h"

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace foxhunt::models::dist {
class Communicator;
}

namespace foxhunt {

/// Which algorithm an agent runs.
enum class AgentKind { Dqn, Ppo };

/// One learning update as every agent reports it.
struct AgentUpdate {
    double loss = 0.0;          ///< the objective the update minimised
    double gradNorm = 0.0;      ///< global gradient norm before clipping
    double learningRate = 0.0;  ///< the optimizer's step size
    double stepTimeMs = 0.0;    ///< wall time of the update
    double lossScale = 1.0;     ///< loss scale after it (1 without loss scaling)
    long long skippedSteps = 0; ///< optimizer steps skipped for inf/NaN gradients so far
    double allreduceMs = 0.0;   ///< data parallel: time waiting for the gradient all-reduce
    /// The algorithm's own figures by metric name (engine/telemetry/metric_registry.h), e.g.
    /// ("q_mean", ...) for DQN or ("approx_kl", ...) for PPO, in the order they are charted.
    std::vector<std::pair<std::string_view, double>> figures;

    /// The figure named `name`; NaN when the update has none.
    double figure(std::string_view name) const
    {
        for (const auto& [key, value] : figures)
            if (key == name) return value;
        return std::numeric_limits<double>::quiet_NaN();
    }
};

/// What one environment step did.
struct AgentStep {
    StepResult result;                 ///< the environment's answer to the action taken
    std::optional<AgentUpdate> update; ///< set when the agent learned in this step
};

/// A trading agent.
class Agent {
public:
    virtual ~Agent() = default;

    /// The algorithm.
    virtual AgentKind kind() const = 0;
    /// Acts on `env`'s observation (exploring as the algorithm does), steps `env` and learns when
    /// the agent's cadence says so. The episode must not be done.
    virtual AgentStep step(TradingEnv& env) = 0;
    /// The deterministic action.
    virtual int greedyAction(std::span<const float> observation) const = 0;
    /// The deterministic action through the INT8 copy (built on first use); the FP32 one when the
    /// last evaluateInt8()'s gate refused the copy.
    virtual int int8GreedyAction(std::span<const float> observation) = 0;
    /// Builds a fresh INT8 copy, chooses its kernels and compares it with FP32 (see Dqn and Ppo
    /// for the loss each measures); the copy acts for int8GreedyAction() when the gate serves it.
    virtual Int8Evaluation evaluateInt8(const AgentInt8Options& options = {}) = 0;
    /// Bytes the FP32 policy needs to serve `batch` observations.
    virtual std::size_t servingBytes(int batch) const = 0;
    /// Exact bytes of parameters, gradients and optimizer state.
    virtual ModelMemory memoryBytes() const = 0;
    /// Current loss scale (1 without loss scaling).
    virtual double lossScale() const = 0;
    /// Environment steps taken.
    virtual long long envSteps() const = 0;
    /// Updates done (DQN gradient steps, PPO rollouts learned).
    virtual long long updates() const = 0;
    /// Data-parallel learning over `communicator`'s ranks (nullptr or one rank: this process alone).
    virtual void setCommunicator(std::shared_ptr<models::dist::Communicator> communicator) = 0;
    /// Writes everything a resume needs, with `userData` and the run identity text, to `path`.
    virtual void save(const std::string& path, const std::string& userData = {},
                      const std::string& identity = {}) const = 0;
    /// Restores what save() wrote; returns its userData. `checkIdentity` may refuse the file.
    virtual std::string load(const std::string& path, const CheckpointCheck& checkIdentity = {}) = 0;
};

} // namespace foxhunt
