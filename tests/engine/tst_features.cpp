// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/features.h"

#include "engine/data/market_time.h"
#include "tests/support/test_bundle.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <set>
#include <vector>

namespace tst_features {

using namespace foxhunt;

namespace {

std::int64_t utc(int y, unsigned mo, unsigned d, int h, int mi)
{
    return daysFromCivil(y, mo, d) * kNsPerDay + std::int64_t(h) * 3600 * kNsPerSecond +
           std::int64_t(mi) * kNsPerMinute;
}

// Deterministic 1-minute ES-like bars over whole sessions (18:00-17:00 ET,
// Monday-Friday trading days, so with the daily break and a weekend), from the
// trading day `firstDay` on, `days` calendar days long. splitmix64 drives the walk.
std::vector<Bar> makeSessions(std::int64_t firstDay, int days, std::uint64_t seed = 7)
{
    auto next = [&seed] {
        std::uint64_t z = (seed += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    ZoneConverter ny("America/New_York");
    std::vector<Bar> bars;
    std::int64_t price = fromPoints(4800.0);
    for (std::int64_t day = firstDay; day < firstDay + days; ++day) {
        const int wd = weekdayFromDays(day);
        if (wd == 0 || wd == 6) continue;
        const std::int64_t open = *ny.localToUtc(day * kNsPerDay - 6 * 3600 * kNsPerSecond);
        for (int m = 0; m < 1380; ++m) {
            Bar b;
            b.tsEvent = open + std::int64_t(m) * kNsPerMinute;
            b.open = price;
            const std::int64_t move = std::int64_t(next() % 9) - 4;
            b.close = std::max<std::int64_t>(kEsTick, price + move * kEsTick);
            b.high = std::max(b.open, b.close) + std::int64_t(next() % 3) * kEsTick;
            b.low = std::min(b.open, b.close) - std::int64_t(next() % 3) * kEsTick;
            b.volume = 50 + next() % 2000;
            bars.push_back(b);
            price = b.close;
        }
    }
    return bars;
}

Bar bar(std::int64_t ts, double open, double high, double low, double close, std::uint64_t volume = 100)
{
    Bar b;
    b.tsEvent = ts;
    b.open = fromPoints(open);
    b.high = fromPoints(high);
    b.low = fromPoints(low);
    b.close = fromPoints(close);
    b.volume = volume;
    return b;
}

float rawOf(FeaturePipeline& p, const Bar& b, Feature f)
{
    p.push(b);
    return p.raw()[static_cast<std::size_t>(f)];
}

bool sameRows(const FeatureMatrix& a, const FeatureMatrix& b, std::size_t rows)
{
    return a.rows >= rows && b.rows >= rows &&
           std::memcmp(a.values.data(), b.values.data(), rows * kFeatureCount * sizeof(float)) == 0 &&
           std::equal(a.timestamps.begin(), a.timestamps.begin() + std::ptrdiff_t(rows), b.timestamps.begin());
}

FeatureOptions optionsFor(NormalizationMode mode)
{
    FeatureOptions o;
    o.normalization = mode;
    o.warmupBars = 50;
    o.ewmaAlpha = 0.01;
    return o;
}

} // namespace

class TestFeatures : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void namesAreFixed();
    void logReturnRangeBody();
    void gapResetsReturn();
    void timeOfDayAcrossDst_data();
    void timeOfDayAcrossDst();
    void rollingVolumeAndVolatility();
    void normalisationUsesOnlyEarlierBars();
    void normalisationClips();
    void noLookAheadOverPrefixes_data();
    void noLookAheadOverPrefixes();
    void noLookAheadWhenFutureChanges_data();
    void noLookAheadWhenFutureChanges();
    void matrixMatchesPipeline();
    void resetStartsOver();
    void rejectsBadInput();
    void longRunStaysFinite();
};

void TestFeatures::namesAreFixed()
{
    const auto& names = FeaturePipeline::featureNames();
    QCOMPARE(names.size(), kFeatureCount);
    QCOMPARE(names[static_cast<std::size_t>(Feature::LogReturn)], std::string_view("log_return"));
    QCOMPARE(names[static_cast<std::size_t>(Feature::RegularSession)], std::string_view("regular_session"));
    QCOMPARE(std::set<std::string_view>(names.begin(), names.end()).size(), kFeatureCount);
}

void TestFeatures::logReturnRangeBody()
{
    FeaturePipeline p;
    const std::int64_t t0 = utc(2024, 3, 5, 15, 0);
    p.push(bar(t0, 5000.00, 5001.00, 4999.00, 5000.50));
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::LogReturn)], 0.0f); // first bar
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::Range)], float(std::log(5001.0 / 4999.0)));
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::Body)], float(0.5 / 5000.5));

    p.push(bar(t0 + kNsPerMinute, 5000.50, 5003.00, 5000.25, 5002.75));
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::LogReturn)], float(std::log(5002.75 / 5000.5)));
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::Range)], float(std::log(5003.0 / 5000.25)));
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::Body)], float(2.25 / 5002.75));

    // A falling bar has a negative body and return.
    p.push(bar(t0 + 2 * kNsPerMinute, 5002.75, 5002.75, 4990.00, 4990.00));
    QVERIFY(p.raw()[static_cast<std::size_t>(Feature::Body)] < 0.0f);
    QCOMPARE(p.raw()[static_cast<std::size_t>(Feature::LogReturn)], float(std::log(4990.0 / 5002.75)));
}

