// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/agents/q_backprop.h"

namespace foxhunt::models {

namespace {

// The gradient tensor of a parameter, which backward() overwrites in place.
torch::Tensor& grad_of(torch::Tensor& parameter)
{
    torch::Tensor& g = parameter.mutable_grad();
    TORCH_CHECK(g.defined() && g.is_contiguous() && g.sizes() == parameter.sizes(),
                "QNetworkBackprop: every parameter needs a contiguous gradient of its own shape");
    return g;
}

} // namespace

QNetworkBackprop::QNetworkBackprop(QNetworkImpl& network) : m_network(&network)
{
    for (const auto& child : network.body->children()) {
        if (const auto* linear = child->as<precision::QuantizableLinearImpl>())
            m_body.push_back({linear->weight, linear->bias});
    }
    m_q_head = {network.q_head->weight, network.q_head->bias};
    if (network.options.dueling()) m_value_head = {network.value_head->weight, network.value_head->bias};
    TORCH_CHECK(static_cast<std::size_t>(m_body.size()) == network.options.hidden().size(),
                "QNetworkBackprop: the network's body is not a Linear/ReLU stack");
    for (const Layer* l : {&m_q_head, &m_value_head}) {
        TORCH_CHECK(!l->weight.defined() || (l->weight.defined() && l->bias.defined()),
                    "QNetworkBackprop: the network is quantized");
    }
}

void QNetworkBackprop::allocate(int64_t batch)
{
    const auto options = m_q_head.weight.options().requires_grad(false);
    const int64_t actions = m_network->options.action_count();
    m_hidden.clear();
    m_grad_hidden.clear(); // sized for the old batch: allocate_gradients() makes them anew
    m_grad_advantage = m_grad_value = m_grad_mean = torch::Tensor();
    m_grad_batch = -1;
    for (const Layer& l : m_body) m_hidden.push_back(torch::empty({batch, l.weight.size(0)}, options));
    m_q = torch::empty({batch, actions}, options);
    if (m_network->options.dueling()) {
        m_advantage = torch::empty({batch, actions}, options);
        m_value = torch::empty({batch, 1}, options);
        m_mean = torch::empty({batch, 1}, options);
    }
    m_batch = batch;
}

void QNetworkBackprop::allocate_gradients()
{
    const auto options = m_q_head.weight.options().requires_grad(false);
    const int64_t actions = m_network->options.action_count();
    m_grad_hidden.clear();
    for (const Layer& l : m_body) m_grad_hidden.push_back(torch::empty({m_batch, l.weight.size(0)}, options));
    if (m_network->options.dueling()) {
        m_grad_advantage = torch::empty({m_batch, actions}, options);
        m_grad_value = torch::empty({m_batch, 1}, options);
        m_grad_mean = torch::empty({m_batch, 1}, options);
    }
    m_grad_batch = m_batch;
}

void QNetworkBackprop::reserve(int64_t batch, bool gradients)
{
    TORCH_CHECK(batch > 0, "QNetworkBackprop: batch must be positive");
    if (batch != m_batch) allocate(batch);
    if (gradients && m_grad_batch != m_batch) allocate_gradients();
}

std::size_t QNetworkBackprop::workspace_bytes() const
{
    std::size_t bytes = 0;
    const auto add = [&bytes](const torch::Tensor& t) {
        if (t.defined()) bytes += static_cast<std::size_t>(t.nbytes());
    };
    for (const torch::Tensor& t : m_hidden) add(t);
    for (const torch::Tensor& t : m_grad_hidden) add(t);
    for (const torch::Tensor* t : {&m_advantage, &m_value, &m_mean, &m_q}) add(*t);
    for (const torch::Tensor* t : {&m_grad_advantage, &m_grad_value, &m_grad_mean}) add(*t);
    return bytes;
}

const torch::Tensor& QNetworkBackprop::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() == 2 && x.size(1) == m_network->options.observation_size() && x.size(0) > 0,
                "QNetworkBackprop: expected [B, ", m_network->options.observation_size(), "], got ", x.sizes());
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.device().is_cpu() && m_q_head.weight.device().is_cpu(),
                "QNetworkBackprop: float32 CPU tensors only");
    torch::NoGradGuard no_grad;
    if (x.size(0) != m_batch) allocate(x.size(0));
    m_input = x;
    const torch::Tensor* h = &x;
    for (std::size_t i = 0; i < m_body.size(); ++i) {
        // Linear as torch::nn::functional::linear computes it for 2-D input: addmm(b, x, W^T).
        at::addmm_out(m_hidden[i], m_body[i].bias, *h, m_body[i].weight.t());
        m_hidden[i].relu_();
        h = &m_hidden[i];
    }
    if (!m_network->options.dueling()) {
        at::addmm_out(m_q, m_q_head.bias, *h, m_q_head.weight.t());
        return m_q;
    }
    at::addmm_out(m_advantage, m_q_head.bias, *h, m_q_head.weight.t());
    at::addmm_out(m_value, m_value_head.bias, *h, m_value_head.weight.t());
    at::mean_out(m_mean, m_advantage, {1}, /*keepdim=*/true);
    // In QNetworkImpl::forward's order: (V + A) - mean(A).
    at::add_out(m_q, m_value, m_advantage);
    m_q.sub_(m_mean);
    return m_q;
}

