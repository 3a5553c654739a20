// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/fold_plan.h"

#include "engine/data/market_time.h"
#include "engine/replay/split.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace foxhunt {

std::string toString(FoldWindow window)
{
    return window == FoldWindow::Rolling ? "rolling" : "expanding";
}

std::optional<FoldWindow> foldWindowFromString(const std::string& name)
{
    if (name == "expanding") return FoldWindow::Expanding;
    if (name == "rolling") return FoldWindow::Rolling;
    return std::nullopt;
}

std::vector<FoldDays> planFolds(const std::vector<std::int64_t>& tradingDays, std::size_t folds, FoldWindow window,
                                double validationShare)
{
    if (folds == 0) throw std::invalid_argument("folds: need at least one fold");
    if (!(validationShare > 0.0 && validationShare < 1.0))
        throw std::invalid_argument("folds: the validation share of a fold's window must lie in (0, 1), got " +
                                    std::to_string(validationShare));
    for (std::size_t i = 1; i < tradingDays.size(); ++i)
        if (tradingDays[i] <= tradingDays[i - 1])
            throw std::invalid_argument("folds: trading days are not ascending at " + formatDate(tradingDays[i]));
    const std::size_t days = tradingDays.size();
    const std::size_t block = days / (folds + 1);
    const std::size_t first = days - folds * block; // >= block: the remainder goes to the first window
    if (block == 0 || first < 2)
        throw std::invalid_argument(
            "folds: " + std::to_string(folds) + " folds need at least " + std::to_string(folds + 2) +
            " trading days (one per test block, two for the first window); the series has " + std::to_string(days));
    std::vector<FoldDays> out;
    out.reserve(folds);
    for (std::size_t k = 0; k < folds; ++k) {
        const std::size_t testBegin = first + k * block;
        const std::size_t testEnd = testBegin + block;
        const std::size_t trainBegin = window == FoldWindow::Expanding ? 0 : testBegin - first;
        const std::size_t length = testBegin - trainBegin;
        const auto wanted = static_cast<std::size_t>(std::llround(validationShare * double(length)));
        const std::size_t validation = std::clamp<std::size_t>(wanted, 1, length - 1);
        const std::size_t validationBegin = testBegin - validation;
        FoldDays f;
        f.fold = k;
        f.trainFrom = tradingDays[trainBegin];
        f.trainTo = tradingDays[validationBegin - 1];
        f.validationFrom = tradingDays[validationBegin];
        f.validationTo = tradingDays[testBegin - 1];
        f.testFrom = tradingDays[testBegin];
        f.testTo = tradingDays[testEnd - 1];
        f.trainDays = validationBegin - trainBegin;
        f.validationDays = validation;
        f.testDays = block;
        out.push_back(f);
    }
    return out;
}

std::vector<std::int64_t> tradingDaysOf(const std::vector<Bar>& bars)
{
    EsCalendar calendar;
    std::vector<std::int64_t> days;
    for (const Bar& b : bars) {
        const std::int64_t day = calendar.tradingDay(b.tsEvent);
        if (days.empty() || day > days.back()) days.push_back(day);
        else if (day < days.back())
            throw std::invalid_argument("folds: bars are not in time order at " + formatUtc(b.tsEvent));
    }
    return days;
}

FoldRunSettings foldRunSettings(const std::vector<Bar>& bars, const FoldDays& fold)
{
    // The bars a run with from_day/to_day loads: [18:00 ET open of the first day, open after the last).
    const std::int64_t fromTs = sessionOpenUtc(fold.trainFrom);
    const std::int64_t toTs = sessionOpenUtc(fold.testTo + 1);
    const std::int64_t validationTs = sessionOpenUtc(fold.validationFrom);
    const std::int64_t testTs = sessionOpenUtc(fold.testFrom);
    std::vector<Bar> range;
    std::size_t train = 0, validation = 0;
    for (const Bar& b : bars) {
        if (b.tsEvent < fromTs || b.tsEvent >= toTs) continue;
        range.push_back(b);
        if (b.tsEvent < validationTs) ++train;
        else if (b.tsEvent < testTs) ++validation;
    }
    const std::size_t n = range.size();
    if (train == 0 || validation == 0 || train + validation >= n)
        throw std::invalid_argument("fold " + std::to_string(fold.fold) + " (" + formatDate(fold.trainFrom) + " to " +
                                    formatDate(fold.testTo) + ") has a part without bars");
    FoldRunSettings s;
    s.fromDay = fold.trainFrom;
    s.toDay = fold.testTo;
    s.trainFraction = double(train) / double(n);
    s.validationFraction = double(validation) / double(n);
    // The run recomputes its split from these shares: it must land on the fold's days exactly.
    const WalkForwardSplit split = splitByFraction(range, s.trainFraction, s.validationFraction);
    if (split.trainStartDay != fold.trainFrom || split.validationStartDay != fold.validationFrom ||
        split.testStartDay != fold.testFrom || split.trainBars != train || split.validationBars != validation)
        throw std::runtime_error("fold " + std::to_string(fold.fold) + ": the run's split would start validation on " +
                                 formatDate(split.validationStartDay) + " and test on " +
                                 formatDate(split.testStartDay) + ", not on " + formatDate(fold.validationFrom) +
                                 " and " + formatDate(fold.testFrom));
    return s;
}

