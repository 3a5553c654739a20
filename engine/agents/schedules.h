// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Step schedules of the agents (exploration rate, PER beta).

#include <algorithm>

namespace foxhunt {

/// Linear from `start` to `end` over the first `fraction` of training, then constant.
struct LinearSchedule {
    double start = 1.0;    ///< value at progress 0
    double end = 0.05;     ///< value from progress `fraction` on
    double fraction = 0.1; ///< share of training spent moving

    /// Value at progress in [0, 1] (step / total steps).
    double value(double progress) const
    {
        if (fraction <= 0.0) return end;
        const double p = std::clamp(progress / fraction, 0.0, 1.0);
        return start + (end - start) * p;
    }
};

} // namespace foxhunt
