// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/stats/stats.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tst_stats {

namespace st = foxhunt::stats;

namespace {

bool near(double a, double b, double tol)
{
    return std::abs(a - b) <= tol;
}

// n draws of N(mu, 1) from the portable generator, so the samples are the same on every platform.
std::vector<double> normalSample(std::uint64_t seed, std::size_t n, double mu)
{
    st::Rng rng(seed);
    std::vector<double> v(n);
    for (double& x : v) x = mu + rng.normal();
    return v;
}

double meanOf(std::span<const double> v)
{
    return st::mean(v);
}

// The 95 % percentile interval of the mean of sqrt(1) .. sqrt(10), seed 42, 2000 resamples.
constexpr double kPinnedLower = 1.8301815368968484;
constexpr double kPinnedUpper = 2.659470561160922;

} // namespace

class TestStats : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void quantileType7_data();
    void quantileType7();
    void interquartileMean_data();
    void interquartileMean();
    void moments();
    void dailyAggregation();
    void dailyAggregationRejectsBackwardDays();
    void portableRandom();
    void bootstrapIsDeterministic();
    void bootstrapIntervalOfTheMean();
    void stratifiedBootstrapKeepsStrata();
    void probabilityOfImprovement();
    void performanceProfile();
    void probabilisticSharpe();
    void deflatedSharpePaperExample();
    void dieboldMariano();
    void pinballAndCrps();
    void coverage();
    void pitOfCalibratedForecasts();
    void climatology();
    void skillScore();
};

void TestStats::quantileType7_data()
{
    QTest::addColumn<double>("p");
    QTest::addColumn<double>("expected");
    // Sorted {1, 2, 3, 4}: h = 3p, Q = x_floor(h) + frac(h) (next - x_floor(h)).
    QTest::newRow("min") << 0.0 << 1.0;
    QTest::newRow("p25") << 0.25 << 1.75; // h = 0.75
    QTest::newRow("median") << 0.5 << 2.5;
    QTest::newRow("p90") << 0.9 << 3.7; // h = 2.7
    QTest::newRow("max") << 1.0 << 4.0;
}

