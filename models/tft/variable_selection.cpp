// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/variable_selection.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>
#include <tuple>

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
        variable_grns->push_back(
            GatedResidualNetwork(GatedResidualNetworkOptions(e, options.hidden_size(), options.hidden_size())
                                     .dropout(options.dropout())
                                     .fused_inference(false)));
    if (v > 1)
        flattened_grn = register_module(
            "flattened_grn",
            GatedResidualNetwork(GatedResidualNetworkOptions(v * e, std::min(options.hidden_size(), v), v)
                                     .context_size(options.context_size())
                                     .dropout(options.dropout())
                                     .fused_inference(false)));
}

std::pair<torch::Tensor, torch::Tensor> VariableSelectionNetworkImpl::tables(c10::ScalarType dtype)
{
    if (!converted_to_int8()) return {embedding_weight, embedding_bias};
    return {
        precision::dequantize_per_row(embedding_weight_q.q,
                                      precision::cached_scale(embedding_weight_q, m_weight_scale_cache))
            .to(dtype),
        precision::dequantize_per_row(embedding_bias_q.q, precision::cached_scale(embedding_bias_q, m_bias_scale_cache))
            .to(dtype)};
}

std::string VariableSelectionNetworkImpl::block_kernel_for(int64_t rows) const
{
    if (m_forced_kernel) return *m_forced_kernel;
    if (!variable_grns) return "table"; // released: the table serves alone
    bool all_float = true, all_int8 = converted_to_int8();
    for (const auto& m : *variable_grns) {
        const auto* g = m->as<GatedResidualNetworkImpl>();
        for (const auto* l : {&g->skip, &g->fc1, &g->fc2, &g->gate_norm->glu->fc}) {
            if (!*l) continue;
            all_float = all_float && !(*l)->quantized() && !(*l)->observing();
            all_int8 = all_int8 && (*l)->quantized();
        }
    }
    // The fused path folds the weights' GRN's first layer and skip: while they calibrate, they
    // must see their inputs.
    if (flattened_grn)
        for (const auto* l : {&flattened_grn->fc1, &flattened_grn->skip})
            if (*l && (*l)->observing()) return "layers";
    if (all_float) return "fused-fp32";
    if (!all_int8 || m_block_plan.empty()) return "layers";
    const std::string& kernel = precision::nearest_by_rows(m_block_plan, rows, [](const auto& e) {
                                    return e.first;
                                }).second;
    if (kernel == "fused-int8" && !fused_selection_int8_available()) return "fused-fp32";
    if (kernel == "table" && !can_tabulate()) return "layers";
    return kernel;
}

bool VariableSelectionNetworkImpl::calibrating() const
{
    if (!variable_grns) return false;
    for (const auto& m : *variable_grns)
        if (m->as<GatedResidualNetworkImpl>()->fc1->observing()) return true;
    return false;
}

