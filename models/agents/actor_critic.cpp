// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/agents/actor_critic.h"

#include <cmath>

namespace foxhunt::models {

namespace {

precision::QuantizableLinear orthogonalLinear(int64_t in, int64_t out, double gain)
{
    precision::QuantizableLinear layer(in, out);
    torch::NoGradGuard guard;
    torch::nn::init::orthogonal_(layer->weight, gain);
    layer->bias.zero_();
    return layer;
}

torch::nn::Sequential trunk(int64_t in, const std::vector<int64_t>& hidden)
{
    torch::nn::Sequential seq;
    for (int64_t width : hidden) {
        TORCH_CHECK(width > 0, "ActorCritic: hidden widths must be positive");
        seq->push_back(orthogonalLinear(in, width, std::sqrt(2.0)));
        seq->push_back(torch::nn::Tanh());
        in = width;
    }
    return seq;
}

} // namespace

ActorCriticImpl::ActorCriticImpl(ActorCriticOptions options_) : options(std::move(options_))
{
    reset();
}

void ActorCriticImpl::reset()
{
    TORCH_CHECK(options.observation_size() > 0, "ActorCritic: observation_size must be positive");
    TORCH_CHECK(options.action_count() > 0, "ActorCritic: action_count must be positive");
    const int64_t width = options.hidden().empty() ? options.observation_size() : options.hidden().back();
    policy_trunk = register_module("policy_trunk", trunk(options.observation_size(), options.hidden()));
    if (options.shared()) value_trunk = nullptr;
    else value_trunk = register_module("value_trunk", trunk(options.observation_size(), options.hidden()));
    policy_head = register_module("policy_head", orthogonalLinear(width, options.action_count(), 0.01));
    value_head = register_module("value_head", orthogonalLinear(width, 1, 1.0));
}

PolicyOutput ActorCriticImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.dim() == 2 && x.size(1) == options.observation_size(), "ActorCritic: expected [B, ",
                options.observation_size(), "], got ", x.sizes());
    const torch::Tensor hp = policy_trunk->is_empty() ? x : policy_trunk->forward(x);
    torch::Tensor hv = hp;
    if (!options.shared()) hv = value_trunk->is_empty() ? x : value_trunk->forward(x);
    return {policy_head->forward(hp), value_head->forward(hv).squeeze(-1)};
}

} // namespace foxhunt::models
