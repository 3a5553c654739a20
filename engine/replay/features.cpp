// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/features.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace foxhunt {

namespace {

constexpr std::size_t kMinutesPerDay = 1440;
constexpr double kSessionMinutes = 1380.0; // 18:00 ET open to 17:00 ET close
constexpr double kSessionOpenMinute = 18.0 * 60.0;
constexpr double kRegularOpenMinute = 9.0 * 60.0 + 30.0;
constexpr double kRegularCloseMinute = 16.0 * 60.0;
// Below this variance a feature is treated as constant: standardising it would only amplify rounding.
constexpr double kMinVariance = 1e-24;

std::size_t idx(Feature f)
{
    return static_cast<std::size_t>(f);
}

// Whole-minute bars (the common case) read sin/cos from a table; the table is
// filled with the very expression used for other times, so both paths agree bit for bit.
double todAngle(double minuteOfDay)
{
    return 2.0 * std::numbers::pi * minuteOfDay / double(kMinutesPerDay);
}

struct TimeOfDayTable {
    std::array<double, kMinutesPerDay> sinValues{};
    std::array<double, kMinutesPerDay> cosValues{};
    TimeOfDayTable()
    {
        for (std::size_t m = 0; m < kMinutesPerDay; ++m) {
            sinValues[m] = std::sin(todAngle(double(m)));
            cosValues[m] = std::cos(todAngle(double(m)));
        }
    }
};

const TimeOfDayTable& timeOfDayTable()
{
    static const TimeOfDayTable table;
    return table;
}

std::int64_t floorMod(std::int64_t a, std::int64_t b)
{
    const std::int64_t r = a % b;
    return r < 0 ? r + b : r;
}

[[noreturn]] void throwBadPrice(const Bar& bar)
{
    throw std::invalid_argument("features: bar at " + formatUtc(bar.tsEvent) +
                                " has a non-positive price (open/high/low/close must be > 0)");
}

} // namespace

void FeaturePipeline::RollingWindow::reset()
{
    std::fill(values.begin(), values.end(), 0.0);
    next = filled = 0;
    sum = sumSq = 0.0;
}

void FeaturePipeline::RollingWindow::push(double x)
{
    const std::size_t capacity = values.size();
    if (filled == capacity) {
        const double old = values[next];
        sum -= old;
        sumSq -= old * old;
    } else {
        ++filled;
    }
    values[next] = x;
    sum += x;
    sumSq += x * x;
    if (++next == capacity) {
        next = 0;
        double s = 0.0, s2 = 0.0;
        for (double v : values) {
            s += v;
            s2 += v * v;
        }
        sum = s;
        sumSq = s2;
    }
}

double FeaturePipeline::RollingWindow::mean() const
{
    return filled == 0 ? 0.0 : sum / double(filled);
}

double FeaturePipeline::RollingWindow::stddev() const
{
    if (filled < 2) return 0.0;
    const double m = sum / double(filled);
    const double var = sumSq / double(filled) - m * m;
    return var > kMinVariance ? std::sqrt(var) : 0.0;
}

FeaturePipeline::FeaturePipeline(const FeatureOptions& options) : m_options(options)
{
    if (options.volumeWindow < 2 || options.volatilityWindow < 2)
        throw std::invalid_argument("features: volume and volatility windows need at least 2 bars (got " +
                                    std::to_string(options.volumeWindow) + " and " +
                                    std::to_string(options.volatilityWindow) + ")");
    if (options.normalization == NormalizationMode::Ewma && !(options.ewmaAlpha > 0.0 && options.ewmaAlpha <= 1.0))
        throw std::invalid_argument("features: ewmaAlpha must be in (0, 1], got " + std::to_string(options.ewmaAlpha));
    if (!(options.clip > 0.0))
        throw std::invalid_argument("features: clip must be positive, got " + std::to_string(options.clip));
    if (options.gapResetNs <= 0) throw std::invalid_argument("features: gapResetNs must be positive");
    m_volume.values.assign(options.volumeWindow, 0.0);
    m_returns.values.assign(options.volatilityWindow, 0.0);
    m_sinByMinute = timeOfDayTable().sinValues.data();
    m_cosByMinute = timeOfDayTable().cosValues.data();
}

const std::array<std::string_view, kFeatureCount>& FeaturePipeline::featureNames()
{
    static constexpr std::array<std::string_view, kFeatureCount> kNames = {
        "log_return",       "range",           "body", "volume_z", "volatility", "tod_sin", "tod_cos",
        "session_progress", "regular_session",
    };
    return kNames;
}

void FeaturePipeline::reset()
{
    m_volume.reset();
    m_returns.reset();
    m_mean.fill(0.0);
    m_m2.fill(0.0);
    m_seen = 0;
    m_rawExact.fill(0.0);
    m_raw.fill(0.0f);
    m_normalized.fill(0.0f);
    m_prevClose = 0;
    m_prevTs = 0;
    m_count = 0;
}