void TestFeatures::gapResetsReturn()
{
    FeatureOptions o;
    o.gapResetNs = 30 * kNsPerMinute;
    FeaturePipeline p(o);
    // 16:59 ET bar, then 18:00 ET (the daily break): the jump is not a 1-bar return.
    p.push(bar(utc(2024, 3, 5, 21, 59), 5000, 5000, 5000, 5000));
    QCOMPARE(rawOf(p, bar(utc(2024, 3, 5, 23, 0), 5010, 5010, 5010, 5010), Feature::LogReturn), 0.0f);
    // 30 minutes exactly is still a continuation.
    QCOMPARE(rawOf(p, bar(utc(2024, 3, 5, 23, 30), 5020, 5020, 5020, 5020), Feature::LogReturn),
             float(std::log(5020.0 / 5010.0)));
}

void TestFeatures::timeOfDayAcrossDst_data()
{
    QTest::addColumn<qint64>("ts");
    QTest::addColumn<double>("minuteOfDay");
    QTest::addColumn<double>("sinceOpen");
    QTest::addColumn<bool>("regular");
    // US DST began 2024-03-10 02:00 EST: 09:30 ET is 14:30 UTC before and 13:30 UTC after.
    QTest::newRow("09:30 EST") << qint64(utc(2024, 3, 8, 14, 30)) << 570.0 << 930.0 << true;
    QTest::newRow("08:30 EST") << qint64(utc(2024, 3, 8, 13, 30)) << 510.0 << 870.0 << false;
    QTest::newRow("09:30 EDT") << qint64(utc(2024, 3, 11, 13, 30)) << 570.0 << 930.0 << true;
    QTest::newRow("15:59 EDT") << qint64(utc(2024, 3, 11, 19, 59)) << 959.0 << 1319.0 << true;
    QTest::newRow("16:00 EDT") << qint64(utc(2024, 3, 11, 20, 0)) << 960.0 << 1320.0 << false;
    QTest::newRow("18:30 EST open+30") << qint64(utc(2024, 3, 8, 23, 30)) << 1110.0 << 30.0 << false;
    QTest::newRow("Sunday 18:00 EDT open") << qint64(utc(2024, 3, 10, 22, 0)) << 1080.0 << 0.0 << false;
    QTest::newRow("16:59 EDT close") << qint64(utc(2024, 3, 11, 20, 59)) << 1019.0 << 1379.0 << false;
    QTest::newRow("00:00 EST midnight") << qint64(utc(2024, 3, 8, 5, 0)) << 0.0 << 360.0 << false;
    QTest::newRow("not on a minute 12:00:30 EDT")
        << qint64(utc(2024, 3, 12, 16, 0) + 30 * kNsPerSecond) << 720.5 << 1080.5 << true;
    // Autumn: DST ended 2024-11-03; 09:30 EST is 14:30 UTC again.
    QTest::newRow("09:30 EST after fall back") << qint64(utc(2024, 11, 4, 14, 30)) << 570.0 << 930.0 << true;
}

