// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/variable_selection.h"

#include <algorithm>
#include <cmath>

namespace foxhunt::models::tft {

namespace {
// Largest first-layer activation, in elements, for which the variable GRNs run grouped.
constexpr int64_t kMaxGroupedElements = int64_t{1} << 21;
} // namespace

VariableSelectionNetworkImpl::VariableSelectionNetworkImpl(const VariableSelectionNetworkOptions& options_)
    : options(options_)
{
    TORCH_CHECK(options.n_variables() >= 0 && options.hidden_size() > 0 && options.embedding_size() > 0,
                "VariableSelectionNetwork: sizes must be positive");
    const int64_t v = options.n_variables();
    const int64_t e = options.embedding_size();
    // Same initialisation as a Linear(1, E) per variable: U(-1, 1) for fan-in 1.
    embedding_weight = register_parameter("embedding_weight",
                                          torch::empty({std::max<int64_t>(v, 1), e}).uniform_(-1, 1));
    embedding_bias = register_parameter("embedding_bias", torch::empty({std::max<int64_t>(v, 1), e}).uniform_(-1, 1));
    variable_grns = register_module("variable_grns", torch::nn::ModuleList());
    for (int64_t i = 0; i < v; ++i)
        variable_grns->push_back(GatedResidualNetwork(
            GatedResidualNetworkOptions(e, options.hidden_size(), options.hidden_size()).dropout(options.dropout())));
    if (v > 1)
        flattened_grn = register_module(
            "flattened_grn",
            GatedResidualNetwork(GatedResidualNetworkOptions(v * e, std::min(options.hidden_size(), v), v)
                                     .context_size(options.context_size())
                                     .dropout(options.dropout())));
}

VariableSelectionOutput VariableSelectionNetworkImpl::forward(const torch::Tensor& x, const torch::Tensor& context)
{
    const int64_t v = options.n_variables();
    TORCH_CHECK((x.dim() == 2 || x.dim() == 3) && x.size(-1) == v, "VariableSelectionNetwork: x must be [B, ", v,
                "] or [B, T, ", v, "], got ", x.sizes());
    auto lead = x.sizes().vec();
    lead.pop_back();
    if (v == 0) {
        auto out_sizes = lead;
        out_sizes.push_back(options.hidden_size());
        return {torch::zeros(out_sizes, x.options()), x};
    }
    const bool q = converted_to_int8();
    const auto table_w = q ? precision::dequantize_per_row(
                                 embedding_weight_q.q,
                                 precision::cached_scale(embedding_weight_q, m_weight_scale_cache))
                                 .to(x.scalar_type())
                           : embedding_weight;
    const auto table_b = q ? precision::dequantize_per_row(
                                 embedding_bias_q.q, precision::cached_scale(embedding_bias_q, m_bias_scale_cache))
                                 .to(x.scalar_type())
                           : embedding_bias;
    // Variable-major layout: each GRN reads a contiguous [..., E] slice and writes a contiguous
    // [..., hidden] one, and the gradients flowing back into the GRNs are contiguous too (a
    // variable-minor stack hands every GRN's backward a stride-V view).
    auto table_shape = std::vector<int64_t>(lead.size() + 2, 1);
    table_shape.front() = v;
    table_shape.back() = options.embedding_size();
    auto per_variable = x.movedim(-1, 0).contiguous().unsqueeze(-1) * table_w.view(table_shape) +
                        table_b.view(table_shape); // [V, ..., E]
    std::vector<GatedResidualNetworkImpl*> grns;
    grns.reserve(static_cast<size_t>(v));
    for (const auto& m : *variable_grns) grns.push_back(m->as<GatedResidualNetworkImpl>());
    torch::Tensor stacked; // [V, ..., hidden]
    // Grouped products pay while the batched activations stay small (session defaults, 1920 rows x
    // 18 variables x hidden 16: train step 29-33 against 33-37 ms CPU); at the seed size (3200 rows,
    // hidden 32: 15 MB per activation) each one misses the caches and glibc maps it fresh every
    // step, measured 113-137 against 78-82 ms.
    const int64_t rows = per_variable.numel() / (v * options.embedding_size());
    if (groupable(grns) && v * rows * 2 * options.hidden_size() <= kMaxGroupedElements) {
        stacked = grouped_forward(grns, per_variable);
    } else {
        std::vector<torch::Tensor> transformed;
        transformed.reserve(grns.size());
        // unbind rather than V selects: its backward stacks the V gradients once, where each
        // select's backward writes a full [V, ..., E] zero tensor and autograd sums V of them.
        const auto inputs = per_variable.unbind(0);
        for (int64_t i = 0; i < v; ++i)
            transformed.push_back(grns[static_cast<size_t>(i)]->forward(inputs[static_cast<size_t>(i)]));
        stacked = torch::stack(transformed, /*dim=*/0);
    }
    torch::Tensor weights;
    if (v > 1) {
        auto flat_sizes = lead;
        flat_sizes.push_back(v * options.embedding_size());
        auto context_arg = options.context_size() > 0 ? context : torch::Tensor();
        auto embedded = per_variable.movedim(0, -2).reshape(flat_sizes); // [..., V * E]
        weights = torch::softmax(flattened_grn(embedded, context_arg), /*dim=*/-1);
    } else {
        auto w_sizes = lead;
        w_sizes.push_back(1);
        weights = torch::ones(w_sizes, x.options());
    }
    auto output = (stacked * weights.movedim(-1, 0).unsqueeze(-1)).sum(0);
    return {output, weights};
}

void VariableSelectionNetworkImpl::convert_to_int8()
{
    TORCH_CHECK(!converted_to_int8(), "VariableSelectionNetwork: already converted");
    torch::NoGradGuard ng;
    embedding_weight_q = precision::register_per_row(*this, "embedding_weight",
                                                     precision::quantize_per_row(embedding_weight));
    embedding_bias_q = precision::register_per_row(*this, "embedding_bias",
                                                   precision::quantize_per_row(embedding_bias));
    // The inference copy keeps no float tables: drop their storage (the names stay registered).
    embedding_weight.set_data(torch::empty({0}, embedding_weight.options()));
    embedding_bias.set_data(torch::empty({0}, embedding_bias.options()));
}

} // namespace foxhunt::models::tft
