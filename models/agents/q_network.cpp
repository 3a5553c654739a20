// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/agents/q_network.h"

namespace foxhunt::models {

QNetworkImpl::QNetworkImpl(QNetworkOptions options_) : options(std::move(options_))
{
    reset();
}

void QNetworkImpl::reset()
{
    TORCH_CHECK(options.observation_size() > 0, "QNetwork: observation_size must be positive");
    TORCH_CHECK(options.action_count() > 0, "QNetwork: action_count must be positive");
    body = torch::nn::Sequential();
    int64_t in = options.observation_size();
    for (int64_t width : options.hidden()) {
        TORCH_CHECK(width > 0, "QNetwork: hidden widths must be positive");
        body->push_back(precision::QuantizableLinear(in, width));
        body->push_back(torch::nn::ReLU());
        in = width;
    }
    register_module("body", body);
    q_head = register_module("q_head", precision::QuantizableLinear(in, options.action_count()));
    if (options.dueling()) value_head = register_module("value_head", precision::QuantizableLinear(in, 1));
    else value_head = nullptr;
}

torch::Tensor QNetworkImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() == 2 && x.size(1) == options.observation_size(), "QNetwork: expected [B, ",
                options.observation_size(), "], got ", x.sizes());
    const torch::Tensor h = body->is_empty() ? x : body->forward(x);
    if (!options.dueling()) return q_head->forward(h);
    const torch::Tensor advantage = q_head->forward(h);
    return value_head->forward(h) + advantage - advantage.mean(/*dim=*/1, /*keepdim=*/true);
}

} // namespace foxhunt::models
