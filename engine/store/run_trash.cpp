// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/run_trash.h"

#include <stdexcept>
#include <system_error>

namespace foxhunt {

std::string runCheckpointFolder(const RunStore& runs, const RunInfo& run)
{
    if (run.uuid.empty()) return {};
    return (std::filesystem::path(runs.checkpointFolder()) / RunStore::runFolderName(run)).string();
}

std::string moveBackFromTrash(const std::filesystem::path& trashed, const std::filesystem::path& original)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(trashed, ec)) return "it is no longer in the trash (" + trashed.string() + ")";
    if (fs::exists(original, ec)) return original.string() + " exists again";
    if (!original.parent_path().empty()) fs::create_directories(original.parent_path(), ec);
    if (ec) return "cannot create " + original.parent_path().string() + ": " + ec.message();
    fs::rename(trashed, original, ec);
    if (ec) return "cannot move " + trashed.string() + " back to " + original.string() + ": " + ec.message();
    // A folder the desktop trashed has its entry in the trash's info folder; one moved by hand has none.
    if (trashed.parent_path().filename() == "files")
        fs::remove(trashed.parent_path().parent_path() / "info" / (trashed.filename().string() + ".trashinfo"), ec);
    return {};
}

TrashRestore restoreFromTrash(RunStore& runs, std::int64_t runId)
{
    const std::optional<RunInfo> info = runs.run(runId);
    if (!info) throw std::invalid_argument("no run " + std::to_string(runId));
    runs.restoreRun(runId); // throws for a run not in the trash
    TrashRestore result;
    if (info->trashPath.empty()) return result;
    const std::string folder = runCheckpointFolder(runs, *info);
    if (folder.empty()) {
        result.problem = "run " + std::to_string(runId) + " has no checkpoint folder of its own to move " +
                         info->trashPath + " back to";
        return result;
    }
    result.problem = moveBackFromTrash(info->trashPath, folder);
    if (result.problem.empty()) result.folder = folder;
    return result;
}

} // namespace foxhunt
