// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/forecast/forecast_metrics.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

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
    m.intervalNominal = quantiles[nq - 1] - quantiles[0];
    m.count = targets.size();
    if (m.count == 0) return m;
    double loss = 0.0, crps = 0.0, mae = 0.0;
    std::size_t directional = 0, nonZero = 0, covered = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const double y = targets[i];
        const double* q = predictions.data() + i * nq;
        for (std::size_t k = 0; k < nq; ++k) loss += pinballLoss(y, q[k], quantiles[k]);
        crps += stats::crpsFromQuantiles(y, {q, nq}, quantiles);
        mae += std::abs(q[median] - y);
        if (y != 0.0) {
            ++nonZero;
            if (q[median] * y > 0.0) ++directional;
        }
        if (y >= q[0] && y <= q[nq - 1]) ++covered;
    }
    const double n = static_cast<double>(m.count);
    m.quantileLoss = loss / (n * static_cast<double>(nq));
    m.crps = crps / n;
    m.medianMae = mae / n;
    m.directionalAccuracy = nonZero > 0 ? static_cast<double>(directional) / static_cast<double>(nonZero) : 0.0;
    m.intervalCoverage = static_cast<double>(covered) / n;
    return m;
}

stats::Climatology trainingClimatology(const ForecastData& data, IndexRange train, std::size_t horizon,
                                       const std::vector<double>& quantiles)
{
    if (train.size() == 0 || train.end - 1 + horizon >= data.rows || data.logReturns.size() != data.rows)
        throw std::invalid_argument(std::string(__FILE__) + ": training anchors [" + std::to_string(train.begin) +
                                    ", " + std::to_string(train.end) + ") with horizon " + std::to_string(horizon) +
                                    " do not fit " + std::to_string(data.rows) + " bars");
    std::vector<std::pair<int, double>> samples;
    samples.reserve(train.size() + horizon);
    for (std::size_t t = train.begin + 1; t <= train.end - 1 + horizon; ++t)
        samples.emplace_back(data.timeOfDay.empty() ? 0 : data.timeOfDay[t], data.logReturns[t]);
    return stats::fitClimatology(samples, quantiles);
}

ForecastEvaluation evaluateQuantileForecasts(const std::vector<double>& predictions, const ForecastData& data,
                                             IndexRange train, IndexRange anchors, std::size_t horizon,
                                             const std::vector<double>& quantiles)
{
    const std::size_t H = horizon, Q = quantiles.size();
    if (H == 0 || Q == 0 || anchors.size() == 0 || anchors.end - 1 + H >= data.rows ||
        data.logReturns.size() != data.rows || predictions.size() != anchors.size() * H * Q)
        throw std::invalid_argument(std::string(__FILE__) + ": " + std::to_string(predictions.size()) +
                                    " predictions for anchors [" + std::to_string(anchors.begin) + ", " +
                                    std::to_string(anchors.end) + ") x horizon " + std::to_string(H) + " x " +
                                    std::to_string(Q) + " quantiles over " + std::to_string(data.rows) + " bars");
    const stats::Climatology climate = trainingClimatology(data, train, H, quantiles);
    std::vector<double> targets, zero, persistence, climatology;
    targets.reserve(anchors.size() * H);
    persistence.reserve(predictions.size());
    climatology.reserve(predictions.size());
    for (std::size_t a = anchors.begin; a < anchors.end; ++a) {
        const double last = data.logReturns[a];
        for (std::size_t h = 1; h <= H; ++h) {
            targets.push_back(data.logReturns[a + h]);
            const std::vector<double>& c = climate.quantilesFor(data.timeOfDay.empty() ? 0 : data.timeOfDay[a + h]);
            climatology.insert(climatology.end(), c.begin(), c.end());
            persistence.insert(persistence.end(), Q, last);
        }
    }
    zero.assign(predictions.size(), 0.0);

    ForecastEvaluation e;
    e.windows = anchors.size();
    e.model = scoreQuantileForecasts(predictions, targets, quantiles);
    e.zeroReturn = scoreQuantileForecasts(zero, targets, quantiles);
    e.persistence = scoreQuantileForecasts(persistence, targets, quantiles);
    e.climatology = scoreQuantileForecasts(climatology, targets, quantiles);
    e.skillQuantileLoss = stats::skillScore(e.model.quantileLoss, e.climatology.quantileLoss);
    e.skillCrps = stats::skillScore(e.model.crps, e.climatology.crps);

    std::vector<double> lower, upper;
    lower.reserve(targets.size());
    upper.reserve(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        lower.push_back(predictions[i * Q]);
        upper.push_back(predictions[i * Q + Q - 1]);
    }
    e.coverage = stats::intervalCoverage(targets, lower, upper, quantiles[Q - 1] - quantiles[0]);
    e.pit = stats::pitHistogram(targets, predictions, quantiles);

    // Diebold-Mariano on one loss per window (its mean over steps and quantiles): consecutive
    // windows share horizon - 1 targets, so the differentials are autocorrelated up to lag H - 1.
    const auto perWindow = [&](const std::vector<double>& forecast) {
        std::vector<double> loss(anchors.size(), 0.0);
        for (std::size_t w = 0; w < anchors.size(); ++w) {
            double sum = 0.0;
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t k = 0; k < Q; ++k) {
                    const std::size_t i = w * H + h;
                    sum += pinballLoss(targets[i], forecast[i * Q + k], quantiles[k]);
                }
            loss[w] = sum / static_cast<double>(H * Q);
        }
        return loss;
    };
    const std::pair<const char*, const std::vector<double>*> baselines[] = {
        {"zero_return", &zero}, {"persistence", &persistence}, {"climatology", &climatology}};
    const ForecastMetrics* scores[] = {&e.zeroReturn, &e.persistence, &e.climatology};
    std::size_t best = 0;
    for (std::size_t b = 1; b < 3; ++b)
        if (scores[b]->quantileLoss < scores[best]->quantileLoss) best = b;
    e.comparison.baseline = baselines[best].first;
    e.comparison.test = stats::dieboldMariano(perWindow(predictions), perWindow(*baselines[best].second), H);
    return e;
}

} // namespace foxhunt
