// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/interpretable_attention.h"

#include "models/tft/hashed_dropout.h"
#include "models/tft/inference_kernels.h"

#include <ATen/autocast_mode.h>

#include <cmath>
#include <limits>

namespace foxhunt::models::tft {

double lowest_finite(torch::ScalarType dtype)
{
    switch (dtype) {
    case torch::kHalf: return -65504.0;
    case torch::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest());
    case torch::kFloat: return static_cast<double>(std::numeric_limits<float>::lowest());
    case torch::kDouble: return std::numeric_limits<double>::lowest();
    default: TORCH_CHECK(false, "lowest_finite: not a floating dtype: ", dtype);
    }
    return 0.0;
}

torch::Tensor causal_mask(int64_t queries, int64_t keys, const torch::Device& device)
{
    TORCH_CHECK(queries <= keys, "causal_mask: more queries (", queries, ") than keys (", keys, ")");
    // Query i sits at absolute position keys - queries + i and may see keys up to it.
    return torch::triu(torch::ones({queries, keys}, torch::TensorOptions().dtype(torch::kBool).device(device)),
                       /*diagonal=*/keys - queries + 1);
}

InterpretableMultiHeadAttentionImpl::InterpretableMultiHeadAttentionImpl(
    const InterpretableMultiHeadAttentionOptions& options_)
    : options(options_)
{
    TORCH_CHECK(options.n_heads() > 0 && options.d_model() % options.n_heads() == 0,
                "InterpretableMultiHeadAttention: d_model (", options.d_model(), ") must be a multiple of n_heads (",
                options.n_heads(), ")");
    const int64_t d_k = options.d_model() / options.n_heads();
    q_layers = register_module("q_layers", torch::nn::ModuleList());
    k_layers = register_module("k_layers", torch::nn::ModuleList());
    for (int64_t h = 0; h < options.n_heads(); ++h) {
        q_layers->push_back(precision::QuantizableLinear(options.d_model(), d_k));
        k_layers->push_back(precision::QuantizableLinear(options.d_model(), d_k));
    }
    v_layer = register_module("v_layer", precision::QuantizableLinear(options.d_model(), d_k));
    w_h = register_module("w_h", precision::QuantizableLinear(d_k, options.d_model()));
    dropout = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

AttentionOutput InterpretableMultiHeadAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                                             const torch::Tensor& v, const torch::Tensor& mask)
{
    const int64_t d = options.d_model();
    TORCH_CHECK(q.dim() == 3 && q.size(2) == d, "InterpretableMultiHeadAttention: q must be [B, Tq, ", d, "], got ",
                q.sizes());
    TORCH_CHECK(k.dim() == 3 && k.size(2) == d && k.size(0) == q.size(0) && v.sizes() == k.sizes(),
                "InterpretableMultiHeadAttention: k and v must be [B, Tk, ", d, "], got ", k.sizes(), " and ",
                v.sizes());
    if (mask.defined())
        TORCH_CHECK(mask.dim() == 2 && mask.size(0) == q.size(1) && mask.size(1) == k.size(1) &&
                        mask.scalar_type() == torch::kBool,
                    "InterpretableMultiHeadAttention: mask must be bool [Tq, Tk], got ", mask.sizes());
    const int64_t d_k = d / options.n_heads();
    const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
    auto values = v_layer(v);
    std::vector<torch::Tensor> heads, attentions;
    // Inference on float32 CPU tensors: each head through attention_head() (bmm of 32 small
    // matrices goes entry by entry, about 3/4 of this module's time at the seed size).
    const bool kernel = !is_training() && !torch::GradMode::is_enabled() && q.device().is_cpu() &&
                        q.scalar_type() == torch::kFloat && !at::autocast::is_cpu_enabled();
    if (kernel) {
        const int64_t batch = q.size(0), tq = q.size(1), tk = k.size(1);
        const auto vc = values.to(torch::kFloat).contiguous();
        const auto m = mask.defined() ? mask.contiguous() : torch::Tensor();
        for (int64_t h = 0; h < options.n_heads(); ++h) {
            const auto qh = q_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h))
                                ->forward(q)
                                .to(torch::kFloat)
                                .contiguous();
            const auto kh = k_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h))
                                ->forward(k)
                                .to(torch::kFloat)
                                .contiguous();
            auto attn = torch::empty({batch, tq, tk}, q.options());
            auto head = torch::empty({batch, tq, d_k}, q.options());
            attention_head(qh.data_ptr<float>(), kh.data_ptr<float>(), vc.data_ptr<float>(),
                           m.defined() ? reinterpret_cast<const std::uint8_t*>(m.data_ptr<bool>()) : nullptr,
                           static_cast<float>(scale), attn.data_ptr<float>(), head.data_ptr<float>(), batch, tq, tk,
                           d_k);
            attentions.push_back(attn);
            heads.push_back(head);
        }
        auto mean_head = torch::stack(heads, /*dim=*/0).mean(0);
        return {w_h(mean_head), torch::stack(attentions, /*dim=*/1)};
    }
    for (int64_t h = 0; h < options.n_heads(); ++h) {
        auto qh = q_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h))->forward(q);
        auto kh = k_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h))->forward(k);
        auto scores = torch::matmul(qh, kh.transpose(1, 2)) * scale; // [B, Tq, Tk]
        // Lowest finite value rather than -inf or -1e9: -1e9 overflows FP16, and a row of
        // -inf would give NaN; every query sees at least its own position, so no row is empty.
        if (mask.defined()) scores = scores.masked_fill(mask, lowest_finite(scores.scalar_type()));
        auto attn = hashed_dropout(torch::softmax(scores, /*dim=*/-1), options.dropout(), dropout->is_training());
        attentions.push_back(attn);
        heads.push_back(torch::matmul(attn, values));
    }
    auto mean_head = torch::stack(heads, /*dim=*/0).mean(0);
    return {w_h(mean_head), torch::stack(attentions, /*dim=*/1)};
}

} // namespace foxhunt::models::tft