void TestFeatures::timeOfDayAcrossDst()
{
    QFETCH(qint64, ts);
    QFETCH(double, minuteOfDay);
    QFETCH(double, sinceOpen);
    QFETCH(bool, regular);
    EsCalendar calendar;
    QCOMPARE(calendar.minuteOfDayEt(ts), minuteOfDay);
    QCOMPARE(calendar.minutesSinceSessionOpen(ts), sinceOpen);
    QCOMPARE(calendar.isRegularSession(ts), regular);

    FeaturePipeline p;
    p.push(bar(ts, 5000, 5000, 5000, 5000));
    const auto& raw = p.raw();
    const double angle = 2.0 * std::numbers::pi * minuteOfDay / 1440.0;
    QCOMPARE(raw[static_cast<std::size_t>(Feature::TimeOfDaySin)], float(std::sin(angle)));
    QCOMPARE(raw[static_cast<std::size_t>(Feature::TimeOfDayCos)], float(std::cos(angle)));
    QCOMPARE(raw[static_cast<std::size_t>(Feature::SessionProgress)], float(sinceOpen / 1380.0));
    QCOMPARE(raw[static_cast<std::size_t>(Feature::RegularSession)], regular ? 1.0f : 0.0f);
    // Bounded features pass through the normalisation unchanged.
    QCOMPARE(p.normalized()[static_cast<std::size_t>(Feature::SessionProgress)],
             raw[static_cast<std::size_t>(Feature::SessionProgress)]);
}

void TestFeatures::rollingVolumeAndVolatility()
{
    FeatureOptions o;
    o.volumeWindow = 3;
    o.volatilityWindow = 3;
    FeaturePipeline p(o);
    const std::int64_t t0 = utc(2024, 3, 5, 15, 0);
    const double closes[] = {100, 101, 99, 102, 102};
    const std::uint64_t volumes[] = {10, 1000, 100, 10, 10};
    std::vector<double> returns, logVolumes;
    for (int i = 0; i < 5; ++i) {
        p.push(bar(t0 + i * kNsPerMinute, closes[i], closes[i], closes[i], closes[i], volumes[i]));
        returns.push_back(i == 0 ? 0.0 : std::log(closes[i] / closes[i - 1]));
        logVolumes.push_back(std::log1p(double(volumes[i])));
        auto popStats = [](const std::vector<double>& v, std::size_t end, std::size_t n) {
            const std::size_t begin = end > n ? end - n : 0;
            double m = 0, s = 0;
            for (std::size_t k = begin; k < end; ++k) m += v[k];
            m /= double(end - begin);
            for (std::size_t k = begin; k < end; ++k) s += (v[k] - m) * (v[k] - m);
            return std::pair{m, std::sqrt(s / double(end - begin))};
        };
        const auto [vm, vs] = popStats(logVolumes, logVolumes.size(), 3);
        const auto [rm, rs] = popStats(returns, returns.size(), 3);
        const double expectedZ = i == 0 ? 0.0 : (logVolumes.back() - vm) / vs;
        const double expectedVol = i == 0 ? 0.0 : rs;
        Q_UNUSED(rm);
        QVERIFY2(std::abs(p.raw()[static_cast<std::size_t>(Feature::VolumeZ)] - expectedZ) < 1e-5,
                 qPrintable(QString("bar %1 volume z %2 vs %3").arg(i).arg(p.raw()[3]).arg(expectedZ)));
        QVERIFY2(std::abs(p.raw()[static_cast<std::size_t>(Feature::Volatility)] - expectedVol) < 1e-6,
                 qPrintable(QString("bar %1 volatility %2 vs %3").arg(i).arg(p.raw()[4]).arg(expectedVol)));
    }
    // The last window holds volumes {100, 10, 10}: the newest is below the mean.
    QVERIFY(p.raw()[static_cast<std::size_t>(Feature::VolumeZ)] < 0.0f);
}

void TestFeatures::normalisationUsesOnlyEarlierBars()
{
    FeatureOptions o;
    o.warmupBars = 2;
    o.normalization = NormalizationMode::Cumulative;
    FeaturePipeline p(o);
    const std::int64_t t0 = utc(2024, 3, 5, 15, 0);
    // Bodies 1/100, 3/100 (flat high/low so only the body varies by design).
    p.push(bar(t0, 100, 101, 99, 101));
    QCOMPARE(p.normalized()[static_cast<std::size_t>(Feature::Body)], 0.0f); // warm-up
    p.push(bar(t0 + kNsPerMinute, 100, 104, 99, 103));
    QCOMPARE(p.normalized()[static_cast<std::size_t>(Feature::Body)], 0.0f); // still warm-up (1 earlier bar)
    p.push(bar(t0 + 2 * kNsPerMinute, 100, 105, 99, 105));
    const double b1 = 1.0 / 101.0, b2 = 3.0 / 103.0, b3 = 5.0 / 105.0;
    const double mean = (b1 + b2) / 2, sd = std::abs(b2 - b1) / 2;
    QVERIFY(std::abs(p.normalized()[static_cast<std::size_t>(Feature::Body)] - (b3 - mean) / sd) < 1e-4);

    // EWMA: same rule, statistics from before the bar.
    FeatureOptions e = o;
    e.normalization = NormalizationMode::Ewma;
    e.ewmaAlpha = 0.5;
    FeaturePipeline q(e);
    q.push(bar(t0, 100, 101, 99, 101));
    q.push(bar(t0 + kNsPerMinute, 100, 104, 99, 103));
    q.push(bar(t0 + 2 * kNsPerMinute, 100, 105, 99, 105));
    const double em = b1 + 0.5 * (b2 - b1);
    const double ev = 0.5 * (0.0 + 0.5 * (b2 - b1) * (b2 - b1));
    QVERIFY(std::abs(q.normalized()[static_cast<std::size_t>(Feature::Body)] - (b3 - em) / std::sqrt(ev)) < 1e-4);

    FeatureOptions none;
    none.normalization = NormalizationMode::None;
    FeaturePipeline r(none);
    r.push(bar(t0, 100, 101, 99, 101));
    QVERIFY(r.normalized() == r.raw());
}

