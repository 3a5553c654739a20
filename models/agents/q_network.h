// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The DQN value network: an MLP from observation to one Q value per action,
// with an optional dueling head (V + A - mean A). Its layers are QuantizableLinear
// (torch::nn::Linear's names and initialisation), so precision::quantize_for_inference()
// can build an int8 inference copy.

#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace foxhunt::models {

/// Options of QNetwork.
struct QNetworkOptions {
    QNetworkOptions(int64_t observation_size, int64_t action_count)
        : observation_size_(observation_size), action_count_(action_count)
    {
    }
    /// Length of the observation vector.
    TORCH_ARG(int64_t, observation_size);
    /// Number of discrete actions.
    TORCH_ARG(int64_t, action_count);
    /// Hidden layer widths (ReLU between them); SB3's DQN default is 64, 64.
    TORCH_ARG(std::vector<int64_t>, hidden) = std::vector<int64_t>{64, 64};
    /// Split the last layer into a state value and action advantages.
    TORCH_ARG(bool, dueling) = false;
};

/// MLP Q network. A copy (the target network) is built from `options` and filled with
/// precision::copy_state().
class QNetworkImpl : public torch::nn::Module {
public:
    explicit QNetworkImpl(QNetworkOptions options);
    /// Creates and registers the layers.
    void reset();
    // x: [B, O] -> [B, A]
    torch::Tensor forward(const torch::Tensor& x);

    /// The options the network was built with.
    QNetworkOptions options;
    torch::nn::Sequential body{nullptr};
    precision::QuantizableLinear q_head{nullptr};
    precision::QuantizableLinear value_head{nullptr};
};
TORCH_MODULE(QNetwork);

} // namespace foxhunt::models