void TestStats::quantileType7()
{
    QFETCH(double, p);
    QFETCH(double, expected);
    const std::vector<double> v{4, 1, 3, 2};
    QVERIFY(near(st::quantile(v, p), expected, 1e-12));
    QVERIFY(std::isnan(st::quantile(std::vector<double>{}, p)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::quantile(v, 1.5));
}

void TestStats::interquartileMean_data()
{
    QTest::addColumn<std::vector<double>>("values");
    QTest::addColumn<double>("expected");
    // n = 8: sorted -50 1 3 4 5 7 9 100, the middle four 3 4 5 7 -> 19/4.
    QTest::newRow("n8") << std::vector<double>{7, 1, 9, 3, 5, 100, -50, 4} << 4.75;
    // n = 10: [n/4, 3n/4) = [2.5, 7.5): 4 and 128 weigh 0.5, 8 16 32 64 weigh 1;
    // (0.5*4 + 120 + 0.5*128) / 5 = 186 / 5.
    QTest::newRow("n10") << std::vector<double>{512, 1, 2, 4, 8, 16, 32, 64, 128, 256} << 37.2;
    // n = 9: [2.25, 6.75): 5 and 13 weigh 0.75; (3.75 + 7 + 9 + 11 + 9.75) / 4.5 = 9.
    QTest::newRow("n9") << std::vector<double>{1, 3, 5, 7, 9, 11, 13, 15, 17} << 9.0;
    // n = 5: [1.25, 3.75): 2 and 4 weigh 0.75, 3 weighs 1; (1.5 + 3 + 3) / 2.5 = 3.
    QTest::newRow("n5") << std::vector<double>{100, 4, 3, 2, 1} << 3.0;
    QTest::newRow("n1") << std::vector<double>{42} << 42.0;
}

void TestStats::interquartileMean()
{
    QFETCH(std::vector<double>, values);
    QFETCH(double, expected);
    QVERIFY(near(st::interquartileMean(values), expected, 1e-12));
}

void TestStats::moments()
{
    // Sample std of 2 4 4 4 5 5 7 9: sum of squares 32, /7.
    const std::vector<double> a{2, 4, 4, 4, 5, 5, 7, 9};
    QVERIFY(near(st::mean(a), 5.0, 1e-12));
    QVERIFY(near(st::median(a), 4.5, 1e-12));
    QVERIFY(near(st::sampleStd(a), std::sqrt(32.0 / 7.0), 1e-12));
    // 0 0 0 1 is Bernoulli(1/4): skewness (1 - 2p)/sqrt(pq) = 2/sqrt(3), kurtosis (1 - 3pq)/(pq) = 7/3.
    const std::vector<double> b{0, 0, 1, 0};
    QVERIFY(near(st::skewness(b), 2.0 / std::sqrt(3.0), 1e-12));
    QVERIFY(near(st::kurtosis(b), 7.0 / 3.0, 1e-12));
    QVERIFY(std::isnan(st::sampleStd(std::vector<double>{1.0})));
    QVERIFY(std::isnan(st::skewness(std::vector<double>{2, 2, 2})));
}

void TestStats::dailyAggregation()
{
    const std::vector<double> r{0.01, 0.02, -0.01, 0.05, 0.0, -0.02};
    const std::vector<std::int64_t> day{1, 1, 2, 2, 2, 5};
    const std::vector<st::DailyReturn> d = st::dailyReturns(r, day);
    QCOMPARE(d.size(), std::size_t(3));
    // 1.01 * 1.02 - 1, 0.99 * 1.05 * 1.00 - 1, -0.02.
    QCOMPARE(d[0].day, std::int64_t(1));
    QVERIFY(near(d[0].ret, 0.0302, 1e-12));
    QCOMPARE(d[0].bars, std::size_t(2));
    QCOMPARE(d[1].day, std::int64_t(2));
    QVERIFY(near(d[1].ret, 0.0395, 1e-12));
    QCOMPARE(d[1].bars, std::size_t(3));
    QCOMPARE(d[2].day, std::int64_t(5));
    QVERIFY(near(d[2].ret, -0.02, 1e-12));
    // Daily mean 0.0165667, sample std 0.0320094: 0.517557 * sqrt(252) = 8.216506.
    const std::vector<double> daily = st::dailyReturnValues(r, day);
    QVERIFY(near(st::annualisedDailySharpe(daily), 8.216506342645992, 1e-9));
    // Per bar: mean 0.0083333 / sample std 0.0248328, not annualised.
    QVERIFY(near(st::perBarSharpe(r), 0.33557802760701216, 1e-12));
    QVERIFY(std::isnan(st::perBarSharpe(std::vector<double>{0.01, 0.01})));
}

void TestStats::dailyAggregationRejectsBackwardDays()
{
    const std::vector<double> r{0.01, 0.02, 0.03};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::dailyReturns(r, std::vector<std::int64_t>{2, 1, 1}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::dailyReturns(r, std::vector<std::int64_t>{1, 1}));
}

void TestStats::portableRandom()
{
    // The standard fixes mt19937_64's 10000th output for the default seed 5489.
    st::Rng rng(5489);
    std::uint64_t x = 0;
    for (int i = 0; i < 10000; ++i) x = rng.next();
    QCOMPARE(x, std::uint64_t(9981545732273789042ULL));
    // Lemire: below(n) is the high word of x * n for the raw outputs x of mt19937_64(42)
    // (checked against floor(x n / 2^64) of those outputs computed apart).
    st::Rng lemire(42);
    QCOMPARE(lemire.below(10), std::uint64_t(7));
    QCOMPARE(lemire.below(10), std::uint64_t(6));
    QCOMPARE(lemire.below(1000003), std::uint64_t(752147));
    QCOMPARE(lemire.below(3), std::uint64_t(0));
    // below(n) stays in range and hits every value of a small range about equally.
    st::Rng r2(7);
    std::vector<int> hits(6, 0);
    for (int i = 0; i < 60000; ++i) {
        const std::uint64_t k = r2.below(6);
        QVERIFY(k < 6);
        ++hits[k];
    }
    for (int h : hits) QVERIFY(h > 9500 && h < 10500);
    for (int i = 0; i < 1000; ++i) {
        const double u = r2.uniform();
        QVERIFY(u >= 0.0 && u < 1.0);
    }
}

void TestStats::bootstrapIsDeterministic()
{
    // sqrt(1) .. sqrt(10): practically every resample has its own mean, so the pin below is sharp.
    std::vector<double> v;
    for (int i = 1; i <= 10; ++i) v.push_back(std::sqrt(double(i)));
    st::BootstrapOptions o;
    o.seed = 42;
    QCOMPARE(o.resamples, 2000);
    const st::Interval a = st::bootstrapInterval(v, meanOf, o);
    const st::Interval b = st::bootstrapInterval(v, meanOf, o);
    QCOMPARE(a.lower, b.lower);
    QCOMPARE(a.upper, b.upper);
    QCOMPARE(a.resamples, 2000);
    QVERIFY(near(a.estimate, st::mean(v), 1e-15));
    // Pinned values for seed 42 (mt19937_64 + Lemire, type-7 percentiles): a change in the draw
    // order or the index method shows up here.
    QVERIFY(near(a.lower, kPinnedLower, 1e-12));
    QVERIFY(near(a.upper, kPinnedUpper, 1e-12));
    o.seed = 43;
    const st::Interval c = st::bootstrapInterval(v, meanOf, o);
    QVERIFY(c.lower != a.lower || c.upper != a.upper);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::bootstrapInterval(std::vector<double>{}, meanOf, o));
    // A statistic undefined on some resamples: those replicates are dropped, not sorted as NaN.
    const std::vector<double> two{1.0, 2.0};
    const st::Interval sharpe = st::bootstrapInterval(
        two, [](std::span<const double> s) { return st::perBarSharpe(s); }, o);
    QVERIFY(sharpe.resamples > 0 && sharpe.resamples < o.resamples); // {1,1} and {2,2} have no Sharpe
    QVERIFY(!std::isnan(sharpe.lower) && !std::isnan(sharpe.upper));
}

