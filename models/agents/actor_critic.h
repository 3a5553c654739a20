// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PPO's actor-critic: categorical policy logits and a state value, from one
// shared MLP trunk or two separate ones (SB3's default is separate, tanh).

#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace foxhunt::models {

/// Options of ActorCritic.
struct ActorCriticOptions {
    ActorCriticOptions(int64_t observation_size, int64_t action_count)
        : observation_size_(observation_size), action_count_(action_count)
    {
    }
    /// Length of the observation vector.
    TORCH_ARG(int64_t, observation_size);
    /// Number of discrete actions.
    TORCH_ARG(int64_t, action_count);
    /// Hidden widths of each trunk.
    TORCH_ARG(std::vector<int64_t>, hidden) = std::vector<int64_t>{64, 64};
    /// One trunk for policy and value instead of two.
    TORCH_ARG(bool, shared) = false;
};

/// Policy logits and state value of a batch of observations.
struct PolicyOutput {
    torch::Tensor logits; ///< [B, A]
    torch::Tensor value;  ///< [B]
};

/// Actor-critic MLP with orthogonal initialisation (gain sqrt 2 in the
/// trunks, 0.01 for the policy head, 1 for the value head), as in SB3. Layers are
/// QuantizableLinear, so precision::quantize_for_inference() can build an int8 copy.
class ActorCriticImpl : public torch::nn::Module {
public:
    explicit ActorCriticImpl(ActorCriticOptions options);
    /// Creates and registers the layers.
    void reset();
    // x: [B, O] -> logits [B, A], value [B]
    PolicyOutput forward(const torch::Tensor& x);

    /// The options the network was built with.
    ActorCriticOptions options;
    torch::nn::Sequential policy_trunk{nullptr};
    torch::nn::Sequential value_trunk{nullptr};
    precision::QuantizableLinear policy_head{nullptr};
    precision::QuantizableLinear value_head{nullptr};
};
TORCH_MODULE(ActorCritic);

} // namespace foxhunt::models
