// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Hand-written float32 forward and backward of a QNetwork. The DQN update is small enough
// (a few 32x256 matmuls) that autograd's graph, its per-op allocations and its bookkeeping cost
// as much as the arithmetic; this runs the same math with addmm/mm into buffers allocated once
// per batch size and writes the parameter gradients straight into their .grad() tensors (the
// views of FlatParameters::grads), overwriting them. Autocast (AMP) is not honoured: mixed
// precision updates keep the autograd path.

#include "models/agents/q_network.h"

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace foxhunt::models {

/// Forward/backward of one QNetwork without autograd. Holds the network's parameter tensors
/// (which stay valid when flatten_parameters() or Module::load() rebinds their storage) and the
/// activations of the last forward() for backward(). Float32 on the CPU only.
class QNetworkBackprop {
public:
    /// Binds to `network` (not owned: the network must outlive this object).
    explicit QNetworkBackprop(QNetworkImpl& network);

    // x: [B, O] -> [B, A]; the result is an internal buffer, valid until the next forward()
    const torch::Tensor& forward(const torch::Tensor& x);
    /// Gradients of a loss with d loss / d Q = grad_q ([B, A], same B as the last forward()):
    /// writes (not accumulates) every parameter's .grad(), which must be defined and contiguous.
    void backward(const torch::Tensor& grad_q);
    /// Allocates the buffers for batch size `batch` now rather than in the first forward() (and,
    /// with `gradients`, the first backward()), so that a training step allocates nothing.
    void reserve(int64_t batch, bool gradients);
    /// Bytes of the activation and activation-gradient buffers allocated so far.
    std::size_t workspace_bytes() const;

private:
    struct Layer {
        torch::Tensor weight; ///< [out, in]
        torch::Tensor bias;   ///< [out]
    };
    void allocate(int64_t batch);
    void allocate_gradients();

    QNetworkImpl* m_network;
    std::vector<Layer> m_body; ///< hidden Linear layers, each followed by a ReLU
    Layer m_q_head;
    Layer m_value_head;                       ///< undefined tensors without the dueling head
    int64_t m_batch = -1;                     ///< batch size of the forward buffers
    int64_t m_grad_batch = -1;                ///< batch size of the gradient buffers (the target network needs none)
    torch::Tensor m_input;                    ///< the last forward()'s x (not copied)
    std::vector<torch::Tensor> m_hidden;      ///< [B, h_i] post-ReLU activations
    std::vector<torch::Tensor> m_grad_hidden; ///< [B, h_i] d loss / d activation, reused for the pre-ReLU gradient
    torch::Tensor m_advantage, m_value, m_mean, m_q;           ///< head outputs [B, A], [B, 1], [B, 1], [B, A]
    torch::Tensor m_grad_advantage, m_grad_value, m_grad_mean; ///< dueling head gradients [B, A], [B, 1], [B, 1]
};

} // namespace foxhunt::models
