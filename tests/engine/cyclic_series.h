#pragma once
// A small forecasting series with a learnable 30-bar cycle and AR(1) noise, shared by the
// forecaster tests.

#include "engine/forecast/forecast_data.h"

#include <cmath>
#include <numbers>
#include <random>

namespace foxhunt::test {

/// Two observed features (the return and its magnitude), two known-future ones (the cycle's
/// phase) and one static feature over `rows` bars.
inline ForecastData cyclicSeries(std::size_t rows)
{
    ForecastData d;
    d.rows = rows;
    d.cols = 2;
    d.knownCols = 2;
    d.staticFeatures = {1.0f};
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0.0, 1e-3);
    double previous = 0.0;
    for (std::size_t t = 0; t < rows; ++t) {
        const double phase = 2.0 * std::numbers::pi * static_cast<double>(t % 30) / 30.0;
        const double r = 0.4 * previous + 8e-4 * std::sin(phase) + noise(rng);
        d.logReturns.push_back(r);
        d.features.push_back(static_cast<float>(r));
        d.features.push_back(static_cast<float>(std::abs(r)));
        d.knownFuture.push_back(static_cast<float>(std::sin(phase)));
        d.knownFuture.push_back(static_cast<float>(std::cos(phase)));
        previous = r;
    }
    return d;
}

} // namespace foxhunt::test
