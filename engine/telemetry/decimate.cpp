// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/telemetry/decimate.h"

namespace foxhunt {

std::vector<std::size_t> decimateMinMax(std::span<const double> y, int buckets, DecimateExtremes which)
{
    MinMaxDecimator decimator;
    std::vector<std::size_t> out;
    decimator.select([y](std::size_t i) { return y[i]; }, y.size(), buckets, which, out);
    return out;
}

} // namespace foxhunt
