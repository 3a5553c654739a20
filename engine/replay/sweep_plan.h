// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A hyperparameter sweep for a run group (train --sweep FILE.json): grid or random search over
// keys of the run's config, within a trial budget. The trials are drawn once, when the group is
// made, and stored with it, so a resumed sweep trains the same ones.
//
// The file:
//   {"method": "grid" | "random", "trials": 8, "seed": 1,
//    "space": {"dqn.lr": [1e-4, 3e-4, 1e-3],                       a list: one of these
//              "dqn.gamma": {"min": 0.9, "max": 0.999},             random: uniform in [min, max]
//              "ppo.lr": {"min": 1e-5, "max": 1e-3, "log": true},   random: log-uniform
//              "dqn.batch_size": {"min": 32, "max": 256, "int": true}}}
// A key names a value of the run's config (as `train --json` prints it) by its path, dots between
// the parts. "grid" takes every combination of the lists, or, when there are more than "trials",
// a random "trials" of them; "random" draws "trials" settings, each key on its own.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

struct SweepPlan {
    std::string method;                 ///< "grid" or "random"
    std::size_t budget = 0;             ///< the most trials the file allows
    std::uint64_t seed = 0;             ///< the sampler's seed
    std::size_t gridSize = 0;           ///< grid: every combination there is (trials are all or a sample)
    std::vector<std::string> keys;      ///< the swept keys, by name
    std::vector<nlohmann::json> trials; ///< member i trains trials[i]: {key: value}
};

/// Draws the trials of `spec` (the file's JSON) over `baseConfig` (the group's config as JSON).
/// Throws std::invalid_argument naming the problem: an unknown method or key, a key whose value in
/// the config is not a number, string or boolean, a list of the wrong kind, a range in a grid, an
/// empty list, min > max, a log range that is not positive, or a budget below 1.
SweepPlan planSweep(const nlohmann::json& spec, const nlohmann::json& baseConfig);

/// The config of one trial: `baseConfig` (without its "sweep" key) with the trial's values.
nlohmann::json trialConfig(nlohmann::json baseConfig, const nlohmann::json& trial);

/// A trial in words: "dqn.lr=0.0003, dqn.gamma=0.99".
std::string describeTrial(const nlohmann::json& trial, const std::vector<std::string>& keys);

/// {"method", "budget", "seed", "grid_size", "keys", "trials"}.
nlohmann::json toJson(const SweepPlan& plan);
/// Reads toJson's form back; throws std::invalid_argument when it is malformed.
SweepPlan sweepPlanFromJson(const nlohmann::json& json);

} // namespace foxhunt
