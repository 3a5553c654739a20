// SPDX-License-Identifier: GPL-3.0-or-later
// Walk-forward folds (engine/replay/fold_plan): no fold trains or validates on its test days, the
// test blocks do not overlap and together cover the out-of-sample span, and the run settings a
// fold member trains with give back exactly the fold's split.

#include "engine/replay/fold_plan.h"

#include "engine/data/market_time.h"
#include "engine/data/synthetic.h"
#include "engine/replay/split.h"
#include "tests/support/test_bundle.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

Q_DECLARE_METATYPE(foxhunt::FoldWindow)

namespace tst_fold_plan {

using namespace foxhunt;

namespace {

// Twenty Monday-Friday trading days from 2024-01-08 (the synthetic default's calendar).
std::vector<Bar> twentyDays()
{
    SyntheticOptions o;
    o.tradingDays = 20;
    return generateSyntheticBars(o);
}

// The default split's validation share of a fold's window: 0.15 / (0.7 + 0.15).
constexpr double kShare = 0.15 / 0.85;

} // namespace

class TestFoldPlan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void handCase_data();
    void handCase();
    void runSettingsGiveTheFoldsSplit_data();
    void runSettingsGiveTheFoldsSplit();
    void planRoundTripsThroughJson();
    void refusesImpossiblePlans();
};

void TestFoldPlan::handCase_data()
{
    QTest::addColumn<FoldWindow>("window");
    // Per fold: positions (0-based, into the 20 days) of train from/to, validation from/to, test from/to.
    QTest::addColumn<QList<QList<int>>>("expected");
    // 20 days, 3 folds: test blocks of 20 / 4 = 5 days (days 5-9, 10-14, 15-19), first window 5 days.
    // Validation: round(share x window) = 1, 2 and 3 days for windows of 5, 10 and 15 days.
    QTest::newRow("expanding") << FoldWindow::Expanding
                               << QList<QList<int>>{{0, 3, 4, 4, 5, 9}, {0, 7, 8, 9, 10, 14}, {0, 11, 12, 14, 15, 19}};
    // Rolling: every window is 5 days long, the last one of them validation.
    QTest::newRow("rolling") << FoldWindow::Rolling
                             << QList<QList<int>>{{0, 3, 4, 4, 5, 9}, {5, 8, 9, 9, 10, 14}, {10, 13, 14, 14, 15, 19}};
}

void TestFoldPlan::handCase()
{
    QFETCH(FoldWindow, window);
    QFETCH(QList<QList<int>>, expected);
    const std::vector<std::int64_t> days = tradingDaysOf(twentyDays());
    QCOMPARE(days.size(), std::size_t(20));
    const std::vector<FoldDays> folds = planFolds(days, 3, window, kShare);
    QCOMPARE(folds.size(), std::size_t(3));
    const auto position = [&](std::int64_t day) {
        return int(std::lower_bound(days.begin(), days.end(), day) - days.begin());
    };
    std::set<std::int64_t> tested;
    for (std::size_t k = 0; k < folds.size(); ++k) {
        const FoldDays& f = folds[k];
        QCOMPARE(f.fold, k);
        const QList<int> got{position(f.trainFrom),    position(f.trainTo),  position(f.validationFrom),
                             position(f.validationTo), position(f.testFrom), position(f.testTo)};
        QCOMPARE(got, expected[int(k)]);
        // Nothing the fold learns from or selects on lies on or after its first test day.
        QVERIFY(f.trainFrom <= f.trainTo && f.trainTo < f.validationFrom);
        QVERIFY(f.validationFrom <= f.validationTo && f.validationTo < f.testFrom);
        QCOMPARE(f.trainDays + f.validationDays, std::size_t(expected[int(k)][3] - expected[int(k)][0] + 1));
        QCOMPARE(f.testDays, std::size_t(5));
        // Test blocks do not overlap, and each one follows the previous one.
        if (k > 0) QVERIFY(f.testFrom > folds[k - 1].testTo);
        for (int p = position(f.testFrom); p <= position(f.testTo); ++p)
            QVERIFY(tested.insert(days[std::size_t(p)]).second);
    }
    // Together the test blocks are the out-of-sample span: every day after the first window.
    QVERIFY(tested == std::set<std::int64_t>(days.begin() + 5, days.end()));
}

void TestFoldPlan::runSettingsGiveTheFoldsSplit_data()
{
    QTest::addColumn<FoldWindow>("window");
    QTest::newRow("expanding") << FoldWindow::Expanding;
    QTest::newRow("rolling") << FoldWindow::Rolling;
}

