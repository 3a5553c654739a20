// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// State-space duality (SSD) scan of Mamba-2: the chunked matmul algorithm and
// the plain sequential recurrence it must agree with.

#include <torch/torch.h>

#include <cstdint>

namespace foxhunt::models::mamba2 {

/// Output of a scan: per-step outputs and the state after the last step.
struct SsdResult {
    /// y: [B, L, H, P]
    torch::Tensor y;
    /// final_state: [B, H, P, N]
    torch::Tensor final_state;
};

/// Stable segment sum: out[..., i, j] = sum(a[..., j+1 .. i]) for j <= i, -inf above the diagonal.
/// a: [..., T] -> [..., T, T]
torch::Tensor segsum(const torch::Tensor& a);

/// Chunked SSD (matmul form). dt is already positive (after softplus); the
/// sequence is zero-padded to a multiple of chunk_size, which leaves the state unchanged.
/// x: [B, L, H, P], dt: [B, L, H], A: [H], B/C: [B, L, G, N] with H % G == 0,
/// initial_state: undefined or [B, H, P, N] -> y [B, L, H, P], final_state [B, H, P, N]
SsdResult ssd_chunked(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, int64_t chunk_size, const torch::Tensor& initial_state = {});

/// The state after the last step alone, h_L = sum_t exp(dt_{t+1} A + ... + dt_L A) dt_t x_t B_t^T
/// (+ exp(sum_t dt_t A) h_0): one weighted product over the whole sequence, no chunks, no outputs.
/// x: [B, L, H, P], dt: [B, L, H], A: [H], B: [B, L, G, N], initial_state: undefined or
/// [B, H, P, N] -> [B, H, P, N]
torch::Tensor ssd_final_state(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                              const torch::Tensor& B, const torch::Tensor& initial_state = {});

/// Whether ssd_scan() serves these operands: float32 CPU tensors that need no autograd graph
/// (grad mode off, or none of them requiring a gradient).
bool ssd_scan_applies(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C);

/// Inference: the recurrence run directly, one pass over the sequence per head with the state in
/// vector registers (inference_kernels.h), in parallel over batch rows and heads. Same shapes and
/// result as ssd_sequential(), to float rounding; with D ([H]) defined, y also gains D x. With
/// outputs false only the final state is formed (y stays undefined; C is not read).
SsdResult ssd_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                   const torch::Tensor& C, const torch::Tensor& D = {}, const torch::Tensor& initial_state = {},
                   bool outputs = true);

/// Sequential reference scan, h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t.
/// Same shapes as ssd_chunked.
SsdResult ssd_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                         const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& initial_state = {});

/// One recurrence step. x: [B, H, P], dt: [B, H], A: [H], B/C: [B, G, N],
/// state: [B, H, P, N] -> y [B, H, P], final_state (the new state) [B, H, P, N]
SsdResult ssd_step(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                   const torch::Tensor& C, const torch::Tensor& state);

} // namespace foxhunt::models::mamba2
