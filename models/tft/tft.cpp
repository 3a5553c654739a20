// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/tft.h"

#include "models/tft/fused_lstm.h"
#include "models/tft/inference_kernels.h"

#include <ATen/autocast_mode.h>

#include <optional>

namespace foxhunt::models::tft {

namespace {

// fused_lstm() where it applies: one float32 CPU layer with biases, not calibrating, no autocast;
// in an int8 copy, where both projections run in float (their dequantized weights).
std::optional<FusedLstmOutput> fused_if_plain(precision::QuantizableLstmImpl& lstm, const torch::Tensor& x,
                                              const torch::Tensor& h0, const torch::Tensor& c0)
{
    const auto& o = lstm.options;
    if (o.num_layers() != 1 || !o.bias() || !o.batch_first() || lstm.observing() || !x.device().is_cpu() ||
        x.scalar_type() != torch::kFloat || at::autocast::is_cpu_enabled())
        return std::nullopt;
    if (lstm.quantized()) {
        if (const auto w = lstm.float_projections(0, x.size(0), x.size(1), x.device().type()); w && (*w)[2].defined())
            return fused_lstm(x, h0, c0, (*w)[0], (*w)[1], (*w)[2], torch::zeros_like((*w)[2]));
        // The input projection through its own int8 kernel, the recurrence in float.
        const int64_t hidden = o.hidden_size();
        if (torch::GradMode::is_enabled() || !lstm_recurrence_supports(hidden)) return std::nullopt;
        const auto p = lstm.projected_input(0, x);
        if (!p) return std::nullopt;
        return lstm_from_projections((*p)[0], (*p)[1], h0, c0);
    }
    auto p = lstm.named_parameters(/*recurse=*/false);
    return fused_lstm(x, h0, c0, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]);
}

} // namespace

TemporalFusionTransformerImpl::TemporalFusionTransformerImpl(const TftOptions& options_) : options(options_)
{
    TORCH_CHECK(options.n_past() > 0 && options.n_future() >= 0 && options.n_static() >= 0 && options.horizon() > 0 &&
                    options.n_quantiles() > 0 && options.hidden_size() > 0 && options.lstm_layers() > 0,
                "TemporalFusionTransformer: invalid sizes");
    const int64_t h = options.hidden_size();
    const double p = options.dropout();
    auto grn = [&](int64_t context) {
        return GatedResidualNetwork(GatedResidualNetworkOptions(h, h, h).context_size(context).dropout(p));
    };
    auto vsn = [&](int64_t vars, int64_t context) {
        return VariableSelectionNetwork(VariableSelectionNetworkOptions(vars, h)
                                            .embedding_size(options.embedding_size())
                                            .context_size(context)
                                            .dropout(p));
    };
    static_vsn = register_module("static_vsn", vsn(options.n_static(), 0));
    static_context_variable_selection = register_module("static_context_variable_selection", grn(0));
    static_context_initial_hidden = register_module("static_context_initial_hidden", grn(0));
    static_context_initial_cell = register_module("static_context_initial_cell", grn(0));
    static_context_enrichment = register_module("static_context_enrichment", grn(0));
    encoder_vsn = register_module("encoder_vsn", vsn(options.n_past(), h));
    decoder_vsn = register_module("decoder_vsn", vsn(options.n_future(), h));
    auto lstm_options = torch::nn::LSTMOptions(h, h)
                            .num_layers(options.lstm_layers())
                            .batch_first(true)
                            .dropout(options.lstm_layers() > 1 ? p : 0.0);
    lstm_encoder = register_module("lstm_encoder", precision::QuantizableLstm(lstm_options));
    lstm_decoder = register_module("lstm_decoder", precision::QuantizableLstm(lstm_options));
    post_lstm_gate = register_module("post_lstm_gate", GateAddNorm(GateAddNormOptions(h, h).dropout(p)));
    static_enrichment = register_module("static_enrichment", grn(h));
    attention = register_module(
        "attention",
        InterpretableMultiHeadAttention(InterpretableMultiHeadAttentionOptions(h, options.n_heads()).dropout(p)));
    post_attention_gate = register_module("post_attention_gate", GateAddNorm(GateAddNormOptions(h, h).dropout(p)));
    position_wise_grn = register_module("position_wise_grn", grn(0));
    pre_output_gate = register_module("pre_output_gate", GateAddNorm(GateAddNormOptions(h, h)));
    output_layer = register_module("output_layer", precision::QuantizableLinear(h, options.n_quantiles()));
}

