// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Proximal Policy Optimization (clip) for discrete actions: rollouts of
// nSteps, GAE, advantage normalisation per minibatch, clipped surrogate,
// optional value clipping, entropy bonus, several epochs of shuffled
// minibatches, global-norm clipping, and an early stop of the update once
// the approximate KL exceeds 1.5 x targetKl (as in SB3). Optional mixed
// precision (autocast forward, float64 losses, loss scaling with skipped steps)
// and an INT8 inference copy. Std-only header.

#include "engine/agents/agent.h"
#include "engine/agents/agent_precision.h"
#include "engine/store/checkpoint_identity.h"
#include "models/precision/mixed_precision.h"

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

/// PPO options; defaults follow SB3's PPO.
struct PpoOptions {
    double learningRate = 3e-4;                             ///< Adam step size
    double adamEpsilon = 1e-5;                              ///< Adam epsilon (SB3 uses 1e-5 for PPO)
    int nSteps = 2048;                                      ///< steps per rollout
    int batchSize = 64;                                     ///< minibatch size
    int nEpochs = 10;                                       ///< passes over the rollout per update
    double gamma = 0.99;                                    ///< discount
    double gaeLambda = 0.95;                                ///< GAE lambda
    double clipRange = 0.2;                                 ///< policy ratio clip
    double clipRangeVf = 0.0;                               ///< value clip around the old values (<= 0 disables)
    bool normalizeAdvantage = true;                         ///< standardise advantages per minibatch
    double entCoef = 0.0;                                   ///< entropy bonus weight
    double vfCoef = 0.5;                                    ///< value loss weight
    double maxGradNorm = 0.5;                               ///< global-norm clip (<= 0 disables)
    double targetKl = 0.0;                                  ///< early-stop threshold (<= 0 disables)
    std::vector<int> hidden{64, 64};                        ///< trunk widths (tanh)
    bool sharedNetwork = false;                             ///< one trunk for policy and value
    std::uint64_t seed = 0;                                 ///< seeds weights, action sampling and shuffling
    models::precision::MixedPrecisionConfig mixedPrecision; ///< AMP (default: FP32); validated for `device`
    std::string device = "cpu"; ///< "cpu" or "cuda:N": network, optimizer and minibatches live there
};

/// A sampled action with what PPO stores about it.
struct PpoAction {
    int action = 0;       ///< sampled action
    float value = 0.0f;   ///< V(s)
    float logProb = 0.0f; ///< log pi(action | s)
};

/// Statistics of one update (means over the minibatches that ran).
struct PpoUpdateStats {
    double policyLoss = 0.0;
    double valueLoss = 0.0;
    double entropy = 0.0;
    double approxKl = 0.0;          ///< mean of (ratio - 1) - log ratio
    double clipFraction = 0.0;      ///< share of samples with |ratio - 1| > clipRange
    double explainedVariance = 0.0; ///< 1 - Var(returns - values) / Var(returns)
    double gradNorm = 0.0;          ///< last minibatch's global norm before clipping (float64)
    double learningRate = 0.0;
    int epochs = 0;             ///< epochs completed (fewer on early stop)
    bool earlyStopped = false;  ///< KL exceeded 1.5 x targetKl
    double stepTimeMs = 0.0;    ///< wall time of the update
    long long envSteps = 0;     ///< environment steps so far
    double lossScale = 1.0;     ///< loss scale after the update (1 without loss scaling)
    long long skippedSteps = 0; ///< optimizer steps skipped for inf/NaN gradients so far
    double allreduceMs = 0.0;   ///< DD-PPO: time waiting for gradient all-reduces in this update
};

/// The PPO agent (one environment).
class Ppo final : public Agent {
public:
    /// Throws std::invalid_argument on bad options.
    Ppo(int observationSize, int actionCount, PpoOptions options = {});
    ~Ppo() override;
    Ppo(Ppo&&) noexcept;
    Ppo& operator=(Ppo&&) noexcept;

