// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A trashed run's checkpoint folder: where it belongs beside the database, and
// how it comes back from the desktop's trash (the freedesktop layout that
// QFile::moveToTrash writes: Trash/files/<name> with Trash/info/<name>.trashinfo).
// The GUI and foxhunt-cli restore runs through the same calls, so both put a
// folder back in the same place.

#include "engine/store/run_store.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace foxhunt {

/// A run's own checkpoint folder: RunStore::checkpointFolder()/RunStore::runFolderName(run); "" when
/// the run has no UUID (runs from before UUIDs have no folder of their own).
std::string runCheckpointFolder(const RunStore& runs, const RunInfo& run);

/// Moves `trashed` (a folder in a desktop trash) back to `original` and removes its ".trashinfo"
/// entry. "" on success, else why not (gone from the trash, `original` taken again, a failed
/// rename); nothing is moved then.
std::string moveBackFromTrash(const std::filesystem::path& trashed, const std::filesystem::path& original);

/// What restoreFromTrash() did.
struct TrashRestore {
    std::string folder;  ///< where the checkpoint folder came back to ("" when it was not in the desktop trash)
    std::string problem; ///< why the folder could not come back ("" when it did or had not moved)
};

/// Takes a run out of the trash (RunStore::restoreRun) and then its checkpoint folder back from the
/// desktop trash to runCheckpointFolder() when RunInfo::trashPath names one. The run is restored
/// even when the folder cannot be (TrashRestore::problem says why). Throws std::invalid_argument
/// for an unknown run or one not in the trash, changing nothing.
TrashRestore restoreFromTrash(RunStore& runs, std::int64_t runId);

} // namespace foxhunt
