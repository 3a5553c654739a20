// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/forecast/forecast_metrics.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace foxhunt {

double pinballLoss(double y, double q, double tau)
{
    const double diff = y - q;
    return diff >= 0.0 ? tau * diff : (tau - 1.0) * diff;
}

ForecastMetrics scoreQuantileForecasts(const std::vector<double>& predictions, const std::vector<double>& targets,
                                       const std::vector<double>& quantiles)
{
    const std::size_t nq = quantiles.size();
    if (nq == 0) throw std::invalid_argument(std::string(__FILE__) + ": no quantile levels");
    if (predictions.size() != targets.size() * nq)
        throw std::invalid_argument(std::string(__FILE__) + ": " + std::to_string(predictions.size()) +
                                    " predictions for " + std::to_string(targets.size()) + " targets x " +
                                    std::to_string(nq) + " quantiles");
    for (std::size_t i = 1; i < nq; ++i)
        if (!(quantiles[i] > quantiles[i - 1]))
            throw std::invalid_argument(std::string(__FILE__) + ": quantile levels must be ascending");
    std::size_t median = 0;
    for (std::size_t i = 1; i < nq; ++i)
        if (std::abs(quantiles[i] - 0.5) < std::abs(quantiles[median] - 0.5)) median = i;

    ForecastMetrics m;
    m.count = targets.size();
    if (m.count == 0) return m;
    double loss = 0.0, mae = 0.0;
    std::size_t directional = 0, nonZero = 0, covered = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const double y = targets[i];
        const double* q = predictions.data() + i * nq;
        for (std::size_t k = 0; k < nq; ++k) loss += pinballLoss(y, q[k], quantiles[k]);
        mae += std::abs(q[median] - y);
        if (y != 0.0) {
            ++nonZero;
            if (q[median] * y > 0.0) ++directional;
        }
        if (y >= q[0] && y <= q[nq - 1]) ++covered;
    }
    const double n = static_cast<double>(m.count);
    m.quantileLoss = loss / (n * static_cast<double>(nq));
    m.medianMae = mae / n;
    m.directionalAccuracy = nonZero > 0 ? static_cast<double>(directional) / static_cast<double>(nonZero) : 0.0;
    m.intervalCoverage = static_cast<double>(covered) / n;
    return m;
}

} // namespace foxhunt
