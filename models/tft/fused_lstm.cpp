// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/tft/fused_lstm.h"

#include "models/tft/inference_kernels.h"

#include <torch/autograd.h>

#include <vector>

namespace foxhunt::models::tft {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// tanh(x) = 2 sigmoid(2x) - 1: the cell-gate rows are computed at twice their pre-activation, so
// that one vectorised sigmoid_ per step covers all four gates.
class FusedLstmFunction : public torch::autograd::Function<FusedLstmFunction> {
public:
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& h0,
                                 const torch::Tensor& c0, const torch::Tensor& w_ih, const torch::Tensor& w_hh,
                                 const torch::Tensor& b_ih, const torch::Tensor& b_hh)
    {
        torch::NoGradGuard ng;
        const int64_t batch = x.size(0), steps = x.size(1), in = x.size(2), hidden = h0.size(1);
        const int64_t g4 = 4 * hidden;
        // The cell-gate rows doubled (exact in binary floating point).
        auto twice = torch::ones({g4, 1}, x.options());
        twice.narrow(0, 2 * hidden, hidden).fill_(2.0);
        auto w_ih2 = (w_ih * twice).contiguous();
        auto w_hh2_t = (w_hh * twice).t().contiguous(); // [H, 4H]
        auto bias2 = (b_ih + b_hh) * twice.view({g4});
        auto x_tm = x.transpose(0, 1).contiguous(); // [T, B, I]
        auto gates = torch::addmm(bias2, x_tm.view({steps * batch, in}), w_ih2.t()).view({steps, batch, g4});
        auto hs = torch::empty({steps + 1, batch, hidden}, x.options());
        auto cs = torch::empty({steps + 1, batch, hidden}, x.options());
        auto tanh_c = torch::empty({steps, batch, hidden}, x.options());
        hs[0].copy_(h0);
        cs[0].copy_(c0);
        for (int64_t t = 0; t < steps; ++t) {
            auto g = gates[t];
            g.addmm_(hs[t], w_hh2_t);
            g.sigmoid_(); // i, f, (g + 1) / 2, o
            float* gp = g.data_ptr<float>();
            const float* cp = cs[t].data_ptr<float>();
            float* cn = cs[t + 1].data_ptr<float>();
            float* tc = tanh_c[t].data_ptr<float>();
            for (int64_t b = 0; b < batch; ++b) {
                float* row = gp + b * g4;
                for (int64_t j = 0; j < hidden; ++j) {
                    const float cell = 2.0f * row[2 * hidden + j] - 1.0f;
                    row[2 * hidden + j] = cell; // keep tanh(g) for backward
                    const float c = row[hidden + j] * cp[b * hidden + j] + row[j] * cell;
                    cn[b * hidden + j] = c;
                    tc[b * hidden + j] = 2.0f * c;
                }
            }
            auto tct = tanh_c[t];
            tct.sigmoid_();
            float* hn = hs[t + 1].data_ptr<float>();
            for (int64_t b = 0; b < batch; ++b)
                for (int64_t j = 0; j < hidden; ++j) {
                    const float th = 2.0f * tc[b * hidden + j] - 1.0f;
                    tc[b * hidden + j] = th;
                    hn[b * hidden + j] = gp[b * g4 + 3 * hidden + j] * th;
                }
        }
        ctx->save_for_backward({x_tm, w_ih, w_hh, gates, hs, cs, tanh_c});
        auto output = hs.narrow(0, 1, steps).transpose(0, 1).contiguous();
        return {output, hs[steps].clone(), cs[steps].clone()};
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads)
    {
        const auto saved = ctx->get_saved_variables();
        const auto& x_tm = saved[0];
        const auto& w_ih = saved[1];
        const auto& w_hh = saved[2];
        const auto& acts = saved[3];
        const auto& hs = saved[4];
        const auto& cs = saved[5];
        const auto& tanh_c = saved[6];
        const int64_t steps = x_tm.size(0), batch = x_tm.size(1), in = x_tm.size(2), hidden = hs.size(2);
        const int64_t g4 = 4 * hidden;
        const auto opts = x_tm.options();
        auto go = grads[0].defined() ? grads[0].transpose(0, 1).contiguous()
                                     : torch::zeros({steps, batch, hidden}, opts);
        auto dh = grads[1].defined() ? grads[1].clone().contiguous() : torch::zeros({batch, hidden}, opts);
        auto dc = grads[2].defined() ? grads[2].clone().contiguous() : torch::zeros({batch, hidden}, opts);
        auto dgates = torch::empty({steps, batch, g4}, opts);
        auto w_hh_c = w_hh.contiguous();
        for (int64_t t = steps - 1; t >= 0; --t) {
            const float* a = acts[t].data_ptr<float>();
            const float* tc = tanh_c[t].data_ptr<float>();
            const float* cp = cs[t].data_ptr<float>();
            const float* gt = go[t].data_ptr<float>();
            float* dhp = dh.data_ptr<float>();
            float* dcp = dc.data_ptr<float>();
            float* dg = dgates[t].data_ptr<float>();
            for (int64_t b = 0; b < batch; ++b) {
                const float* row = a + b * g4;
                float* drow = dg + b * g4;
                for (int64_t j = 0; j < hidden; ++j) {
                    const int64_t k = b * hidden + j;
                    const float i = row[j], f = row[hidden + j], g = row[2 * hidden + j], o = row[3 * hidden + j];
                    const float h_grad = dhp[k] + gt[k];
                    const float c_grad = dcp[k] + h_grad * o * (1.0f - tc[k] * tc[k]);
                    drow[j] = c_grad * g * i * (1.0f - i);
                    drow[hidden + j] = c_grad * cp[k] * f * (1.0f - f);
                    drow[2 * hidden + j] = c_grad * i * (1.0f - g * g);
                    drow[3 * hidden + j] = h_grad * tc[k] * o * (1.0f - o);
                    dcp[k] = c_grad * f;
                }
            }
            torch::mm_out(dh, dgates[t], w_hh_c);
        }
        auto dg_flat = dgates.view({steps * batch, g4});
        auto grad_w_hh = dg_flat.t().mm(hs.narrow(0, 0, steps).reshape({steps * batch, hidden}));
        auto grad_w_ih = dg_flat.t().mm(x_tm.view({steps * batch, in}));
        auto grad_b = dg_flat.sum(0);
        auto grad_x = dg_flat.mm(w_ih).view({steps, batch, in}).transpose(0, 1);
        return {grad_x, dh, dc, grad_w_ih, grad_w_hh, grad_b, grad_b.clone()};
    }
};

} // namespace