const FeatureVector& FeaturePipeline::push(const Bar& bar)
{
    if (bar.open <= 0 || bar.high <= 0 || bar.low <= 0 || bar.close <= 0) throwBadPrice(bar);

    const double close = double(bar.close);
    const bool newSession = m_count == 0 || bar.tsEvent - m_prevTs > m_options.gapResetNs;
    const double logReturn = newSession ? 0.0 : std::log(close / double(m_prevClose));
    m_returns.push(logReturn);

    // 1 + volume is exact in a double, so log() matches log1p() here and is cheaper.
    const double logVolume = std::log(double(bar.volume) + 1.0);
    m_volume.push(logVolume);
    const double volumeSd = m_volume.stddev();
    const double volumeZ = volumeSd > 0.0 ? (logVolume - m_volume.mean()) / volumeSd : 0.0;

    // Same arithmetic as EsCalendar::minuteOfDayEt / minutesSinceSessionOpen,
    // with one zone lookup (cached by the converter) instead of three.
    const std::int64_t nsOfDay = floorMod(m_calendar.zone().utcToLocal(bar.tsEvent), kNsPerDay);
    const double minuteOfDay = double(nsOfDay) / 60e9;
    double todSin = 0.0, todCos = 0.0;
    if (nsOfDay % kNsPerMinute == 0) {
        const auto minute = static_cast<std::size_t>(nsOfDay / kNsPerMinute);
        todSin = m_sinByMinute[minute];
        todCos = m_cosByMinute[minute];
    } else {
        todSin = std::sin(todAngle(minuteOfDay));
        todCos = std::cos(todAngle(minuteOfDay));
    }
    double sinceOpen = minuteOfDay - kSessionOpenMinute;
    if (sinceOpen < 0) sinceOpen += 1440.0;

    m_rawExact[idx(Feature::LogReturn)] = logReturn;
    m_rawExact[idx(Feature::Range)] = std::log(double(bar.high) / double(bar.low));
    m_rawExact[idx(Feature::Body)] = double(bar.close - bar.open) / close;
    m_rawExact[idx(Feature::VolumeZ)] = volumeZ;
    m_rawExact[idx(Feature::Volatility)] = m_returns.stddev();
    m_rawExact[idx(Feature::TimeOfDaySin)] = todSin;
    m_rawExact[idx(Feature::TimeOfDayCos)] = todCos;
    m_rawExact[idx(Feature::SessionProgress)] = sinceOpen / kSessionMinutes;
    m_rawExact[idx(Feature::RegularSession)] = (minuteOfDay >= kRegularOpenMinute && minuteOfDay < kRegularCloseMinute)
                                                   ? 1.0
                                                   : 0.0;

    for (std::size_t f = 0; f < kFeatureCount; ++f) m_raw[f] = static_cast<float>(m_rawExact[f]);
    m_normalized = m_raw;
    if (m_options.normalization != NormalizationMode::None) normalize();

    m_prevClose = bar.close;
    m_prevTs = bar.tsEvent;
    ++m_count;
    return m_normalized;
}

void FeaturePipeline::normalize()
{
    // Every standardised feature has seen the same number of earlier bars, so
    // the count (and Welford's 1/n) is shared; the loop has no branches, which
    // lets the square roots and divisions of the features overlap.
    const bool ewma = m_options.normalization == NormalizationMode::Ewma;
    const bool warm = m_seen >= m_options.warmupBars && m_seen > 0;
    const double varScale = ewma || m_seen == 0 ? 1.0 : 1.0 / double(m_seen);
    const double clip = m_options.clip;
    for (std::size_t f = 0; f < kNormalizedCount; ++f) {
        const double x = m_rawExact[f];
        const double var = m_m2[f] * varScale;
        const double z = std::clamp((x - m_mean[f]) / std::sqrt(var), -clip, clip);
        m_normalized[f] = warm && var > kMinVariance ? static_cast<float>(z) : 0.0f;
    }
    // Only now does this bar enter the statistics.
    if (ewma) {
        const double a = m_options.ewmaAlpha;
        for (std::size_t f = 0; f < kNormalizedCount; ++f) {
            const double x = m_rawExact[f];
            if (m_seen == 0) {
                m_mean[f] = x;
                m_m2[f] = 0.0;
            } else {
                const double d = x - m_mean[f];
                m_mean[f] += a * d;
                m_m2[f] = (1.0 - a) * (m_m2[f] + a * d * d);
            }
        }
    } else {
        const double invN = 1.0 / double(m_seen + 1);
        for (std::size_t f = 0; f < kNormalizedCount; ++f) {
            const double x = m_rawExact[f];
            const double d = x - m_mean[f];
            m_mean[f] += d * invN;
            m_m2[f] += d * (x - m_mean[f]);
        }
    }
    ++m_seen;
}

FeatureMatrix computeFeatures(const std::vector<Bar>& bars, const FeatureOptions& options, FeatureValues which)
{
    FeaturePipeline pipeline(options);
    FeatureMatrix matrix;
    matrix.rows = bars.size();
    matrix.cols = kFeatureCount;
    matrix.values.resize(bars.size() * kFeatureCount);
    matrix.timestamps.resize(bars.size());
    float* out = matrix.values.data();
    for (std::size_t t = 0; t < bars.size(); ++t) {
        const FeatureVector& normalized = pipeline.push(bars[t]);
        const FeatureVector& row = which == FeatureValues::Normalized ? normalized : pipeline.raw();
        std::copy(row.begin(), row.end(), out + t * kFeatureCount);
        matrix.timestamps[t] = bars[t].tsEvent;
    }
    return matrix;
}

} // namespace foxhunt
