// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The smoothing of the dashboard's lines: plain doubles, no Qt.

namespace foxhunt {

/// TensorBoard's debiased exponential moving average: starts at zero and
/// divides by (1 - w^n), so the first values are not pulled towards zero.
class DebiasedEma {
public:
    /// weight in [0, 1): 0 returns the input unchanged.
    explicit DebiasedEma(double weight = 0.0) : m_weight(weight) { }
    /// The smoothed value after `value`.
    double push(double value);
    void reset()
    {
        m_last = 0;
        m_count = 0;
    }
    double weight() const { return m_weight; }

private:
    double m_weight = 0;
    double m_last = 0;
    long long m_count = 0;
};

} // namespace foxhunt
