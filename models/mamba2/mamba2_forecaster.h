// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Quantile forecaster: a pre-norm residual stack of Mamba-2 blocks over past bars,
// with a quantile head on the last position (plus the known future covariates).

#include "models/mamba2/mamba2_block.h"
#include "models/mamba2/rms_norm_gated.h"

#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <vector>

namespace foxhunt::models::mamba2 {

/// Sizes of a Mamba2Forecaster. Defaults are small for a CPU.
struct Mamba2ForecasterOptions {
    Mamba2ForecasterOptions(int64_t n_features, int64_t horizon, int64_t n_quantiles)
        : n_features_(n_features), horizon_(horizon), n_quantiles_(n_quantiles)
    {
    }
    /// The block options these sizes imply.
    Mamba2BlockOptions block_options() const;
    /// Past features per bar F.
    TORCH_ARG(int64_t, n_features);
    /// Bars forecast ahead H.
    TORCH_ARG(int64_t, horizon);
    /// Quantiles per step Q.
    TORCH_ARG(int64_t, n_quantiles);
    /// Known-future covariates per future bar K (0: none).
    TORCH_ARG(int64_t, known_features) = 0;
    /// Residual width.
    TORCH_ARG(int64_t, d_model) = 32;
    /// Number of Mamba-2 blocks.
    TORCH_ARG(int64_t, n_layers) = 2;
    /// SSM state size per head.
    TORCH_ARG(int64_t, d_state) = 16;
    /// Channels per head.
    TORCH_ARG(int64_t, head_dim) = 16;
    /// d_inner = expand * d_model.
    TORCH_ARG(int64_t, expand) = 2;
    /// Groups sharing B and C.
    TORCH_ARG(int64_t, ngroups) = 1;
    /// Convolution width.
    TORCH_ARG(int64_t, d_conv) = 4;
    /// SSD chunk length.
    TORCH_ARG(int64_t, chunk_size) = 32;
    /// Use the sequential reference scan.
    TORCH_ARG(bool, sequential_scan) = false;
    /// RMSNorm epsilon.
    TORCH_ARG(double, norm_eps) = 1e-5;
};

/// Recurrent state of the whole stack, one entry per block.
struct Mamba2ForecasterState {
    /// Per-block conv and SSM states.
    std::vector<Mamba2State> layers;
};

/// Mamba-2 quantile forecaster.
class Mamba2ForecasterImpl : public torch::nn::Module {
public:
    /// Builds the stack.
    explicit Mamba2ForecasterImpl(const Mamba2ForecasterOptions& options);

    // x: [B, T, F], known_future: undefined or [B, H, K] -> [B, H, Q]
    /// Forecast from a window of past bars.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& known_future = {});

    /// A zero recurrent state for batch size `batch`.
    Mamba2ForecasterState initial_state(int64_t batch) const;
    // x: [B, F], known_future: undefined or [B, H, K] -> [B, H, Q]; advances state.
    /// Consumes one bar and forecasts from everything seen so far, in O(1) time and memory.
    torch::Tensor step(const torch::Tensor& x, const torch::Tensor& known_future, Mamba2ForecasterState& state);

    /// The options it was built with.
    Mamba2ForecasterOptions options;
    /// Features to the residual width.
    precision::QuantizableLinear input_proj{nullptr};
    /// The mixers.
    torch::nn::ModuleList blocks{nullptr};
    /// Pre-norm of each mixer.
    torch::nn::ModuleList norms{nullptr};
    /// Final norm.
    RmsNormGated norm_f{nullptr};
    /// Last hidden (+ known future) to H x Q quantiles.
    precision::QuantizableLinear head{nullptr};

private:
    torch::Tensor head_forward(const torch::Tensor& last, const torch::Tensor& known_future);
};
TORCH_MODULE(Mamba2Forecaster);

} // namespace foxhunt::models::mamba2