void TestStats::bootstrapIntervalOfTheMean()
{
    st::BootstrapOptions o;
    o.seed = 2024;
    const std::vector<double> shifted = normalSample(/*seed=*/11, 200, /*mu=*/1.0);
    const st::Interval withEdge = st::bootstrapInterval(shifted, meanOf, o);
    QVERIFY(withEdge.lower > 0.0);
    QVERIFY(!withEdge.contains(0.0));
    QVERIFY(withEdge.contains(1.0));
    // Standard error ~ 1/sqrt(200) = 0.071: the 95 % interval is about 0.28 wide.
    QVERIFY(withEdge.upper - withEdge.lower > 0.2 && withEdge.upper - withEdge.lower < 0.36);
    const std::vector<double> centred = normalSample(/*seed=*/12, 200, /*mu=*/0.0);
    const st::Interval noEdge = st::bootstrapInterval(centred, meanOf, o);
    QVERIFY(noEdge.contains(0.0));
    // The IQM works as a statistic too.
    const st::Interval iqm = st::bootstrapInterval(
        shifted, [](std::span<const double> s) { return st::interquartileMean(s); }, o);
    QVERIFY(iqm.lower > 0.0 && iqm.lower <= iqm.estimate && iqm.estimate <= iqm.upper);
}

void TestStats::stratifiedBootstrapKeepsStrata()
{
    // Resampling within strata keeps four 0s and two 1s in every resample, so the pooled mean
    // never moves from 1/3; the plain bootstrap of the same six values does move.
    const std::vector<std::vector<double>> strata{{0, 0, 0, 0}, {1, 1}};
    const st::Interval s = st::stratifiedBootstrapInterval(strata, meanOf, {});
    QVERIFY(near(s.estimate, 1.0 / 3.0, 1e-12));
    QVERIFY(near(s.lower, 1.0 / 3.0, 1e-12));
    QVERIFY(near(s.upper, 1.0 / 3.0, 1e-12));
    const std::vector<double> pooled{0, 0, 0, 0, 1, 1};
    const st::Interval p = st::bootstrapInterval(pooled, meanOf, {});
    QVERIFY(p.lower < 1.0 / 3.0 && p.upper > 1.0 / 3.0);
    // One stratum is the plain bootstrap, draw for draw.
    const st::Interval one = st::stratifiedBootstrapInterval({pooled}, meanOf, {});
    QCOMPARE(one.lower, p.lower);
    QCOMPARE(one.upper, p.upper);
    QCOMPARE(st::stratifiedResamples(strata, st::BootstrapOptions{5, 0.95, 1}).size(), std::size_t(5));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::stratifiedBootstrapInterval({{1.0}, {}}, meanOf, {}));
}

