// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What one model holds in memory while it trains. Plain struct: the ui may include it.

#include <cstddef>

namespace foxhunt {

/// Exact tensor bytes of one model, agent or forecaster (see models/memory/memory_tracker.h for
/// what is counted; DQN's parameters are its online and target networks).
struct ModelMemory {
    std::size_t parameterBytes = 0;      ///< trainable parameters
    std::size_t gradientBytes = 0;       ///< defined gradients of the parameters
    std::size_t optimizerBytes = 0;      ///< optimizer state tensors (AdamW moments, ...)
    std::size_t activationPeakBytes = 0; ///< peak bytes above the starting level during the last
                                         ///< measured forward + backward (an agent: one update or
                                         ///< PPO minibatch, gradients and optimizer state left out);
                                         ///< 0 until measured and unless the counting CPU allocator
                                         ///< is installed (on CUDA: the caching allocator's peak
                                         ///< above the step's start)
    bool onCuda = false;                 ///< the model lives on a CUDA device; the two below are set
    std::size_t cudaAllocatedBytes = 0;  ///< caching allocator: bytes the model's own tensors hold now
    std::size_t cudaPeakBytes = 0;       ///< caching allocator: most bytes the model held during its last step
};

} // namespace foxhunt
