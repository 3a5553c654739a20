#include "models/mamba2/ssd.h"

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
    TORCH_CHECK(B.dim() == 4 && B.size(0) == s.batch && B.size(1) == s.length,
                "ssd: B must be [B, L, G, N], got ", B.sizes());
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
                "ssd: state must be [B, H, P, N] = ",
                std::vector<int64_t>{s.batch, s.heads, s.head_dim, s.state}, ", got ", state.sizes());
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

SsdResult ssd_chunked(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                      const torch::Tensor& B, const torch::Tensor& C, int64_t chunk_size,
                      const torch::Tensor& initial_state)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, C);
    check_state(initial_state, s);
    TORCH_CHECK(chunk_size > 0, "ssd: chunk_size must be positive, got ", chunk_size);

    const int64_t pad = (chunk_size - s.length % chunk_size) % chunk_size;
    const int64_t padded = s.length + pad;
    const int64_t chunks = padded / chunk_size;
    const int64_t l = chunk_size;

    // dt = 0 on padded steps: decay exp(0) = 1 and input 0, so the final state is untouched.
    auto xdt = x * dt.unsqueeze(-1);
    auto adt = dt * A.view({1, 1, s.heads});
    auto Bh = groups_to_heads(B, s.heads);
    auto Ch = groups_to_heads(C, s.heads);
    if (pad > 0) {
        namespace F = torch::nn::functional;
        xdt = F::pad(xdt, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
        adt = F::pad(adt, F::PadFuncOptions({0, 0, 0, pad}));
        Bh = F::pad(Bh, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
        Ch = F::pad(Ch, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
    }
    // Chunked views: X [b c l h p], B/C [b c l h n], A [b h c l].
    auto X = xdt.reshape({s.batch, chunks, l, s.heads, s.head_dim});
    auto Bc = Bh.reshape({s.batch, chunks, l, s.heads, s.state});
    auto Cc = Ch.reshape({s.batch, chunks, l, s.heads, s.state});
    auto Ac = adt.reshape({s.batch, chunks, l, s.heads}).permute({0, 3, 1, 2});
    auto A_cumsum = torch::cumsum(Ac, /*dim=*/-1);

    // 1. Within each chunk: y = (C B^T o L) X, the quadratic (attention-like) form.
    auto L = torch::exp(segsum(Ac));                                   // [b h c l s]
    auto y_diag = torch::einsum("bclhn,bcshn,bhcls,bcshp->bclhp", {Cc, Bc, L, X});

    // 2. State each chunk contributes at its own end, ignoring earlier chunks.
    auto decay_states = torch::exp(A_cumsum.narrow(-1, l - 1, 1) - A_cumsum);  // [b h c l]
    auto states = torch::einsum("bclhn,bhcl,bclhp->bchpn", {Bc, decay_states, X});

    // 3. Chunk-to-chunk recurrence on the states, itself a small segsum.
    auto init = initial_state.defined() ? initial_state.unsqueeze(1)
                                        : torch::zeros_like(states.narrow(1, 0, 1));
    states = torch::cat({init, states}, /*dim=*/1);                   // [b c+1 h p n]
    namespace F = torch::nn::functional;
    auto chunk_ends = F::pad(A_cumsum.select(-1, l - 1), F::PadFuncOptions({1, 0}));  // [b h c+1]
    auto decay_chunk = torch::exp(segsum(chunk_ends));                 // [b h c+1 c+1]
    auto new_states = torch::einsum("bhzc,bchpn->bzhpn", {decay_chunk, states});
    auto carried = new_states.narrow(1, 0, chunks);
    auto final_state = new_states.select(1, chunks);

    // 4. Contribution of the state entering each chunk to that chunk's outputs.
    auto state_decay_out = torch::exp(A_cumsum);                       // [b h c l]
    auto y_off = torch::einsum("bclhn,bchpn,bhcl->bclhp", {Cc, carried, state_decay_out});

    auto y = (y_diag + y_off).reshape({s.batch, padded, s.heads, s.head_dim});
    if (pad > 0) y = y.narrow(1, 0, s.length);
    return {y, final_state};
}

SsdResult ssd_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                         const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& initial_state)
{
    const ScanShape s = check_scan_inputs(x, dt, A, B, C);
    check_state(initial_state, s);
    auto state = initial_state.defined()
                     ? initial_state
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

SsdResult ssd_step(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                   const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& state)
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
    auto Bh = groups_to_heads(B, heads);                               // [b h n]
    auto Ch = groups_to_heads(C, heads);
    // The decay is a per-head scalar that scales the whole [P, N] state.
    auto decay = torch::exp(dt * A.unsqueeze(0)).unsqueeze(-1).unsqueeze(-1);  // [b h 1 1]
    auto input = (x * dt.unsqueeze(-1)).unsqueeze(-1) * Bh.unsqueeze(2);       // [b h p n]
    auto next = state * decay + input;
    auto y = (next * Ch.unsqueeze(2)).sum(-1);                         // [b h p]
    return {y, next};
}

} // namespace foxhunt::models::mamba2
