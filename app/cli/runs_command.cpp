// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli runs : the run history (status, name, tags, metrics, checkpoints).
// Opening the store marks runs whose process died as interrupted.
// foxhunt-cli runs label ID : renames a run, tags or untags it, sets its notes.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/data/market_time.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace foxhunt::cli {

namespace {

struct RunsArgs {
    std::string db;
    bool json = false;
    bool trashed = false;
};

struct LabelArgs {
    std::int64_t id = 0;
    std::string name;
    std::vector<std::string> tags, untags;
    std::string notes;
    const CLI::Option* nameOption = nullptr;
    const CLI::Option* notesOption = nullptr;
};

nlohmann::json runJson(const RunStore& runs, const RunInfo& r)
{
    const nlohmann::json config = nlohmann::json::parse(r.configJson);
    return {{"id", r.id},
            {"name", r.name},
            {"tags", r.tags},
            {"notes", r.notes},
            {"status", toString(r.status)},
            {"created", formatUtc(r.createdNs)},
            {"finished", r.finishedNs ? formatUtc(r.finishedNs) : ""},
            {"series", r.series},
            {"models", config.value("models", nlohmann::json::array())},
            {"metrics", runs.metricCount(r.id)},
            {"checkpoints", runs.checkpoints(r.id).size()},
            {"error", r.error},
            {"trashed", r.trashedNs ? formatUtc(r.trashedNs) : ""},
            {"group_id", r.groupId > 0 ? nlohmann::json(r.groupId) : nlohmann::json(nullptr)},
            {"group_member", r.groupId > 0 ? nlohmann::json(r.groupMember) : nlohmann::json(nullptr)}};
}

/// "name [tag, tag]" for the text listing.
std::string labelText(const nlohmann::json& r)
{
    std::string text = r["name"].get<std::string>();
    if (!r["tags"].empty()) {
        std::string tags;
        for (const nlohmann::json& t : r["tags"]) tags += (tags.empty() ? "" : ", ") + t.get<std::string>();
        text += (text.empty() ? "[" : " [") + tags + "]";
    }
    return text;
}

int label(const RunsArgs& a, const LabelArgs& l)
{
    if (l.nameOption->count() == 0 && l.notesOption->count() == 0 && l.tags.empty() && l.untags.empty()) {
        printError("runs label: nothing to change: give --name, --tag, --untag or --note");
        return kExitError;
    }
    try {
        // Every value is checked before anything is written, so a bad one changes nothing.
        if (l.nameOption->count() > 0) RunStore::checkedName(l.name);
        for (const std::string& t : l.tags) RunStore::checkedTag(t);
        BarStore store(resolveDbPath(a.db));
        RunStore runs(store);
        if (!runs.run(l.id)) throw std::invalid_argument("no run " + std::to_string(l.id) + " in " + store.path());
        if (l.nameOption->count() > 0) runs.setName(l.id, l.name);
        if (l.notesOption->count() > 0) runs.setNotes(l.id, l.notes);
        if (!l.untags.empty()) runs.removeTags(l.id, l.untags);
        if (!l.tags.empty()) runs.addTags(l.id, l.tags);
        const nlohmann::json r = runJson(runs, *runs.run(l.id));
        if (a.json) printJson(r);
        else std::cout << r["id"] << "  " << labelText(r) << '\n';
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

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
        for (const RunInfo& r : runs.runs(a.trashed ? RunListing::Trashed : RunListing::Active))
            list.push_back(runJson(runs, r));
        if (a.json) {
            printJson({{"db", store.path()}, {"runs", list}});
            return kExitOk;
        }
        for (const nlohmann::json& r : list)
            std::cout << r["id"] << "  " << r["status"].get<std::string>() << "  " << labelText(r) << "  "
                      << r["models"].dump() << "  " << r["metrics"] << " samples, " << r["checkpoints"]
                      << " checkpoints" << (a.trashed ? "  trashed " + r["trashed"].get<std::string>() : std::string())
                      << (r["error"].get<std::string>().empty() ? "" : "  " + r["error"].get<std::string>()) << '\n';
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
    auto labels = std::make_shared<LabelArgs>();
    CLI::App* cmd = app.add_subcommand(
        "runs", "List stored runs outside the trash (runs whose process died are marked interrupted)");
    addDbOption(*cmd, args->db);
    cmd->add_flag("--json", args->json, "Print JSON");
    cmd->add_flag("--trashed", args->trashed,
                  "List the runs in the trash (deleted in the GUI, not yet purged) instead");
    CLI::App* labelCmd = cmd->add_subcommand("label", "Rename a run, tag or untag it, or set its notes");
    labelCmd->add_option("id", labels->id, "Run id (see foxhunt-cli runs)")->required();
    labels->nameOption = labelCmd->add_option("--name", labels->name,
                                              "New name (at most 200 characters; \"\" clears it)");
    labelCmd->add_option("--tag", labels->tags, "Add a tag (repeatable; no commas, at most 64 characters)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    labelCmd->add_option("--untag", labels->untags, "Remove a tag, in any case (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    labels->notesOption = labelCmd->add_option("--note", labels->notes, "Replace the run's notes (\"\" clears them)");
    addDbOption(*labelCmd, args->db);
    labelCmd->add_flag("--json", args->json, "Print the run as JSON");
    return [args, labels, labelCmd] { return labelCmd->parsed() ? label(*args, *labels) : run(*args); };
}

} // namespace foxhunt::cli
