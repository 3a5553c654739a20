// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Descriptive statistics of one sample. Every function takes the values in any order and
// returns NaN where the statistic is undefined (empty sample, n < 2 for a spread, zero spread
// for skewness and kurtosis) rather than a made-up number. Inputs must not contain NaN.

#include <span>

namespace foxhunt::stats {

/// Arithmetic mean; NaN when empty.
double mean(std::span<const double> values);
/// Median: quantile(values, 0.5), the mean of the two middle values when n is even.
double median(std::span<const double> values);
/// Quantile at level p in [0, 1], by linear interpolation between order statistics
/// (Hyndman & Fan type 7, the default of R and NumPy): with the sorted values x_0..x_{n-1},
/// h = (n - 1) p, Q = x_floor(h) + (h - floor(h)) (x_floor(h)+1 - x_floor(h)). NaN when empty;
/// throws std::invalid_argument for p outside [0, 1].
double quantile(std::span<const double> values, double p);
/// Same as quantile(), for values already sorted ascending (no copy, no sort).
double quantileSorted(std::span<const double> sorted, double p);
/// Interquartile mean: the mean of the middle 50 % of the sorted values. With the sorted values
/// seen as unit intervals [i, i+1) on [0, n), value i gets the weight of its overlap with
/// [n/4, 3n/4), and IQM = sum(w_i x_i) / (n/2). When n is a multiple of 4 this is the plain mean
/// of the middle n/2 values (what rliable's IQM, a 25 % trimmed mean, computes); otherwise the
/// two boundary values count fractionally, so every n gives exactly n/2 values' worth of weight.
/// NaN when empty.
double interquartileMean(std::span<const double> values);
/// Sample standard deviation with Bessel's correction (divisor n - 1); NaN when n < 2.
double sampleStd(std::span<const double> values);
/// Skewness as the moment ratio m3 / m2^1.5 with population central moments m_k = mean((x - mean)^k)
/// (no small-sample correction; the form the PSR/DSR formulas use). NaN when n < 2 or m2 == 0.
double skewness(std::span<const double> values);
/// Kurtosis, NOT excess: m4 / m2^2 with population central moments (3 for a normal sample in the
/// limit). NaN when n < 2 or m2 == 0.
double kurtosis(std::span<const double> values);

} // namespace foxhunt::stats
