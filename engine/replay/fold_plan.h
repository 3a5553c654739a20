// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Walk-forward folds by ES trading day for a run group (train --folds K): each fold trains from
// scratch on a window of days, validates on the last days of that window and is tested on the
// block of days that follows it, so no fold ever sees its test days while it trains.

#include "engine/data/bar.h"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

/// How a fold's training window moves: it grows from the first day (expanding) or keeps the
/// length of the first fold's window (rolling).
enum class FoldWindow { Expanding, Rolling };
/// "expanding", "rolling".
std::string toString(FoldWindow window);
/// Parses the names above; nullopt otherwise.
std::optional<FoldWindow> foldWindowFromString(const std::string& name);

/// One fold's parts as trading days (days since epoch, inclusive), each part a run of
/// consecutive trading days of the series: train, then validation, then test.
struct FoldDays {
    std::size_t fold = 0;
    std::int64_t trainFrom = 0, trainTo = 0;
    std::int64_t validationFrom = 0, validationTo = 0;
    std::int64_t testFrom = 0, testTo = 0;
    std::size_t trainDays = 0, validationDays = 0, testDays = 0; ///< trading days in each part
    friend bool operator==(const FoldDays&, const FoldDays&) = default;
};

/// Cuts `tradingDays` (ascending, distinct) into `folds` walk-forward folds. The last
/// folds * T days, T = days / (folds + 1), are the out-of-sample span, cut into `folds` test
/// blocks of T days; the days before it (at least T) are the first fold's window. Fold k tests on
/// block k; its window is every day before that block (expanding) or as many days before it as
/// the first window has (rolling). Its validation days are the last
/// round(validationShare x window) days of the window (at least one, leaving one to train on).
/// Throws std::invalid_argument for folds == 0, a share outside (0, 1), days out of order, or too
/// few days (every test block needs a day and the first window two).
std::vector<FoldDays> planFolds(const std::vector<std::int64_t>& tradingDays, std::size_t folds, FoldWindow window,
                                double validationShare);

/// The distinct ES trading days of `bars` (in time order), ascending.
std::vector<std::int64_t> tradingDaysOf(const std::vector<Bar>& bars);

/// A run's settings that make its split exactly one fold's: the range it loads (from_day,
/// to_day) and the train and validation shares of that range's bars, which splitByFraction turns
/// back into the fold's day boundaries.
struct FoldRunSettings {
    std::int64_t fromDay = 0, toDay = 0;
    double trainFraction = 0.0, validationFraction = 0.0;
};

/// The settings for `fold` over `bars`, the series the run loads (a superset of the fold's days).
/// Checks them: the bars a run would load for [fromDay, toDay] are split by splitByFraction and
/// must start validation and test on the fold's days; throws std::runtime_error when they do not
/// and std::invalid_argument when a part has no bars.
FoldRunSettings foldRunSettings(const std::vector<Bar>& bars, const FoldDays& fold);

/// One member of a folds group: a seed trained on one fold, with the run settings that cut it.
struct FoldMember {
    std::int64_t seed = 0;
    FoldDays days;
    FoldRunSettings settings;
};

/// The folds of a group as it stores them (the "walk_forward" key of the group's config): planned
/// once, so that a resume trains the same folds.
struct FoldPlan {
    std::size_t folds = 0;
    FoldWindow window = FoldWindow::Expanding;
    double validationShare = 0.0;
    std::vector<FoldMember> members; ///< member i of the group is members[i]
};

/// {"folds", "window", "validation_share", "members": [{"seed", "fold", "train": {"from", "to",
/// "days"}, "validation": {...}, "test": {...}, "run": {"from_day", "to_day", "train_fraction",
/// "validation_fraction"}}]}, dates as YYYY-MM-DD.
nlohmann::json toJson(const FoldPlan& plan);
/// Reads toJson's form back; throws std::invalid_argument when it is malformed.
FoldPlan foldPlanFromJson(const nlohmann::json& json);

} // namespace foxhunt