void TestStats::probabilityOfImprovement()
{
    // x = 1 2 3 vs y = 2 2 0: x=1 wins 1 pair, x=2 ties twice and wins once (2), x=3 wins 3: 6/9.
    const std::vector<double> x{1, 2, 3};
    const std::vector<double> y{2, 2, 0};
    QVERIFY(near(st::probabilityOfImprovement(x, y), 6.0 / 9.0, 1e-12));
    QVERIFY(near(st::probabilityOfImprovement(y, x), 3.0 / 9.0, 1e-12));
    QVERIFY(near(st::probabilityOfImprovement(x, x), 0.5, 1e-12));
    // Agent P&L per seed clearly above buy-and-hold per seed: the interval sits above 0.5.
    const std::vector<double> agent = normalSample(21, 10, 2.0);
    const std::vector<double> hold = normalSample(22, 10, 0.0);
    const st::Interval poi = st::probabilityOfImprovementInterval(agent, hold, {});
    QVERIFY(poi.estimate > 0.8);
    QVERIFY(poi.lower > 0.5 && poi.upper <= 1.0);
    // Averaged over tasks: task 1 as above (6/9), task 2 x always loses (0): mean 1/3.
    const std::vector<std::vector<double>> xt{{1, 2, 3}, {0, 0}};
    const std::vector<std::vector<double>> yt{{2, 2, 0}, {5}};
    QVERIFY(near(st::probabilityOfImprovement(xt, yt), 1.0 / 3.0, 1e-12));
    const st::Interval pt = st::probabilityOfImprovementInterval(xt, yt, {});
    QVERIFY(near(pt.estimate, 1.0 / 3.0, 1e-12));
    QVERIFY(pt.lower >= 0.0 && pt.lower < pt.upper && pt.upper <= 0.5); // task 2 pins half the mean at 0
    // One task is the two-sample version, draw for draw.
    const st::Interval single = st::probabilityOfImprovementInterval(std::vector<std::vector<double>>{agent},
                                                                     std::vector<std::vector<double>>{hold}, {});
    QCOMPARE(single.lower, poi.lower);
    QCOMPARE(single.upper, poi.upper);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             st::probabilityOfImprovement(xt, std::vector<std::vector<double>>{{1}}));
}

void TestStats::performanceProfile()
{
    const std::vector<double> scores{1, 2, 3, 4};
    const std::vector<double> taus{0, 2, 4};
    const std::vector<double> f = st::performanceProfile(scores, taus);
    QCOMPARE(f.size(), std::size_t(3));
    QVERIFY(near(f[0], 1.0, 1e-12));
    QVERIFY(near(f[1], 0.5, 1e-12)); // strictly greater: 3 and 4
    QVERIFY(near(f[2], 0.0, 1e-12));
    const st::PerformanceProfile banded = st::performanceProfileWithBands({scores}, taus, {});
    QCOMPARE(banded.fractions.size(), std::size_t(3));
    QVERIFY(near(banded.fractions[1].estimate, 0.5, 1e-12));
    QVERIFY(banded.fractions[1].lower < 0.5 && banded.fractions[1].upper > 0.5);
    QVERIFY(near(banded.fractions[0].lower, 1.0, 1e-12)); // every score > 0 in every resample
}