void TestFeatures::normalisationClips()
{
    FeatureOptions o;
    o.warmupBars = 10;
    o.clip = 3.0;
    FeaturePipeline p(o);
    const std::int64_t t0 = utc(2024, 3, 5, 15, 0);
    for (int i = 0; i < 20; ++i) p.push(bar(t0 + i * kNsPerMinute, 100, 100.5 + 0.25 * (i % 2), 99.5, 100));
    p.push(bar(t0 + 20 * kNsPerMinute, 100, 150, 60, 100)); // an enormous range
    QCOMPARE(p.normalized()[static_cast<std::size_t>(Feature::Range)], 3.0f);
}

void TestFeatures::noLookAheadOverPrefixes_data()
{
    QTest::addColumn<int>("mode");
    QTest::addColumn<int>("which");
    QTest::newRow("cumulative normalised") << int(NormalizationMode::Cumulative) << int(FeatureValues::Normalized);
    QTest::newRow("ewma normalised") << int(NormalizationMode::Ewma) << int(FeatureValues::Normalized);
    QTest::newRow("raw") << int(NormalizationMode::Cumulative) << int(FeatureValues::Raw);
}

void TestFeatures::noLookAheadOverPrefixes()
{
    QFETCH(int, mode);
    QFETCH(int, which);
    // Two weeks around the March DST change: daily breaks and a weekend.
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 10);
    QVERIFY(bars.size() > 5000);
    const FeatureOptions o = optionsFor(NormalizationMode(mode));
    const FeatureMatrix full = computeFeatures(bars, o, FeatureValues(which));
    QCOMPARE(full.rows, bars.size());

    std::vector<std::size_t> cuts = {1, 2, 3, 29, 30, 31, 49, 50, 51, 60, 61, 1379, 1380, 1381};
    for (std::size_t c = 997; c < bars.size(); c += 997) cuts.push_back(c);
    for (std::size_t cut : cuts) {
        const std::vector<Bar> prefix(bars.begin(), bars.begin() + std::ptrdiff_t(cut));
        const FeatureMatrix part = computeFeatures(prefix, o, FeatureValues(which));
        QCOMPARE(part.rows, cut);
        QVERIFY2(sameRows(full, part, cut), qPrintable(QString("rows differ for prefix of %1 bars").arg(cut)));
    }
}

void TestFeatures::noLookAheadWhenFutureChanges_data()
{
    QTest::addColumn<int>("mode");
    QTest::newRow("cumulative") << int(NormalizationMode::Cumulative);
    QTest::newRow("ewma") << int(NormalizationMode::Ewma);
}

void TestFeatures::noLookAheadWhenFutureChanges()
{
    QFETCH(int, mode);
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 10);
    const FeatureOptions o = optionsFor(NormalizationMode(mode));
    const FeatureMatrix base = computeFeatures(bars, o);
    const FeatureMatrix baseRaw = computeFeatures(bars, o, FeatureValues::Raw);

    for (std::size_t t : {std::size_t(0), std::size_t(100), std::size_t(1380), std::size_t(4000), bars.size() - 2}) {
        // Future 1: the later bars' prices and volumes are reversed in order (timestamps kept).
        std::vector<Bar> reversed = bars;
        for (std::size_t a = t + 1, b = bars.size() - 1; a < b; ++a, --b) {
            std::swap(reversed[a].open, reversed[b].open);
            std::swap(reversed[a].high, reversed[b].high);
            std::swap(reversed[a].low, reversed[b].low);
            std::swap(reversed[a].close, reversed[b].close);
            std::swap(reversed[a].volume, reversed[b].volume);
        }
        // Future 2: a crash, a volume spike and a shifted clock after t.
        std::vector<Bar> crashed = bars;
        for (std::size_t k = t + 1; k < crashed.size(); ++k) {
            crashed[k].open /= 2;
            crashed[k].high /= 2;
            crashed[k].low /= 2;
            crashed[k].close /= 3;
            crashed[k].volume *= 50;
            crashed[k].tsEvent += 7 * kNsPerMinute;
        }
        for (const auto* future : {&reversed, &crashed}) {
            QVERIFY2(sameRows(base, computeFeatures(*future, o), t + 1),
                     qPrintable(QString("normalised features up to bar %1 changed with the future").arg(t)));
            QVERIFY2(sameRows(baseRaw, computeFeatures(*future, o, FeatureValues::Raw), t + 1),
                     qPrintable(QString("raw features up to bar %1 changed with the future").arg(t)));
        }
        // And the change is visible right after t, so the comparison above has teeth.
        if (t + 2 < bars.size()) {
            const FeatureMatrix changed = computeFeatures(crashed, o, FeatureValues::Raw);
            QVERIFY(!sameRows(baseRaw, changed, t + 2));
        }
    }
}

