// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/diebold_mariano.h"

#include "engine/stats/descriptive.h"
#include "engine/stats/distributions.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace foxhunt::stats {

DieboldMarianoResult dieboldMariano(std::span<const double> lossA, std::span<const double> lossB, std::size_t horizon)
{
    if (lossA.size() != lossB.size())
        throw std::invalid_argument("dieboldMariano: loss series differ in length (" + std::to_string(lossA.size()) +
                                    " vs " + std::to_string(lossB.size()) + ")");
    if (horizon == 0) throw std::invalid_argument("dieboldMariano: horizon must be >= 1");
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    DieboldMarianoResult result;
    result.n = lossA.size();
    result.horizon = horizon;
    result.statistic = kNaN;
    result.pValue = kNaN;
    std::vector<double> d(lossA.size());
    for (std::size_t t = 0; t < d.size(); ++t) d[t] = lossA[t] - lossB[t];
    result.meanDifferential = mean(d);
    const std::size_t n = d.size();
    if (n < 2 || horizon >= n) {
        result.longRunVariance = kNaN;
        return result;
    }
    const auto nd = static_cast<double>(n);
    const double dbar = result.meanDifferential;
    auto autocovariance = [&](std::size_t lag) {
        double sum = 0.0;
        for (std::size_t t = lag; t < n; ++t) sum += (d[t] - dbar) * (d[t - lag] - dbar);
        return sum / nd;
    };
    double lrv = autocovariance(0);
    for (std::size_t k = 1; k < horizon; ++k) lrv += 2.0 * autocovariance(k);
    result.longRunVariance = lrv;
    if (!(lrv > 0.0)) return result;
    const double dm = dbar / std::sqrt(lrv / nd);
    const auto h = static_cast<double>(horizon);
    const double correction = std::sqrt((nd + 1.0 - 2.0 * h + h * (h - 1.0) / nd) / nd);
    result.statistic = dm * correction;
    // The lower tail keeps small p-values accurate where 1 - cdf would cancel.
    result.pValue = 2.0 * studentTCdf(-std::abs(result.statistic), nd - 1.0);
    result.valid = true;
    return result;
}

} // namespace foxhunt::stats
