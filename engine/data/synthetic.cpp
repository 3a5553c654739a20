// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/synthetic.h"

#include "engine/data/market_time.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace foxhunt {

namespace {

// xoshiro256** seeded through splitmix64: our own generator, so a seed gives
// the same stream with any standard library.
class Rng {
public:
    explicit Rng(std::uint64_t seed)
    {
        for (auto& word : m_state) {
            seed += 0x9E3779B97F4A7C15ULL;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            word = z ^ (z >> 31);
        }
    }

    std::uint64_t next()
    {
        const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const std::uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Standard normal by Marsaglia's polar method (only sqrt and log, both
    /// IEEE-exact or correctly rounded in practice), caching the second value.
    double normal()
    {
        if (m_hasSpare) {
            m_hasSpare = false;
            return m_spare;
        }
        double u = 0, v = 0, s = 0;
        do {
            u = 2.0 * uniform() - 1.0;
            v = 2.0 * uniform() - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * std::log(s) / s);
        m_spare = v * factor;
        m_hasSpare = true;
        return u * factor;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t m_state[4] = {};
    double m_spare = 0;
    bool m_hasSpare = false;
};

constexpr double kRthOpen = 9 * 60 + 30; // minutes after midnight ET
constexpr double kRthClose = 16 * 60;
constexpr double kTickPoints = 0.25;

// Relative activity by minute of day ET: quiet overnight, a bump at the 08:30
// data releases, and a U over the regular session (busiest at open and close).
// Rational shapes rather than exp() keep the generator free of libm variance.
double activity(double minuteOfDay)
{
    if (minuteOfDay >= kRthOpen && minuteOfDay < kRthClose) {
        const double fromOpen = (minuteOfDay - kRthOpen) / 20.0;
        const double toClose = (kRthClose - minuteOfDay) / 15.0;
        return 2.5 + 5.0 / (1.0 + fromOpen * fromOpen) + 3.5 / (1.0 + toClose * toClose);
    }
    const double fromData = (minuteOfDay - (8 * 60 + 30)) / 10.0;
    const double dataBump = minuteOfDay >= 8 * 60 + 30 && minuteOfDay < kRthOpen ? 1.5 / (1.0 + fromData * fromData)
                                                                                 : 0.0;
    const double preOpen = minuteOfDay >= 3 * 60 && minuteOfDay < kRthOpen ? 0.4 : 0.0;
    return 1.0 + preOpen + dataBump;
}

std::int64_t toTicks(double points)
{
    return static_cast<std::int64_t>(std::floor(points / kTickPoints + 0.5));
}

} // namespace

std::vector<Bar> generateSyntheticBars(const SyntheticOptions& options)
{
    if (options.tradingDays <= 0) return {};
    constexpr std::int64_t kSessionNs = 23 * 3600 * kNsPerSecond;
    if (options.intervalNs <= 0 || kSessionNs % options.intervalNs != 0)
        throw std::invalid_argument("synthetic bars: the interval must divide the 23-hour session");
    if (!(options.startPrice > 0)) throw std::invalid_argument("synthetic bars: start price must be positive");

    const std::int64_t barsPerSession = kSessionNs / options.intervalNs;
    const double minutesPerBar = static_cast<double>(options.intervalNs) / static_cast<double>(kNsPerMinute);

    // Profile per bar of a session, in ET wall-clock minutes (the same every day).
    std::vector<double> profile(static_cast<std::size_t>(barsPerSession));
    std::vector<double> minuteOfDay(profile.size());
    double meanActivity = 0;
    for (std::size_t i = 0; i < profile.size(); ++i) {
        const double m = std::fmod(18.0 * 60.0 + static_cast<double>(i) * minutesPerBar, 1440.0);
        minuteOfDay[i] = m;
        profile[i] = activity(m);
        meanActivity += profile[i];
    }
    meanActivity /= static_cast<double>(profile.size());
    // Volatility follows sqrt(activity), scaled so a day's variance matches annualVolatility.
    const double sigmaPerBar = options.annualVolatility / std::sqrt(252.0 * static_cast<double>(barsPerSession));

    Rng rng(options.seed);
    ZoneConverter zone("America/New_York");
    std::vector<Bar> bars;
    bars.reserve(static_cast<std::size_t>(options.tradingDays * barsPerSession));

    std::int64_t day = daysFromCivil(options.startYear, options.startMonth, options.startDay);
    double price = options.startPrice;
    std::int64_t closeTicks = toTicks(price);
    // Two layers of volatility clustering: GARCH(1,1) for bursts of minutes and
    // a slow AR(1) regime (half-life about six hours of bars) for calm and
    // busy days. `regime` scales sigma by (1 + regime), mean-square normalised.
    double variance = 1.0; // GARCH state in units of the unconditional variance
    constexpr double kArch = 0.05, kGarch = 0.93;
    double lastShock = 0;
    constexpr double kRegimePersistence = 0.998, kRegimeShock = 0.02;
    const double regimeVariance = kRegimeShock * kRegimeShock / (1.0 - kRegimePersistence * kRegimePersistence);
    const double regimeNorm = 1.0 / std::sqrt(1.0 + regimeVariance);
    double regime = 0;

    for (int made = 0; made < options.tradingDays; ++day) {
        const int weekday = weekdayFromDays(day);
        if (weekday == 0 || weekday == 6) continue;
        ++made;
        // The session for trading day D opens at 18:00 ET on D-1.
        const std::int64_t openLocal = (day - 1) * kNsPerDay + 18 * 3600 * kNsPerSecond;
        for (std::int64_t i = 0; i < barsPerSession; ++i) {
            const auto utc = zone.localToUtc(openLocal + i * options.intervalNs);
            if (!utc) continue; // only the spring-forward hour, which is never in session

            variance = (1.0 - kArch - kGarch) + kArch * lastShock * lastShock + kGarch * variance;
            const std::size_t k = static_cast<std::size_t>(i);
            regime = std::clamp(kRegimePersistence * regime + kRegimeShock * rng.normal(), -0.7, 1.5);
            const double sigma = sigmaPerBar * (1.0 + regime) * regimeNorm *
                                 std::sqrt(profile[k] / meanActivity * variance);
            const double z = rng.normal();
            lastShock = z;

            double drift = 0;
            const double m = minuteOfDay[k];
            if (m >= kRthOpen && m < kRthOpen + 60) drift = options.plantedDriftTicks * kTickPoints;
            else if (m >= kRthClose - 60 && m < kRthClose) drift = -options.plantedDriftTicks * kTickPoints;

            const std::int64_t openTicks = closeTicks;
            price = std::max(price * (1.0 + sigma * z) + drift, 1.0);
            closeTicks = std::max<std::int64_t>(toTicks(price), 1);

            // Wicks beyond the body, half-normal in size, scaled with the bar's sigma.
            const double wickScale = sigma * price / kTickPoints * 0.6;
            const auto upper = static_cast<std::int64_t>(std::floor(std::fabs(rng.normal()) * wickScale));
            const auto lower = static_cast<std::int64_t>(std::floor(std::fabs(rng.normal()) * wickScale));
            const std::int64_t highTicks = std::max(openTicks, closeTicks) + upper;
            const std::int64_t lowTicks = std::max<std::int64_t>(std::min(openTicks, closeTicks) - lower, 1);

            const double noise = std::max(0.25, 1.0 + 0.3 * rng.normal());
            const double size = options.baseVolume * minutesPerBar * profile[k] * noise *
                                (0.7 + 0.3 * std::fabs(z) + 0.3 * variance);

            Bar bar;
            bar.tsEvent = *utc;
            bar.open = openTicks * kEsTick;
            bar.high = highTicks * kEsTick;
            bar.low = lowTicks * kEsTick;
            bar.close = closeTicks * kEsTick;
            bar.volume = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(size + 0.5));
            bars.push_back(bar);
        }
    }
    return bars;
}

} // namespace foxhunt
