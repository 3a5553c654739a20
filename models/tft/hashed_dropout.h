// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Inverted dropout with a keep-mask from a counter-based hash: one seed per call from LibTorch's
// default CPU generator, then one vectorised pass, instead of bernoulli_'s per-element generator calls.

#include <torch/torch.h>

namespace foxhunt::models::tft {

// x: [...] -> [...]
/// Zeroes each element with probability p and scales the rest by 1 / (1 - p) while training;
/// x itself otherwise. The same distribution as torch::dropout (not the same draws): reproducible
/// under torch::manual_seed, independent of the thread count. Tensors off the CPU or not float
/// or double go through torch::dropout.
torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training);

} // namespace foxhunt::models::tft