void TestStats::probabilisticSharpe()
{
    // SR 0.1 over 101 normal returns against 0: z = 0.1 * 10 / sqrt(1 + 0.005), Phi(z) = 0.840741.
    QVERIFY(near(st::probabilisticSharpe(0.1, 0.0, 101, 0.0, 3.0), 0.8407413278013518, 1e-9));
    // Same SR as benchmark: exactly one half.
    QVERIFY(near(st::probabilisticSharpe(0.1, 0.1, 101, -1.0, 6.0), 0.5, 1e-12));
    // From a series 0.01 -0.005 0.02 0 0.015: SR 0.771589, skew -0.157988, kurtosis 1.509194,
    // z = SR * sqrt(4) / sqrt(1 - skew SR + (kurt - 1)/4 SR^2) -> 0.920742.
    const std::vector<double> r{0.01, -0.005, 0.02, 0.0, 0.015};
    QVERIFY(near(st::probabilisticSharpe(r, 0.0), 0.920742003883227, 1e-9));
    QVERIFY(std::isnan(st::probabilisticSharpe(0.1, 0.0, 1, 0.0, 3.0)));
    QVERIFY(st::isSignificant(0.96));
    QVERIFY(!st::isSignificant(0.94));
    QVERIFY(!st::isSignificant(std::nan("")));
}

void TestStats::deflatedSharpePaperExample()
{
    // Bailey & López de Prado (2014), numerical example: annualised SR 2.5 over 5 years of daily
    // returns (T = 1250, so 250 per year), N = 100 trials whose annualised SRs have variance 1/2,
    // skewness -3, kurtosis 10. De-annualised: SR = 2.5 / sqrt(250) = 0.1581, V = 0.5 / 250, and
    // the paper gets SR0 = 0.1132 and DSR = 0.9004 (four decimals): not significant at 95 %.
    st::DeflatedSharpeInput in;
    in.sharpe = st::deannualiseSharpe(2.5, 250.0);
    in.observations = 1250;
    in.skewness = -3.0;
    in.kurtosis = 10.0;
    in.trials = 100;
    in.trialsSharpeVariance = st::deannualiseSharpeVariance(0.5, 250.0);
    const st::SharpeVerdict v = st::deflatedSharpe(in);
    QVERIFY(near(v.benchmark, 0.1132, 5e-5));
    QVERIFY(near(v.probability, 0.9004, 5e-5));
    QVERIFY(!v.significant);
    QVERIFY(near(st::expectedMaxSharpe(0.5, 1), 0.0, 0.0));
    // Fewer trials lower the bar: with 2 trials the same strategy clears 95 %.
    in.trials = 2;
    QVERIFY(st::deflatedSharpe(in).significant);
    // Built from data: trial SRs 0.1 0.2 0.3 have sample variance 0.01.
    const std::vector<double> r{0.01, -0.005, 0.02, 0.0, 0.015};
    const std::vector<double> trials{0.1, 0.2, 0.3};
    const st::DeflatedSharpeInput fromData = st::deflatedSharpeInput(r, trials);
    QCOMPARE(fromData.trials, std::size_t(3));
    QCOMPARE(fromData.observations, std::size_t(5));
    QVERIFY(near(fromData.trialsSharpeVariance, 0.01, 1e-12));
    QVERIFY(near(fromData.sharpe, st::perBarSharpe(r), 0.0));
    QVERIFY(near(fromData.kurtosis, 1.5091941590048674, 1e-9));
}

