// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mamba2/ssd.h"

#include "models/compat.h"
#include "models/mamba2/inference_kernels.h"
#include "models/mamba2/kernel_path.h"

#include <ATen/Parallel.h>

#include <limits>

namespace foxhunt::models::mamba2 {
namespace {

struct ScanShape {
    int64_t batch, length, heads, head_dim, groups, state;
};

ScanShape check_scan_inputs(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                            const torch::Tensor& B, const torch::Tensor& C)
{
    TORCH_CHECK(x.dim() == 4, "ssd: x must be [B, L, H, P], got ", x.sizes());
    const ScanShape s{x.size(0), x.size(1), x.size(2), x.size(3), B.size(2), B.size(3)};
    TORCH_CHECK(dt.dim() == 3 && dt.size(0) == s.batch && dt.size(1) == s.length && dt.size(2) == s.heads,
                "ssd: dt must be [B, L, H] = ", std::vector<int64_t>{s.batch, s.length, s.heads}, ", got ", dt.sizes());
    TORCH_CHECK(A.dim() == 1 && A.size(0) == s.heads, "ssd: A must be [H] with H = ", s.heads, ", got ", A.sizes());
    TORCH_CHECK(B.dim() == 4 && B.size(0) == s.batch && B.size(1) == s.length, "ssd: B must be [B, L, G, N], got ",
                B.sizes());
    TORCH_CHECK(C.sizes() == B.sizes(), "ssd: C must have B's shape ", B.sizes(), ", got ", C.sizes());
    TORCH_CHECK(s.groups > 0 && s.heads % s.groups == 0, "ssd: heads (", s.heads, ") must be a multiple of groups (",
                s.groups, ")");
    return s;
}

void check_state(const torch::Tensor& state, const ScanShape& s)
{
    if (!state.defined()) return;
    TORCH_CHECK(state.dim() == 4 && state.size(0) == s.batch && state.size(1) == s.heads &&
                    state.size(2) == s.head_dim && state.size(3) == s.state,
                "ssd: state must be [B, H, P, N] = ", std::vector<int64_t>{s.batch, s.heads, s.head_dim, s.state},
                ", got ", state.sizes());
}

// Group g serves heads [g * H/G, (g+1) * H/G), as in the reference's "(g h)" layout.
// t: [..., G, N] -> [..., H, N]
torch::Tensor groups_to_heads(const torch::Tensor& t, int64_t heads)
{
    const int64_t groups = t.size(-2);
    if (groups == heads) return t;
    auto sizes = t.sizes().vec();
    const int64_t n = sizes.back();
    sizes.pop_back();
    sizes.pop_back();
    auto expanded_sizes = sizes;
    expanded_sizes.push_back(groups);
    expanded_sizes.push_back(heads / groups);
    expanded_sizes.push_back(n);
    sizes.push_back(heads);
    sizes.push_back(n);
    return t.unsqueeze(-2).expand(expanded_sizes).reshape(sizes);
}

// [T, T*T + T] of 0/1: a @ it holds, per row a of length T, the segment sums
// seg[i][j] = a[j+1] + ... + a[i] (0 for j >= i) in its first T*T columns and the prefix sums
// a[0] + ... + a[i] in its last T. Each is a sum of the segment's own terms, so it is as precise as
// segsum()'s masked cumsum, at the cost of one small matmul instead of a cumsum over [T, T] per row.
torch::Tensor chunk_sum_matrix(int64_t T, const torch::TensorOptions& options)
{
    auto k = torch::arange(T, options.dtype(torch::kLong));
    auto in_segment = (k.view({1, 1, T}) < k.view({T, 1, 1})) & (k.view({T, 1, 1}) <= k.view({1, T, 1}));
    auto in_prefix = k.view({T, 1}) <= k.view({1, T});
    return torch::cat({in_segment.view({T, T * T}), in_prefix}, /*dim=*/1).to(options.dtype());
}

} // namespace

torch::Tensor segsum(const torch::Tensor& a)
{
    const int64_t T = a.size(-1);
    auto opts = torch::TensorOptions().dtype(torch::kBool).device(a.device());
    // Masking before the cumsum keeps it a sum of the segment's own terms, instead of a
    // difference of two long prefix sums that loses precision.
    std::vector<int64_t> sizes = a.sizes().vec();
    sizes.push_back(T);
    auto rep = a.unsqueeze(-1).expand(sizes);
    auto strict = torch::tril(torch::ones({T, T}, opts), /*diagonal=*/-1);
    rep = rep.masked_fill(strict.logical_not(), 0);
    auto out = torch::cumsum(rep, /*dim=*/-2);
    auto lower = torch::tril(torch::ones({T, T}, opts), /*diagonal=*/0);
    return out.masked_fill(lower.logical_not(), -std::numeric_limits<double>::infinity());
}

SsdResult ssd_chunked(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, int64_t chunk_size, const torch::Tensor& initial_state)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, C);
    check_state(initial_state, s);
    TORCH_CHECK(chunk_size > 0, "ssd: chunk_size must be positive, got ", chunk_size);

    const int64_t b = s.batch, h = s.heads, p = s.head_dim, g = s.groups, n = s.state;
    const int64_t hg = h / g;
    const int64_t l = chunk_size;
    const int64_t pad = (l - s.length % l) % l;
    const int64_t c = (s.length + pad) / l;

    // dt = 0 on padded steps: decay exp(0) = 1 and input 0, so the final state is untouched.
    auto xp = x, dtp = dt, Bp = B, Cp = C;
    if (pad > 0) {
        namespace F = torch::nn::functional;
        xp = F::pad(x, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
        dtp = F::pad(dt, F::PadFuncOptions({0, 0, 0, pad}));
        Bp = F::pad(B, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
        Cp = F::pad(C, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
    }
    // The per-head products need x head-major; one copy serves the forward and both backward products.
    auto X = xp.reshape({b, c, l, h, p}).permute({0, 1, 3, 2, 4}).contiguous(); // [b c h l p]
    auto dth = dtp.reshape({b, c, l, h}).permute({0, 1, 3, 2});                 // [b c h l]
    auto Bg = Bp.reshape({b, c, l, g, n}).transpose(2, 3);                      // [b c g l n]
    auto Cg = Cp.reshape({b, c, l, g, n}).transpose(2, 3);

    // Segment sums and prefix sums of dt A within each chunk, all from one small matmul. Outside
    // autocast: these are log decays, and in BF16 their exponentials lose more than the inputs'
    // own rounding (the products below may run in the half type).
    torch::Tensor sums;
    {
        compat::autocast_excluded full_precision;
        sums = torch::matmul(dth * A.view({1, 1, h, 1}), chunk_sum_matrix(l, x.options()));
    }
    auto seg = sums.narrow(-1, 0, l * l).view({b, c, g, hg, l, l}); // [b c g hg l s]
    auto prefix = sums.narrow(-1, l * l, l);                        // [b c h l]

    // 1. Within each chunk: y = (C B^T o L o dt_s) X, the quadratic (attention-like) form. C B^T is
    //    per group, so it is formed before broadcasting to the heads.
    auto causal = torch::ones({l, l}, x.options()).tril();
    auto CB = torch::matmul(Cg, Bg.transpose(-1, -2)) * causal; // [b c g l s]
    auto M = torch::exp(seg) * CB.unsqueeze(3) * dth.reshape({b, c, g, hg, 1, l});
    auto y_diag = torch::matmul(M.reshape({b, c, h, l, l}), X); // [b c h l p]

    // 2. State each chunk contributes at its own end: sum_l x_l (dt_l exp(a_{l+1} + ...)) B_l^T.
    //    The weight is per head, so it goes on x, and all heads of a group share one product with B.
    auto w = torch::exp(seg.select(-2, l - 1)) * dth.reshape({b, c, g, hg, l}); // [b c g hg l]
    auto xw = xp.reshape({b, c, l, g, hg, p}) * w.permute({0, 1, 4, 2, 3}).unsqueeze(-1);
    auto states = torch::matmul(xw.reshape({b, c, l, g, hg * p}).permute({0, 1, 3, 4, 2}), Bg).reshape({b, c, h, p, n});

    // 3. Chunk-to-chunk recurrence on the states: one decay and add per chunk.
    auto chunk_decay = torch::exp(prefix.select(-1, l - 1)).reshape({b, c, h, 1, 1});
    std::vector<torch::Tensor> carried;
    carried.reserve(static_cast<size_t>(c));
    auto running = initial_state.defined() ? initial_state : torch::zeros({b, h, p, n}, x.options());
    for (int64_t z = 0; z < c; ++z) {
        carried.push_back(running);
        running = running * chunk_decay.select(1, z) + states.select(1, z);
    }

    // 4. Contribution of the state entering each chunk: exp(prefix_l) C_l h^T, again one product per group.
    auto entering = torch::stack(carried, /*dim=*/1).view({b, c, g, hg * p, n});
    auto y_off = torch::matmul(Cg, entering.transpose(-1, -2)) // [b c g l hg*p]
                     .view({b, c, g, l, hg, p})
                     .permute({0, 1, 3, 2, 4, 5})
                     .reshape({b, c, l, h, p});
    auto y = y_off * torch::exp(prefix).permute({0, 1, 3, 2}).unsqueeze(-1) + y_diag.permute({0, 1, 3, 2, 4});
    y = y.reshape({b, c * l, h, p});
    if (pad > 0) y = y.narrow(1, 0, s.length);
    return {y, running};
}

torch::Tensor ssd_final_state(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                              const torch::Tensor& B, const torch::Tensor& initial_state)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, B);
    check_state(initial_state, s);
    const int64_t b = s.batch, L = s.length, h = s.heads, p = s.head_dim, g = s.groups, n = s.state;

    // Suffix sums a_{t+1} + ... + a_L in the first L columns and the total in the last, as a 0/1
    // matrix product: each is a sum of its own terms, never a difference of long prefix sums.
    auto k = torch::arange(L, x.options().dtype(torch::kLong));
    auto suffix = torch::cat({k.view({L, 1}) > k.view({1, L}), torch::ones({L, 1}, k.options().dtype(torch::kBool))},
                             /*dim=*/1)
                      .to(x.scalar_type());
    torch::Tensor sums; // [b h L+1]
    {
        compat::autocast_excluded full_precision; // log decays, as in ssd_chunked()
        sums = torch::matmul((dt * A.view({1, 1, h})).transpose(1, 2), suffix);
    }
    auto w = torch::exp(sums.narrow(-1, 0, L)) * dt.transpose(1, 2); // [b h L]
    auto xw = x * w.transpose(1, 2).unsqueeze(-1);                   // [b L h p]
    auto state = torch::matmul(xw.reshape({b, L, g, (h / g) * p}).permute({0, 2, 3, 1}), B.transpose(1, 2))
                     .reshape({b, h, p, n});
    if (initial_state.defined()) state = state + torch::exp(sums.select(-1, L)).view({b, h, 1, 1}) * initial_state;
    return state;
}