TftOutput TemporalFusionTransformerImpl::forward(const torch::Tensor& past, const torch::Tensor& future,
                                                 const torch::Tensor& statics)
{
    TORCH_CHECK(past.dim() == 3 && past.size(2) == options.n_past() && past.size(1) > 0,
                "TemporalFusionTransformer: past must be [B, T, ", options.n_past(), "], got ", past.sizes());
    const int64_t batch = past.size(0);
    const int64_t t_enc = past.size(1);
    const int64_t horizon = options.horizon();
    TORCH_CHECK(future.dim() == 3 && future.size(0) == batch && future.size(1) == horizon &&
                    future.size(2) == options.n_future(),
                "TemporalFusionTransformer: future must be [", batch, ", ", horizon, ", ", options.n_future(),
                "], got ", future.sizes());
    auto statics_in = statics;
    if (!statics_in.defined()) {
        TORCH_CHECK(options.n_static() == 0, "TemporalFusionTransformer: model expects ", options.n_static(),
                    " static covariates");
        statics_in = torch::zeros({batch, 0}, past.options());
    }
    TORCH_CHECK(statics_in.dim() == 2 && statics_in.size(0) == batch && statics_in.size(1) == options.n_static(),
                "TemporalFusionTransformer: statics must be [", batch, ", ", options.n_static(), "], got ",
                statics_in.sizes());

    // Static covariate encoders: four contexts from one selected static embedding.
    auto static_sel = static_vsn(statics_in);
    auto static_embedding = static_sel.output; // [B, h]
    auto c_selection = static_context_variable_selection(static_embedding);
    auto c_hidden = static_context_initial_hidden(static_embedding);
    auto c_cell = static_context_initial_cell(static_embedding);
    auto c_enrichment = static_context_enrichment(static_embedding);

    auto enc_sel = encoder_vsn(past, c_selection);   // [B, T, h], [B, T, n_past]
    auto dec_sel = decoder_vsn(future, c_selection); // [B, H, h], [B, H, n_future]

    torch::Tensor enc_out, dec_out;
    auto fused_enc = fused_if_plain(*lstm_encoder, enc_sel.output, c_hidden, c_cell);
    std::optional<FusedLstmOutput> fused_dec;
    if (fused_enc) fused_dec = fused_if_plain(*lstm_decoder, dec_sel.output, fused_enc->h_n, fused_enc->c_n);
    if (fused_enc && fused_dec) {
        enc_out = fused_enc->output;
        dec_out = fused_dec->output;
    } else {
        const int64_t layers = options.lstm_layers();
        auto h0 = c_hidden.unsqueeze(0).expand({layers, batch, options.hidden_size()}).contiguous();
        auto c0 = c_cell.unsqueeze(0).expand({layers, batch, options.hidden_size()}).contiguous();
        auto [e_out, enc_state] = lstm_encoder->forward(enc_sel.output, std::make_tuple(h0, c0));
        enc_out = e_out;
        dec_out = std::get<0>(lstm_decoder->forward(dec_sel.output, enc_state));
    }

    auto lstm_out = torch::cat({enc_out, dec_out}, /*dim=*/1); // [B, T+H, h]
    auto selected = torch::cat({enc_sel.output, dec_sel.output}, /*dim=*/1);
    auto temporal = post_lstm_gate(lstm_out, selected);

    auto enriched = static_enrichment(temporal, c_enrichment);
    auto queries = enriched.narrow(1, t_enc, horizon);
    auto mask = causal_mask(horizon, t_enc + horizon, past.device());
    auto attended = attention(queries, enriched, enriched, mask);
    auto x = post_attention_gate(attended.output, queries);
    x = position_wise_grn(x);
    x = pre_output_gate(x, temporal.narrow(1, t_enc, horizon));

    TftOutput out;
    out.quantiles = output_layer(x);
    out.attention = attended.attention;
    out.encoder_importances = enc_sel.weights.mean(1);
    out.decoder_importances = options.n_future() > 0 ? dec_sel.weights.mean(1)
                                                     : torch::zeros({batch, 0}, past.options());
    out.static_importances = static_sel.weights;
    return out;
}

} // namespace foxhunt::models::tft