void TestStats::dieboldMariano()
{
    // h = 1: lossA = 2 1 3 0 4, lossB = 1 each, d = 1 0 2 -1 3, n = 5, dbar = 1,
    // deviations 0 -1 1 -2 2, gamma0 = 10/5 = 2, DM = 1 / sqrt(2/5) = sqrt(2.5),
    // HLN: sqrt((5 + 1 - 2 + 0) / 5) = sqrt(0.8), DM* = sqrt(2).
    // t with 4 df: F(t) = 1/2 + (3/8) (t / sqrt(1 + t^2/4)) (1 - t^2 / (12 (1 + t^2/4))),
    // at t = sqrt(2): p = 2 (1 - F) = 1 - 4 / (3 sqrt(3)) = 0.2301996.
    const std::vector<double> a1{2, 1, 3, 0, 4};
    const std::vector<double> b1{1, 1, 1, 1, 1};
    const st::DieboldMarianoResult r1 = st::dieboldMariano(a1, b1, 1);
    QVERIFY(r1.valid);
    QVERIFY(near(r1.meanDifferential, 1.0, 1e-12));
    QVERIFY(near(r1.longRunVariance, 2.0, 1e-12));
    QVERIFY(near(r1.statistic, std::sqrt(2.0), 1e-12));
    QVERIFY(near(r1.pValue, 1.0 - 4.0 / (3.0 * std::sqrt(3.0)), 1e-9));
    // h = 2: d = 2 3 1 0 -1 1 (lossB = 0), n = 6, dbar = 1, deviations 1 2 0 -1 -2 0,
    // gamma0 = 10/6, gamma1 = (2 + 0 + 0 + 2 + 0)/6 = 4/6, LRV = 10/6 + 8/6 = 3,
    // DM = 1 / sqrt(3/6) = sqrt(2); HLN: (6 + 1 - 4 + 2/6) / 6 = 5/9, DM* = sqrt(10)/3 = 1.0540926.
    // t with 5 df: with theta = atan(t / sqrt(5)) = atan(sqrt(2)/3), cos^2 = 9/11,
    // F = 1/2 + (theta + sin cos (1 + 2/3 cos^2)) / pi, sin cos = 3 sqrt(2)/11, so
    // p = 1 - (2/pi) (atan(sqrt(2)/3) + 51 sqrt(2)/121) = 0.3400900.
    const std::vector<double> a2{2, 3, 1, 0, -1, 1};
    const std::vector<double> b2(6, 0.0);
    const st::DieboldMarianoResult r2 = st::dieboldMariano(a2, b2, 2);
    QVERIFY(r2.valid);
    QVERIFY(near(r2.longRunVariance, 3.0, 1e-12));
    QVERIFY(near(r2.statistic, std::sqrt(10.0) / 3.0, 1e-12));
    const double p2 = 1.0 -
                      (2.0 / std::numbers::pi) * (std::atan(std::sqrt(2.0) / 3.0) + 51.0 * std::sqrt(2.0) / 121.0);
    QVERIFY(near(r2.pValue, p2, 1e-9));
    // Swapping the forecasts flips the sign, not the p-value.
    const st::DieboldMarianoResult swapped = st::dieboldMariano(b2, a2, 2);
    QVERIFY(near(swapped.statistic, -r2.statistic, 1e-12));
    QVERIFY(near(swapped.pValue, r2.pValue, 1e-12));
    // The first case at h = 2: gamma1 = -7/5, LRV = 2 - 2.8 < 0, so no test.
    const st::DieboldMarianoResult bad = st::dieboldMariano(a1, b1, 2);
    QVERIFY(!bad.valid);
    QVERIFY(std::isnan(bad.pValue));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::dieboldMariano(a1, a2, 1));
}

void TestStats::pinballAndCrps()
{
    QVERIFY(near(st::pinballLoss(1.0, 0.5, 0.9), 0.45, 1e-12)); // under-forecast: 0.9 * 0.5
    QVERIFY(near(st::pinballLoss(0.0, 0.5, 0.9), 0.05, 1e-12)); // over-forecast: 0.1 * 0.5
    QVERIFY(near(st::pinballLoss(0.5, 0.5, 0.3), 0.0, 1e-12));
    // Two outcomes, levels 0.1 0.5 0.9: (y=1, q=0 1 2) -> 0.1 + 0 + 0.1; (y=0, q=0 0 0) -> 0.
    const std::vector<double> y{1.0, 0.0};
    const std::vector<double> q{0, 1, 2, 0, 0, 0};
    const std::vector<double> levels{0.1, 0.5, 0.9};
    QVERIFY(near(st::meanPinballLoss(y, q, levels), 0.2 / 6.0, 1e-12));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::meanPinballLoss(y, std::vector<double>{0, 1}, levels));
    // A U(0, 1) forecast and y = 1/2 have CRPS y^3/3 + (1 - y)^3/3 = 1/12 exactly; 100 midpoint
    // levels tau_k = (k - 1/2)/100 with q_k = tau_k give 0.08335.
    std::vector<double> mid;
    for (int k = 1; k <= 100; ++k) mid.push_back((k - 0.5) / 100.0);
    QVERIFY(near(st::crpsFromQuantiles(0.5, mid, mid), 1.0 / 12.0, 5e-5));
}

