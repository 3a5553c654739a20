// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/quantile_loss.h"

namespace foxhunt::models {

torch::Tensor quantile_loss(const torch::Tensor& pred, const torch::Tensor& target,
                            const std::vector<double>& quantiles)
{
    TORCH_CHECK(pred.dim() == 3 && static_cast<size_t>(pred.size(2)) == quantiles.size(),
                "quantile_loss: pred must be [B, H, ", quantiles.size(), "], got ", pred.sizes());
    TORCH_CHECK(target.dim() == 2 && target.size(0) == pred.size(0) && target.size(1) == pred.size(1),
                "quantile_loss: target must be [B, H] = [", pred.size(0), ", ", pred.size(1), "], got ",
                target.sizes());
    for (double q : quantiles) TORCH_CHECK(q > 0.0 && q < 1.0, "quantile_loss: quantile ", q, " not in (0, 1)");
    auto taus = torch::tensor(quantiles, pred.options().dtype(torch::kDouble)).to(pred.scalar_type());
    auto diff = target.unsqueeze(-1) - pred;
    return torch::max(taus * diff, (taus - 1.0) * diff).mean();
}

} // namespace foxhunt::models
