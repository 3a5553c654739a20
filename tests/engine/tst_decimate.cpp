// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/telemetry/decimate.h: the min/max decimation every chart uses.

#include "engine/telemetry/decimate.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tst_decimate {

using namespace foxhunt;

namespace {

using Indices = std::vector<std::size_t>;

std::vector<double> wave(std::size_t n)
{
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i)
        y[i] = std::sin(static_cast<double>(i) * 0.05) + 0.3 * std::cos(static_cast<double>(i) * 0.71);
    return y;
}

bool strictlyIncreasing(const Indices& v)
{
    return std::adjacent_find(v.begin(), v.end(), [](std::size_t a, std::size_t b) { return a >= b; }) == v.end();
}

} // namespace

class TestDecimate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortInputUnchanged();
    void handCase();
    void extremesSurvive();
    void outputBoundedAndInOrder();
    void incrementalMatchesOneShot();
};

void TestDecimate::shortInputUnchanged()
{
    const std::vector<double> y = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
    const Indices all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    QVERIFY(decimateMinMax(y, 5) == all); // 10 <= 2 * 5: every point
    QVERIFY(decimateMinMax(y, 100) == all);
    QVERIFY(decimateMinMax(y, 0) == all); // no bucket count: nothing to decimate to
    QVERIFY(decimateMinMax(y, 5, DecimateExtremes::Min) == all);
    QVERIFY(decimateMinMax({}, 10).empty());
    QVERIFY(!MinMaxDecimator::keepsAll(11, 5));
}

void TestDecimate::handCase()
{
    // 12 values, 3 buckets: one complete bucket of 8 ([0, 8)), the tail [8, 12), plus first and last.
    const std::vector<double> y = {5, 1, 4, 9, 2, 3, 7, 6, 0, 8, 2, 5};
    QVERIFY(decimateMinMax(y, 3) == (Indices{0, 1, 3, 8, 9, 11}));
    QVERIFY(decimateMinMax(y, 3, DecimateExtremes::Min) == (Indices{0, 1, 8, 11}));
    QVERIFY(decimateMinMax(y, 3, DecimateExtremes::Max) == (Indices{0, 3, 9, 11}));
}

void TestDecimate::extremesSurvive()
{
    std::vector<double> y(1000, 0.0);
    y[437] = 50.0;
    y[801] = -30.0;
    const Indices kept = decimateMinMax(y, 20);
    QVERIFY(kept.size() <= 40);
    QVERIFY(std::find(kept.begin(), kept.end(), 437u) != kept.end());
    QVERIFY(std::find(kept.begin(), kept.end(), 801u) != kept.end());
    QCOMPARE(kept.front(), std::size_t(0));
    QCOMPARE(kept.back(), std::size_t(999));
    // A band's edges: the lower keeps the dip, the upper the spike.
    const Indices lower = decimateMinMax(y, 20, DecimateExtremes::Min);
    const Indices upper = decimateMinMax(y, 20, DecimateExtremes::Max);
    QVERIFY(std::find(lower.begin(), lower.end(), 801u) != lower.end());
    QVERIFY(std::find(upper.begin(), upper.end(), 437u) != upper.end());
    QVERIFY(std::find(upper.begin(), upper.end(), 801u) == upper.end());
}

void TestDecimate::outputBoundedAndInOrder()
{
    for (std::size_t n : {7u, 13u, 64u, 65u, 1000u, 4097u, 50'000u}) {
        const std::vector<double> y = wave(n);
        for (int buckets : {3, 4, 7, 50, 640}) {
            const Indices both = decimateMinMax(y, buckets);
            const Indices low = decimateMinMax(y, buckets, DecimateExtremes::Min);
            const QString where = QStringLiteral("n %1, buckets %2").arg(n).arg(buckets);
            QVERIFY2(both.size() <= std::max<std::size_t>(n <= 2u * static_cast<std::size_t>(buckets) ? n : 0,
                                                          2u * static_cast<std::size_t>(buckets)),
                     qPrintable(where));
            if (!MinMaxDecimator::keepsAll(n, buckets)) {
                QVERIFY2(both.size() <= 2u * static_cast<std::size_t>(buckets), qPrintable(where));
                QVERIFY2(low.size() <= static_cast<std::size_t>(buckets) + 2u, qPrintable(where));
            }
            // Indices ascend, so x (monotone in the index) stays in order; first and last are kept.
            QVERIFY2(strictlyIncreasing(both) && strictlyIncreasing(low), qPrintable(where));
            QCOMPARE(both.front(), std::size_t(0));
            QCOMPARE(both.back(), n - 1);
            // The global extremes are among the kept points.
            const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
            QVERIFY(std::find(both.begin(), both.end(), static_cast<std::size_t>(lo - y.begin())) != both.end());
            QVERIFY(std::find(both.begin(), both.end(), static_cast<std::size_t>(hi - y.begin())) != both.end());
        }
    }
}

void TestDecimate::incrementalMatchesOneShot()
{
    // A sequence that grows at its end: the cached buckets give what a fresh pass gives.
    std::vector<double> y;
    MinMaxDecimator live;
    Indices kept;
    for (int round = 0; round < 40; ++round) {
        const std::vector<double> more = wave(y.size() + 37 * static_cast<std::size_t>(round) + 5);
        y.insert(y.end(), more.end() - static_cast<std::ptrdiff_t>(37 * round + 5), more.end());
        live.select([&y](std::size_t i) { return y[i]; }, y.size(), 64, DecimateExtremes::Both, kept);
        QVERIFY2(kept == decimateMinMax(y, 64), qPrintable(QStringLiteral("round %1").arg(round)));
    }
}

} // namespace tst_decimate

FOXHUNT_TEST_GUILESS_MAIN(tst_decimate::TestDecimate)
#include "tst_decimate.moc"
