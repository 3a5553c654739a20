// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/mamba2_forecaster.h"

namespace foxhunt::models::mamba2 {

Mamba2BlockOptions Mamba2ForecasterOptions::block_options() const
{
    return Mamba2BlockOptions(d_model())
        .d_state(d_state())
        .d_conv(d_conv())
        .expand(expand())
        .head_dim(head_dim())
        .ngroups(ngroups())
        .chunk_size(chunk_size())
        .sequential_scan(sequential_scan());
}

Mamba2ForecasterImpl::Mamba2ForecasterImpl(const Mamba2ForecasterOptions& options_) : options(options_)
{
    TORCH_CHECK(options.n_features() > 0 && options.horizon() > 0 && options.n_quantiles() > 0 &&
                    options.n_layers() > 0 && options.known_features() >= 0,
                "Mamba2Forecaster: sizes must be positive");
    input_proj = register_module("input_proj", precision::QuantizableLinear(options.n_features(), options.d_model()));
    blocks = register_module("blocks", torch::nn::ModuleList());
    norms = register_module("norms", torch::nn::ModuleList());
    for (int64_t i = 0; i < options.n_layers(); ++i) {
        norms->push_back(RmsNormGated(RmsNormGatedOptions(options.d_model()).eps(options.norm_eps())));
        blocks->push_back(Mamba2Block(options.block_options()));
    }
    norm_f = register_module("norm_f", RmsNormGated(RmsNormGatedOptions(options.d_model()).eps(options.norm_eps())));
    head = register_module(
        "head", precision::QuantizableLinear(options.d_model() + options.horizon() * options.known_features(),
                                             options.horizon() * options.n_quantiles()));
}

torch::Tensor Mamba2ForecasterImpl::head_forward(const torch::Tensor& last, const torch::Tensor& known_future)
{
    const int64_t batch = last.size(0);
    auto features = last;
    if (options.known_features() > 0) {
        TORCH_CHECK(known_future.defined() && known_future.dim() == 3 && known_future.size(0) == batch &&
                        known_future.size(1) == options.horizon() && known_future.size(2) == options.known_features(),
                    "Mamba2Forecaster: known_future must be [", batch, ", ", options.horizon(), ", ",
                    options.known_features(), "]");
        features = torch::cat({last, known_future.reshape({batch, -1})}, /*dim=*/-1);
    }
    return head(features).view({batch, options.horizon(), options.n_quantiles()});
}

torch::Tensor Mamba2ForecasterImpl::forward(const torch::Tensor& x, const torch::Tensor& known_future)
{
    TORCH_CHECK(x.dim() == 3 && x.size(2) == options.n_features() && x.size(1) > 0,
                "Mamba2Forecaster: x must be [B, T, ", options.n_features(), "], got ", x.sizes());
    auto h = input_proj(x);
    const size_t last = blocks->size() - 1;
    for (size_t i = 0; i < last; ++i) {
        auto n = norms->ptr<RmsNormGatedImpl>(i);
        auto b = blocks->ptr<Mamba2BlockImpl>(i);
        h = h + b->forward(n->forward(h));
    }
    // The head reads the last bar only, and the last block's output there needs no other bar's.
    auto n = norms->ptr<RmsNormGatedImpl>(last);
    auto b = blocks->ptr<Mamba2BlockImpl>(last);
    auto h_last = h.select(1, h.size(1) - 1) + b->forward_last(n->forward(h));
    return head_forward(norm_f(h_last), known_future);
}

Mamba2ForecasterState Mamba2ForecasterImpl::initial_state(int64_t batch) const
{
    Mamba2ForecasterState s;
    for (size_t i = 0; i < blocks->size(); ++i)
        s.layers.push_back(blocks->ptr<Mamba2BlockImpl>(i)->initial_state(batch));
    return s;
}

torch::Tensor Mamba2ForecasterImpl::step(const torch::Tensor& x, const torch::Tensor& known_future,
                                         Mamba2ForecasterState& state)
{
    TORCH_CHECK(x.dim() == 2 && x.size(1) == options.n_features(), "Mamba2Forecaster::step: x must be [B, ",
                options.n_features(), "], got ", x.sizes());
    TORCH_CHECK(state.layers.size() == blocks->size(), "Mamba2Forecaster::step: state has ", state.layers.size(),
                " layers, model has ", blocks->size());
    auto h = input_proj(x);
    for (size_t i = 0; i < blocks->size(); ++i) {
        auto n = norms->ptr<RmsNormGatedImpl>(i);
        auto b = blocks->ptr<Mamba2BlockImpl>(i);
        h = h + b->step(n->forward(h), state.layers[i]);
    }
    return head_forward(norm_f(h), known_future);
}

} // namespace foxhunt::models::mamba2