bool ssd_scan_applies(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C)
{
    return inference_kernels_apply({x, dt, A, B, C});
}

SsdResult ssd_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                   const torch::Tensor& C, const torch::Tensor& D, const torch::Tensor& initial_state, bool outputs)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, C);
    check_state(initial_state, s);
    TORCH_CHECK(ssd_scan_applies(x, dt, A, B, C), "ssd_scan: float32 CPU tensors without autograd only");
    TORCH_CHECK(!D.defined() || (D.dim() == 1 && D.size(0) == s.heads), "ssd_scan: D must be [H] with H = ", s.heads,
                ", got ", D.sizes());
    // The kernel reads channels and state entries as contiguous runs; any other stride is free.
    const auto inner = [](const torch::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); };
    const auto xs = inner(x), Bs = inner(B), Cs = inner(C);
    const auto a = A.contiguous();
    const auto d = D.defined() ? D.to(torch::kFloat).contiguous() : D;
    const auto h0 = initial_state.defined() ? initial_state.to(torch::kFloat).contiguous() : initial_state;
    SsdResult r;
    r.final_state = torch::empty({s.batch, s.heads, s.head_dim, s.state}, x.options());
    if (outputs) r.y = torch::empty({s.batch, s.length, s.heads, s.head_dim}, x.options());

    ScanOperands o;
    o.x = xs.data_ptr<float>();
    o.x_batch = xs.stride(0), o.x_step = xs.stride(1), o.x_head = xs.stride(2);
    o.dt = dt.data_ptr<float>();
    o.dt_batch = dt.stride(0), o.dt_step = dt.stride(1), o.dt_head = dt.stride(2);
    o.A = a.data_ptr<float>();
    o.B = Bs.data_ptr<float>();
    o.b_batch = Bs.stride(0), o.b_step = Bs.stride(1), o.b_group = Bs.stride(2);
    o.C = Cs.data_ptr<float>();
    o.c_batch = Cs.stride(0), o.c_step = Cs.stride(1), o.c_group = Cs.stride(2);
    o.D = d.defined() ? d.data_ptr<float>() : nullptr;
    o.h0 = h0.defined() ? h0.data_ptr<float>() : nullptr;
    o.y = outputs ? r.y.data_ptr<float>() : nullptr;
    o.h_last = r.final_state.data_ptr<float>();
    o.batch = s.batch, o.length = s.length, o.heads = s.heads, o.head_dim = s.head_dim, o.groups = s.groups,
    o.state = s.state;
    at::parallel_for(0, s.batch * s.heads, 1, [&](int64_t first, int64_t last) { ssd_scan_range(o, first, last); });
    return r;
}

