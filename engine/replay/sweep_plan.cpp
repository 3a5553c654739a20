// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace foxhunt {

namespace {

using json = nlohmann::json;

/// "dqn.lr" -> "/dqn/lr".
json::json_pointer pointerOf(const std::string& key)
{
    std::string path;
    std::stringstream parts(key);
    for (std::string part; std::getline(parts, part, '.');) {
        if (part.empty()) throw std::invalid_argument("sweep: key '" + key + "' has an empty part");
        path += "/" + part;
    }
    return json::json_pointer(path);
}

bool sameKind(const json& a, const json& b)
{
    return (a.is_number() && b.is_number()) || (a.is_string() && b.is_string()) || (a.is_boolean() && b.is_boolean());
}

/// A key's choices or range, checked against the value the config has there.
struct Axis {
    std::string key;
    json current;           ///< the config's value (its kind is the one a trial must keep)
    std::vector<json> list; ///< a list: the choices
    double min = 0, max = 0;
    bool log = false, integer = false;
    bool range() const { return list.empty(); }
};

Axis axisOf(const std::string& key, const json& value, const json& config, bool grid)
{
    Axis a;
    a.key = key;
    const json::json_pointer p = pointerOf(key);
    if (!config.contains(p)) throw std::invalid_argument("sweep: the run's config has no key '" + key + "'");
    a.current = config.at(p);
    if (!(a.current.is_number() || a.current.is_string() || a.current.is_boolean()))
        throw std::invalid_argument("sweep: '" + key + "' is not a number, text or true/false in the run's config");
    if (value.is_array()) {
        if (value.empty()) throw std::invalid_argument("sweep: '" + key + "' has an empty list");
        for (const json& v : value) {
            if (!sameKind(v, a.current))
                throw std::invalid_argument("sweep: '" + key + "' takes values like " + a.current.dump() + ", not " +
                                            v.dump());
            a.list.push_back(v);
        }
        return a;
    }
    if (!value.is_object() || !value.contains("min") || !value.contains("max") || !value["min"].is_number() ||
        !value["max"].is_number())
        throw std::invalid_argument("sweep: '" + key + "' needs a list of values or {\"min\": ..., \"max\": ...}");
    if (grid) throw std::invalid_argument("sweep: a grid needs a list of values for '" + key + "', not a range");
    if (!a.current.is_number()) throw std::invalid_argument("sweep: '" + key + "' is not a number: give it a list");
    a.min = value["min"].get<double>();
    a.max = value["max"].get<double>();
    a.log = value.value("log", false);
    a.integer = value.value("int", a.current.is_number_integer());
    if (!(a.min <= a.max)) throw std::invalid_argument("sweep: '" + key + "' has min > max");
    if (a.log && !(a.min > 0)) throw std::invalid_argument("sweep: '" + key + "' needs min > 0 for a log range");
    return a;
}

/// A number as the config's kind: an integer key stays an integer.
json numberLike(const json& current, double v, bool integer)
{
    if (integer || current.is_number_integer()) return static_cast<std::int64_t>(std::llround(v));
    return v;
}

json draw(const Axis& a, std::mt19937_64& rng)
{
    if (!a.range()) return a.list[std::uniform_int_distribution<std::size_t>(0, a.list.size() - 1)(rng)];
    if (a.min == a.max) return numberLike(a.current, a.min, a.integer);
    if (a.log) {
        const double v = std::exp(std::uniform_real_distribution<double>(std::log(a.min), std::log(a.max))(rng));
        return numberLike(a.current, v, a.integer);
    }
    if (a.integer)
        return static_cast<std::int64_t>(std::uniform_int_distribution<std::int64_t>(
            static_cast<std::int64_t>(std::ceil(a.min)), static_cast<std::int64_t>(std::floor(a.max)))(rng));
    return std::uniform_real_distribution<double>(a.min, a.max)(rng);
}

} // namespace

