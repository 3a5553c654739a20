// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/gated_residual.h"

#include "models/tft/hashed_dropout.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <functional>

namespace foxhunt::models::tft {

torch::Tensor float_weight_of(precision::QuantizableLinear& layer)
{
    return layer->quantized() ? layer->int8->dequantized_weight() : layer->weight;
}

torch::Tensor float_bias_of(precision::QuantizableLinear& layer)
{
    return layer->quantized() ? layer->int8->dequantized_bias() : layer->bias;
}

void FusedFloatBlock::set_block_recording(bool on)
{
    if (on) m_rows.clear();
    m_recording = on;
}

void FusedFloatBlock::note_block_rows(int64_t rows)
{
    if (m_recording && std::find(m_rows.begin(), m_rows.end(), rows) == m_rows.end()) m_rows.push_back(rows);
}

void FusedFloatBlock::set_block_plan(std::vector<std::pair<int64_t, std::string>> plan)
{
    for (const auto& [rows, kernel] : plan)
        TORCH_CHECK(kernel == "layers" || kernel == "fused-fp32" || kernel == "fused-int8",
                    "FusedFloatBlock: no kernel named '", kernel, "'");
    m_plan = std::move(plan);
}

std::string FusedFloatBlock::block_kernel_for(int64_t rows) const
{
    if (m_forced) return *m_forced;
    bool all_float = true, all_int8 = true;
    for (const auto* layer : block_layers()) {
        if (!*layer) continue;
        if ((*layer)->observing()) return "layers"; // calibration must see every layer's input
        all_float = all_float && !(*layer)->quantized();
        all_int8 = all_int8 && (*layer)->quantized();
    }
    if (all_float) return "fused-fp32";
    if (!all_int8 || m_plan.empty()) return "layers";
    const std::string& kernel = precision::nearest_by_rows(m_plan, rows, [](const auto& e) { return e.first; }).second;
    // A plan made where VNNI was (or by hand) falls back to the float kernel on a CPU without it.
    if (kernel == "fused-int8" && !int8_fusable()) return "fused-fp32";
    return kernel;
}

bool FusedFloatBlock::int8_fusable() const
{
    for (const auto* layer : block_layers())
        if (*layer && !(*layer)->quantized()) return false;
    const auto [in, hidden, out] = block_widths();
    return fused_grn_int8_supports(in, hidden, out);
}

std::vector<torch::Tensor> layer_sources(const std::vector<const precision::QuantizableLinearImpl*>& layers)
{
    std::vector<torch::Tensor> all;
    for (const auto* l : layers) {
        if (l->quantized()) {
            const auto& q = *l->int8;
            all.insert(all.end(), {q.weight.q, q.weight.scale_code, q.weight.scale_max, q.bias.q, q.bias.scale});
        } else {
            all.insert(all.end(), {l->weight, l->bias});
        }
    }
    return all;
}

FusedDenseGrn::Int8Rows int8_rows_of(precision::QuantizableLinear& layer)
{
    const auto& w = layer->int8->weight;
    FusedDenseGrn::Int8Rows r;
    const auto q = w.q.contiguous();
    r.q.assign(q.data_ptr<std::int8_t>(), q.data_ptr<std::int8_t>() + q.numel());
    const auto scale = w.scale().to(torch::kFloat).contiguous();
    r.scale.assign(scale.data_ptr<float>(), scale.data_ptr<float>() + scale.numel());
    const auto zero = (q.to(torch::kInt).sum(1) * 128).to(torch::kInt).contiguous();
    r.zero.assign(zero.data_ptr<std::int32_t>(), zero.data_ptr<std::int32_t>() + zero.numel());
    return r;
}

std::vector<precision::BlockTiming> FusedFloatBlock::time_layers_and_fused(const std::function<torch::Tensor()>& run)
{
    struct Unforce {
        std::optional<std::string>& forced;
        ~Unforce() { forced.reset(); }
    } unforce{m_forced};
    std::vector<std::string> kernels{"layers", "fused-fp32"};
    if (int8_fusable()) kernels.push_back("fused-int8");
    return precision::time_block_candidates(kernels, [&](const std::string& kernel) {
        m_forced = kernel;
        return run();
    });
}

const FusedDenseGrn& FusedFloatBlock::packed(const std::string& kernel, const std::vector<torch::Tensor>& sources,
                                             const std::function<FusedDenseGrn()>& make)
{
    Pack& p = kernel == "fused-int8" ? m_int8_pack : m_float_pack;
    if (p.made && p.stamp.matches(sources)) return p.grn;
    torch::NoGradGuard no_grad;
    p.grn = make();
    // Untrackable sources (inference tensors): packed afresh on every call.
    p.made = p.stamp.remember(sources);
    return p.grn;
}

namespace {

std::vector<float> floats(const torch::Tensor& t)
{
    const auto c = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// The tensors a fused pack is made from: its layers' (layer_sources()), then the norm's affine.
std::vector<torch::Tensor> pack_sources(std::initializer_list<const precision::QuantizableLinear*> layers,
                                        const torch::nn::LayerNorm& norm)
{
    std::vector<const precision::QuantizableLinearImpl*> set;
    for (const auto* l : layers)
        if (*l) set.push_back(l->get());
    std::vector<torch::Tensor> all = layer_sources(set);
    all.insert(all.end(), {norm->weight, norm->bias});
    return all;
}

// Whether an input may take the fused kernel: inference on float32 CPU tensors, no autocast.
bool fusable_input(const torch::nn::Module& m, const torch::Tensor& x)
{
    return !m.is_training() && !torch::GradMode::is_enabled() && x.device().is_cpu() &&
           x.scalar_type() == torch::kFloat && !at::autocast::is_cpu_enabled();
}

} // namespace

GatedLinearUnitImpl::GatedLinearUnitImpl(const GatedLinearUnitOptions& options_) : options(options_)
{
    TORCH_CHECK(options.input_size() > 0 && options.output_size() > 0, "GatedLinearUnit: sizes must be positive");
    dropout = register_module("dropout", torch::nn::Dropout(options.dropout()));
    fc = register_module("fc", precision::QuantizableLinear(options.input_size(), 2 * options.output_size()));
}

torch::Tensor GatedLinearUnitImpl::forward(const torch::Tensor& x)
{
    TORCH_CHECK(x.size(-1) == options.input_size(), "GatedLinearUnit: last dim must be ", options.input_size(),
                ", got ", x.sizes());
    return torch::glu(fc(hashed_dropout(x, options.dropout(), dropout->is_training())), /*dim=*/-1);
}

GateAddNormImpl::GateAddNormImpl(const GateAddNormOptions& options_) : options(options_)
{
    glu = register_module(
        "glu", GatedLinearUnit(
                   GatedLinearUnitOptions(options.input_size(), options.output_size()).dropout(options.dropout())));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.output_size()})));
}

