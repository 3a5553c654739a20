// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain input of the forecasters and how it is cut into training windows. No torch.

#include "engine/data/index_range.h"

#include <cstddef>
#include <string>
#include <vector>

namespace foxhunt {

/// One series of bars as the forecasters see it. All matrices are row-major, one row per bar.
struct ForecastData {
    std::vector<float> features;           ///< observed features, [rows, cols]
    std::size_t rows = 0;                  ///< number of bars T
    std::size_t cols = 0;                  ///< observed features per bar F
    std::vector<double> logReturns;        ///< target series, log(close_t / close_{t-1}), [rows]
    std::vector<float> knownFuture;        ///< covariates known in advance (time of day), [rows, knownCols]
    std::size_t knownCols = 0;             ///< known covariates per bar K (0: none)
    std::vector<float> staticFeatures;     ///< covariates constant over the series (instrument, session); may be empty
    std::vector<std::string> featureNames; ///< names of the observed columns (empty: "observed_<i>")
    std::vector<std::string> knownNames;   ///< names of the known covariates (empty: "known_<i>")
    std::vector<std::string> staticNames;  ///< names of the static covariates (empty: "static_<i>")
    std::vector<int>
        timeOfDay; ///< time-of-day bucket of each bar, [rows], for the climatology baseline (empty: one bucket)
};

/// Window geometry. A window is anchored at bar t, the last bar whose features it may see.
struct ForecastWindowing {
    std::size_t pastLength = 60; ///< past bars t-L+1 .. t fed to the encoder
    std::size_t horizon = 5;     ///< targets are logReturns[t+1 .. t+H]
};

/// One window copied out as plain data.
struct ForecastWindow {
    std::vector<float> past;        ///< [pastLength, cols + knownCols]: features, then known covariates of past bars
    std::vector<float> knownFuture; ///< [horizon, knownCols] of bars t+1 .. t+H
    std::vector<double> targets;    ///< [horizon], logReturns[t+1 .. t+H]
    double lastReturn = 0.0;        ///< logReturns[t], the persistence forecast
};

/// Throws std::invalid_argument naming the first inconsistent size.
void validateForecastData(const ForecastData& data);
/// The anchors that have a full past and a full horizon inside the data: [L-1, T-H).
IndexRange validAnchors(const ForecastData& data, const ForecastWindowing& windowing);
/// Copies the window anchored at `anchor`; throws std::out_of_range if it does not fit.
ForecastWindow makeWindow(const ForecastData& data, const ForecastWindowing& windowing, std::size_t anchor);

} // namespace foxhunt
