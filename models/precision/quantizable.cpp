// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/quantizable.h"

namespace foxhunt::models::precision {

namespace {

// Drops a parameter's storage once an int8 copy replaced it: the inference copy should not keep
// the float weights it no longer uses.
void release(torch::Tensor& t)
{
    if (!t.defined()) return;
    torch::NoGradGuard ng;
    t.set_data(torch::empty({0}, t.options()));
}

double absmax_of(const torch::Tensor& x)
{
    return x.detach().abs().max().item<double>();
}

} // namespace

QuantizableLinearImpl::QuantizableLinearImpl(int64_t in_features, int64_t out_features)
    : QuantizableLinearImpl(torch::nn::LinearOptions(in_features, out_features))
{
}

QuantizableLinearImpl::QuantizableLinearImpl(const torch::nn::LinearOptions& options_) : options(options_)
{
    // Borrow torch::nn::Linear's initialisation so models draw the same numbers as before.
    torch::nn::Linear reference(options);
    weight = register_parameter("weight", reference->weight);
    if (options.bias()) bias = register_parameter("bias", reference->bias);
}

torch::Tensor QuantizableLinearImpl::forward(const torch::Tensor& x)
{
    if (!int8.is_empty()) return int8->forward(x);
    if (m_observing) m_absmax = std::max(m_absmax, absmax_of(x));
    return torch::nn::functional::linear(x, weight, bias);
}

void QuantizableLinearImpl::quantize(Int8Backend backend, bool static_range)
{
    TORCH_CHECK(int8.is_empty(), "QuantizableLinear: already quantized");
    auto opts = Int8LinearOptions().backend(backend);
    if (static_range) {
        TORCH_CHECK(m_absmax > 0.0, "QuantizableLinear: static range requested but no calibration input was seen");
        opts.activation_absmax(m_absmax);
    }
    int8 = register_module("int8", Int8Linear(weight, bias, opts));
    release(weight);
    release(bias);
}

QuantizableLstmImpl::QuantizableLstmImpl(const torch::nn::LSTMOptions& options_) : options(options_)
{
    TORCH_CHECK(!options.bidirectional(), "QuantizableLstm: bidirectional LSTMs are not supported");
    TORCH_CHECK(options.proj_size() == 0, "QuantizableLstm: proj_size is not supported");
    torch::nn::LSTM reference(options);
    for (auto& p : reference->named_parameters(/*recurse=*/false))
        m_flat_weights.push_back(register_parameter(p.key(), p.value()));
}

std::tuple<torch::Tensor, LstmState> QuantizableLstmImpl::forward(const torch::Tensor& input,
                                                                  std::optional<LstmState> hx)
{
    TORCH_CHECK(input.dim() == 3 && input.size(2) == options.input_size(), "QuantizableLstm: input must be 3-D with ",
                options.input_size(), " features, got ", input.sizes());
    const int64_t batch = options.batch_first() ? input.size(0) : input.size(1);
    const int64_t layers = options.num_layers();
    const int64_t hidden = options.hidden_size();
    if (!hx) {
        auto z = torch::zeros({layers, batch, hidden}, input.options());
        hx = LstmState{z, z};
    }
    if (m_int8_ih.empty()) {
        if (m_observing) m_absmax = std::max(m_absmax, absmax_of(input));
        auto [out, h, c] = at::lstm(input, {std::get<0>(*hx), std::get<1>(*hx)}, m_flat_weights, options.bias(), layers,
                                    options.dropout(), is_training(), /*bidirectional=*/false, options.batch_first());
        return {out, {h, c}};
    }
    // Int8 recurrence: the input projection for all steps at once, the hidden one per step.
    auto x = options.batch_first() ? input : input.transpose(0, 1); // [B, T, in]
    const int64_t steps = x.size(1);
    std::vector<torch::Tensor> h_n, c_n;
    for (int64_t l = 0; l < layers; ++l) {
        auto& ih = m_int8_ih[static_cast<size_t>(l)];
        auto& hh = m_int8_hh[static_cast<size_t>(l)];
        auto h = std::get<0>(*hx)[l];
        auto c = std::get<1>(*hx)[l];
        const auto device = x.device().type();
        if (auto weights = float_projections(l, batch, steps, device)) {
            // Both projections in float: LibTorch's fused LSTM kernel on the dequantized weights,
            // far quicker than the step loop below (the bias of ih is b_ih + b_hh).
            std::vector<torch::Tensor> params{(*weights)[0].to(x.scalar_type()), (*weights)[1].to(x.scalar_type())};
            if ((*weights)[2].defined()) {
                auto b = (*weights)[2].to(x.scalar_type());
                params.push_back(b);
                params.push_back(torch::zeros_like(b));
            }
            auto [out, h1, c1] = at::lstm(x, {h.unsqueeze(0), c.unsqueeze(0)}, params, ih->has_bias(), /*num_layers=*/1,
                                          /*dropout=*/0.0, /*train=*/false, /*bidirectional=*/false,
                                          /*batch_first=*/true);
            x = out;
            h_n.push_back(h1.squeeze(0));
            c_n.push_back(c1.squeeze(0));
            continue;
        }
        auto gates_x = ih->forward(x); // [B, T, 4H]
        // The hidden projection runs once per step: dequantize its weight once per call, not per step.
        const auto hidden_proj = hh->repeated_forward(h.scalar_type(), device, batch);
        std::vector<torch::Tensor> outs;
        outs.reserve(static_cast<size_t>(steps));
        for (int64_t t = 0; t < steps; ++t) {
            auto gates = gates_x.select(1, t) + hidden_proj(h);
            auto chunks = gates.chunk(4, /*dim=*/1); // PyTorch's order: i, f, g, o
            c = torch::sigmoid(chunks[1]) * c + torch::sigmoid(chunks[0]) * torch::tanh(chunks[2]);
            h = torch::sigmoid(chunks[3]) * torch::tanh(c);
            outs.push_back(h);
        }
        x = torch::stack(outs, /*dim=*/1);
        h_n.push_back(h);
        c_n.push_back(c);
    }
    auto out = options.batch_first() ? x : x.transpose(0, 1);
    return {out, {torch::stack(h_n), torch::stack(c_n)}};
}

std::optional<std::array<torch::Tensor, 3>> QuantizableLstmImpl::float_projections(int64_t layer, int64_t batch,
                                                                                   int64_t steps,
                                                                                   c10::DeviceType device)
{
    if (layer < 0 || layer >= static_cast<int64_t>(m_int8_ih.size())) return std::nullopt;
    auto& ih = m_int8_ih[static_cast<size_t>(layer)];
    auto& hh = m_int8_hh[static_cast<size_t>(layer)];
    const auto is_float_gemm = [](Int8Backend b) { return b == Int8Backend::Float || b == Int8Backend::Dequantize; };
    if (!is_float_gemm(ih->backend_for(batch * steps, device)) || !is_float_gemm(hh->backend_for(batch, device)))
        return std::nullopt;
    ih->note_rows(batch * steps);
    hh->note_rows(batch);
    return std::array<torch::Tensor, 3>{ih->float_weight(), hh->float_weight(),
                                        ih->has_bias() ? ih->float_bias() : torch::Tensor()};
}

std::optional<std::array<torch::Tensor, 2>> QuantizableLstmImpl::projected_input(int64_t layer, const torch::Tensor& x)
{
    if (layer < 0 || layer >= static_cast<int64_t>(m_int8_ih.size()) || x.dim() != 3) return std::nullopt;
    auto& hh = m_int8_hh[static_cast<size_t>(layer)];
    const auto b = hh->backend_for(x.size(0), x.device().type());
    if (b != Int8Backend::Float && b != Int8Backend::Dequantize) return std::nullopt;
    hh->note_rows(x.size(0));
    return std::array<torch::Tensor, 2>{m_int8_ih[static_cast<size_t>(layer)]->forward(x), hh->float_weight()};
}

void QuantizableLstmImpl::quantize(Int8Backend backend, bool static_range)
{
    TORCH_CHECK(m_int8_ih.empty(), "QuantizableLstm: already quantized");
    TORCH_CHECK(!static_range || m_absmax > 0.0,
                "QuantizableLstm: static range requested but no calibration input was seen");
    const size_t per_layer = options.bias() ? 4 : 2;
    for (int64_t l = 0; l < options.num_layers(); ++l) {
        const auto& w_ih = m_flat_weights[static_cast<size_t>(l) * per_layer];
        const auto& w_hh = m_flat_weights[static_cast<size_t>(l) * per_layer + 1];
        torch::Tensor b;
        if (options.bias())
            b = m_flat_weights[static_cast<size_t>(l) * per_layer + 2] +
                m_flat_weights[static_cast<size_t>(l) * per_layer + 3];
        auto ih_opts = Int8LinearOptions().backend(backend);
        auto hh_opts = Int8LinearOptions().backend(backend);
        if (static_range) {
            // Deeper layers and the hidden path read h = o * tanh(c), which lies in [-1, 1].
            ih_opts.activation_absmax(l == 0 ? m_absmax : 1.0);
            hh_opts.activation_absmax(1.0);
        }
        const std::string suffix = "_l" + std::to_string(l);
        m_int8_ih.push_back(register_module("int8_ih" + suffix, Int8Linear(w_ih, b.detach(), ih_opts)));
        m_int8_hh.push_back(register_module("int8_hh" + suffix, Int8Linear(w_hh, torch::Tensor(), hh_opts)));
    }
    for (auto& w : m_flat_weights) release(w);
}

} // namespace foxhunt::models::precision
