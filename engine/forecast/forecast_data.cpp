// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/forecast/forecast_data.h"

#include <stdexcept>
#include <string>

namespace foxhunt {

void validateForecastData(const ForecastData& data)
{
    auto fail = [](const std::string& what) {
        throw std::invalid_argument(std::string(__FILE__) + ": ForecastData: " + what);
    };
    if (data.cols == 0) fail("cols is 0; at least one observed feature is needed");
    if (data.features.size() != data.rows * data.cols)
        fail("features has " + std::to_string(data.features.size()) +
             " values, rows * cols = " + std::to_string(data.rows * data.cols));
    if (data.logReturns.size() != data.rows)
        fail("logReturns has " + std::to_string(data.logReturns.size()) +
             " values, rows = " + std::to_string(data.rows));
    if (data.knownFuture.size() != data.rows * data.knownCols)
        fail("knownFuture has " + std::to_string(data.knownFuture.size()) +
             " values, rows * knownCols = " + std::to_string(data.rows * data.knownCols));
    if (!data.timeOfDay.empty() && data.timeOfDay.size() != data.rows)
        fail("timeOfDay has " + std::to_string(data.timeOfDay.size()) + " values, rows = " + std::to_string(data.rows));
    auto names = [&](const std::vector<std::string>& list, std::size_t n, const char* what) {
        if (!list.empty() && list.size() != n)
            fail(std::string(what) + " has " + std::to_string(list.size()) + " names for " + std::to_string(n) +
                 " columns");
    };
    names(data.featureNames, data.cols, "featureNames");
    names(data.knownNames, data.knownCols, "knownNames");
    names(data.staticNames, data.staticFeatures.size(), "staticNames");
}

IndexRange validAnchors(const ForecastData& data, const ForecastWindowing& windowing)
{
    if (windowing.pastLength == 0 || windowing.horizon == 0) return {};
    const std::size_t first = windowing.pastLength - 1;
    if (data.rows < windowing.pastLength + windowing.horizon) return {first, first};
    return {first, data.rows - windowing.horizon};
}

ForecastWindow makeWindow(const ForecastData& data, const ForecastWindowing& windowing, std::size_t anchor)
{
    const IndexRange valid = validAnchors(data, windowing);
    if (anchor < valid.begin || anchor >= valid.end)
        throw std::out_of_range(std::string(__FILE__) + ": anchor " + std::to_string(anchor) + " outside [" +
                                std::to_string(valid.begin) + ", " + std::to_string(valid.end) + ")");
    ForecastWindow w;
    const std::size_t width = data.cols + data.knownCols;
    w.past.reserve(windowing.pastLength * width);
    for (std::size_t r = anchor + 1 - windowing.pastLength; r <= anchor; ++r) {
        w.past.insert(w.past.end(), data.features.begin() + static_cast<std::ptrdiff_t>(r * data.cols),
                      data.features.begin() + static_cast<std::ptrdiff_t>((r + 1) * data.cols));
        w.past.insert(w.past.end(), data.knownFuture.begin() + static_cast<std::ptrdiff_t>(r * data.knownCols),
                      data.knownFuture.begin() + static_cast<std::ptrdiff_t>((r + 1) * data.knownCols));
    }
    for (std::size_t h = 1; h <= windowing.horizon; ++h) {
        const std::size_t r = anchor + h;
        w.knownFuture.insert(w.knownFuture.end(),
                             data.knownFuture.begin() + static_cast<std::ptrdiff_t>(r * data.knownCols),
                             data.knownFuture.begin() + static_cast<std::ptrdiff_t>((r + 1) * data.knownCols));
        w.targets.push_back(data.logReturns[r]);
    }
    w.lastReturn = data.logReturns[anchor];
    return w;
}

} // namespace foxhunt
