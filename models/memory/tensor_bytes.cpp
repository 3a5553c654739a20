// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/memory/tensor_bytes.h"

#include <torch/optim.h>

#include <typeinfo>

namespace foxhunt::models {

std::size_t tensor_bytes(const torch::Tensor& t)
{
    return t.defined() ? static_cast<std::size_t>(t.numel()) * t.element_size() : 0;
}

std::size_t parameter_bytes(const torch::nn::Module& module)
{
    std::size_t n = 0;
    for (const auto& p : module.parameters()) n += tensor_bytes(p);
    return n;
}

std::size_t gradient_bytes(const torch::nn::Module& module)
{
    std::size_t n = 0;
    for (const auto& p : module.parameters()) n += tensor_bytes(p.grad());
    return n;
}

namespace {

std::size_t state_bytes(const torch::optim::OptimizerParamState& state)
{
    namespace o = torch::optim;
    if (const auto* s = dynamic_cast<const o::AdamParamState*>(&state))
        return tensor_bytes(s->exp_avg()) + tensor_bytes(s->exp_avg_sq()) + tensor_bytes(s->max_exp_avg_sq());
    if (const auto* s = dynamic_cast<const o::AdamWParamState*>(&state))
        return tensor_bytes(s->exp_avg()) + tensor_bytes(s->exp_avg_sq()) + tensor_bytes(s->max_exp_avg_sq());
    if (const auto* s = dynamic_cast<const o::SGDParamState*>(&state)) return tensor_bytes(s->momentum_buffer());
    if (const auto* s = dynamic_cast<const o::RMSpropParamState*>(&state))
        return tensor_bytes(s->square_avg()) + tensor_bytes(s->momentum_buffer()) + tensor_bytes(s->grad_avg());
    if (const auto* s = dynamic_cast<const o::AdagradParamState*>(&state)) return tensor_bytes(s->sum());
    if (const auto* s = dynamic_cast<const o::LBFGSParamState*>(&state)) {
        std::size_t n = tensor_bytes(s->d()) + tensor_bytes(s->H_diag()) + tensor_bytes(s->prev_flat_grad());
        for (const auto* history : {&s->old_dirs(), &s->old_stps(), &s->ro()})
            for (const auto& t : *history) n += tensor_bytes(t);
        if (s->al())
            for (const auto& t : *s->al()) n += tensor_bytes(t);
        return n;
    }
    TORCH_CHECK(false, "optimizer_state_bytes: unknown optimizer state type ", typeid(state).name());
}

} // namespace

std::size_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer)
{
    std::size_t n = 0;
    for (const auto& entry : optimizer.state()) n += state_bytes(*entry.second);
    return n;
}

} // namespace foxhunt::models
