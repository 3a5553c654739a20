// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The normal and Student-t distributions the tests below need (Boost.Math underneath, kept out
// of this header so callers do not pull Boost in).

namespace foxhunt::stats {

/// Standard normal CDF, Phi(x).
double normalCdf(double x);
/// Standard normal quantile, Phi^-1(p), for p in (0, 1); throws std::domain_error outside.
double normalQuantile(double p);
/// CDF of Student's t with `degreesOfFreedom` > 0 (non-integer allowed).
double studentTCdf(double t, double degreesOfFreedom);
/// Quantile of Student's t with `degreesOfFreedom` > 0, for p in (0, 1).
double studentTQuantile(double p, double degreesOfFreedom);

} // namespace foxhunt::stats
