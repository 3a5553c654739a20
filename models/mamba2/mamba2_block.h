// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One Mamba-2 mixer: in_proj -> causal depthwise conv -> SSD -> gated RMSNorm -> out_proj.

#include "models/mamba2/rms_norm_gated.h"

#include "models/precision/quantizable.h"
#include "models/precision/quantizable_conv.h"

#include <torch/torch.h>

namespace foxhunt::models::mamba2 {

/// Sizes and initialisation of a Mamba2Block (defaults follow the reference, sizes small).
struct Mamba2BlockOptions {
    explicit Mamba2BlockOptions(int64_t d_model) : d_model_(d_model) { }
    /// Width of the residual stream.
    TORCH_ARG(int64_t, d_model);
    /// SSM state size N per head.
    TORCH_ARG(int64_t, d_state) = 16;
    /// Causal depthwise convolution width.
    TORCH_ARG(int64_t, d_conv) = 4;
    /// d_inner = expand * d_model.
    TORCH_ARG(int64_t, expand) = 2;
    /// Channels per head P; heads = d_inner / head_dim.
    TORCH_ARG(int64_t, head_dim) = 16;
    /// Groups sharing B and C (heads % ngroups == 0).
    TORCH_ARG(int64_t, ngroups) = 1;
    /// Smallest initial step size.
    TORCH_ARG(double, dt_min) = 1e-3;
    /// Largest initial step size.
    TORCH_ARG(double, dt_max) = 0.1;
    /// Floor applied to the sampled initial step sizes.
    TORCH_ARG(double, dt_init_floor) = 1e-4;
    /// A is initialised uniformly in [a_init_min, a_init_max] (then A = -exp(A_log)).
    TORCH_ARG(double, a_init_min) = 1.0;
    /// Upper bound of A's initial range.
    TORCH_ARG(double, a_init_max) = 16.0;
    /// Chunk length of the SSD scan.
    TORCH_ARG(int64_t, chunk_size) = 64;
    /// Use the sequential scan instead of the chunked one (reference/testing).
    TORCH_ARG(bool, sequential_scan) = false;
};

/// Recurrent state of one block for bar-by-bar inference: O(1) in sequence length.
struct Mamba2State {
    /// Last d_conv inputs of the convolution, [B, conv_dim, d_conv].
    torch::Tensor conv;
    /// SSM state, [B, H, P, N].
    torch::Tensor ssm;
};

/// The Mamba-2 mixer of Dao & Gu (2024), without the residual and pre-norm (the caller owns those).
class Mamba2BlockImpl : public torch::nn::Module {
public:
    /// Builds and initialises the block.
    explicit Mamba2BlockImpl(const Mamba2BlockOptions& options);

    // u: [B, L, D] -> [B, L, D]
    /// Full-sequence forward.
    torch::Tensor forward(const torch::Tensor& u);
    // u: [B, L, D] -> [B, L, D]; fills state with the state after the last step.
    /// Full-sequence forward that also returns the recurrent state for continuing with step().
    torch::Tensor forward_with_state(const torch::Tensor& u, Mamba2State& state);

    // u: [B, L, D] -> [B, D]
    /// forward(u) at the last position only, what a forecaster's head reads: the scan runs to its
    /// final state, and the gate, the norm and out_proj see the last bar alone.
    torch::Tensor forward_last(const torch::Tensor& u);

    /// A zero state for batch size `batch`.
    Mamba2State initial_state(int64_t batch) const;
    // u: [B, D] -> [B, D]; advances state in place.
    /// One bar of recurrent inference.
    torch::Tensor step(const torch::Tensor& u, Mamba2State& state);

    /// A = -exp(A_log), [H].
    torch::Tensor A() const;

    /// Number of heads H.
    int64_t heads() const { return m_heads; }
    /// Inner width d_inner.
    int64_t d_inner() const { return m_d_inner; }

    /// The options it was built with.
    Mamba2BlockOptions options;
    /// Projection to (z, x, B, C, dt).
    precision::QuantizableLinear in_proj{nullptr};
    /// Depthwise causal convolution over (x, B, C).
    precision::QuantizableDepthwiseConv1d conv1d{nullptr};
    /// Output norm, gated by silu(z).
    RmsNormGated norm{nullptr};
    /// Projection back to d_model.
    precision::QuantizableLinear out_proj{nullptr};
    /// log(-A) per head, [H].
    torch::Tensor A_log;
    /// Bias of dt before softplus, [H].
    torch::Tensor dt_bias;
    /// Skip connection weight per head, [H].
    torch::Tensor D;

private:
    /// The scan's inputs at every step, after the causal convolution and SiLU.
    struct ScanInputs {
        /// x: [B, L, H, P]
        torch::Tensor x;
        /// dt after softplus: [B, L, H]
        torch::Tensor dt;
        /// B, C: [B, L, G, N]
        torch::Tensor B, C;
    };
    // xbc: [B, L, conv_dim], dt_raw: [B, L, H] (before dt_bias and softplus)
    ScanInputs scan_inputs(const torch::Tensor& xbc, const torch::Tensor& dt_raw);

    int64_t m_d_inner = 0;
    int64_t m_heads = 0;
    int64_t m_conv_dim = 0;
};
TORCH_MODULE(Mamba2Block);

} // namespace foxhunt::models::mamba2
