// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/memory_budget.h"

#include <cstdio>

namespace foxhunt {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mib(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f MiB", v);
    return buf;
}

} // namespace

nlohmann::json memoryBudgetJson(const PrecisionSettings& precision,
                                const std::vector<std::pair<std::string, std::size_t>>& servingBytes)
{
    nlohmann::json models = nlohmann::json::object();
    double total = 0.0;
    std::string parts;
    for (const auto& [name, bytes] : servingBytes) {
        const double m = static_cast<double>(bytes) / kMiB;
        models[name] = m;
        total += m;
        parts += (parts.empty() ? "" : ", ") + name + " " + mib(m);
    }
    const double budget = precision.memoryBudgetMb;
    const bool over = total > budget;
    const bool warn = precision.memoryBudgetAction == MemoryBudgetAction::Warn;
    nlohmann::json j{{"budget_mb", budget},
                     {"serving_batch", kServingBatch},
                     {"models", models},
                     {"total_mb", total},
                     {"headroom_mb", budget - total},
                     {"over", over},
                     {"action", warn ? "warn" : "refuse"},
                     {"refused", over && !warn}};
    if (over)
        j["message"] = "memory budget " + mib(budget) + " exceeded: the served models need " + mib(total) +
                       " at batch " + std::to_string(kServingBatch) + " (" + parts + "), " + mib(total - budget) +
                       " over. " +
                       (warn ? std::string("Training goes on (memory_budget_action: warn).")
                             : std::string("Raise precision.memory_budget_mb, choose smaller models, or set "
                                           "precision.memory_budget_action to warn."));
    return j;
}

} // namespace foxhunt
