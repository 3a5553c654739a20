// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/causal_conv.h"

#include "models/mamba2/inference_kernels.h"
#include "models/mamba2/kernel_path.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <type_traits>

namespace foxhunt::models::mamba2 {
namespace {

// Channels per task: rows of a block stay in cache while its K taps are applied.
constexpr int64_t kChannelBlock = 64;

struct ConvShape {
    int64_t batch, length, channels, taps;
};

// Every loop below runs over one block of channels, innermost over the contiguous channel axis
// so that it vectorises; a block owns its channels' weight and bias gradients outright, so tasks
// need no reduction. Width is the block's channel count when known at compile time (full blocks)
// and 0 for the ragged last one: GCC's -O2 cost model vectorises only loops whose trip count
// needs no scalar epilogue, so a fixed width is what makes the full blocks vectorise.

template <int64_t Width>
int64_t block_width(int64_t c0, int64_t c1)
{
    return Width > 0 ? Width : c1 - c0;
}

// y[b, t, c] = bias[c] + sum_k wt[k, c] x[b, t - K + 1 + k, c]; x rows at (b * x_batch + t * x_step).
template <typename T, int64_t Width>
void forward_block(const T* __restrict x, int64_t x_batch, int64_t x_step, const T* __restrict wt,
                   const T* __restrict bias, T* __restrict y, const ConvShape& s, int64_t c0, int64_t c1)
{
    const int64_t w = block_width<Width>(c0, c1);
    for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t t = 0; t < s.length; ++t) {
            T* __restrict out = y + (b * s.length + t) * s.channels + c0;
            for (int64_t c = 0; c < w; ++c) out[c] = bias[c0 + c];
            for (int64_t k = 0; k < s.taps; ++k) {
                const int64_t src = t - (s.taps - 1) + k;
                if (src < 0) continue;
                const T* __restrict in = x + b * x_batch + src * x_step + c0;
                const T* __restrict wk = wt + k * s.channels + c0;
                for (int64_t c = 0; c < w; ++c) out[c] += wk[c] * in[c];
            }
        }
    }
}

// gx[b, s, c] = sum_k wt[k, c] g[b, s + K - 1 - k, c] over the outputs that step s feeds.
template <typename T, int64_t Width>
void input_grad_block(const T* __restrict g, const T* __restrict wt, T* __restrict gx, const ConvShape& s, int64_t c0,
                      int64_t c1)
{
    const int64_t w = block_width<Width>(c0, c1);
    for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t src = 0; src < s.length; ++src) {
            T* __restrict out = gx + (b * s.length + src) * s.channels + c0;
            for (int64_t c = 0; c < w; ++c) out[c] = T(0);
            for (int64_t k = 0; k < s.taps; ++k) {
                const int64_t t = src + (s.taps - 1) - k;
                if (t >= s.length) continue;
                const T* __restrict go = g + (b * s.length + t) * s.channels + c0;
                const T* __restrict wk = wt + k * s.channels + c0;
                for (int64_t c = 0; c < w; ++c) out[c] += wk[c] * go[c];
            }
        }
    }
}

// gwt[k, c] = sum_{b,t} g[b, t, c] x[b, t - K + 1 + k, c]; gb[c] = sum_{b,t} g[b, t, c].
template <typename T, int64_t Width>
void param_grad_block(const T* __restrict g, const T* __restrict x, int64_t x_batch, int64_t x_step, T* __restrict gwt,
                      T* __restrict gb, const ConvShape& s, int64_t c0, int64_t c1)
{
    const int64_t w = block_width<Width>(c0, c1);
    T* __restrict gbc = gb + c0;
    for (int64_t k = 0; k < s.taps; ++k)
        for (int64_t c = 0; c < w; ++c) gwt[k * s.channels + c0 + c] = T(0);
    for (int64_t c = 0; c < w; ++c) gbc[c] = T(0);
    for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t t = 0; t < s.length; ++t) {
            const T* __restrict go = g + (b * s.length + t) * s.channels + c0;
            for (int64_t c = 0; c < w; ++c) gbc[c] += go[c];
            for (int64_t k = 0; k < s.taps; ++k) {
                const int64_t src = t - (s.taps - 1) + k;
                if (src < 0) continue;
                const T* __restrict in = x + b * x_batch + src * x_step + c0;
                T* __restrict gw = gwt + k * s.channels + c0;
                for (int64_t c = 0; c < w; ++c) gw[c] += go[c] * in[c];
            }
        }
    }
}

ConvShape shape_of(const torch::Tensor& x, const torch::Tensor& weight)
{
    return {x.size(0), x.size(1), x.size(2), weight.size(1)};
}

// Runs `block(width, c0, c1)` over the channels in blocks, in parallel when intra-op threads
// allow; `width` is std::integral_constant<int64_t, kChannelBlock> for a full block, of 0 otherwise.
template <class Block>
void for_channel_blocks(int64_t channels, Block&& block)
{
    at::parallel_for(0, (channels + kChannelBlock - 1) / kChannelBlock, 1, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
            const int64_t c0 = i * kChannelBlock;
            const int64_t c1 = std::min(channels, c0 + kChannelBlock);
            if (c1 - c0 == kChannelBlock) block(std::integral_constant<int64_t, kChannelBlock>{}, c0, c1);
            else block(std::integral_constant<int64_t, 0>{}, c0, c1);
        }
    });
}