const VariableSelectionNetworkImpl::PackCache& VariableSelectionNetworkImpl::pack(PackKind kind)
{
    PackCache& cache = kind == PackKind::Int8 ? m_int8_pack : kind == PackKind::Float ? m_float_pack : m_fold_pack;
    const bool int8 = kind == PackKind::Int8;
    if (cache.made && cache.stamp.matches(cache.sources)) return cache;

    torch::NoGradGuard no_grad;
    const int64_t v = options.n_variables(), h = options.hidden_size();
    const auto weight_of = float_weight_of;
    const auto bias_of = float_bias_of;
    auto [we, be] = tables(torch::kFloat);
    std::vector<torch::Tensor> affine, b2, bg, gamma, beta, w2, wg, q2, qg, s2, sg, z2, zg;
    FusedGrnPack p;
    p.variables = v;
    p.hidden = h;
    for (int64_t i = 0; i < (kind == PackKind::FoldOnly ? 0 : v); ++i) {
        auto& g = *variable_grns[static_cast<size_t>(i)]->as<GatedResidualNetworkImpl>();
        // first = W1 (x w_e + b_e) + b1 = x (W1 w_e) + (W1 b_e + b1); the skip alike (or the
        // embedding itself when input and output widths agree).
        const auto w1 = weight_of(g.fc1).to(torch::kFloat);
        torch::Tensor a_s = we[i], c_s = be[i];
        if (g.skip) {
            const auto ws = weight_of(g.skip).to(torch::kFloat);
            a_s = ws.mv(we[i]);
            c_s = ws.mv(be[i]) + bias_of(g.skip);
        }
        affine.push_back(torch::cat({w1.mv(we[i]), w1.mv(be[i]) + bias_of(g.fc1), a_s, c_s}));
        b2.push_back(bias_of(g.fc2));
        bg.push_back(bias_of(g.gate_norm->glu->fc));
        gamma.push_back(g.gate_norm->norm->weight);
        beta.push_back(g.gate_norm->norm->bias);
        p.eps = static_cast<float>(g.gate_norm->norm->options.eps());
        if (int8) {
            for (auto [layer, q, scale, zero] :
                 {std::tuple{&g.fc2, &q2, &s2, &z2}, std::tuple{&g.gate_norm->glu->fc, &qg, &sg, &zg}}) {
                const auto& w = (*layer)->int8->weight;
                q->push_back(w.q);
                scale->push_back(w.scale());
                zero->push_back((w.q.to(torch::kInt).sum(1) * 128).to(torch::kInt));
            }
        } else {
            w2.push_back(weight_of(g.fc2));
            wg.push_back(weight_of(g.gate_norm->glu->fc));
        }
    }
    auto values = [](const std::vector<torch::Tensor>& parts, auto type) {
        using T = decltype(type);
        if (parts.empty()) return std::vector<T>();
        const auto t = torch::cat(parts).flatten().to(c10::CppTypeToScalarType<T>::value).contiguous();
        const T* data = t.template data_ptr<T>();
        return std::vector<T>(data, data + t.numel());
    };
    p.affine = values(affine, float{});
    p.b2 = values(b2, float{});
    p.bg = values(bg, float{});
    p.gamma = values(gamma, float{});
    p.beta = values(beta, float{});
    if (int8) {
        p.w2q = values(q2, std::int8_t{});
        p.wgq = values(qg, std::int8_t{});
        p.s2 = values(s2, float{});
        p.sg = values(sg, float{});
        p.z2 = values(z2, std::int32_t{});
        p.zg = values(zg, std::int32_t{});
    } else {
        p.w2 = values(w2, float{});
        p.wg = values(wg, float{});
    }
    cache.pack = std::move(p);
    if (v > 1) {
        // W (x w_e + b_e) over the V * E embedded inputs = x @ a + c over the V raw ones.
        auto& f = *flattened_grn;
        const int64_t e = options.embedding_size();
        const auto fold = [&](precision::QuantizableLinear& layer, torch::Tensor& a, torch::Tensor& c) {
            const auto w = weight_of(layer).to(torch::kFloat); // [out, V * E]
            a = (w.view({w.size(0), v, e}) * we.unsqueeze(0)).sum(-1).t().contiguous();
            c = w.mv(be.reshape({-1})) + bias_of(layer);
        };
        fold(f.fc1, cache.first_a, cache.first_c);
        if (f.skip) {
            fold(f.skip, cache.skip_a, cache.skip_c);
        } else { // E = 1: the residual is the embedding itself
            cache.skip_a = torch::diag(we.reshape({-1}));
            cache.skip_c = be.reshape({-1}).clone();
        }
        FusedDenseGrn& d = cache.weights_grn;
        d = FusedDenseGrn{};
        const int64_t hidden = cache.first_c.size(0);
        if (fused_grn_supports(v, hidden, v)) {
            const auto floats = [](const torch::Tensor& t) {
                const auto c = t.to(torch::kFloat).contiguous();
                return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
            };
            d.in = v;
            d.hidden = hidden;
            d.out = v;
            d.eps = static_cast<float>(f.gate_norm->norm->options.eps());
            d.softmax = true;
            d.w1 = floats(cache.first_a.t());
            d.b1 = floats(cache.first_c);
            d.w2 = floats(weight_of(f.fc2));
            d.b2 = floats(bias_of(f.fc2));
            d.wg = floats(weight_of(f.gate_norm->glu->fc));
            d.bg = floats(bias_of(f.gate_norm->glu->fc));
            d.ws = floats(cache.skip_a.t());
            d.bs = floats(cache.skip_c);
            d.gamma = floats(f.gate_norm->norm->weight);
            d.beta = floats(f.gate_norm->norm->bias);
        }
    }
    cache.sources = parameters();
    for (const auto& t : buffers()) cache.sources.push_back(t);
    cache.made = cache.stamp.remember(cache.sources); // untrackable (inference tensors): packed afresh every call
    return cache;
}