SweepPlan planSweep(const nlohmann::json& spec, const nlohmann::json& baseConfig)
{
    if (!spec.is_object()) throw std::invalid_argument("sweep: the file must hold a JSON object");
    SweepPlan plan;
    plan.method = spec.value("method", std::string("grid"));
    if (plan.method != "grid" && plan.method != "random")
        throw std::invalid_argument("sweep: method is grid or random, not '" + plan.method + "'");
    const json& trials = spec.contains("trials") ? spec["trials"] : json(nullptr);
    if (!trials.is_null() && (!trials.is_number_integer() || trials.get<std::int64_t>() < 1))
        throw std::invalid_argument("sweep: trials (the budget) must be a whole number of at least 1");
    plan.seed = spec.value("seed", std::uint64_t{1});
    if (!spec.contains("space") || !spec["space"].is_object() || spec["space"].empty())
        throw std::invalid_argument("sweep: 'space' must name at least one key");
    const bool grid = plan.method == "grid";
    std::vector<Axis> axes;
    for (const auto& [key, value] : spec["space"].items()) {
        axes.push_back(axisOf(key, value, baseConfig, grid));
        plan.keys.push_back(key);
    }
    std::mt19937_64 rng(plan.seed);
    if (grid) {
        std::size_t size = 1;
        for (const Axis& a : axes) {
            if (size > 1'000'000 / a.list.size())
                throw std::invalid_argument("sweep: the grid has over a million points");
            size *= a.list.size();
        }
        plan.gridSize = size;
        plan.budget = trials.is_null() ? size : static_cast<std::size_t>(trials.get<std::int64_t>());
        std::vector<std::size_t> order(size);
        std::iota(order.begin(), order.end(), std::size_t{0});
        if (plan.budget < size) {
            std::shuffle(order.begin(), order.end(), rng);
            order.resize(plan.budget);
            std::sort(order.begin(), order.end()); // the sample, in grid order
        }
        for (std::size_t index : order) {
            json trial = json::object();
            for (std::size_t k = axes.size(); k-- > 0;) { // the last key varies fastest
                trial[axes[k].key] = axes[k].list[index % axes[k].list.size()];
                index /= axes[k].list.size();
            }
            plan.trials.push_back(std::move(trial));
        }
    } else {
        if (trials.is_null()) throw std::invalid_argument("sweep: a random search needs 'trials' (its budget)");
        plan.budget = static_cast<std::size_t>(trials.get<std::int64_t>());
        for (std::size_t t = 0; t < plan.budget; ++t) {
            json trial = json::object();
            for (const Axis& a : axes) trial[a.key] = draw(a, rng);
            plan.trials.push_back(std::move(trial));
        }
    }
    return plan;
}

nlohmann::json trialConfig(nlohmann::json baseConfig, const nlohmann::json& trial)
{
    baseConfig.erase("sweep");
    for (const auto& [key, value] : trial.items()) baseConfig[pointerOf(key)] = value;
    return baseConfig;
}

std::string describeTrial(const nlohmann::json& trial, const std::vector<std::string>& keys)
{
    std::string out;
    for (const std::string& k : keys) {
        if (!trial.contains(k)) continue;
        const json& v = trial[k];
        out += (out.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    return out;
}

nlohmann::json toJson(const SweepPlan& plan)
{
    return {{"method", plan.method},      {"budget", plan.budget}, {"seed", plan.seed},
            {"grid_size", plan.gridSize}, {"keys", plan.keys},     {"trials", plan.trials}};
}

SweepPlan sweepPlanFromJson(const nlohmann::json& j)
{
    try {
        SweepPlan plan;
        plan.method = j.at("method").get<std::string>();
        plan.budget = j.at("budget").get<std::size_t>();
        plan.seed = j.at("seed").get<std::uint64_t>();
        plan.gridSize = j.value("grid_size", std::size_t{0});
        plan.keys = j.at("keys").get<std::vector<std::string>>();
        for (const json& t : j.at("trials")) {
            if (!t.is_object()) throw std::invalid_argument("a trial is not an object");
            plan.trials.push_back(t);
        }
        return plan;
    } catch (const json::exception& e) {
        throw std::invalid_argument(std::string("a stored sweep plan is malformed: ") + e.what());
    }
}

} // namespace foxhunt