void TestFeatures::matrixMatchesPipeline()
{
    const auto bars = makeSessions(daysFromCivil(2024, 11, 1), 5);
    const FeatureOptions o = optionsFor(NormalizationMode::Cumulative);
    const FeatureMatrix m = computeFeatures(bars, o);
    const FeatureMatrix raw = computeFeatures(bars, o, FeatureValues::Raw);
    QCOMPARE(m.cols, kFeatureCount);
    QCOMPARE(m.values.size(), bars.size() * kFeatureCount);
    FeaturePipeline p(o);
    for (std::size_t t = 0; t < bars.size(); ++t) {
        const FeatureVector& v = p.push(bars[t]);
        QCOMPARE(m.timestamps[t], bars[t].tsEvent);
        QVERIFY(std::memcmp(m.row(t), v.data(), sizeof(float) * kFeatureCount) == 0);
        QVERIFY(std::memcmp(raw.row(t), p.raw().data(), sizeof(float) * kFeatureCount) == 0);
    }
    QCOMPARE(m.at(0, Feature::LogReturn), 0.0f);
}

void TestFeatures::resetStartsOver()
{
    const auto bars = makeSessions(daysFromCivil(2024, 3, 4), 3);
    FeaturePipeline p(optionsFor(NormalizationMode::Cumulative));
    for (const Bar& b : bars) p.push(b);
    p.reset();
    QCOMPARE(p.count(), std::size_t(0));
    const FeatureMatrix fresh = computeFeatures(bars, p.options());
    for (std::size_t t = 0; t < bars.size(); ++t) {
        p.push(bars[t]);
        QVERIFY(std::memcmp(fresh.row(t), p.normalized().data(), sizeof(float) * kFeatureCount) == 0);
    }
}

void TestFeatures::rejectsBadInput()
{
    FeaturePipeline p;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, p.push(bar(utc(2024, 3, 5, 15, 0), 0, 1, 0, 1)));
    FeatureOptions small;
    small.volumeWindow = 1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, FeaturePipeline{small});
    FeatureOptions alpha;
    alpha.normalization = NormalizationMode::Ewma;
    alpha.ewmaAlpha = 0.0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, FeaturePipeline{alpha});
    FeatureOptions clip;
    clip.clip = -1.0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, FeaturePipeline{clip});
}

void TestFeatures::longRunStaysFinite()
{
    const auto bars = makeSessions(daysFromCivil(2024, 1, 2), 40, 99);
    const FeatureMatrix m = computeFeatures(bars, {});
    QVERIFY(std::all_of(m.values.begin(), m.values.end(),
                        [](float v) { return std::isfinite(v) && std::abs(v) <= 5.0f + 1e-6f; }));
    // After warm-up, normalised returns look standardised: mean near 0, spread near 1.
    double sum = 0, sumSq = 0;
    std::size_t n = 0;
    for (std::size_t t = 1000; t < m.rows; ++t) {
        const double v = m.at(t, Feature::LogReturn);
        sum += v;
        sumSq += v * v;
        ++n;
    }
    const double mean = sum / double(n);
    const double sd = std::sqrt(sumSq / double(n) - mean * mean);
    QVERIFY2(std::abs(mean) < 0.1 && sd > 0.8 && sd < 1.2, qPrintable(QString("mean %1 sd %2").arg(mean).arg(sd)));
}

} // namespace tst_features

FOXHUNT_TEST_APPLESS_MAIN(tst_features::TestFeatures)
#include "tst_features.moc"
