// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli runs : the run history (status, metrics, checkpoints). Opening
// the store marks runs whose process died as interrupted.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/data/market_time.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct RunsArgs {
    std::string db;
    bool json = false;
};

int run(const RunsArgs& a)
{
    try {
        BarStore store(resolveDbPath(a.db));
        RunStore runs(store);
        try {
            runs.markInterruptedRuns();
        } catch (const std::exception& e) {
            // A full disk: the list is still worth showing, as it stands.
            std::cerr << "foxhunt-cli: runs whose process ended are shown as running: " << e.what() << '\n';
        }
        nlohmann::json list = nlohmann::json::array();
        for (const RunInfo& r : runs.runs()) {
            const nlohmann::json config = nlohmann::json::parse(r.configJson);
            list.push_back({{"id", r.id},
                            {"name", r.name},
                            {"status", toString(r.status)},
                            {"created", formatUtc(r.createdNs)},
                            {"finished", r.finishedNs ? formatUtc(r.finishedNs) : ""},
                            {"series", r.series},
                            {"models", config.value("models", nlohmann::json::array())},
                            {"metrics", runs.metricCount(r.id)},
                            {"checkpoints", runs.checkpoints(r.id).size()},
                            {"error", r.error}});
        }
        if (a.json) {
            printJson({{"db", store.path()}, {"runs", list}});
            return kExitOk;
        }
        for (const nlohmann::json& r : list)
            std::cout << r["id"] << "  " << r["status"].get<std::string>() << "  " << r["name"].get<std::string>() << "  "
                      << r["models"].dump() << "  " << r["metrics"] << " samples, " << r["checkpoints"]
                      << " checkpoints" << (r["error"].get<std::string>().empty() ? "" : "  " + r["error"].get<std::string>())
                      << '\n';
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addRunsCommand(CLI::App& app)
{
    auto args = std::make_shared<RunsArgs>();
    CLI::App* cmd = app.add_subcommand("runs", "List stored runs (runs whose process died are marked interrupted)");
    addDbOption(*cmd, args->db);
    cmd->add_flag("--json", args->json, "Print JSON");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
