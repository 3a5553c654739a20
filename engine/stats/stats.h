// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The whole statistics module (foxhunt::stats) in one include. Pure C++: no Qt, no torch.
//   descriptive.h      mean, median, quantile (type 7), IQM, std, skewness, kurtosis
//   returns.h          per-bar returns -> daily returns, daily and per-bar Sharpe
//   random.h           portable seeded random numbers (mt19937_64 + Lemire)
//   bootstrap.h        percentile bootstrap intervals, plain, stratified, two-sample
//   comparison.h       probability of improvement, performance profiles
//   sharpe_tests.h     probabilistic and deflated Sharpe ratio
//   diebold_mariano.h  Diebold-Mariano test with the HLN correction
//   forecast_scores.h  pinball, CRPS, coverage, PIT, climatology, skill score
//   distributions.h    normal and Student-t CDF and quantile

#include "engine/stats/bootstrap.h"
#include "engine/stats/comparison.h"
#include "engine/stats/descriptive.h"
#include "engine/stats/diebold_mariano.h"
#include "engine/stats/distributions.h"
#include "engine/stats/forecast_scores.h"
#include "engine/stats/random.h"
#include "engine/stats/returns.h"
#include "engine/stats/sharpe_tests.h"
