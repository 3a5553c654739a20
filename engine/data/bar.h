// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The bar model shared by every reader, the store and the replay.

#include <cstdint>
#include <string>

namespace foxhunt {

/// Databento's fixed-point price scale: an int64 price is in units of 1e-9.
inline constexpr std::int64_t kPriceScale = 1'000'000'000;
/// ES tick size (0.25 index points) in fixed-point units.
inline constexpr std::int64_t kEsTick = kPriceScale / 4;
/// ES contract multiplier in USD per index point.
inline constexpr double kEsPointValue = 50.0;
/// Nanoseconds per second / minute, for timestamp arithmetic.
inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;
inline constexpr std::int64_t kNsPerMinute = 60 * kNsPerSecond;
inline constexpr std::int64_t kNsPerDay = 86'400 * kNsPerSecond;

/// The bar timestamps an import accepts: kMinBarTs <= tsEvent < kMaxBarTs.
/// 1970-01-02T00:00:00Z: epoch 0 and the day after it are what a missing or zeroed
/// time becomes, never a real bar. 2262-04-01T00:00:00Z: int64 nanoseconds end on
/// 2262-04-11, and the margin keeps zone and interval arithmetic clear of it.
inline constexpr std::int64_t kMinBarTs = kNsPerDay;
inline constexpr std::int64_t kMaxBarTs = 106'741 * kNsPerDay;
/// kMinBarTs .. kMaxBarTs as a user reads it in a message.
inline constexpr const char* kBarTimeRangeText = "1970-01-02 to 2262-03-31 UTC";
/// The highest price an import accepts, 1e9 index points in fixed point: no market
/// trades near it, and it leaves int64 room for spreads, roll gaps and back-adjustment.
inline constexpr std::int64_t kMaxBarPrice = 1'000'000'000 * kPriceScale;
/// Databento's undefined price (INT64_MAX), written where a record has no value.
inline constexpr std::int64_t kUndefinedPrice = INT64_MAX;
/// Databento's undefined timestamp (UINT64_MAX).
inline constexpr std::uint64_t kUndefinedTimestamp = UINT64_MAX;
/// The largest volume the store holds (its columns are signed 64-bit).
inline constexpr std::uint64_t kMaxBarVolume = static_cast<std::uint64_t>(INT64_MAX);

/// One OHLCV bar in Databento's convention: converted once, at the reader.
struct Bar {
    std::int64_t tsEvent = 0; ///< bar start, UNIX nanoseconds, UTC
    std::int64_t open = 0;    ///< prices: int64 fixed point, 1e-9 units
    std::int64_t high = 0;
    std::int64_t low = 0;
    std::int64_t close = 0;
    std::uint64_t volume = 0;       ///< contracts traded in the bar
    std::uint32_t instrumentId = 0; ///< source instrument id (0 when the file has none)

    friend bool operator==(const Bar&, const Bar&) = default;
};

/// Fixed-point price to index points.
constexpr double toPoints(std::int64_t fixed)
{
    return static_cast<double>(fixed) / 1e9;
}
/// Index points to fixed point, rounded to the nearest 1e-9.
constexpr std::int64_t fromPoints(double points)
{
    const double scaled = points * 1e9;
    return static_cast<std::int64_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
}

} // namespace foxhunt