torch::Tensor GateAddNormImpl::forward(const torch::Tensor& x, const torch::Tensor& skip)
{
    TORCH_CHECK(skip.size(-1) == options.output_size(), "GateAddNorm: skip must end in ", options.output_size(),
                ", got ", skip.sizes());
    const int64_t in = options.input_size(), out = options.output_size();
    if (options.fused_inference() && x.size(-1) == in) {
        const int64_t rows = x.numel() / in;
        note_block_rows(rows);
        auto sizes = x.sizes().vec();
        sizes.back() = out;
        // The skip of the output's own shape (the layers would broadcast any other).
        const std::string kernel = rows > 0 && fusable_input(*this, x) && skip.scalar_type() == torch::kFloat &&
                                           skip.sizes() == sizes && fused_grn_supports(in, 0, out)
                                       ? block_kernel_for(rows)
                                       : std::string("layers");
        if (kernel != "layers") {
            const bool int8 = kernel == "fused-int8";
            const FusedDenseGrn& d = packed(kernel, pack_sources({&glu->fc}, norm), [&] {
                FusedDenseGrn g;
                g.in = in;
                g.out = out;
                g.eps = static_cast<float>(norm->options.eps());
                if (int8) {
                    g.qg = int8_rows_of(glu->fc);
                } else {
                    g.wg = floats(float_weight_of(glu->fc));
                }
                g.bg = floats(float_bias_of(glu->fc));
                g.gamma = floats(norm->weight);
                g.beta = floats(norm->bias);
                return g;
            });
            const auto xc = x.contiguous();
            const auto residual = skip.contiguous();
            auto y = torch::empty(sizes, x.options());
            fused_grn(d, xc.data_ptr<float>(), nullptr, 1, residual.data_ptr<float>(), y.data_ptr<float>(), rows);
            return y;
        }
    }
    // LayerNorm in the weights' type: under CPU autocast (1.13) glu(x) is BF16, and layer_norm
    // neither autocasts nor accepts mixed types there; norms belong in FP32 anyway.
    return norm((glu(x) + skip).to(norm->weight.scalar_type()));
}

std::vector<precision::BlockTiming> GateAddNormImpl::time_block_kernels(int64_t rows)
{
    TORCH_CHECK(rows > 0, "GateAddNorm: rows must be positive");
    const auto o = torch::TensorOptions().device(norm->weight.device());
    const auto x = torch::randn({rows, options.input_size()}, o);
    const auto skip = torch::randn({rows, options.output_size()}, o);
    return time_layers_and_fused([&] { return forward(x, skip); });
}

