// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Averages gradients over the ranks of a process group, bucketed and overlapped with the
// backward pass: a hook on each parameter copies its gradient into a flat bucket as autograd
// produces it, and a full bucket starts its all-reduce while backward carries on with earlier
// layers. Buckets start strictly in order, so every rank issues the same collectives in the same
// sequence. synchronize() (after backward, before unscale/clip/step) waits and writes the means
// into .grad(), so the AMP scaler's inf/NaN check and the clip see identical gradients everywhere.

#include "models/distributed/communicator.h"

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace foxhunt::models::dist {

/// What one synchronize() cost.
struct ReduceTimes {
    /// Wall time synchronize() blocked waiting for all-reduces (the exposed communication).
    double wait_seconds = 0.0;
    /// Bytes all-reduced per step (every bucket).
    std::int64_t bytes = 0;
    /// Buckets started from inside backward (overlapped) rather than in synchronize().
    int overlapped_buckets = 0;
};

/// Gradient averaging for a fixed set of float parameters. Gradients must be zeroed (or set to
/// none) before each backward; the reducer must outlive the backward passes it hooks.
class GradientReducer {
public:
    /// Hooks `parameters` (those that require grad) into buckets of about `bucket_bytes`.
    GradientReducer(std::vector<torch::Tensor> parameters, std::shared_ptr<Communicator> communicator,
                    std::int64_t bucket_bytes = std::int64_t{1} << 20);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    /// After backward: starts the buckets not yet started, waits for all, and writes the mean
    /// over ranks into each parameter's .grad(). Throws PeerFailure.
    ReduceTimes synchronize();
    /// Buckets the parameters fell into.
    std::size_t bucket_count() const;
    /// The group.
    Communicator& communicator() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace foxhunt::models::dist
