// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Temporal Fusion Transformer (Lim et al. 2021) as a multi-horizon quantile forecaster.

#include "models/tft/gated_residual.h"
#include "models/tft/interpretable_attention.h"
#include "models/tft/variable_selection.h"

#include "models/precision/quantizable.h"

#include <torch/torch.h>

namespace foxhunt::models::tft {

/// Sizes of a TemporalFusionTransformer. Defaults are small for a CPU.
struct TftOptions {
    TftOptions(int64_t n_past, int64_t n_future, int64_t horizon, int64_t n_quantiles)
        : n_past_(n_past), n_future_(n_future), horizon_(horizon), n_quantiles_(n_quantiles)
    {
    }
    /// Observed variables per past bar (including the known ones at those bars).
    TORCH_ARG(int64_t, n_past);
    /// Known-future variables per future bar (0 allowed).
    TORCH_ARG(int64_t, n_future);
    /// Decoder steps H.
    TORCH_ARG(int64_t, horizon);
    /// Quantiles per step Q.
    TORCH_ARG(int64_t, n_quantiles);
    /// Static covariates per sample (0 allowed).
    TORCH_ARG(int64_t, n_static) = 0;
    /// Model width.
    TORCH_ARG(int64_t, hidden_size) = 16;
    /// Width of each variable's embedding in the selection networks.
    TORCH_ARG(int64_t, embedding_size) = 8;
    /// Attention heads.
    TORCH_ARG(int64_t, n_heads) = 4;
    /// Stacked LSTM layers in encoder and decoder.
    TORCH_ARG(int64_t, lstm_layers) = 1;
    /// Dropout in GRNs, gates and attention.
    TORCH_ARG(double, dropout) = 0.1;
};

/// Forecast and its interpretation.
struct TftOutput {
    /// [B, H, Q]
    torch::Tensor quantiles;
    /// [B, heads, H, T_enc + H]: decoder step attention over all positions.
    torch::Tensor attention;
    /// [B, n_past]: encoder variable selection weights averaged over time.
    torch::Tensor encoder_importances;
    /// [B, n_future]: decoder variable selection weights averaged over time.
    torch::Tensor decoder_importances;
    /// [B, n_static]: static variable selection weights.
    torch::Tensor static_importances;
};

/// The Temporal Fusion Transformer.
class TemporalFusionTransformerImpl : public torch::nn::Module {
public:
    /// Builds all sub-networks.
    explicit TemporalFusionTransformerImpl(const TftOptions& options);

    // past: [B, T, n_past], future: [B, H, n_future], statics: undefined or [B, n_static] -> quantiles [B, H, Q]
    /// Forecasts H steps ahead and returns the interpretation alongside.
    TftOutput forward(const torch::Tensor& past, const torch::Tensor& future, const torch::Tensor& statics = {});

    /// The options it was built with.
    TftOptions options;
    /// Static covariate selection.
    VariableSelectionNetwork static_vsn{nullptr};
    /// Static context for the temporal variable selection.
    GatedResidualNetwork static_context_variable_selection{nullptr};
    /// Static context for the LSTM's initial hidden state.
    GatedResidualNetwork static_context_initial_hidden{nullptr};
    /// Static context for the LSTM's initial cell state.
    GatedResidualNetwork static_context_initial_cell{nullptr};
    /// Static context for the enrichment layer.
    GatedResidualNetwork static_context_enrichment{nullptr};
    /// Past-input selection.
    VariableSelectionNetwork encoder_vsn{nullptr};
    /// Known-future-input selection.
    VariableSelectionNetwork decoder_vsn{nullptr};
    /// Sequence-to-sequence encoder over the past.
    precision::QuantizableLstm lstm_encoder{nullptr};
    /// Decoder over the known future, started from the encoder's final state.
    precision::QuantizableLstm lstm_decoder{nullptr};
    /// Gate, skip to the selected inputs and norm after both LSTMs (shared).
    GateAddNorm post_lstm_gate{nullptr};
    /// Static enrichment of the temporal features.
    GatedResidualNetwork static_enrichment{nullptr};
    /// Causal interpretable attention.
    InterpretableMultiHeadAttention attention{nullptr};
    /// Gate, skip and norm after the attention.
    GateAddNorm post_attention_gate{nullptr};
    /// Position-wise feed-forward GRN.
    GatedResidualNetwork position_wise_grn{nullptr};
    /// Gated skip over the whole temporal block back to the LSTM output.
    GateAddNorm pre_output_gate{nullptr};
    /// Quantiles per decoder step.
    precision::QuantizableLinear output_layer{nullptr};
};
TORCH_MODULE(TemporalFusionTransformer);

} // namespace foxhunt::models::tft
