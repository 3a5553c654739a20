// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli runs : the run history (status, name, tags, metrics, checkpoints).
// Opening the store marks runs whose process died as interrupted.
// foxhunt-cli runs label ID : renames a run, tags or untags it, sets its notes.
// foxhunt-cli runs restore ID... : takes runs out of the trash, checkpoint folders too.
// foxhunt-cli runs purge ID... : deletes runs in the trash for good, as the window's
// "Delete permanently" does.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/data/market_time.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"
#include "engine/store/run_trash.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
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

/// The run ids given to restore or purge.
struct TrashArgs {
    std::vector<std::int64_t> ids;
};

/// What restore and purge do to the runs given.
enum class TrashAction { Restore, Purge };

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

/// Restores or purges runs in the trash. Every id is checked first: one unknown or not in the trash
/// changes nothing. A checkpoint folder that cannot come back, or a file a purge keeps, is reported
/// and exits 1, the runs themselves restored or deleted.
int trashCommand(const RunsArgs& a, const TrashArgs& t, TrashAction action)
{
    const std::string command = action == TrashAction::Restore ? "runs restore" : "runs purge";
    try {
        BarStore store(resolveDbPath(a.db));
        RunStore runs(store);
        std::vector<RunInfo> chosen;
        for (const std::int64_t id : t.ids) {
            if (std::any_of(chosen.begin(), chosen.end(), [id](const RunInfo& r) { return r.id == id; })) continue;
            const std::optional<RunInfo> info = runs.run(id);
            if (!info) throw std::invalid_argument("no run " + std::to_string(id) + " in " + store.path());
            if (info->trashedNs == 0)
                throw std::invalid_argument("run " + std::to_string(id) + " is not in the trash" +
                                            (action == TrashAction::Purge
                                                 ? "; purge deletes only trashed runs (the window's Delete moves a "
                                                   "run to the trash)"
                                                 : std::string()));
            chosen.push_back(*info);
        }
        std::vector<std::string> problems;
        nlohmann::json list = nlohmann::json::array();
        for (const RunInfo& info : chosen) {
            const std::string id = std::to_string(info.id);
            if (action == TrashAction::Restore) {
                // The window's Restore: the checkpoint folder comes back from the desktop trash to where it was.
                const TrashRestore restore = restoreFromTrash(runs, info.id);
                if (!restore.problem.empty())
                    problems.push_back("run " + id + " is back, but not its checkpoint folder: " + restore.problem);
                nlohmann::json r = runJson(runs, *runs.run(info.id));
                r["checkpoint_folder"] = restore.folder;
                r["warning"] = restore.problem;
                if (!a.json)
                    std::cout << r["id"] << "  restored  " << labelText(r)
                              << (restore.folder.empty() ? std::string() : "  checkpoints back in " + restore.folder)
                              << '\n';
                list.push_back(std::move(r));
                continue;
            }
            // The window's permanent delete: this database's checkpoint files go; a folder moved to the
            // desktop trash earlier stays there, for the desktop to empty.
            std::error_code ec;
            const std::string inDesktopTrash = !info.trashPath.empty() && std::filesystem::exists(info.trashPath, ec)
                                                   ? info.trashPath
                                                   : "";
            const nlohmann::json before = runJson(runs, info);
            const RunDeletion deletion = runs.deleteRun(info.id);
            for (const std::string& kept : deletion.kept) problems.push_back("checkpoint file kept: " + kept);
            if (!a.json)
                std::cout << before["id"] << "  purged  " << labelText(before) << "  " << deletion.removed.size()
                          << " checkpoint files removed"
                          << (inDesktopTrash.empty()
                                  ? std::string()
                                  : "; its checkpoint folder stays in the desktop trash: " + inDesktopTrash)
                          << '\n';
            // The run as `runs --trashed --json` listed it, and what became of its files.
            nlohmann::json r = before;
            r["removed"] = deletion.removed;
            r["kept"] = deletion.kept;
            r["desktop_trash"] = inDesktopTrash;
            list.push_back(std::move(r));
        }
        if (a.json) printJson({{"db", store.path()}, {"runs", list}});
        for (const std::string& p : problems) printError(command + ": " + p);
        return problems.empty() ? kExitOk : kExitError;
    } catch (const std::exception& e) {
        printError(command + ": " + e.what());
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
    cmd->require_subcommand(0, 1);
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

    auto trash = std::make_shared<TrashArgs>();
    CLI::App* restoreCmd = cmd->add_subcommand(
        "restore", "Take runs out of the trash, their checkpoint folders back from the desktop's trash");
    CLI::App* purgeCmd = cmd->add_subcommand(
        "purge", "Delete runs in the trash for good, with their metrics and this database's checkpoint files");
    for (CLI::App* sub : {restoreCmd, purgeCmd}) {
        sub->add_option("ids", trash->ids, "Ids of runs in the trash (see foxhunt-cli runs --trashed)")->required();
        addDbOption(*sub, args->db);
        sub->add_flag("--json", args->json, "Print the runs as JSON");
    }
    return [args, labels, trash, labelCmd, restoreCmd, purgeCmd] {
        if (labelCmd->parsed()) return label(*args, *labels);
        if (restoreCmd->parsed()) return trashCommand(*args, *trash, TrashAction::Restore);
        if (purgeCmd->parsed()) return trashCommand(*args, *trash, TrashAction::Purge);
        return run(*args);
    };
}

} // namespace foxhunt::cli
