// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Double DQN (van Hasselt et al.) with a target network, optional dueling
// head, Huber loss, Adam, global-norm gradient clipping, uniform or
// prioritized replay and n-step returns. The learning cadence follows
// Stable-Baselines3: random actions before learningStarts, then after every
// trainFreq environment steps run gradientSteps updates; the target network
// is updated (Polyak tau; tau = 1 is a hard copy) every targetUpdateInterval
// environment steps. Parameters, gradients and Adam state each live in one
// flat buffer, so an update's optimizer, clipping and target work is a few
// ops over one tensor. Optional mixed precision (autocast forward, float64
// loss, loss scaling with skipped steps) and an INT8 inference copy.
// Std-only header (pimpl): LibTorch stays in the .cpp.

#include "engine/agents/agent.h"
#include "engine/agents/agent_precision.h"
#include "engine/store/checkpoint_identity.h"
#include "models/precision/mixed_precision.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace foxhunt::models::dist {
class Communicator;
}

namespace foxhunt {

/// How a DQN update computes its gradients.
enum class DqnGradients {
    HandWritten, ///< hand-written backward of the Q MLP (FP32; mixed precision falls back to autograd)
    Autograd,    ///< LibTorch autograd
};

/// DQN options; defaults follow SB3's DQN.
struct DqnOptions {
    double learningRate = 1e-4;              ///< Adam step size
    double adamEpsilon = 1e-8;               ///< Adam epsilon
    std::size_t bufferSize = 1'000'000;      ///< replay capacity (transitions)
    long long learningStarts = 100;          ///< env steps of random actions before learning
    int batchSize = 32;                      ///< transitions per gradient step
    double tau = 1.0;                        ///< target update coefficient (1 = hard copy)
    double gamma = 0.99;                     ///< discount
    int trainFreq = 4;                       ///< env steps between training rounds
    int gradientSteps = 1;                   ///< gradient steps per round
    long long targetUpdateInterval = 10'000; ///< env steps between target updates
    long long totalTimesteps = 100'000;      ///< horizon for the exploration and beta schedules
    double explorationFraction = 0.1;        ///< share of totalTimesteps over which epsilon decays
    double explorationInitialEps = 1.0;      ///< epsilon at step 0
    double explorationFinalEps = 0.05;       ///< epsilon after the decay
    double maxGradNorm = 10.0;               ///< global-norm clip (<= 0 disables)
    double huberDelta = 1.0;                 ///< Huber loss threshold
    std::vector<int> hidden{64, 64};         ///< Q-network hidden widths
    bool dueling = false;                    ///< dueling head
    bool doubleQ = true;                     ///< Double DQN target (false: max over the target net)
    int nSteps = 1;                          ///< n-step returns
    bool prioritized = false;                ///< prioritized replay instead of uniform
    double priorityAlpha = 0.6;              ///< PER priority exponent
    double priorityBeta0 = 0.4;              ///< PER beta at step 0, annealed linearly to 1 at totalTimesteps
    double priorityEpsilon = 1e-6;           ///< PER priority floor
    std::uint64_t seed = 0;                  ///< seeds weights, exploration and sampling
    models::precision::MixedPrecisionConfig mixedPrecision; ///< AMP (default: FP32); validated for `device`
    DqnGradients gradients = DqnGradients::HandWritten;     ///< same math either way; hand-written is faster (CPU only)
    std::string device = "cpu"; ///< "cpu" or "cuda:N": networks, optimizer and batches live there
};

/// Statistics of one gradient step (the last one of a round when returned by observe()).
struct DqnUpdateStats {
    double loss = 0.0;          ///< (weighted) Huber loss
    double qMean = 0.0;         ///< mean Q(s, a) of the batch
    double gradNorm = 0.0;      ///< global gradient norm before clipping (float64)
    double epsilon = 0.0;       ///< exploration rate at this step
    double learningRate = 0.0;  ///< Adam step size
    double tdErrorMean = 0.0;   ///< mean |Q(s, a) - target|
    double stepTimeMs = 0.0;    ///< wall time of the update
    long long envSteps = 0;     ///< environment steps so far
    long long updates = 0;      ///< gradient steps so far
    double lossScale = 1.0;     ///< loss scale after this step (1 without loss scaling)
    bool skipped = false;       ///< the optimizer step was skipped: inf/NaN gradients
    long long skippedSteps = 0; ///< optimizer steps skipped so far
    double allreduceMs = 0.0;   ///< data-parallel learners: time waiting for the gradient all-reduce
};

/// The DQN agent.
class Dqn final : public Agent {
public:
    /// Builds the networks and the buffer. Throws std::invalid_argument on bad options.
    Dqn(int observationSize, int actionCount, DqnOptions options = {});
    ~Dqn() override;
    Dqn(Dqn&&) noexcept;
    Dqn& operator=(Dqn&&) noexcept;

