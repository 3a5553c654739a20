// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Diebold-Mariano test of equal predictive accuracy (Diebold & Mariano, 1995) with the
// small-sample correction of Harvey, Leybourne & Newbold (1997).

#include <cstddef>
#include <span>

namespace foxhunt::stats {

/// The outcome of dieboldMariano().
struct DieboldMarianoResult {
    double meanDifferential = 0.0; ///< dbar, mean of d_t = lossA_t - lossB_t (< 0: A forecasts better)
    double longRunVariance = 0.0;  ///< gamma_0 + 2 sum_{k=1}^{h-1} gamma_k (autocovariances with divisor n)
    double statistic = 0.0;        ///< HLN-corrected DM statistic, compared with Student t(n - 1)
    double pValue = 0.0;           ///< two-sided p-value, 2 (1 - T_{n-1}(|statistic|))
    std::size_t n = 0;             ///< loss pairs used
    std::size_t horizon = 1;       ///< forecast horizon h
    bool valid = false;            ///< false when n < 2, h >= n, or the long-run variance is not positive
};

/// Tests H0: E[lossA_t - lossB_t] = 0 for h-step-ahead forecasts. DM = dbar / sqrt(LRV / n),
/// then DM* = DM sqrt((n + 1 - 2h + h (h - 1) / n) / n). Throws std::invalid_argument when the
/// series differ in length or horizon is 0; returns valid = false (statistic and p-value NaN)
/// where the test is undefined.
DieboldMarianoResult dieboldMariano(std::span<const double> lossA, std::span<const double> lossB,
                                    std::size_t horizon = 1);

} // namespace foxhunt::stats
