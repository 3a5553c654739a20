// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain structs the agents share for INT8 evaluation (their memory is a ModelMemory). Std-only.

#include "engine/env/evaluation.h"
#include "engine/precision/int8_evaluation.h"
#include "engine/telemetry/model_memory.h"

#include <cstddef>

namespace foxhunt {

/// How an agent's evaluateInt8() measures.
struct AgentInt8Options : Int8EvaluationOptions {
    std::size_t samples = 1024; ///< inputs behind the losses and the action agreement
    /// Held-out transitions (the validation split, by the FP32 greedy policy) to measure on instead
    /// of the agent's own training data; null: the replay buffer (DQN) or the last rollout (PPO).
    const PolicyTransitions* heldOut = nullptr;
    /// Training inputs to calibrate static ranges on instead of the replay buffer's or the rollout's
    /// (rows of the observation size; empty: the agent's own).
    std::vector<float> calibrationObservations;
};

} // namespace foxhunt
