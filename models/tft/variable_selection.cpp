#include "models/tft/variable_selection.h"

#include <algorithm>
#include <cmath>

namespace foxhunt::models::tft {

VariableSelectionNetworkImpl::VariableSelectionNetworkImpl(const VariableSelectionNetworkOptions& options_)
    : options(options_)
{
    TORCH_CHECK(options.n_variables() >= 0 && options.hidden_size() > 0 && options.embedding_size() > 0,
                "VariableSelectionNetwork: sizes must be positive");
    const int64_t v = options.n_variables();
    const int64_t e = options.embedding_size();
    // Same initialisation as a Linear(1, E) per variable: U(-1, 1) for fan-in 1.
    embedding_weight = register_parameter("embedding_weight", torch::empty({std::max<int64_t>(v, 1), e}).uniform_(-1, 1));
    embedding_bias = register_parameter("embedding_bias", torch::empty({std::max<int64_t>(v, 1), e}).uniform_(-1, 1));
    variable_grns = register_module("variable_grns", torch::nn::ModuleList());
    for (int64_t i = 0; i < v; ++i)
        variable_grns->push_back(GatedResidualNetwork(
            GatedResidualNetworkOptions(e, options.hidden_size(), options.hidden_size()).dropout(options.dropout())));
    if (v > 1)
        flattened_grn = register_module(
            "flattened_grn", GatedResidualNetwork(GatedResidualNetworkOptions(v * e, std::min(options.hidden_size(), v), v)
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
    const auto table_w = q ? precision::dequantize_per_row(embedding_weight_q.q,
                                                           precision::cached_scale(embedding_weight_q, m_weight_scale_cache))
                                 .to(x.scalar_type())
                           : embedding_weight;
    const auto table_b = q ? precision::dequantize_per_row(embedding_bias_q.q,
                                                           precision::cached_scale(embedding_bias_q, m_bias_scale_cache))
                                 .to(x.scalar_type())
                           : embedding_bias;
    auto embedded = x.unsqueeze(-1) * table_w + table_b;  // [..., V, E]
    std::vector<torch::Tensor> transformed;
    transformed.reserve(static_cast<size_t>(v));
    for (int64_t i = 0; i < v; ++i)
        transformed.push_back(variable_grns->ptr<GatedResidualNetworkImpl>(static_cast<size_t>(i))
                                  ->forward(embedded.select(-2, i)));
    auto stacked = torch::stack(transformed, /*dim=*/-1);               // [..., hidden, V]
    torch::Tensor weights;
    if (v > 1) {
        auto flat_sizes = lead;
        flat_sizes.push_back(v * options.embedding_size());
        auto context_arg = options.context_size() > 0 ? context : torch::Tensor();
        weights = torch::softmax(flattened_grn(embedded.reshape(flat_sizes), context_arg), /*dim=*/-1);
    } else {
        auto w_sizes = lead;
        w_sizes.push_back(1);
        weights = torch::ones(w_sizes, x.options());
    }
    auto output = (stacked * weights.unsqueeze(-2)).sum(-1);
    return {output, weights};
}

void VariableSelectionNetworkImpl::convert_to_int8()
{
    TORCH_CHECK(!converted_to_int8(), "VariableSelectionNetwork: already converted");
    torch::NoGradGuard ng;
    embedding_weight_q = precision::register_per_row(*this, "embedding_weight", precision::quantize_per_row(embedding_weight));
    embedding_bias_q = precision::register_per_row(*this, "embedding_bias", precision::quantize_per_row(embedding_bias));
    // The inference copy keeps no float tables: drop their storage (the names stay registered).
    embedding_weight.set_data(torch::empty({0}, embedding_weight.options()));
    embedding_bias.set_data(torch::empty({0}, embedding_bias.options()));
}

} // namespace foxhunt::models::tft