FusedLstmOutput fused_lstm(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& c0,
                           const torch::Tensor& w_ih, const torch::Tensor& w_hh, const torch::Tensor& b_ih,
                           const torch::Tensor& b_hh)
{
    TORCH_CHECK(x.dim() == 3 && x.device().is_cpu() && x.scalar_type() == torch::kFloat,
                "fused_lstm: x must be float32 [B, T, I] on the CPU, got ", x.sizes(), " ", x.scalar_type());
    const int64_t hidden = w_hh.size(1);
    TORCH_CHECK(h0.dim() == 2 && h0.size(0) == x.size(0) && h0.size(1) == hidden && c0.sizes() == h0.sizes(),
                "fused_lstm: h0 and c0 must be [B, ", hidden, "], got ", h0.sizes(), " and ", c0.sizes());
    TORCH_CHECK(w_ih.sizes() == torch::IntArrayRef({4 * hidden, x.size(2)}) && w_hh.size(0) == 4 * hidden &&
                    b_ih.numel() == 4 * hidden && b_hh.numel() == 4 * hidden,
                "fused_lstm: weights must be [4H, I], [4H, H] and biases [4H]");
    if (!torch::GradMode::is_enabled() && lstm_recurrence_supports(hidden)) {
        // Inference: the input projections of all steps in one product, then the recurrence in
        // one kernel call instead of about eight operators per step.
        const int64_t batch = x.size(0), steps = x.size(1), in = x.size(2);
        const auto gates_x =
            torch::addmm(b_ih + b_hh, x.reshape({batch * steps, in}), w_ih.t()).view({batch, steps, 4 * hidden});
        return lstm_from_projections(gates_x, w_hh, h0, c0);
    }
    auto r = FusedLstmFunction::apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh);
    return {r[0], r[1], r[2]};
}

FusedLstmOutput lstm_from_projections(const torch::Tensor& gates_x, const torch::Tensor& w_hh, const torch::Tensor& h0,
                                      const torch::Tensor& c0)
{
    const int64_t hidden = w_hh.size(1);
    TORCH_CHECK(gates_x.dim() == 3 && gates_x.size(2) == 4 * hidden && gates_x.device().is_cpu() &&
                    gates_x.scalar_type() == torch::kFloat && lstm_recurrence_supports(hidden),
                "lstm_from_projections: gates must be float32 [B, T, 4H] on the CPU with H 16, 32 or 64, got ",
                gates_x.sizes(), " ", gates_x.scalar_type());
    const int64_t batch = gates_x.size(0), steps = gates_x.size(1);
    TORCH_CHECK(h0.sizes() == torch::IntArrayRef({batch, hidden}) && c0.sizes() == h0.sizes(),
                "lstm_from_projections: h0 and c0 must be [", batch, ", ", hidden, "]");
    const auto g = gates_x.contiguous();
    const auto w_hh_t = w_hh.t().contiguous().to(torch::kFloat);
    const auto h = h0.contiguous(), c = c0.contiguous();
    FusedLstmOutput out{torch::empty({batch, steps, hidden}, g.options()), torch::empty({batch, hidden}, g.options()),
                        torch::empty({batch, hidden}, g.options())};
    lstm_recurrence(g.data_ptr<float>(), w_hh_t.data_ptr<float>(), h.data_ptr<float>(), c.data_ptr<float>(),
                    out.output.data_ptr<float>(), out.h_n.data_ptr<float>(), out.c_n.data_ptr<float>(), batch, steps,
                    hidden);
    return out;
}

} // namespace foxhunt::models::tft