void TestStats::coverage()
{
    // Inside: 1 in [0, 2], 3 in [2, 3] (bounds count); outside: 2 < 2.5, 4 > 3, 5 < 6.
    const std::vector<double> y{1, 2, 3, 4, 5};
    const std::vector<double> lo{0, 2.5, 2, 0, 6};
    const std::vector<double> hi{2, 3, 3, 3, 7};
    const st::Coverage c = st::intervalCoverage(y, lo, hi, 0.8);
    QCOMPARE(c.n, std::size_t(5));
    QVERIFY(near(c.observed, 0.4, 1e-12));
    QVERIFY(near(c.gap, -0.4, 1e-12));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, st::intervalCoverage(y, lo, std::vector<double>{1}, 0.8));
}

void TestStats::pitOfCalibratedForecasts()
{
    // Outcomes evenly spread over (0, 1), every forecast the true U(0, 1) quantiles: each of the
    // ten bins gets exactly its share.
    const std::vector<double> levels{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
    std::vector<double> y;
    std::vector<double> q;
    for (int i = 0; i < 1000; ++i) {
        y.push_back((i + 0.5) / 1000.0);
        q.insert(q.end(), levels.begin(), levels.end());
    }
    const st::PitHistogram h = st::pitHistogram(y, q, levels);
    QCOMPARE(h.counts.size(), std::size_t(10));
    QCOMPARE(h.edges.size(), std::size_t(11));
    QCOMPARE(h.n, std::size_t(1000));
    for (std::size_t j = 0; j < h.counts.size(); ++j) {
        QCOMPARE(h.counts[j], std::size_t(100));
        QVERIFY(near(h.fraction(j), h.expected[j], 1e-12));
    }
    // Forecasts squeezed to the median put everything in the two outer bins.
    std::vector<double> narrow(q.size(), 0.5);
    const st::PitHistogram n = st::pitHistogram(y, narrow, levels);
    QCOMPARE(n.counts.front(), std::size_t(500));
    QCOMPARE(n.counts.back(), std::size_t(500));
}

void TestStats::climatology()
{
    // Bucket 0 has 1..5 (median 3); bucket 1 has only 10 and 20, below minCount 3, so it uses the
    // median of all seven values, 4; an unseen bucket uses the same.
    std::vector<std::pair<int, double>> samples{{0, 1}, {0, 2}, {1, 10}, {0, 3}, {0, 4}, {1, 20}, {0, 5}};
    const std::vector<double> levels{0.25, 0.5};
    const st::Climatology c = st::fitClimatology(samples, levels, /*minCount=*/3);
    QVERIFY(!c.usesFallback(0));
    QVERIFY(near(c.quantilesFor(0)[0], 2.0, 1e-12));
    QVERIFY(near(c.quantilesFor(0)[1], 3.0, 1e-12));
    QVERIFY(c.usesFallback(1));
    QVERIFY(near(c.quantilesFor(1)[1], 4.0, 1e-12));
    QVERIFY(near(c.quantilesFor(1)[0], 2.5, 1e-12)); // sorted 1 2 3 4 5 10 20, h = 1.5
    QVERIFY(c.usesFallback(7));
    QCOMPARE(c.counts.at(1), std::size_t(2));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             st::fitClimatology(std::vector<std::pair<int, double>>{}, levels, 3));
}

void TestStats::skillScore()
{
    QVERIFY(near(st::skillScore(0.8, 1.0), 0.2, 1e-12));
    QVERIFY(near(st::skillScore(1.2, 1.0), -0.2, 1e-12));
    QVERIFY(std::isnan(st::skillScore(1.0, 0.0)));
}

} // namespace tst_stats

FOXHUNT_TEST_APPLESS_MAIN(tst_stats::TestStats)
#include "tst_stats.moc"
