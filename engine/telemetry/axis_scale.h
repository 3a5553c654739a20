// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Chart axes for people: the display unit a range of values reads best in
// (bytes as B/KiB/MiB/GiB, durations as µs/ms/s), round tick values (a step of
// 1, 2 or 5 times a power of ten) and values formatted with their unit. Qt-free,
// shared by the live dashboard and the runs overlay.

#include "engine/telemetry/metric_registry.h"

#include <string>

namespace foxhunt::axis {

/// What values in a registry unit are divided by to read in `symbol`.
struct DisplayUnit {
    double divisor = 1.0;
    std::string symbol; ///< "KiB", "ms", "µs" (UTF-8); "" for unitless values
};

/// The display unit for values of `unit` whose largest magnitude is `maxAbs` (in the registry's
/// base unit: bytes, milliseconds): bytes step up by 1024 (B, KiB, MiB, GiB, TiB) once the
/// magnitude reaches the next unit; milliseconds read as µs below 1 ms and as s from 1000 ms. Other
/// units keep their symbol (metrics::symbol) and divisor 1. A zero or non-finite `maxAbs`
/// takes the base unit.
DisplayUnit displayUnit(metrics::Unit unit, double maxAbs);

/// Round ticks covering [lo, hi]: min and max are multiples of step, step is 1, 2 or 5 times a
/// power of ten, and count (ticks including both ends) is at most maxTicks (>= 2). An empty span
/// (lo == hi) is widened around the value first.
struct Ticks {
    double min = 0.0;
    double max = 1.0;
    double step = 1.0;
    int count = 2;
    int decimals = 0; ///< digits after the point that show every tick exactly
};
Ticks niceTicks(double lo, double hi, int maxTicks = 6);

/// `value` (in the registry's base unit) in its own display unit with `significant` digits:
/// "40.0 KiB", "3.00 MiB", "250 µs", "0.53" (unitless), "12.0 ticks".
std::string formatValue(double value, metrics::Unit unit, int significant = 3);

} // namespace foxhunt::axis
