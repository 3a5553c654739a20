// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain structs the agents share for memory accounting and INT8 evaluation. Std-only.

#include "engine/env/evaluation.h"
#include "engine/precision/int8_evaluation.h"

#include <cstddef>

namespace foxhunt {

/// Exact bytes of an agent's training tensors, read from the tensors themselves.
struct AgentMemoryBytes {
    std::size_t parameterBytes = 0; ///< every parameter tensor the agent holds (DQN: online and target network)
    std::size_t gradientBytes = 0;  ///< gradient tensors currently allocated
    std::size_t optimizerBytes =
        0; ///< optimizer state tensors (Adam: exp_avg, exp_avg_sq; empty before the first step)
    /// Peak bytes of tensors allocated by the forward and backward pass of a measured update (DQN: one
    /// gradient step; PPO: one minibatch), persistent gradients and optimizer state excluded; 0 until an
    /// update was measured, and without the counting CPU allocator (models::installCountingCpuAllocator()).
    std::size_t activationBytes = 0;
    bool onCuda = false;                ///< the agent lives on a CUDA device; the two below are set
    std::size_t cudaAllocatedBytes = 0; ///< caching allocator: bytes the agent's own tensors hold now
    std::size_t cudaPeakBytes = 0;      ///< caching allocator: most bytes the agent held during its last update
};

/// How an agent's evaluateInt8() measures.
struct AgentInt8Options {
    std::size_t samples = 1024;         ///< inputs behind the losses and the action agreement
    std::size_t calibrationSamples = 0; ///< inputs for static activation ranges (0: dynamic, per batch)
    int latencyRepeats = 50;            ///< timed forward passes per batch size and model
    Int8Serving serving;                ///< kernel choice and the gate (a refused copy does not act)
    /// Held-out transitions (the validation split, by the FP32 greedy policy) to measure on instead
    /// of the agent's own training data; null: the replay buffer (DQN) or the last rollout (PPO).
    const PolicyTransitions* heldOut = nullptr;
    /// Training inputs to calibrate static ranges on instead of the replay buffer's or the rollout's
    /// (rows of the observation size; empty: the agent's own).
    std::vector<float> calibrationObservations;
};

} // namespace foxhunt
