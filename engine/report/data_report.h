// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The report of a headless replay over one stored series: what the data is,
// its gaps and rolls, the walk-forward split, and the online features' statistics.

#include "engine/data/bar.h"
#include "engine/data/continuous.h"
#include "engine/data/validation.h"
#include "engine/store/bar_store.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// Statistics of one feature over the replay.
struct FeatureSummary {
    std::string name;
    double mean = 0, stddev = 0, min = 0, max = 0;
};

/// One part of the walk-forward split.
struct SplitPart {
    std::string name; ///< "train", "validation", "test"
    std::int64_t fromTs = 0, toTs = 0;
    std::uint64_t bars = 0;
};

/// Everything a data report shows.
struct DataReport {
    SeriesInfo series;
    std::vector<Bar> bars; ///< the replayed bars (charted, decimated)
    std::vector<Gap> gaps;
    std::vector<Roll> rolls;
    std::vector<SplitPart> split;
    std::vector<FeatureSummary> features;
    std::uint64_t barsReplayed = 0;
    double wallSeconds = 0;
    double barsPerSecond = 0;
    std::string torchVersion;
};

/// One self-contained HTML page (inline CSS and SVG, no scripts, no network).
std::string renderDataReportHtml(const DataReport& report);
/// The report's data as JSON.
nlohmann::json dataReportJson(const DataReport& report);

} // namespace foxhunt