void QNetworkBackprop::backward(const torch::Tensor& grad_q)
{
    TORCH_CHECK(m_batch > 0, "QNetworkBackprop: backward() before forward()");
    TORCH_CHECK(grad_q.dim() == 2 && grad_q.size(0) == m_batch && grad_q.size(1) == m_network->options.action_count() &&
                    grad_q.scalar_type() == torch::kFloat32,
                "QNetworkBackprop: grad_q must be float32 [", m_batch, ", ", m_network->options.action_count(),
                "], got ", grad_q.sizes());
    torch::NoGradGuard no_grad;
    if (m_grad_batch != m_batch) allocate_gradients();
    const torch::Tensor& features = m_body.empty() ? m_input : m_hidden.back();
    const torch::Tensor* grad_head = &grad_q;
    const bool dueling = m_network->options.dueling();
    if (dueling) {
        // Q = V + A - mean_j A_j: dV = sum_j dQ_j, dA = dQ - mean_j dQ_j.
        at::sum_out(m_grad_value, grad_q, {1}, /*keepdim=*/true);
        at::mean_out(m_grad_mean, grad_q, {1}, /*keepdim=*/true);
        at::sub_out(m_grad_advantage, grad_q, m_grad_mean);
        grad_head = &m_grad_advantage;
        at::mm_out(grad_of(m_value_head.weight), m_grad_value.t(), features);
        at::sum_out(grad_of(m_value_head.bias), m_grad_value, {0});
    }
    at::mm_out(grad_of(m_q_head.weight), grad_head->t(), features);
    at::sum_out(grad_of(m_q_head.bias), *grad_head, {0});
    if (m_body.empty()) return;
    at::mm_out(m_grad_hidden.back(), *grad_head, m_q_head.weight);
    if (dueling) m_grad_hidden.back().addmm_(m_grad_value, m_value_head.weight);
    for (std::size_t k = m_body.size(); k-- > 0;) {
        torch::Tensor& grad = m_grad_hidden[k];
        // ReLU backward from its output, as autograd does: zero where the activation is 0.
        at::threshold_backward_out(grad, grad, m_hidden[k], /*threshold=*/0);
        const torch::Tensor& input = k == 0 ? m_input : m_hidden[k - 1];
        at::mm_out(grad_of(m_body[k].weight), grad.t(), input);
        at::sum_out(grad_of(m_body[k].bias), grad, {0});
        if (k > 0) at::mm_out(m_grad_hidden[k - 1], grad, m_body[k].weight);
    }
}

} // namespace foxhunt::models