GatedResidualNetworkImpl::GatedResidualNetworkImpl(const GatedResidualNetworkOptions& options_) : options(options_)
{
    TORCH_CHECK(options.input_size() > 0 && options.hidden_size() > 0 && options.output_size() > 0 &&
                    options.context_size() >= 0,
                "GatedResidualNetwork: sizes must be positive");
    if (options.input_size() != options.output_size())
        skip = register_module("skip", precision::QuantizableLinear(options.input_size(), options.output_size()));
    fc1 = register_module("fc1", precision::QuantizableLinear(options.input_size(), options.hidden_size()));
    if (options.context_size() > 0)
        context_proj = register_module(
            "context_proj", precision::QuantizableLinear(
                                torch::nn::LinearOptions(options.context_size(), options.hidden_size()).bias(false)));
    fc2 = register_module("fc2", precision::QuantizableLinear(options.hidden_size(), options.hidden_size()));
    // The GRN fuses its gate itself.
    gate_norm = register_module("gate_norm",
                                GateAddNorm(GateAddNormOptions(options.hidden_size(), options.output_size())
                                                .dropout(options.dropout())
                                                .fused_inference(false)));
}

torch::Tensor GatedResidualNetworkImpl::forward(const torch::Tensor& x, const torch::Tensor& context)
{
    TORCH_CHECK(x.size(-1) == options.input_size(), "GatedResidualNetwork: last dim must be ", options.input_size(),
                ", got ", x.sizes());
    const int64_t in = options.input_size(), hidden = options.hidden_size(), out = options.output_size();
    if (options.fused_inference()) {
        const int64_t rows = x.numel() / in;
        note_block_rows(rows);
        const bool context_fits = !context.defined() ||
                                  (context_proj && context.dim() == 2 && x.dim() >= 2 && context.size(0) == x.size(0) &&
                                   context.size(0) > 0 && context.size(1) == options.context_size());
        const std::string kernel = rows > 0 && fusable_input(*this, x) && context_fits &&
                                           fused_grn_supports(in, hidden, out)
                                       ? block_kernel_for(rows)
                                       : std::string("layers");
        if (kernel != "layers") {
            const bool int8 = kernel == "fused-int8";
            const FusedDenseGrn& d = packed(
                kernel, pack_sources({&fc1, &fc2, &gate_norm->glu->fc, &skip}, gate_norm->norm), [&] {
                    FusedDenseGrn g;
                    g.in = in;
                    g.hidden = hidden;
                    g.out = out;
                    g.eps = static_cast<float>(gate_norm->norm->options.eps());
                    const auto set = [&](precision::QuantizableLinear& l, std::vector<float>& w,
                                         FusedDenseGrn::Int8Rows& q, std::vector<float>& b) {
                        if (int8) {
                            q = int8_rows_of(l);
                        } else {
                            w = floats(float_weight_of(l));
                        }
                        b = floats(float_bias_of(l));
                    };
                    set(fc1, g.w1, g.q1, g.b1);
                    set(fc2, g.w2, g.q2, g.b2);
                    set(gate_norm->glu->fc, g.wg, g.qg, g.bg);
                    if (skip) set(skip, g.ws, g.qs, g.bs);
                    g.gamma = floats(gate_norm->norm->weight);
                    g.beta = floats(gate_norm->norm->bias);
                    return g;
                });
            torch::Tensor projected;
            if (context.defined()) projected = context_proj(context).to(torch::kFloat).contiguous(); // [B, hidden]
            const auto xc = x.contiguous();
            auto sizes = x.sizes().vec();
            sizes.back() = out;
            auto y = torch::empty(sizes, x.options());
            fused_grn(d, xc.data_ptr<float>(), projected.defined() ? projected.data_ptr<float>() : nullptr,
                      projected.defined() ? rows / projected.size(0) : 1, nullptr, y.data_ptr<float>(), rows);
            return y;
        }
    }
    auto residual = skip ? skip(x) : x;
    auto h = fc1(x);
    if (context.defined()) {
        TORCH_CHECK(context_proj, "GatedResidualNetwork: built without a context but one was given");
        TORCH_CHECK(context.dim() == 2 && context.size(0) == x.size(0) && context.size(1) == options.context_size(),
                    "GatedResidualNetwork: context must be [B, ", options.context_size(), "], got ", context.sizes());
        auto c = context_proj(context);
        while (c.dim() < h.dim()) c = c.unsqueeze(-2);
        h = h + c;
    }
    h = fc2(torch::elu(h));
    return gate_norm(h, residual);
}