namespace {

nlohmann::json part(std::int64_t from, std::int64_t to, std::size_t days)
{
    return {{"from", formatDate(from)}, {"to", formatDate(to)}, {"days", days}};
}

void readPart(const nlohmann::json& j, const char* key, std::int64_t& from, std::int64_t& to, std::size_t& days)
{
    const nlohmann::json& p = j.at(key);
    const auto date = [&](const char* which) {
        const std::optional<std::int64_t> d = parseDate(p.at(which).get<std::string>());
        if (!d) throw std::invalid_argument(std::string("walk_forward: bad ") + key + "." + which + " date");
        return *d;
    };
    from = date("from");
    to = date("to");
    days = p.at("days").get<std::size_t>();
    if (to < from) throw std::invalid_argument(std::string("walk_forward: ") + key + " ends before it begins");
}

} // namespace

nlohmann::json toJson(const FoldPlan& plan)
{
    nlohmann::json members = nlohmann::json::array();
    for (const FoldMember& m : plan.members) {
        const FoldDays& d = m.days;
        members.push_back({{"seed", m.seed},
                           {"fold", d.fold},
                           {"train", part(d.trainFrom, d.trainTo, d.trainDays)},
                           {"validation", part(d.validationFrom, d.validationTo, d.validationDays)},
                           {"test", part(d.testFrom, d.testTo, d.testDays)},
                           {"run",
                            {{"from_day", m.settings.fromDay},
                             {"to_day", m.settings.toDay},
                             {"train_fraction", m.settings.trainFraction},
                             {"validation_fraction", m.settings.validationFraction}}}});
    }
    return {{"folds", plan.folds},
            {"window", toString(plan.window)},
            {"validation_share", plan.validationShare},
            {"members", members}};
}

FoldPlan foldPlanFromJson(const nlohmann::json& j)
{
    try {
        FoldPlan plan;
        plan.folds = j.at("folds").get<std::size_t>();
        const std::optional<FoldWindow> window = foldWindowFromString(j.at("window").get<std::string>());
        if (!window) throw std::invalid_argument("walk_forward: window is expanding or rolling");
        plan.window = *window;
        plan.validationShare = j.at("validation_share").get<double>();
        for (const nlohmann::json& m : j.at("members")) {
            FoldMember member;
            member.seed = m.at("seed").get<std::int64_t>();
            member.days.fold = m.at("fold").get<std::size_t>();
            readPart(m, "train", member.days.trainFrom, member.days.trainTo, member.days.trainDays);
            readPart(m, "validation", member.days.validationFrom, member.days.validationTo, member.days.validationDays);
            readPart(m, "test", member.days.testFrom, member.days.testTo, member.days.testDays);
            const nlohmann::json& run = m.at("run");
            member.settings.fromDay = run.at("from_day").get<std::int64_t>();
            member.settings.toDay = run.at("to_day").get<std::int64_t>();
            member.settings.trainFraction = run.at("train_fraction").get<double>();
            member.settings.validationFraction = run.at("validation_fraction").get<double>();
            if (!(member.days.trainTo < member.days.validationFrom && member.days.validationTo < member.days.testFrom))
                throw std::invalid_argument("walk_forward: a member's parts are out of order");
            plan.members.push_back(member);
        }
        return plan;
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("walk_forward: ") + e.what());
    }
}

} // namespace foxhunt