SsdResult ssd_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                         const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& initial_state)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, C);
    check_state(initial_state, s);
    auto state = initial_state.defined() ? initial_state
                                         : torch::zeros({s.batch, s.heads, s.head_dim, s.state}, x.options());
    std::vector<torch::Tensor> ys;
    ys.reserve(static_cast<size_t>(s.length));
    for (int64_t t = 0; t < s.length; ++t) {
        auto r = ssd_step(x.select(1, t), dt.select(1, t), A, B.select(1, t), C.select(1, t), state);
        state = r.final_state;
        ys.push_back(r.y);
    }
    auto y = s.length > 0 ? torch::stack(ys, /*dim=*/1) : torch::zeros_like(x);
    return {y, state};
}

SsdResult ssd_step(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                   const torch::Tensor& C, const torch::Tensor& state)
{
    TORCH_CHECK(x.dim() == 3, "ssd_step: x must be [B, H, P], got ", x.sizes());
    TORCH_CHECK(dt.dim() == 2 && dt.size(0) == x.size(0) && dt.size(1) == x.size(1),
                "ssd_step: dt must be [B, H], got ", dt.sizes());
    TORCH_CHECK(A.dim() == 1 && A.size(0) == x.size(1), "ssd_step: A must be [H], got ", A.sizes());
    TORCH_CHECK(B.dim() == 3 && B.size(0) == x.size(0) && C.sizes() == B.sizes(),
                "ssd_step: B and C must be [B, G, N], got ", B.sizes(), " and ", C.sizes());
    const int64_t heads = x.size(1);
    TORCH_CHECK(heads % B.size(1) == 0, "ssd_step: heads must be a multiple of groups");
    TORCH_CHECK(state.dim() == 4 && state.size(0) == x.size(0) && state.size(1) == heads &&
                    state.size(2) == x.size(2) && state.size(3) == B.size(2),
                "ssd_step: state must be [B, H, P, N], got ", state.sizes());
    auto Bh = groups_to_heads(B, heads); // [b h n]
    auto Ch = groups_to_heads(C, heads);
    // The decay is a per-head scalar that scales the whole [P, N] state.
    auto decay = torch::exp(dt * A.unsqueeze(0)).unsqueeze(-1).unsqueeze(-1); // [b h 1 1]
    auto input = (x * dt.unsqueeze(-1)).unsqueeze(-1) * Bh.unsqueeze(2);      // [b h p n]
    auto next = state * decay + input;
    auto y = (next * Ch.unsqueeze(2)).sum(-1); // [b h p]
    return {y, next};
}

} // namespace foxhunt::models::mamba2
