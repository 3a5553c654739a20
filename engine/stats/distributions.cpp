// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/distributions.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <stdexcept>
#include <string>

namespace foxhunt::stats {

namespace {

void requireOpenUnit(double p, const char* what)
{
    if (!(p > 0.0 && p < 1.0))
        throw std::domain_error(std::string(what) + ": probability must lie in (0, 1), got " + std::to_string(p));
}

void requirePositiveDf(double df, const char* what)
{
    if (!(df > 0.0))
        throw std::domain_error(std::string(what) + ": degrees of freedom must be > 0, got " + std::to_string(df));
}

} // namespace

double normalCdf(double x)
{
    return boost::math::cdf(boost::math::normal_distribution<double>(), x);
}

double normalQuantile(double p)
{
    requireOpenUnit(p, "normalQuantile");
    return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double studentTCdf(double t, double degreesOfFreedom)
{
    requirePositiveDf(degreesOfFreedom, "studentTCdf");
    return boost::math::cdf(boost::math::students_t_distribution<double>(degreesOfFreedom), t);
}

double studentTQuantile(double p, double degreesOfFreedom)
{
    requireOpenUnit(p, "studentTQuantile");
    requirePositiveDf(degreesOfFreedom, "studentTQuantile");
    return boost::math::quantile(boost::math::students_t_distribution<double>(degreesOfFreedom), p);
}

} // namespace foxhunt::stats