    AgentKind kind() const override { return AgentKind::Dqn; }
    /// act(), the environment's step, observe(): one step of learning on `env`.
    AgentStep step(TradingEnv& env) override;
    /// The last update step() or observe() ran, in DQN's own terms (none yet: empty).
    const std::optional<DqnUpdateStats>& lastUpdate() const;

    /// Epsilon-greedy action for the current step (uniformly random before learningStarts).
    int act(std::span<const float> observation);
    /// Greedy action.
    int greedyAction(std::span<const float> observation) const override;
    /// Q values of one observation.
    std::vector<float> qValues(std::span<const float> observation) const;
    /// Records a step; trains when the cadence says so and returns the last update's stats then.
    std::optional<DqnUpdateStats> observe(std::span<const float> observation, int action, double reward,
                                          std::span<const float> nextObservation, bool terminated, bool truncated);
    /// One gradient step on a sampled batch (the buffer must not be empty).
    DqnUpdateStats update();
    /// Data-parallel learners over `communicator`'s ranks (nullptr or one rank: this process alone):
    /// copies rank 0's online and target weights here; each rank then acts on its own days and
    /// learns from its own replay, and every update averages the gradients over ranks, so the
    /// networks stay identical.
    void setCommunicator(std::shared_ptr<models::dist::Communicator> communicator) override;
    /// Applies the target update now (tau from the options).
    void updateTarget();

    /// Current exploration rate.
    double epsilon() const;
    /// Environment steps observed.
    long long envSteps() const override;
    /// Gradient steps taken.
    long long updates() const override;
    /// Transitions in the replay buffer.
    std::size_t bufferSize() const;
    /// The options.
    const DqnOptions& options() const;
    /// Builds a fresh INT8 copy of the online network, chooses its kernels (options.serving) and
    /// compares it with FP32 on the first `samples` of options.heldOut (the validation split) or,
    /// without it, of the replay buffer: loss = one-step Huber TD loss against targets computed once
    /// by the FP32 online and target networks, action agreement = share of identical greedy
    /// actions; latency at batch 1 and 32. Calibration (when asked) uses calibrationObservations or
    /// the last calibrationSamples stored transitions. The copy is kept for int8GreedyAction when the
    /// gate serves it. Throws std::logic_error with no data to measure on.
    Int8Evaluation evaluateInt8(const AgentInt8Options& options = {}) override;
    /// Greedy action through the INT8 copy (built with dynamic ranges if evaluateInt8() has not run);
    /// the FP32 greedy action when the last evaluateInt8()'s gate refused the copy.
    int int8GreedyAction(std::span<const float> observation) override;
    /// Bytes the FP32 policy needs to serve a batch of `batch` observations: the online network's
    /// weights plus the peak activation bytes of one inference forward (exact with the counting
    /// CPU allocator; the CUDA allocator's peak on a GPU; activations 0 without either).
    std::size_t servingBytes(int batch) const override;
    /// Exact bytes of parameters (online and target), gradients and Adam state.
    ModelMemory memoryBytes() const override;
    /// Current loss scale (1 without loss scaling).
    double lossScale() const override;
    /// Online and target parameters flattened (for tests and checksums).
    std::vector<float> onlineParameters() const;
    std::vector<float> targetParameters() const;

    /// Writes weights, optimizer, loss scaler, counters, RNG, replay contents, `userData` and the
    /// run identity text (CheckpointIdentity) to `path`. Throws std::runtime_error naming the path on failure.
    void save(const std::string& path, const std::string& userData = {},
              const std::string& identity = {}) const override;
    /// Restores everything save() wrote; returns its userData. Options must match. `checkIdentity` sees the
    /// file's identity text before anything is restored and throws to refuse the file.
    std::string load(const std::string& path, const CheckpointCheck& checkIdentity = {}) override;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace foxhunt