class CausalConvFunction : public torch::autograd::Function<CausalConvFunction> {
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x_in,
                                 const torch::Tensor& weight, const torch::Tensor& bias)
    {
        // Rows may be strided (a slice of in_proj's output); channels must be contiguous.
        auto x = x_in.stride(2) == 1 ? x_in : x_in.contiguous();
        const ConvShape s = shape_of(x, weight);
        auto wt = weight.t().contiguous(); // [K, C]
        auto b = bias.contiguous();
        auto y = torch::empty({s.batch, s.length, s.channels}, x.options());
        AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "causal_depthwise_conv1d", [&] {
            for_channel_blocks(s.channels, [&](auto width, int64_t c0, int64_t c1) {
                forward_block<scalar_t, decltype(width)::value>(x.data_ptr<scalar_t>(), x.stride(0), x.stride(1),
                                                                wt.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                                                                y.data_ptr<scalar_t>(), s, c0, c1);
            });
        });
        ctx->save_for_backward({x, wt});
        return y;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto& x = saved[0];
        const auto& wt = saved[1];
        const ConvShape s{x.size(0), x.size(1), x.size(2), wt.size(0)};
        auto g = grads[0].contiguous();
        torch::Tensor gx, gwt, gb;
        if (ctx->needs_input_grad(0)) gx = torch::empty({s.batch, s.length, s.channels}, x.options());
        const bool params = ctx->needs_input_grad(1) || ctx->needs_input_grad(2);
        if (params) {
            gwt = torch::empty({s.taps, s.channels}, x.options());
            gb = torch::empty({s.channels}, x.options());
        }
        AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "causal_depthwise_conv1d_backward", [&] {
            for_channel_blocks(s.channels, [&](auto width, int64_t c0, int64_t c1) {
                if (gx.defined())
                    input_grad_block<scalar_t, decltype(width)::value>(g.data_ptr<scalar_t>(), wt.data_ptr<scalar_t>(),
                                                                       gx.data_ptr<scalar_t>(), s, c0, c1);
                if (params)
                    param_grad_block<scalar_t, decltype(width)::value>(
                        g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), x.stride(0), x.stride(1),
                        gwt.data_ptr<scalar_t>(), gb.data_ptr<scalar_t>(), s, c0, c1);
            });
        });
        return {gx, params ? gwt.t().contiguous() : torch::Tensor(), params ? gb : torch::Tensor()};
    }
};

} // namespace

torch::Tensor causal_depthwise_conv1d(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)
{
    TORCH_CHECK(x.dim() == 3, "causal_depthwise_conv1d: x must be [B, L, C], got ", x.sizes());
    TORCH_CHECK(weight.dim() == 2 && weight.size(0) == x.size(2) && weight.size(1) > 0,
                "causal_depthwise_conv1d: weight must be [C, K] with C = ", x.size(2), ", got ", weight.sizes());
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == x.size(2), "causal_depthwise_conv1d: bias must be [", x.size(2),
                "], got ", bias.sizes());
    // Also under CPU autocast: the loop is not an autocast op, so it stays in float. A depthwise
    // convolution is memory-bound, so BF16 would gain nothing here, and 1.13's oneDNN BF16 kernel
    // and BF16 SiLU after it (forward and backward) cost more than the whole FP32 path.
    const bool direct = x.is_cpu() && weight.is_cpu() && bias.is_cpu() &&
                        (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble) &&
                        weight.scalar_type() == x.scalar_type() && bias.scalar_type() == x.scalar_type();
    if (direct) return CausalConvFunction::apply(x, weight, bias);
    const int64_t taps = weight.size(1);
    return torch::conv1d(x.transpose(1, 2), weight.unsqueeze(1), bias, /*stride=*/1, /*padding=*/taps - 1,
                         /*dilation=*/1, /*groups=*/x.size(2))
        .narrow(2, 0, x.size(1))
        .transpose(1, 2);
}

torch::Tensor causal_conv1d_silu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias)
{
    if (x.dim() != 3 || !inference_kernels_apply({x, weight, bias})) {
        auto y = causal_depthwise_conv1d(x, weight, bias);
        // Without a graph the activation overwrites the convolution's fresh buffer.
        return y.requires_grad() ? torch::silu(y) : torch::silu_(y);
    }
    TORCH_CHECK(weight.dim() == 2 && weight.size(0) == x.size(2) && weight.size(1) > 0,
                "causal_conv1d_silu: weight must be [C, K] with C = ", x.size(2), ", got ", weight.sizes());
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == x.size(2), "causal_conv1d_silu: bias must be [", x.size(2),
                "], got ", bias.sizes());
    const auto xs = x.stride(2) == 1 ? x : x.contiguous();
    const auto wt = weight.t().contiguous(); // [K, C]
    const auto b = bias.contiguous();
    auto y = torch::empty({x.size(0), x.size(1), x.size(2)}, x.options());
    if (y.numel() == 0) return y;
    ConvOperands o;
    o.x = xs.data_ptr<float>();
    o.x_batch = xs.stride(0);
    o.x_step = xs.stride(1);
    o.wt = wt.data_ptr<float>();
    o.bias = b.data_ptr<float>();
    o.y = y.data_ptr<float>();
    o.batch = x.size(0);
    o.length = x.size(1);
    o.channels = x.size(2);
    o.taps = weight.size(1);
    at::parallel_for(0, o.batch * o.length, 16,
                     [&](int64_t first, int64_t last) { causal_conv_silu_rows(o, first, last); });
    return y;
}

} // namespace foxhunt::models::mamba2