std::vector<precision::BlockTiming> GatedResidualNetworkImpl::time_block_kernels(int64_t rows)
{
    TORCH_CHECK(rows > 0, "GatedResidualNetwork: rows must be positive");
    const auto o = torch::TensorOptions().device(fc1->weight.device());
    const auto x = torch::randn({rows, options.input_size()}, o);
    // A context per row (the fused kernel's costliest case: a gather per row).
    const auto context = context_proj ? torch::randn({rows, options.context_size()}, o) : torch::Tensor();
    return time_layers_and_fused([&] { return forward(x, context); });
}

namespace {

bool plain_float(const precision::QuantizableLinear& layer)
{
    return !layer || (!layer->quantized() && !layer->observing());
}

// [V, rows, cols] from one parameter of each GRN.
template <class Get>
torch::Tensor stacked(const std::vector<GatedResidualNetworkImpl*>& grns, Get&& get)
{
    std::vector<torch::Tensor> parts;
    parts.reserve(grns.size());
    for (auto* g : grns) parts.push_back(get(*g));
    return torch::stack(parts, /*dim=*/0);
}

} // namespace

bool groupable(const std::vector<GatedResidualNetworkImpl*>& grns)
{
    if (grns.size() < 2 || at::autocast::is_cpu_enabled() || at::autocast::is_enabled()) return false;
    const auto& o = grns.front()->options;
    for (auto* g : grns) {
        const auto& p = g->options;
        if (p.input_size() != o.input_size() || p.hidden_size() != o.hidden_size() ||
            p.output_size() != o.output_size() || p.context_size() != 0 || p.dropout() != o.dropout() ||
            g->is_training() != grns.front()->is_training())
            return false;
        if (!plain_float(g->skip) || !plain_float(g->fc1) || !plain_float(g->fc2) ||
            !plain_float(g->gate_norm->glu->fc))
            return false;
    }
    return true;
}

torch::Tensor grouped_forward(const std::vector<GatedResidualNetworkImpl*>& grns, const torch::Tensor& x)
{
    TORCH_CHECK(groupable(grns), "grouped_forward: these GRNs cannot be grouped");
    const auto& o = grns.front()->options;
    const auto v = static_cast<int64_t>(grns.size());
    TORCH_CHECK(x.dim() >= 2 && x.size(0) == v && x.size(-1) == o.input_size(), "grouped_forward: x must be [", v,
                ", ..., ", o.input_size(), "], got ", x.sizes());
    const int64_t hidden = o.hidden_size();
    const int64_t out = o.output_size();
    const bool has_skip = static_cast<bool>(grns.front()->skip);
    auto x3 = x.reshape({v, -1, o.input_size()}); // [V, N, I]

    // fc1 and the skip projection read the same input: one product for both.
    auto w1 = stacked(grns, [](auto& g) { return g.fc1->weight; }); // [V, hidden, I]
    auto b1 = stacked(grns, [](auto& g) { return g.fc1->bias; });   // [V, hidden]
    if (has_skip) {
        w1 = torch::cat({w1, stacked(grns, [](auto& g) { return g.skip->weight; })}, /*dim=*/1);
        b1 = torch::cat({b1, stacked(grns, [](auto& g) { return g.skip->bias; })}, /*dim=*/1);
    }
    auto first = torch::baddbmm(b1.unsqueeze(1), x3, w1.transpose(1, 2)); // [V, N, hidden (+ out)]
    auto residual = has_skip ? first.narrow(-1, hidden, out) : x3;
    auto h = torch::elu(first.narrow(-1, 0, hidden));
    h = torch::baddbmm(stacked(grns, [](auto& g) { return g.fc2->bias; }).unsqueeze(1), h,
                       stacked(grns, [](auto& g) { return g.fc2->weight; }).transpose(1, 2));

    // GateAddNorm: dropout, GLU, residual add, LayerNorm (its affine applied per GRN afterwards).
    auto& gate = *grns.front()->gate_norm;
    h = hashed_dropout(h, gate.glu->options.dropout(), gate.glu->dropout->is_training());
    auto gated = torch::glu(
        torch::baddbmm(stacked(grns, [](auto& g) { return g.gate_norm->glu->fc->bias; }).unsqueeze(1), h,
                       stacked(grns, [](auto& g) { return g.gate_norm->glu->fc->weight; }).transpose(1, 2)),
        /*dim=*/-1);
    auto gamma = stacked(grns, [](auto& g) { return g.gate_norm->norm->weight; }).unsqueeze(1); // [V, 1, out]
    auto beta = stacked(grns, [](auto& g) { return g.gate_norm->norm->bias; }).unsqueeze(1);
    auto normed = torch::layer_norm((gated + residual).to(gamma.scalar_type()), {out}, /*weight=*/{}, /*bias=*/{},
                                    gate.norm->options.eps());
    auto y = torch::addcmul(beta, normed, gamma);
    auto out_sizes = x.sizes().vec();
    out_sizes.back() = out;
    return y.view(out_sizes);
}

} // namespace foxhunt::models::tft