torch::Tensor VariableSelectionNetworkImpl::selection_weights(const PackCache& folded, const torch::Tensor& x2,
                                                              const torch::Tensor& context, std::vector<int64_t> sizes)
{
    auto& g = *flattened_grn;
    if (folded.weights_grn.in > 0) {
        const int64_t rows = x2.size(0);
        torch::Tensor projected;
        if (context.defined()) projected = g.context_proj(context).to(torch::kFloat).contiguous(); // [B, hidden]
        sizes.push_back(options.n_variables());
        auto weights = torch::empty(sizes, x2.options());
        fused_grn(folded.weights_grn, x2.data_ptr<float>(), projected.defined() ? projected.data_ptr<float>() : nullptr,
                  projected.defined() ? rows / projected.size(0) : 1, nullptr, weights.data_ptr<float>(), rows);
        return weights;
    }
    sizes.push_back(folded.first_c.size(0));
    auto h = torch::addmm(folded.first_c, x2, folded.first_a).view(sizes);
    if (context.defined()) {
        auto c = g.context_proj(context);
        while (c.dim() < h.dim()) c = c.unsqueeze(-2);
        h = h + c;
    }
    sizes.back() = options.n_variables();
    const auto residual = torch::addmm(folded.skip_c, x2, folded.skip_a).view(sizes);
    return torch::softmax(g.gate_norm(g.fc2(torch::elu(h)), residual), /*dim=*/-1).contiguous();
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
    const int64_t rows = x.numel() / v;
    if (rows > 0 && calibrating()) {
        // Each variable's input range, for the table convert_to_int8() builds.
        const auto x2 = x.detach().reshape({rows, v}).to(torch::kCPU, torch::kFloat);
        const auto low = x2.amin(0), high = x2.amax(0);
        m_observed_low = m_observed_low.defined() ? torch::minimum(m_observed_low, low) : low;
        m_observed_high = m_observed_high.defined() ? torch::maximum(m_observed_high, high) : high;
    }
    if (m_block_recording && std::find(m_block_rows.begin(), m_block_rows.end(), rows) == m_block_rows.end())
        m_block_rows.push_back(rows);
    auto context_arg = options.context_size() > 0 ? context : torch::Tensor();

    const bool plain_input = x.device().is_cpu() && x.scalar_type() == torch::kFloat && !at::autocast::is_cpu_enabled();
    // A copy that kept only its table serves any call it can (it has no autograd to give).
    TORCH_CHECK(variable_grns || plain_input,
                "VariableSelectionNetwork: this int8 copy serves its table only: float32 CPU input without autocast");
    const bool fusable = plain_input && fused_selection_supports(options.hidden_size()) &&
                         (rows > 0 || !variable_grns) &&
                         (!variable_grns || (!is_training() && !torch::GradMode::is_enabled()));
    std::string kernel = fusable ? block_kernel_for(rows) : std::string("layers");
    if (kernel == "table") {
        tabulate();
        if (!has_table()) kernel = "fused-fp32"; // a table would have outweighed the GRNs
    }
    if (kernel != "layers") {
        torch::NoGradGuard no_grad;
        const auto x2 = x.contiguous().view({rows, v});
        const auto& packed = pack(kernel == "fused-int8"   ? PackKind::Int8
                                  : kernel == "fused-fp32" ? PackKind::Float
                                                           : PackKind::FoldOnly);
        torch::Tensor weights;
        if (v > 1) {
            weights = selection_weights(packed, x2, context_arg, lead);
        } else {
            auto w_sizes = lead;
            w_sizes.push_back(1);
            weights = torch::ones(w_sizes, x.options());
        }
        auto out_sizes = lead;
        out_sizes.push_back(options.hidden_size());
        auto output = torch::empty(out_sizes, x.options());
        if (kernel == "table") {
            const auto low = selection_range[0]; // a row of a contiguous [2, V]
            // inv_step = (K - 1) / (high - low), once per table; tabulate() never leaves an empty range.
            const auto inv_step = m_inv_step_cache.get({selection_range, selection_table}, [&] {
                return (static_cast<double>(table_knots() - 1) / (selection_range[1] - selection_range[0]))
                    .contiguous();
            });
            SelectionTableView table;
            table.variables = v;
            table.hidden = options.hidden_size();
            table.knots = table_knots();
            table.values = reinterpret_cast<const std::uint16_t*>(selection_table.data_ptr<at::Half>());
            table.low = low.data_ptr<float>();
            table.inv_step = inv_step.data_ptr<float>();
            table_selection(table, x2.data_ptr<float>(), weights.data_ptr<float>(), output.data_ptr<float>(), rows);
        } else {
            fused_selection(packed.pack, x2.data_ptr<float>(), weights.data_ptr<float>(), output.data_ptr<float>(),
                            rows);
        }
        return {output, weights};
    }

    // The fused path folds the tables into its pack; only the layers need them (decoded, in an int8 copy).
    const auto [table_w, table_b] = tables(x.scalar_type());
    auto flat_sizes = lead;
    flat_sizes.push_back(v * options.embedding_size());
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
    const int64_t embedded_rows = per_variable.numel() / (v * options.embedding_size());
    if (groupable(grns) && v * embedded_rows * 2 * options.hidden_size() <= kMaxGroupedElements) {
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

void VariableSelectionNetworkImpl::set_block_recording(bool on)
{
    if (on) m_block_rows.clear();
    m_block_recording = on;
}

void VariableSelectionNetworkImpl::set_block_plan(std::vector<std::pair<int64_t, std::string>> plan)
{
    for (const auto& [rows, kernel] : plan)
        TORCH_CHECK(kernel == "layers" || kernel == "fused-fp32" || kernel == "fused-int8" || kernel == "table",
                    "VariableSelectionNetwork: no kernel named '", kernel, "'");
    m_block_plan = std::move(plan);
}

std::vector<precision::BlockTiming> VariableSelectionNetworkImpl::time_block_kernels(int64_t rows)
{
    TORCH_CHECK(rows > 0, "VariableSelectionNetwork: rows must be positive");
    std::vector<std::string> kernels;
    if (variable_grns) kernels.push_back("layers");
    const auto device = embedding_bias.device();
    if (device.is_cpu() && fused_selection_supports(options.hidden_size()) && options.n_variables() > 0) {
        if (variable_grns) {
            kernels.push_back("fused-fp32");
            if (converted_to_int8() && fused_selection_int8_available()) kernels.push_back("fused-int8");
        }
        tabulate();
        if (has_table()) kernels.push_back("table");
    }
    torch::NoGradGuard no_grad;
    // Inside the calibrated range where there is one, else N(0, 1).
    auto x = torch::randn({rows, options.n_variables()}, torch::TensorOptions().device(device));
    if (can_tabulate()) x = selection_range[0] + torch::rand_like(x) * (selection_range[1] - selection_range[0]);
    const auto context = options.context_size() > 0 ? torch::randn({rows, options.context_size()}, x.options())
                                                    : torch::Tensor();
    struct Unforce {
        std::optional<std::string>& forced;
        ~Unforce() { forced.reset(); }
    } unforce{m_forced_kernel};
    return precision::time_block_candidates(kernels, [&](const std::string& kernel) {
        m_forced_kernel = kernel;
        return forward(x, context).output;
    });
}

void VariableSelectionNetworkImpl::tabulate()
{
    if (has_table() || !can_tabulate() || !variable_grns) return;
    torch::NoGradGuard no_grad;
    const int64_t v = options.n_variables(), h = options.hidden_size();
    constexpr int64_t kFine = 512; // intervals of the exact evaluation: every knot count's spacing divides it
    const auto low = selection_range[0].contiguous();
    const auto high = selection_range[1].contiguous();
    const FusedGrnPack& exact_pack = pack(PackKind::Float).pack;
    std::vector<float> exact(static_cast<size_t>(v * (kFine + 1) * h)), grid(kFine + 1);
    const float* lo = low.data_ptr<float>();
    const float* hi = high.data_ptr<float>();
    for (int64_t i = 0; i < v; ++i) {
        for (int64_t g = 0; g <= kFine; ++g)
            grid[static_cast<size_t>(g)] = lo[i] + (hi[i] - lo[i]) * static_cast<float>(g) / kFine;
        fused_grn_outputs(exact_pack, i, grid.data(), exact.data() + i * (kFine + 1) * h, kFine + 1);
    }
    const auto at = [&](int64_t variable, int64_t point) {
        return exact.data() + (variable * (kFine + 1) + point) * h;
    };
    // The fewest knots whose interpolation stays within the tolerance at the midpoints between them.
    int64_t knots = 257;
    for (const int64_t k : {9, 17, 33, 65, 129, 257}) {
        const int64_t stride = kFine / (k - 1);
        double error = 0.0, reference = 0.0;
        for (int64_t i = 0; i < v; ++i)
            for (int64_t j = 0; j + 1 < k; ++j) {
                const float *a = at(i, j * stride), *b = at(i, (j + 1) * stride), *m = at(i, j * stride + stride / 2);
                for (int64_t c = 0; c < h; ++c) {
                    const double d = m[c] - 0.5 * (static_cast<double>(a[c]) + b[c]);
                    error += d * d;
                    reference += static_cast<double>(m[c]) * m[c];
                }
            }
        if (reference == 0.0 || std::sqrt(error / reference) <= kTableTolerance) {
            knots = k;
            break;
        }
    }
    // The table stands in for the variable GRNs: never heavier than their int8 weights.
    int64_t grn_bytes = 0;
    for (const auto& list : {variable_grns->parameters(), variable_grns->buffers()})
        for (const auto& t : list) grn_bytes += t.numel() * t.element_size();
    if (v * knots * h * 2 > grn_bytes) {
        selection_range.set_data(torch::empty({0}, selection_range.options()));
        m_float_pack = PackCache{};
        return;
    }
    const int64_t stride = kFine / (knots - 1);
    auto values = torch::empty({v, knots, h}, torch::kFloat);
    float* out = values.data_ptr<float>();
    for (int64_t i = 0; i < v; ++i)
        for (int64_t j = 0; j < knots; ++j) std::copy_n(at(i, j * stride), h, out + (i * knots + j) * h);
    if (selection_table.defined()) {
        selection_table.set_data(values.to(torch::kHalf));
    } else {
        selection_table = register_buffer("selection_table", values.to(torch::kHalf));
    }
    m_float_pack = PackCache{};
}

std::vector<std::string> VariableSelectionNetworkImpl::choose_block_kernels(
    const std::vector<int64_t>& rows, const std::vector<std::vector<precision::BlockTiming>>& timings,
    double max_error) const
{
    const auto without_table = [&](const std::vector<precision::BlockTiming>& t) {
        std::vector<precision::BlockTiming> rest;
        for (const auto& k : t)
            if (k.kernel != "table") rest.push_back(k);
        return precision::choose_block_kernel(rest, max_error);
    };
    const auto within = [&](const std::vector<precision::BlockTiming>& t) {
        return std::any_of(t.begin(), t.end(),
                           [&](const auto& k) { return k.kernel == "table" && k.relative_error <= max_error; });
    };
    std::vector<std::string> chosen;
    if (rows.empty()) return chosen;
    // Keeping the table and the variable GRNs both would cost the memory of both: the table serves
    // every row count (where accurate enough) if it wins where the most rows are served.
    const size_t most = static_cast<size_t>(std::max_element(rows.begin(), rows.end()) - rows.begin());
    const bool table = precision::choose_block_kernel(timings[most], max_error) == "table";
    for (const auto& t : timings) chosen.push_back(table && within(t) ? std::string("table") : without_table(t));
    return chosen;
}

int64_t VariableSelectionNetworkImpl::release_unplanned()
{
    if (!can_tabulate() || !variable_grns || m_block_plan.empty()) return 0;
    const auto serves_table = [](const auto& entry) { return entry.second == "table"; };
    const auto bytes = [](const torch::Tensor& t) { return t.numel() * t.element_size(); };
    int64_t freed = 0;
    if (std::all_of(m_block_plan.begin(), m_block_plan.end(), serves_table)) {
        tabulate();
        if (!has_table()) return 0; // not made after all: forward() serves fused-fp32
        for (const auto& t : variable_grns->parameters()) freed += bytes(t);
        for (const auto& t : variable_grns->buffers()) freed += bytes(t);
        unregister_module("variable_grns");
        variable_grns = torch::nn::ModuleList(nullptr);
    } else if (std::none_of(m_block_plan.begin(), m_block_plan.end(), serves_table)) {
        freed = bytes(selection_range);
        selection_range.set_data(torch::empty({0}, selection_range.options()));
        if (has_table()) {
            freed += bytes(selection_table);
            selection_table.set_data(torch::empty({0}, selection_table.options()));
        }
    }
    // The packs hold the tensors they were made from.
    m_float_pack = PackCache{};
    m_int8_pack = PackCache{};
    m_fold_pack = PackCache{};
    return freed;
}

void VariableSelectionNetworkImpl::convert_to_int8()
{
    TORCH_CHECK(!converted_to_int8(), "VariableSelectionNetwork: already converted");
    torch::NoGradGuard ng;
    if (m_observed_low.defined() && options.n_variables() > 0 && embedding_weight.device().is_cpu() &&
        fused_selection_supports(options.hidden_size()) && torch::isfinite(m_observed_low).all().item<bool>() &&
        torch::isfinite(m_observed_high).all().item<bool>()) {
        // A variable calibration saw at one value only gets a unit range around it.
        const auto empty = m_observed_high <= m_observed_low;
        selection_range = register_buffer("selection_range",
                                          torch::stack({torch::where(empty, m_observed_low - 0.5, m_observed_low),
                                                        torch::where(empty, m_observed_high + 0.5, m_observed_high)}));
    }
    m_observed_low = m_observed_high = torch::Tensor();
    embedding_weight_q = precision::register_per_row(*this, "embedding_weight",
                                                     precision::quantize_per_row(embedding_weight));
    embedding_bias_q = precision::register_per_row(*this, "embedding_bias",
                                                   precision::quantize_per_row(embedding_bias));
    // The inference copy keeps no float tables: drop their storage (the names stay registered).
    embedding_weight.set_data(torch::empty({0}, embedding_weight.options()));
    embedding_bias.set_data(torch::empty({0}, embedding_bias.options()));
}

} // namespace foxhunt::models::tft
