// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Pinball (quantile) loss shared by the forecasters.

#include <torch/torch.h>

#include <vector>

namespace foxhunt::models {

// pred: [B, H, Q], target: [B, H], quantiles: Q levels in (0, 1) -> scalar
/// Mean over batch, horizon and quantiles of max(tau (y - q), (tau - 1)(y - q)).
torch::Tensor quantile_loss(const torch::Tensor& pred, const torch::Tensor& target,
                            const std::vector<double>& quantiles);

} // namespace foxhunt::models
