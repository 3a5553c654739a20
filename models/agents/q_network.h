#pragma once
// The DQN value network: an MLP from observation to one Q value per action,
// with an optional dueling head (V + A - mean A).

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace foxhunt::models {

/// Options of QNetwork.
struct QNetworkOptions {
    QNetworkOptions(int64_t observation_size, int64_t action_count)
        : observation_size_(observation_size), action_count_(action_count) {}
    /// Length of the observation vector.
    TORCH_ARG(int64_t, observation_size);
    /// Number of discrete actions.
    TORCH_ARG(int64_t, action_count);
    /// Hidden layer widths (ReLU between them); SB3's DQN default is 64, 64.
    TORCH_ARG(std::vector<int64_t>, hidden) = std::vector<int64_t>{64, 64};
    /// Split the last layer into a state value and action advantages.
    TORCH_ARG(bool, dueling) = false;
};

/// MLP Q network; Cloneable so that the target network is a deep copy.
class QNetworkImpl : public torch::nn::Cloneable<QNetworkImpl> {
public:
    explicit QNetworkImpl(QNetworkOptions options);
    /// Creates and registers the layers (called by the constructor and clone()).
    void reset() override;
    // x: [B, O] -> [B, A]
    torch::Tensor forward(const torch::Tensor& x);

    /// The options the network was built with.
    QNetworkOptions options;
    torch::nn::Sequential body{nullptr};
    torch::nn::Linear q_head{nullptr};
    torch::nn::Linear value_head{nullptr};
};
TORCH_MODULE(QNetwork);

} // namespace foxhunt::models
