// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/interpretable_attention.h"

#include "models/tft/gated_residual.h"
#include "models/tft/hashed_dropout.h"
#include "models/tft/inference_kernels.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
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
    // Inference on float32 CPU tensors: the heads folded (self-attention) or each through
    // attention_head() (bmm of 32 small matrices goes entry by entry, about 3/4 of this module's
    // time at the seed size).
    const bool kernel = !is_training() && !torch::GradMode::is_enabled() && q.device().is_cpu() &&
                        q.scalar_type() == torch::kFloat && !at::autocast::is_cpu_enabled();
    const bool self = k.is_same(v) || (k.data_ptr() == v.data_ptr() && k.sizes() == v.sizes() &&
                                       k.strides() == v.strides() && k.scalar_type() == v.scalar_type());
    if (kernel && self && k.device().is_cpu() && k.scalar_type() == torch::kFloat) {
        const int64_t rows = k.size(0) * k.size(1);
        if (m_recording && m_shapes.find(rows) == m_shapes.end()) {
            m_shapes[rows] = {k.size(0), q.size(1), k.size(1), mask.defined()};
            m_rows.push_back(rows);
        }
        // Folded, the value layer serves the queries' rows, not the keys': while an int8 copy's plan
        // records, it notes those too, so that its kernel is timed at both.
        if (v_layer->quantized()) v_layer->int8->note_rows(q.size(0) * q.size(1));
        if (block_kernel_for(rows) == "folded") return folded_forward(q, k, mask);
    }
    auto values = v_layer(v);
    std::vector<torch::Tensor> heads, attentions;
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

std::pair<torch::Tensor, torch::Tensor> InterpretableMultiHeadAttentionImpl::folded_queries()
{
    std::vector<const precision::QuantizableLinearImpl*> layers;
    for (const auto* list : {&q_layers, &k_layers})
        for (const auto& m : **list) layers.push_back(m->as<precision::QuantizableLinearImpl>());
    const auto sources = layer_sources(layers);
    if (m_fold.first.defined() && m_fold_stamp.matches(sources)) return m_fold;
    torch::NoGradGuard no_grad;
    const auto weight = [](const precision::QuantizableLinearImpl& l) {
        return (l.quantized() ? l.int8->dequantized_weight() : l.weight).to(torch::kFloat);
    };
    const auto bias = [](const precision::QuantizableLinearImpl& l) {
        return (l.quantized() ? l.int8->dequantized_bias() : l.bias).to(torch::kFloat);
    };
    std::vector<torch::Tensor> m, c;
    for (int64_t h = 0; h < options.n_heads(); ++h) {
        const auto& ql = *q_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h));
        const auto& kl = *k_layers->ptr<precision::QuantizableLinearImpl>(static_cast<size_t>(h));
        const auto wk_t = weight(kl).t(); // [D, d_k]
        m.push_back(wk_t.mm(weight(ql)));
        c.push_back(wk_t.mv(bias(ql)));
    }
    std::pair<torch::Tensor, torch::Tensor> fold{torch::cat(m).contiguous(), torch::cat(c).contiguous()};
    // Untrackable sources (inference tensors): folded afresh on every call.
    if (m_fold_stamp.remember(sources)) m_fold = fold;
    return fold;
}

AttentionOutput InterpretableMultiHeadAttentionImpl::folded_forward(const torch::Tensor& q, const torch::Tensor& x,
                                                                    const torch::Tensor& mask)
{
    const int64_t d = options.d_model(), heads = options.n_heads();
    const int64_t batch = q.size(0), tq = q.size(1), tk = x.size(1);
    const auto [m, c] = folded_queries();
    const auto qk = torch::addmm(c, q.reshape({batch * tq, d}), m.t()).contiguous(); // [B Tq, heads D]
    const auto xc = x.contiguous();
    const auto mc = mask.defined() ? mask.contiguous() : torch::Tensor();
    auto attn = torch::empty({batch, heads, tq, tk}, q.options());
    auto y = torch::empty({batch, tq, d}, q.options());
    const double scale = 1.0 / std::sqrt(static_cast<double>(d / heads));
    folded_attention(qk.data_ptr<float>(), xc.data_ptr<float>(),
                     mc.defined() ? reinterpret_cast<const std::uint8_t*>(mc.data_ptr<bool>()) : nullptr,
                     static_cast<float>(scale), attn.data_ptr<float>(), y.data_ptr<float>(), batch, heads, tq, tk, d);
    // The heads' mean output: the shared value layer on the mean-weighted inputs.
    return {w_h(v_layer(y)), attn};
}

void InterpretableMultiHeadAttentionImpl::set_block_recording(bool on)
{
    if (on) {
        m_shapes.clear();
        m_rows.clear();
    }
    m_recording = on;
}

std::vector<int64_t> InterpretableMultiHeadAttentionImpl::block_recorded_rows() const
{
    return m_rows;
}

void InterpretableMultiHeadAttentionImpl::set_block_plan(std::vector<std::pair<int64_t, std::string>> plan)
{
    for (const auto& [rows, kernel] : plan)
        TORCH_CHECK(kernel == "layers" || kernel == "folded", "InterpretableMultiHeadAttention: no kernel named '",
                    kernel, "'");
    m_plan = std::move(plan);
}

std::string InterpretableMultiHeadAttentionImpl::block_kernel_for(int64_t rows) const
{
    if (m_forced) return *m_forced;
    bool all_float = true;
    for (const auto* list : {&q_layers, &k_layers})
        for (const auto& m : **list) {
            const auto* l = m->as<precision::QuantizableLinearImpl>();
            if (l->observing()) return "layers"; // calibration must see every layer's input
            all_float = all_float && !l->quantized();
        }
    if (v_layer->observing()) return "layers";
    if (all_float) return "folded";
    if (m_plan.empty()) return "layers";
    return precision::nearest_by_rows(m_plan, rows, [](const auto& e) { return e.first; }).second;
}

std::vector<precision::BlockTiming> InterpretableMultiHeadAttentionImpl::time_block_kernels(int64_t rows)
{
    const auto found = m_shapes.find(rows);
    TORCH_CHECK(found != m_shapes.end(), "InterpretableMultiHeadAttention: no self-attention call of ", rows,
                " key rows was recorded");
    const CallShape& shape = found->second;
    const auto device = w_h->int8 ? w_h->int8->weight.q.device() : w_h->weight.device();
    const auto x = torch::randn({shape.batch, shape.keys, options.d_model()}, torch::TensorOptions().device(device));
    const auto q = x.narrow(1, shape.keys - shape.queries, shape.queries);
    const auto mask = shape.masked ? causal_mask(shape.queries, shape.keys, device) : torch::Tensor();
    struct Unforce {
        std::optional<std::string>& forced;
        ~Unforce() { forced.reset(); }
    } unforce{m_forced};
    return precision::time_block_candidates({"layers", "folded"}, [&](const std::string& kernel) {
        m_forced = kernel;
        return forward(q, x, x, mask).output;
    });
}

} // namespace foxhunt::models::tft
