// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeps: grid and random search over config keys within a budget, drawn once and stored.

#include "engine/replay/sweep_plan.h"
#include "tests/support/test_bundle.h"

#include <QFloat16> // QCOMPARE on json values weighs the qfloat16 overload, which needs the whole type
#include <QTest>

#include <set>

namespace tst_sweep_plan {

using namespace foxhunt;
using json = nlohmann::json;

namespace {

json baseConfig()
{
    return json::parse(R"({"steps": 2000, "seed": 1, "models": ["dqn"],
        "dqn": {"lr": 0.0005, "gamma": 0.99, "batch_size": 64, "double_dqn": true},
        "ppo": {"lr": 0.0003}, "series": "ES.FUT"})");
}

} // namespace

class TestSweepPlan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void gridTakesEveryCombination()
    {
        const json spec = json::parse(R"({"method": "grid",
            "space": {"dqn.lr": [0.0001, 0.001], "dqn.batch_size": [32, 64, 128]}})");
        const SweepPlan plan = planSweep(spec, baseConfig());
        QCOMPARE(plan.gridSize, std::size_t(6));
        QCOMPARE(plan.trials.size(), std::size_t(6));
        QCOMPARE(plan.keys, (std::vector<std::string>{"dqn.batch_size", "dqn.lr"}));
        // Grid order: the last key varies fastest.
        QCOMPARE(plan.trials[0], json::parse(R"({"dqn.batch_size": 32, "dqn.lr": 0.0001})"));
        QCOMPARE(plan.trials[1], json::parse(R"({"dqn.batch_size": 32, "dqn.lr": 0.001})"));
        QCOMPARE(plan.trials[5], json::parse(R"({"dqn.batch_size": 128, "dqn.lr": 0.001})"));
        std::set<std::string> distinct;
        for (const json& t : plan.trials) distinct.insert(t.dump());
        QCOMPARE(distinct.size(), std::size_t(6));
    }

    void gridOverBudgetIsASampleThatRepeats()
    {
        const json spec = json::parse(R"({"method": "grid", "trials": 4, "seed": 7,
            "space": {"dqn.lr": [0.0001, 0.0003, 0.001], "dqn.gamma": [0.9, 0.95, 0.99]}})");
        const SweepPlan a = planSweep(spec, baseConfig());
        const SweepPlan b = planSweep(spec, baseConfig());
        QCOMPARE(a.gridSize, std::size_t(9));
        QCOMPARE(a.trials.size(), std::size_t(4));
        QCOMPARE(json(a.trials), json(b.trials)); // the same seed draws the same sample
        std::set<std::string> distinct;
        for (const json& t : a.trials) distinct.insert(t.dump());
        QCOMPARE(distinct.size(), std::size_t(4)); // without repeats
        json other = spec;
        other["seed"] = 8;
        QVERIFY(json(planSweep(other, baseConfig()).trials) != json(a.trials));
    }

    void randomDrawsWithinRanges()
    {
        const json spec = json::parse(R"({"method": "random", "trials": 50, "seed": 3,
            "space": {"dqn.lr": {"min": 0.00001, "max": 0.01, "log": true},
                      "dqn.gamma": {"min": 0.9, "max": 0.999},
                      "dqn.batch_size": {"min": 16, "max": 256},
                      "dqn.double_dqn": [true, false]}})");
        const SweepPlan plan = planSweep(spec, baseConfig());
        QCOMPARE(plan.trials.size(), std::size_t(50));
        int belowGeometricMid = 0, doubles = 0;
        for (const json& t : plan.trials) {
            const double lr = t["dqn.lr"].get<double>();
            QVERIFY(lr >= 0.00001 && lr <= 0.01);
            belowGeometricMid += lr < std::sqrt(0.00001 * 0.01);
            const double gamma = t["dqn.gamma"].get<double>();
            QVERIFY(gamma >= 0.9 && gamma <= 0.999);
            QVERIFY(t["dqn.batch_size"].is_number_integer()); // an integer key stays an integer
            QVERIFY(t["dqn.batch_size"].get<int>() >= 16 && t["dqn.batch_size"].get<int>() <= 256);
            doubles += t["dqn.double_dqn"].get<bool>();
        }
        // Log-uniform: about half below the geometric midpoint (a uniform draw would put ~3 % there).
        QVERIFY2(belowGeometricMid >= 15 && belowGeometricMid <= 35, qPrintable(QString::number(belowGeometricMid)));
        QVERIFY(doubles > 0 && doubles < 50);
    }

    void badSpecsAreRefusedByName()
    {
        const auto refuses = [](const char* text, const char* words) {
            try {
                planSweep(json::parse(text), baseConfig());
            } catch (const std::invalid_argument& e) {
                return std::string(e.what()).find(words) != std::string::npos;
            }
            return false;
        };
        QVERIFY(refuses(R"({"space": {"dqn.learning_rate": [1]}})", "no key 'dqn.learning_rate'"));
        QVERIFY(refuses(R"({"space": {"dqn.lr": ["fast"]}})", "takes values like"));
        QVERIFY(refuses(R"({"space": {"dqn.lr": {"min": 0.1, "max": 0.2}}})", "a grid needs a list"));
        QVERIFY(refuses(R"({"method": "random", "trials": 2, "space": {"dqn.lr": {"min": 0.2, "max": 0.1}}})",
                        "min > max"));
        QVERIFY(refuses(R"({"method": "random", "trials": 2, "space": {"dqn.lr": {"min": 0, "max": 1, "log": true}}})",
                        "min > 0"));
        QVERIFY(refuses(R"({"method": "random", "space": {"dqn.lr": [1]}})", "needs 'trials'"));
        QVERIFY(refuses(R"({"method": "bayes", "space": {"dqn.lr": [1]}})", "grid or random"));
        QVERIFY(refuses(R"({"trials": 0, "space": {"dqn.lr": [1]}})", "at least 1"));
        QVERIFY(refuses(R"({"space": {"dqn": [1]}})", "not a number"));
        QVERIFY(refuses(R"({"space": {}})", "at least one key"));
    }

    void trialConfigSetsNestedValuesAndRoundTrips()
    {
        json config = baseConfig();
        const json spec = json::parse(R"({"space": {"dqn.lr": [0.001], "steps": [500]}})");
        const SweepPlan plan = planSweep(spec, config);
        config["sweep"] = toJson(plan);
        const json trial = trialConfig(config, plan.trials[0]);
        QVERIFY(!trial.contains("sweep"));
        QCOMPARE(trial["dqn"]["lr"].get<double>(), 0.001);
        QCOMPARE(trial["steps"].get<int>(), 500);
        QCOMPARE(trial["dqn"]["gamma"].get<double>(), 0.99);
        QCOMPARE(describeTrial(plan.trials[0], plan.keys), std::string("dqn.lr=0.001, steps=500"));
        const SweepPlan back = sweepPlanFromJson(toJson(plan));
        QCOMPARE(toJson(back), toJson(plan));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sweepPlanFromJson(json::parse(R"({"method": "grid"})")));
    }
};

} // namespace tst_sweep_plan

FOXHUNT_TEST_GUILESS_MAIN(tst_sweep_plan::TestSweepPlan)
#include "tst_sweep_plan.moc"
