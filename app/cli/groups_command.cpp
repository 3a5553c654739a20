// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli groups : the run groups (train --seeds, --folds), each with its members and, with --json,
// its summary across the members.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/data/market_time.h"
#include "engine/report/group_summary.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct GroupsArgs {
    std::string db;
    bool json = false;
};

int run(const GroupsArgs& a)
{
    try {
        BarStore store(resolveDbPath(a.db));
        RunStore runs(store);
        try {
            runs.markInterruptedRuns();
        } catch (const std::exception& e) {
            std::cerr << "foxhunt-cli: runs whose process ended are shown as running: " << e.what() << '\n';
        }
        nlohmann::json list = nlohmann::json::array();
        for (const RunGroupInfo& g : runs.groups()) {
            nlohmann::json j = toJson(summarizeGroup(runs, g.id));
            j["id"] = g.id;
            j["uuid"] = g.uuid;
            j["created"] = formatUtc(g.createdNs);
            j["finished"] = g.finishedNs ? formatUtc(g.finishedNs) : "";
            if (j.contains("walk_forward")) {
                // A folds group's members index its plan: list its seeds and folds instead.
                nlohmann::json seeds = nlohmann::json::array();
                for (const nlohmann::json& m : j["walk_forward"]["members"])
                    if (std::find(seeds.begin(), seeds.end(), m["seed"]) == seeds.end()) seeds.push_back(m["seed"]);
                j["seeds"] = seeds;
                j["folds"] = j["walk_forward"]["folds"];
                j["window"] = j["walk_forward"]["window"];
            } else {
                j["seeds"] = g.members;
            }
            list.push_back(std::move(j));
        }
        if (a.json) {
            printJson({{"db", store.path()}, {"groups", list}});
            return kExitOk;
        }
        for (const nlohmann::json& g : list) {
            std::size_t finished = 0;
            for (const nlohmann::json& m : g["members"]) finished += m["status"] == "finished";
            std::cout << g["id"] << "  " << g["kind"].get<std::string>() << "  " << g["status"].get<std::string>()
                      << "  " << finished << "/" << g["members"].size() << " finished  seeds " << g["seeds"].dump()
                      << "  ";
            if (g.contains("folds")) std::cout << g["folds"] << " " << g["window"].get<std::string>() << " folds  ";
            std::cout << g["created"].get<std::string>() << '\n';
        }
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addGroupsCommand(CLI::App& app)
{
    auto args = std::make_shared<GroupsArgs>();
    CLI::App* cmd = app.add_subcommand("groups",
                                       "List run groups (train --seeds, --folds) with their members and summaries");
    addDbOption(*cmd, args->db);
    cmd->add_flag("--json", args->json, "Print JSON, with each group's summary across its members");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
