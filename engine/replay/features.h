// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Online features, bar by bar, with no look-ahead: the features of bar t are a
// function of bars 0..t only, and their normalisation uses statistics of bars
// 0..t-1 only. O(1) time and no allocation per bar.

#include "engine/data/bar.h"
#include "engine/data/market_time.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace foxhunt {

/// The features, in their fixed column order.
enum class Feature : std::size_t {
    LogReturn,    ///< log(close / previous close); 0 on the first bar and after a gap (see FeatureOptions::gapResetNs)
    Range,        ///< log(high / low)
    Body,         ///< (close - open) / close
    VolumeZ,      ///< z-score of log1p(volume) over the last volumeWindow bars (this one included)
    Volatility,   ///< standard deviation of LogReturn over the last volatilityWindow bars (this one included)
    TimeOfDaySin, ///< sin(2 pi * minute of day ET / 1440)
    TimeOfDayCos, ///< cos(2 pi * minute of day ET / 1440)
    SessionProgress, ///< minutes since the 18:00 ET session open / 1380 (1.0 = 17:00 ET close)
    RegularSession,  ///< 1 inside 09:30-16:00 ET, else 0
};

/// Number of features (columns).
inline constexpr std::size_t kFeatureCount = 9;

/// One row of features.
using FeatureVector = std::array<float, kFeatureCount>;

/// How the running normalisation tracks each feature's mean and variance.
enum class NormalizationMode {
    None,       ///< normalised = raw
    Cumulative, ///< Welford mean / variance over every earlier bar
    Ewma,       ///< exponentially weighted mean / variance with ewmaAlpha
};

/// Which of the two vectors computeFeatures() stores.
enum class FeatureValues { Normalized, Raw };

/// Window sizes and normalisation settings.
struct FeatureOptions {
    std::size_t volumeWindow = 60;     ///< bars in the volume z-score window (>= 2)
    std::size_t volatilityWindow = 30; ///< bars in the rolling volatility window (>= 2)
    /// A gap between bar starts longer than this (e.g. the daily 17:00-18:00 ET break
    /// or a weekend) starts a new session: the log return of the bar after it is 0,
    /// so the overnight jump is not mistaken for a one-bar move.
    std::int64_t gapResetNs = 30 * kNsPerMinute;
    NormalizationMode normalization = NormalizationMode::Cumulative;
    double ewmaAlpha = 0.001;     ///< weight of the newest bar in Ewma mode, in (0, 1]
    std::size_t warmupBars = 100; ///< normalised features are 0 until this many earlier bars were seen
    double clip = 5.0;            ///< normalised values are clipped to [-clip, clip]
};

/// True for the features that the running normalisation standardises. The
/// bounded ones (time of day, session progress, the session flag) pass through.
constexpr bool isNormalizedFeature(Feature f)
{
    return static_cast<std::size_t>(f) <= static_cast<std::size_t>(Feature::Volatility);
}

/// The standardised features are the first kNormalizedCount columns.
inline constexpr std::size_t kNormalizedCount = static_cast<std::size_t>(Feature::Volatility) + 1;

/// Computes features online. Not thread-safe: one pipeline per thread.
class FeaturePipeline {
public:
    /// Throws std::invalid_argument for windows below 2, a bad alpha or clip.
    explicit FeaturePipeline(const FeatureOptions& options = {});

    /// Column names, in Feature order (e.g. "log_return").
    static const std::array<std::string_view, kFeatureCount>& featureNames();

    /// Consumes the next bar (time order) and returns its normalised features.
    /// Throws std::invalid_argument for a non-positive price.
    const FeatureVector& push(const Bar& bar);

    /// Raw features of the last pushed bar.
    const FeatureVector& raw() const { return m_raw; }
    /// Normalised features of the last pushed bar (what push() returned).
    const FeatureVector& normalized() const { return m_normalized; }
    /// Bars pushed since construction or reset().
    std::size_t count() const { return m_count; }
    /// The options this pipeline was built with.
    const FeatureOptions& options() const { return m_options; }

    /// Forgets every bar: the next push() behaves like the first.
    void reset();

private:
    // Sum and sum of squares over the last `capacity` values, refreshed from the
    // ring at every wrap so rounding from adding and subtracting cannot drift.
    struct RollingWindow {
        std::vector<double> values;
        std::size_t next = 0, filled = 0;
        double sum = 0.0, sumSq = 0.0;
        void reset();
        void push(double x);
        double mean() const;
        double stddev() const;
    };
    void normalize();

    FeatureOptions m_options;
    EsCalendar m_calendar;
    RollingWindow m_volume, m_returns;
    const double* m_sinByMinute = nullptr; // 1440 entries, shared by all pipelines
    const double* m_cosByMinute = nullptr;
    // Running statistics of the standardised features over the bars pushed so
    // far: mean, and m2 = Welford's sum of squared deviations or the EWMA variance.
    std::array<double, kNormalizedCount> m_mean{};
    std::array<double, kNormalizedCount> m_m2{};
    std::size_t m_seen = 0;
    std::array<double, kFeatureCount> m_rawExact{};
    FeatureVector m_raw{};
    FeatureVector m_normalized{};
    std::int64_t m_prevClose = 0;
    std::int64_t m_prevTs = 0;
    std::size_t m_count = 0;
};

/// A [rows, cols] feature matrix (row-major) with one timestamp per row.
struct FeatureMatrix {
    std::vector<float> values;            ///< rows * cols, row t = features of bar t
    std::vector<std::int64_t> timestamps; ///< tsEvent of each row's bar (UTC ns)
    std::size_t rows = 0;                 ///< number of bars
    std::size_t cols = kFeatureCount;     ///< features per row
    /// Pointer to the first feature of row t.
    const float* row(std::size_t t) const { return values.data() + t * cols; }
    /// Feature f of row t.
    float at(std::size_t t, Feature f) const { return values[t * cols + static_cast<std::size_t>(f)]; }
};

/// Runs a fresh FeaturePipeline over `bars` and stores every row.
FeatureMatrix computeFeatures(const std::vector<Bar>& bars, const FeatureOptions& options = {},
                              FeatureValues which = FeatureValues::Normalized);

} // namespace foxhunt
