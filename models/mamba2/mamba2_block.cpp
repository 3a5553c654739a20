// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/mamba2_block.h"

#include "models/mamba2/causal_conv.h"
#include "models/mamba2/kernel_path.h"
#include "models/mamba2/ssd.h"

#include <cmath>

namespace foxhunt::models::mamba2 {

Mamba2BlockImpl::Mamba2BlockImpl(const Mamba2BlockOptions& options_) : options(options_)
{
    TORCH_CHECK(options.d_model() > 0 && options.expand() > 0 && options.d_state() > 0 && options.d_conv() > 0,
                "Mamba2Block: sizes must be positive");
    m_d_inner = options.expand() * options.d_model();
    TORCH_CHECK(m_d_inner % options.head_dim() == 0, "Mamba2Block: d_inner (", m_d_inner,
                ") must be a multiple of head_dim (", options.head_dim(), ")");
    m_heads = m_d_inner / options.head_dim();
    TORCH_CHECK(options.ngroups() > 0 && m_heads % options.ngroups() == 0, "Mamba2Block: heads (", m_heads,
                ") must be a multiple of ngroups (", options.ngroups(), ")");
    TORCH_CHECK(options.dt_min() > 0 && options.dt_max() >= options.dt_min(), "Mamba2Block: need 0 < dt_min <= dt_max");
    TORCH_CHECK(options.a_init_min() > 0 && options.a_init_max() >= options.a_init_min(),
                "Mamba2Block: need 0 < a_init_min <= a_init_max");

    const int64_t bc = 2 * options.ngroups() * options.d_state();
    m_conv_dim = m_d_inner + bc;
    const int64_t d_in_proj = 2 * m_d_inner + bc + m_heads;
    in_proj = register_module(
        "in_proj", precision::QuantizableLinear(torch::nn::LinearOptions(options.d_model(), d_in_proj).bias(false)));
    conv1d = register_module(
        "conv1d", precision::QuantizableDepthwiseConv1d(
                      precision::DepthwiseConv1dOptions(m_conv_dim, options.d_conv()).padding(options.d_conv() - 1)));

    torch::NoGradGuard no_grad;
    // dt log-uniform in [dt_min, dt_max]; dt_bias is its inverse softplus, so that
    // softplus(dt_bias) reproduces the sampled dt at initialisation.
    const double lo = std::log(options.dt_min());
    const double hi = std::log(options.dt_max());
    auto dt = torch::exp(torch::rand({m_heads}) * (hi - lo) + lo).clamp_min(options.dt_init_floor());
    auto inv_dt = dt + torch::log(-torch::expm1(-dt));
    dt_bias = register_parameter("dt_bias", inv_dt);

    auto a = torch::empty({m_heads}).uniform_(options.a_init_min(), options.a_init_max());
    A_log = register_parameter("A_log", torch::log(a));
    D = register_parameter("D", torch::ones({m_heads}));

    norm = register_module("norm",
                           RmsNormGated(RmsNormGatedOptions(m_d_inner).group_size(m_d_inner / options.ngroups())));
    out_proj = register_module(
        "out_proj", precision::QuantizableLinear(torch::nn::LinearOptions(m_d_inner, options.d_model()).bias(false)));
}

torch::Tensor Mamba2BlockImpl::A() const
{
    return -torch::exp(A_log);
}

torch::Tensor Mamba2BlockImpl::forward(const torch::Tensor& u)
{
    Mamba2State unused;
    return forward_with_state(u, unused);
}

Mamba2BlockImpl::ScanInputs Mamba2BlockImpl::scan_inputs(const torch::Tensor& xbc, const torch::Tensor& dt_raw)
{
    const int64_t batch = xbc.size(0);
    const int64_t length = xbc.size(1);
    const int64_t gn = options.ngroups() * options.d_state();
    // Causal: step t sees t-d_conv+1..t only. In in_proj's [B, L, C] layout for float and int8 taps
    // alike (an int8 copy's taps are dequantized: the convolution is memory-bound, its work tiny), so
    // neither transposes to [B, C, L] and back.
    auto act = causal_conv1d_silu(xbc, conv1d->taps(), conv1d->bias_values()); // [B, L, conv_dim]
    auto parts = act.split_with_sizes({m_d_inner, gn, gn}, /*dim=*/-1);
    return {parts[0].reshape({batch, length, m_heads, options.head_dim()}),
            torch::nn::functional::softplus(dt_raw + dt_bias),
            parts[1].reshape({batch, length, options.ngroups(), options.d_state()}),
            parts[2].reshape({batch, length, options.ngroups(), options.d_state()})};
}

torch::Tensor Mamba2BlockImpl::forward_with_state(const torch::Tensor& u, Mamba2State& state)
{
    TORCH_CHECK(u.dim() == 3 && u.size(2) == options.d_model(), "Mamba2Block: input must be [B, ", options.d_model(),
                "], got ", u.sizes());
    const int64_t batch = u.size(0);
    const int64_t length = u.size(1);

    // Under autocast in_proj returns the half type; the conv and the scan take the parameters' type
    // because cumulative sums of log decays over a chunk lose too many bits in FP16/BF16 (the
    // scan's matmuls may still run in the half type; its log-decay sums never do).
    auto zxbcdt = in_proj(u).to(A_log.scalar_type());
    auto parts = zxbcdt.split_with_sizes({m_d_inner, m_conv_dim, m_heads}, /*dim=*/-1);
    auto z = parts[0];
    auto xbc = parts[1];
    {
        const int64_t k = options.d_conv();
        auto xbc_t = xbc.transpose(1, 2); // [B, conv_dim, L]
        state.conv =
            length >= k
                ? xbc_t.narrow(2, length - k, k).detach().clone()
                : torch::nn::functional::pad(xbc_t, torch::nn::functional::PadFuncOptions({k - length, 0})).detach();
    }
    const ScanInputs in = scan_inputs(xbc, parts[2]);

    const auto a = A();
    torch::Tensor y;
    if (!options.sequential_scan() && inference_kernels_apply({in.x, in.dt, a, in.B, in.C, D})) {
        // Inference: the recurrence itself, with D x added in the same pass (no chunks, no padding).
        SsdResult r = ssd_scan(in.x, in.dt, a, in.B, in.C, D);
        state.ssm = r.final_state;
        y = r.y;
    } else {
        SsdResult r = options.sequential_scan() ? ssd_sequential(in.x, in.dt, a, in.B, in.C)
                                                : ssd_chunked(in.x, in.dt, a, in.B, in.C, options.chunk_size());
        state.ssm = r.final_state.detach();
        y = r.y + in.x * D.view({1, 1, m_heads, 1});
    }
    y = y.reshape({batch, length, m_d_inner});
    return out_proj(norm(y, z));
}

torch::Tensor Mamba2BlockImpl::forward_last(const torch::Tensor& u)
{
    TORCH_CHECK(u.dim() == 3 && u.size(2) == options.d_model() && u.size(1) > 0,
                "Mamba2Block: input must be [B, L > 0, ", options.d_model(), "], got ", u.sizes());
    if (options.sequential_scan()) return forward(u).select(1, u.size(1) - 1);
    const int64_t batch = u.size(0);
    const int64_t last = u.size(1) - 1;
    const auto type = A_log.scalar_type();

    torch::Tensor z_last, xbc, dt_raw;
    if (!in_proj->quantized() && !in_proj->observing()) {
        // Only the last bar's gate is used, so the z rows of in_proj multiply that bar alone: at
        // expand 2 this is a third of the block's matmul work, forward and backward (and at inference).
        // One split (not two narrows) so that backward assembles the weight's gradient in one piece.
        namespace F = torch::nn::functional;
        auto w = in_proj->weight.split_with_sizes({m_d_inner, m_conv_dim + m_heads}, /*dim=*/0);
        z_last = F::linear(u.select(1, last), w[0]).to(type);
        auto xbcdt = F::linear(u, w[1]).to(type);
        xbc = xbcdt.narrow(-1, 0, m_conv_dim);
        dt_raw = xbcdt.narrow(-1, m_conv_dim, m_heads);
    } else {
        // The layer's own forward, so int8 kernels and calibration observers see it as in forward()
        // (an int8 product serves all its output rows at once).
        auto parts = in_proj(u).to(type).split_with_sizes({m_d_inner, m_conv_dim, m_heads}, /*dim=*/-1);
        z_last = parts[0].select(1, last);
        xbc = parts[1];
        dt_raw = parts[2];
    }
    const ScanInputs in = scan_inputs(xbc, dt_raw);

    // y_L = h_L C_L + D x_L, with h_L the state after the last step; the heads of a group share C.
    const auto a = A();
    auto h_last = ssd_scan_applies(in.x, in.dt, a, in.B, in.C)
                      ? ssd_scan(in.x, in.dt, a, in.B, in.C, {}, {}, /*outputs=*/false).final_state
                      : ssd_final_state(in.x, in.dt, a, in.B); // [B, H, P, N]
    const int64_t g = options.ngroups();
    auto y = torch::matmul(h_last.view({batch, g, (m_heads / g) * options.head_dim(), options.d_state()}),
                           in.C.select(1, last).unsqueeze(-1)) // [B, G, H/G * P, 1]
                 .view({batch, m_heads, options.head_dim()});
    y = y + in.x.select(1, last) * D.view({1, m_heads, 1});
    return out_proj(norm(y.reshape({batch, m_d_inner}), z_last));
}

Mamba2State Mamba2BlockImpl::initial_state(int64_t batch) const
{
    auto opts = A_log.options();
    return {torch::zeros({batch, m_conv_dim, options.d_conv()}, opts),
            torch::zeros({batch, m_heads, options.head_dim(), options.d_state()}, opts)};
}

torch::Tensor Mamba2BlockImpl::step(const torch::Tensor& u, Mamba2State& state)
{
    TORCH_CHECK(u.dim() == 2 && u.size(1) == options.d_model(), "Mamba2Block::step: input must be [B, ",
                options.d_model(), "], got ", u.sizes());
    const int64_t batch = u.size(0);
    TORCH_CHECK(state.conv.defined() && state.conv.sizes() == torch::IntArrayRef({batch, m_conv_dim, options.d_conv()}),
                "Mamba2Block::step: conv state must be [", batch, ", ", m_conv_dim, ", ", options.d_conv(), "]");
    const int64_t gn = options.ngroups() * options.d_state();

    auto zxbcdt = in_proj(u).to(A_log.scalar_type());
    auto parts = zxbcdt.split_with_sizes({m_d_inner, m_conv_dim, m_heads}, /*dim=*/-1);
    auto z = parts[0];
    auto dt = torch::nn::functional::softplus(parts[2] + dt_bias);

    state.conv = torch::cat({state.conv.narrow(2, 1, options.d_conv() - 1), parts[1].unsqueeze(2)}, /*dim=*/2);
    auto conv_out = (state.conv * conv1d->taps().to(state.conv.scalar_type())).sum(-1) +
                    conv1d->bias_values().to(state.conv.scalar_type());
    auto act = torch::silu(conv_out);
    auto xbc_parts = act.split_with_sizes({m_d_inner, gn, gn}, /*dim=*/-1);
    auto x = xbc_parts[0].reshape({batch, m_heads, options.head_dim()});
    auto Bm = xbc_parts[1].reshape({batch, options.ngroups(), options.d_state()});
    auto Cm = xbc_parts[2].reshape({batch, options.ngroups(), options.d_state()});

    SsdResult r = ssd_step(x, dt, A(), Bm, Cm, state.ssm);
    state.ssm = r.final_state;
    auto y = r.y + x * D.view({1, m_heads, 1});
    return out_proj(norm(y.reshape({batch, m_d_inner}), z));
}

} // namespace foxhunt::models::mamba2
