// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli metrics : what a run records, from the metric registry; with
// --run, the figures one stored run recorded under each name.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/telemetry/metric_registry.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>

namespace foxhunt::cli {

namespace {

struct MetricsArgs {
    std::string db;
    std::int64_t run = 0;
    bool json = false;
};

std::string familyName(metrics::Family f)
{
    switch (f) {
    case metrics::Family::Any: return "any";
    case metrics::Family::Agent: return "agent";
    case metrics::Family::Forecaster: return "forecaster";
    case metrics::Family::Session: return "session";
    }
    return "any";
}

nlohmann::json registryJson()
{
    nlohmann::json list = nlohmann::json::array();
    for (const metrics::Metric& m : metrics::all()) {
        const metrics::Chart* chart = metrics::chart(m.chart);
        list.push_back({{"name", std::string(m.name) + (m.perRank ? "<rank>" : "")},
                        {"label", m.label},
                        {"unit", metrics::symbol(m.unit)},
                        {"recorded_by", familyName(m.family)},
                        {"chart", chart ? nlohmann::json(chart->title) : nlohmann::json(nullptr)}});
    }
    return list;
}

/// Per model and stored name: samples, last, min and max (finite values only).
nlohmann::json runJson(RunStore& runs, std::int64_t runId)
{
    struct Figures {
        std::size_t samples = 0;
        double last = std::nan(""), min = INFINITY, max = -INFINITY;
    };
    std::map<std::string, std::map<std::string, Figures>> byModel;
    for (const MetricSample& s : runs.metrics(runId)) {
        Figures& f = byModel[s.model][s.metric];
        ++f.samples;
        if (!std::isfinite(s.value)) continue;
        f.last = s.value;
        f.min = std::min(f.min, s.value);
        f.max = std::max(f.max, s.value);
    }
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [model, names] : byModel)
        for (const auto& [name, f] : names) {
            const metrics::Metric* m = metrics::find(name);
            out[model][name] = {{"label", metrics::label(name)},
                                {"unit", m ? nlohmann::json(metrics::symbol(m->unit)) : nlohmann::json("")},
                                {"samples", f.samples},
                                {"last", number(f.last)},
                                {"min", number(f.min)},
                                {"max", number(f.max)}};
        }
    return out;
}

int run(const MetricsArgs& a)
{
    try {
        if (a.run <= 0) {
            const nlohmann::json list = registryJson();
            if (a.json) {
                printJson({{"metrics", list}});
                return kExitOk;
            }
            for (const nlohmann::json& m : list)
                std::cout << std::left << std::setw(24) << m["name"].get<std::string>() << std::setw(22)
                          << m["label"].get<std::string>() << std::setw(11) << m["unit"].get<std::string>()
                          << std::setw(12) << m["recorded_by"].get<std::string>()
                          << (m["chart"].is_null() ? std::string("(tables only)") : m["chart"].get<std::string>())
                          << '\n';
            return kExitOk;
        }
        BarStore store(resolveDbPath(a.db));
        RunStore runs(store);
        if (!runs.run(a.run)) {
            printError("no run " + std::to_string(a.run) + " in " + store.path());
            return kExitError;
        }
        const nlohmann::json figures = runJson(runs, a.run);
        if (a.json) {
            printJson({{"db", store.path()}, {"run", a.run}, {"models", figures}});
            return kExitOk;
        }
        for (const auto& [model, names] : figures.items()) {
            std::cout << model << '\n';
            for (const auto& [name, f] : names.items()) {
                std::cout << "  " << std::left << std::setw(24) << f["label"].get<std::string>() << std::right
                          << std::setw(8) << f["samples"].get<std::size_t>() << " samples  last ";
                if (f["last"].is_null()) std::cout << "n/a";
                else
                    std::cout << f["last"].get<double>() << ' ' << f["unit"].get<std::string>() << "  (min "
                              << f["min"].get<double>() << ", max " << f["max"].get<double>() << ')';
                std::cout << '\n';
            }
        }
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addMetricsCommand(CLI::App& app)
{
    auto args = std::make_shared<MetricsArgs>();
    CLI::App* cmd = app.add_subcommand(
        "metrics",
        "List the metrics a run records (name, label, unit, chart); with --run, one run's figures per metric");
    addDbOption(*cmd, args->db);
    cmd->add_option("--run", args->run, "A stored run: samples, last, min and max of each metric it recorded")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--json", args->json, "Print JSON");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
