// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/telemetry/axis_scale.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace foxhunt::axis {

DisplayUnit displayUnit(metrics::Unit unit, double maxAbs)
{
    const double m = std::isfinite(maxAbs) ? std::abs(maxAbs) : 0.0;
    if (unit == metrics::Unit::Bytes) {
        static const std::array<const char*, 5> names = {"B", "KiB", "MiB", "GiB", "TiB"};
        std::size_t i = 0;
        double divisor = 1.0;
        while (i + 1 < names.size() && m >= divisor * 1024.0) {
            divisor *= 1024.0;
            ++i;
        }
        return {divisor, names[i]};
    }
    if (unit == metrics::Unit::Milliseconds) {
        if (m > 0.0 && m < 1.0) return {1e-3, "\xC2\xB5s"};
        if (m >= 1000.0) return {1000.0, "s"};
        return {1.0, "ms"};
    }
    return {1.0, std::string(metrics::symbol(unit))};
}

Ticks niceTicks(double lo, double hi, int maxTicks)
{
    maxTicks = std::max(2, maxTicks);
    if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
    if (hi < lo) std::swap(lo, hi);
    if (hi == lo) {
        const double pad = lo == 0.0 ? 1.0 : std::abs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double span = hi - lo;
    // The smallest 1-2-5 step whose ticks from floor(lo) to ceil(hi) fit in maxTicks.
    double decade = std::pow(10.0, std::floor(std::log10(span / static_cast<double>(maxTicks - 1))));
    Ticks t;
    for (int guard = 0; guard < 8; ++guard, decade *= 10.0) {
        bool found = false;
        for (const double f : {1.0, 2.0, 5.0}) {
            const double step = f * decade;
            const double min = std::floor(lo / step + 1e-9) * step;
            const double max = std::ceil(hi / step - 1e-9) * step;
            const int count = static_cast<int>(std::llround((max - min) / step)) + 1;
            if (count <= maxTicks) {
                t = {min, max, step, count, 0};
                found = true;
                break;
            }
        }
        if (found) break;
    }
    t.decimals = std::max(0, -static_cast<int>(std::floor(std::log10(t.step) + 1e-9)));
    // Exact zero, not -0 or 1e-17, at the tick that should read 0.
    if (std::abs(t.min) < t.step * 1e-9) t.min = 0.0;
    if (std::abs(t.max) < t.step * 1e-9) t.max = 0.0;
    return t;
}

std::string formatValue(double value, metrics::Unit unit, int significant)
{
    if (!std::isfinite(value)) return "n/a";
    const DisplayUnit u = displayUnit(unit, value);
    const double v = value / u.divisor;
    significant = std::max(1, significant);
    char buf[64];
    // Fixed notation with as many decimals as the significant digits leave (no "1e+03").
    const double a = std::abs(v);
    const int intDigits = a >= 1.0 ? static_cast<int>(std::floor(std::log10(a))) + 1 : 1;
    if (a != 0.0 && (a < 1e-4 || a >= 1e15)) {
        std::snprintf(buf, sizeof buf, "%.*g", significant, v);
    } else {
        int decimals = std::max(0, significant - intDigits);
        if (a != 0.0 && a < 1.0) decimals = significant - 1 - static_cast<int>(std::floor(std::log10(a)));
        // Unitless counts and ratios of 1, 1024, ...: no trailing ".00" for an integer.
        if (u.symbol.empty() && v == std::round(v)) decimals = 0;
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    }
    std::string out = buf;
    if (!u.symbol.empty()) out += ' ' + u.symbol;
    return out;
}

} // namespace foxhunt::axis