void TestFoldPlan::runSettingsGiveTheFoldsSplit()
{
    // What a member run does with its settings: load [from_day, to_day] and split by the shares.
    // Every train and validation bar lies before the fold's first test day, every test bar on or after it.
    QFETCH(FoldWindow, window);
    const std::vector<Bar> bars = twentyDays();
    EsCalendar calendar;
    for (const FoldDays& f : planFolds(tradingDaysOf(bars), 3, window, kShare)) {
        const FoldRunSettings s = foldRunSettings(bars, f);
        QCOMPARE(s.fromDay, f.trainFrom);
        QCOMPARE(s.toDay, f.testTo);
        std::vector<Bar> loaded;
        for (const Bar& b : bars)
            if (b.tsEvent >= sessionOpenUtc(s.fromDay) && b.tsEvent < sessionOpenUtc(s.toDay + 1)) loaded.push_back(b);
        const WalkForwardSplit split = splitByFraction(loaded, s.trainFraction, s.validationFraction);
        QCOMPARE(split.trainStartDay, f.trainFrom);
        QCOMPARE(split.validationStartDay, f.validationFrom);
        QCOMPARE(split.testStartDay, f.testFrom);
        QCOMPARE(split.testIndex.end, loaded.size());
        for (std::size_t i = 0; i < loaded.size(); ++i) {
            const std::int64_t day = calendar.tradingDay(loaded[i].tsEvent);
            if (i < split.validationIndex.begin) QVERIFY(day >= f.trainFrom && day <= f.trainTo);
            else if (i < split.testIndex.begin) QVERIFY(day >= f.validationFrom && day <= f.validationTo);
            else QVERIFY(day >= f.testFrom && day <= f.testTo);
        }
        QVERIFY(split.validation.toTs <= split.test.fromTs);
        // A member's config names the fold's days too (validation_from_day, test_from_day): the run
        // splits there, whatever the shares say, and lands on the same bars.
        const WalkForwardSplit explicitSplit = splitForRun(loaded, 0.5, 0.2, f.validationFrom, f.testFrom);
        QCOMPARE(explicitSplit.validationStartDay, f.validationFrom);
        QCOMPARE(explicitSplit.testStartDay, f.testFrom);
        QCOMPARE(explicitSplit.validationIndex.begin, split.validationIndex.begin);
        QCOMPARE(explicitSplit.testIndex.begin, split.testIndex.begin);
        const WalkForwardSplit byShares = splitForRun(loaded, s.trainFraction, s.validationFraction, {}, {});
        QCOMPARE(byShares.testIndex.begin, split.testIndex.begin);
    }
}

void TestFoldPlan::planRoundTripsThroughJson()
{
    const std::vector<Bar> bars = twentyDays();
    FoldPlan plan;
    plan.folds = 3;
    plan.window = FoldWindow::Rolling;
    plan.validationShare = kShare;
    for (std::int64_t seed : {1, 2})
        for (const FoldDays& f : planFolds(tradingDaysOf(bars), 3, plan.window, kShare))
            plan.members.push_back({seed, f, foldRunSettings(bars, f)});
    const FoldPlan back = foldPlanFromJson(nlohmann::json::parse(toJson(plan).dump()));
    QCOMPARE(back.folds, plan.folds);
    QVERIFY(back.window == plan.window);
    QCOMPARE(back.members.size(), std::size_t(6));
    for (std::size_t i = 0; i < back.members.size(); ++i) {
        QCOMPARE(back.members[i].seed, plan.members[i].seed);
        QVERIFY(back.members[i].days == plan.members[i].days);
        QCOMPARE(back.members[i].settings.trainFraction,
                 plan.members[i].settings.trainFraction); // exact: JSON round-trips doubles
        QCOMPARE(back.members[i].settings.validationFraction, plan.members[i].settings.validationFraction);
    }
    nlohmann::json bad = toJson(plan);
    bad["members"][0]["test"]["from"] = bad["members"][0]["train"]["from"];
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, foldPlanFromJson(bad));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, foldPlanFromJson(nlohmann::json::object()));
}

void TestFoldPlan::refusesImpossiblePlans()
{
    std::vector<std::int64_t> days;
    for (std::int64_t d = 0; d < 5; ++d) days.push_back(19'730 + d);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, planFolds(days, 0, FoldWindow::Expanding, kShare));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             planFolds(days, 4, FoldWindow::Expanding, kShare)); // 5 days < 4 + 2
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, planFolds(days, 2, FoldWindow::Expanding, 1.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, planFolds({3, 2, 1, 4, 5}, 1, FoldWindow::Expanding, kShare));
    // The smallest plan: folds + 2 days, one test day per fold, a two-day first window.
    const std::vector<FoldDays> tight = planFolds(days, 3, FoldWindow::Rolling, kShare);
    QCOMPARE(tight.size(), std::size_t(3));
    QCOMPARE(tight[0].trainDays, std::size_t(1));
    QCOMPARE(tight[0].validationDays, std::size_t(1));
    QCOMPARE(tight[2].testTo, days.back());
}

} // namespace tst_fold_plan

FOXHUNT_TEST_APPLESS_MAIN(tst_fold_plan::TestFoldPlan)
#include "tst_fold_plan.moc"
