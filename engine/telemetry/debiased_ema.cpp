// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/telemetry/debiased_ema.h"

#include <cmath>

namespace foxhunt {

double DebiasedEma::push(double value)
{
    m_last = m_last * m_weight + (1.0 - m_weight) * value;
    ++m_count;
    const double debias = m_weight >= 1.0 ? 1.0 : 1.0 - std::pow(m_weight, static_cast<double>(m_count));
    return debias > 0 ? m_last / debias : value;
}

} // namespace foxhunt