    AgentKind kind() const override { return AgentKind::Ppo; }
    /// act(), the environment's step, store() and, with a full rollout, update(): one step of
    /// learning on `env`.
    AgentStep step(TradingEnv& env) override;
    /// The last update step() or update() ran, in PPO's own terms (none yet: empty).
    const std::optional<PpoUpdateStats>& lastUpdate() const;

    /// Samples an action from the policy.
    PpoAction act(std::span<const float> observation);
    /// Most probable action.
    int greedyAction(std::span<const float> observation) const override;
    /// V(s).
    float value(std::span<const float> observation) const;
    /// Action probabilities.
    std::vector<float> probabilities(std::span<const float> observation) const;
    /// Stores a step; for a truncated episode nextObservation's value is the bootstrap.
    /// Returns true when the rollout is full and update() is due.
    bool store(std::span<const float> observation, const PpoAction& action, double reward, bool terminated,
               bool truncated, std::span<const float> nextObservation);
    /// DD-PPO over `communicator`'s ranks (nullptr or one rank: this process alone): copies rank 0's
    /// weights here; each rank then collects its own rollouts, and every minibatch's gradients are
    /// averaged over ranks, its advantages standardised over all ranks' slices and the KL early stop
    /// decided on the mean KL, so the ranks stay identical.
    void setCommunicator(std::shared_ptr<models::dist::Communicator> communicator) override;
    /// Learns from the full rollout; `nextObservation` follows its last step.
    PpoUpdateStats update(std::span<const float> nextObservation);

    /// Environment steps stored so far.
    long long envSteps() const override;
    /// Updates done.
    long long updates() const override;
    /// The options.
    const PpoOptions& options() const;
    /// Builds a fresh INT8 copy of the network (kept for int8GreedyAction) and compares it with FP32
    /// on `observations` (row-major, a multiple of the observation size; empty: the last rollout's
    /// observations, at most options.samples). Loss = policy cross-entropy against the FP32 policy
    /// plus vfCoef x squared error against the FP32 value, so the FP32 loss is the policy entropy
    /// and any excess is the INT8 copy's KL and value error. Action agreement = share of identical
    /// most-probable actions. Calibration (when asked) uses options.calibrationObservations or the
    /// first calibrationSamples rows. Kernels follow options.serving; the copy is kept for
    /// int8GreedyAction when the gate serves it. Throws std::logic_error when there are no observations.
    Int8Evaluation evaluateInt8(std::span<const float> observations, const AgentInt8Options& options = {});
    /// The same on the last rollout's observations (or options.heldOut's).
    Int8Evaluation evaluateInt8(const AgentInt8Options& options = {}) override;
    /// Most probable action through the INT8 copy (built with dynamic ranges if evaluateInt8() has not
    /// run); the FP32 one when the last evaluateInt8()'s gate refused the copy.
    int int8GreedyAction(std::span<const float> observation) override;
    /// Bytes the FP32 policy needs to serve a batch of `batch` observations: the actor-critic's
    /// weights plus the peak activation bytes of one inference forward (exact with the counting
    /// CPU allocator; the CUDA allocator's peak on a GPU; activations 0 without either).
    std::size_t servingBytes(int batch) const override;
    /// Exact bytes of parameters, gradients and Adam state.
    ModelMemory memoryBytes() const override;
    /// Current loss scale (1 without loss scaling).
    double lossScale() const override;
    /// Parameters flattened (tests).
    std::vector<float> parameters() const;

    /// Writes weights, optimizer, counters, RNG, the partial rollout, `userData` and the run identity
    /// text (CheckpointIdentity).
    void save(const std::string& path, const std::string& userData = {},
              const std::string& identity = {}) const override;
    /// Restores what save() wrote; returns its userData. `checkIdentity` sees the file's identity text before
    /// anything is restored and throws to refuse the file.
    std::string load(const std::string& path, const CheckpointCheck& checkIdentity = {}) override;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace foxhunt
