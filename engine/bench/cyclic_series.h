// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A small synthetic forecasting series: a learnable cycle plus AR(1) Gaussian noise in the returns,
// with the cycle's phase as known-future features. One generator for the forecaster tests, the
// precision benchmarks and foxhunt-dist-bench, which each pick their own cycle and features.

#include "engine/forecast/forecast_data.h"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace foxhunt {

/// How cyclicSeries() draws its series; the defaults are the forecaster tests' series.
struct CyclicSeriesOptions {
    std::size_t period = 30;                    ///< bars per cycle
    double autoregression = 0.4;                ///< weight of the previous return in the next one
    double amplitude = 8e-4;                    ///< the cycle's share of a return: amplitude * sin(phase)
    double noise = 1e-3;                        ///< standard deviation of the Gaussian noise in a return
    std::uint64_t seed = 5;                     ///< seed of the noise (std::mt19937_64)
    int scaledReturns = 0;                      ///< observed features: 0 gives {r, |r|}; n > 0 gives {r, 2r, ..., n r}
    std::vector<float> staticFeatures = {1.0f}; ///< the series' static features
};

/// `rows` bars of r_t = autoregression * r_{t-1} + amplitude * sin(phase_t) + noise, with
/// phase_t = 2 pi (t mod period) / period; known-future features sin and cos of the phase, and
/// t mod period as the time-of-day bucket.
inline ForecastData cyclicSeries(std::size_t rows, const CyclicSeriesOptions& options = {})
{
    ForecastData d;
    d.rows = rows;
    d.cols = options.scaledReturns > 0 ? static_cast<std::size_t>(options.scaledReturns) : 2;
    d.knownCols = 2;
    d.staticFeatures = options.staticFeatures;
    std::mt19937_64 rng(options.seed);
    std::normal_distribution<double> noise(0.0, options.noise);
    const double period = static_cast<double>(options.period);
    double previous = 0.0;
    for (std::size_t t = 0; t < rows; ++t) {
        const double phase = 2.0 * std::numbers::pi * static_cast<double>(t % options.period) / period;
        const double r = options.autoregression * previous + options.amplitude * std::sin(phase) + noise(rng);
        d.logReturns.push_back(r);
        if (options.scaledReturns > 0) {
            for (int f = 0; f < options.scaledReturns; ++f) d.features.push_back(static_cast<float>(r * (f + 1)));
        } else {
            d.features.push_back(static_cast<float>(r));
            d.features.push_back(static_cast<float>(std::abs(r)));
        }
        d.knownFuture.push_back(static_cast<float>(std::sin(phase)));
        d.knownFuture.push_back(static_cast<float>(std::cos(phase)));
        d.timeOfDay.push_back(static_cast<int>(t % options.period));
        previous = r;
    }
    return d;
}

} // namespace foxhunt
