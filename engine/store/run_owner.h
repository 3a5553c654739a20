// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Who runs a run: a lock its owner holds for as long as it runs it.
//
// A run in status "running" whose process has gone must be told apart from one
// that is still training, in this or another process. A process ID cannot do it
// (IDs are reused), so the owner takes an open-file-description lock on byte
// <run id> of "<database>.owners" (fcntl F_OFD_SETLK). The kernel drops the lock
// when the process ends, however it ends; any process can ask whether the byte
// is locked. The locks are process-wide: they outlive the RunStore that took
// them and are given up when the run leaves status running.

#include <cstdint>
#include <string>

namespace foxhunt::run_owner {

/// The lock file of a database ("<database>.owners"), or "" for an in-memory one.
std::string lockPath(const std::string& databasePath);

/// Takes the lock of a run for this process. True when held now (also when it
/// already was); false when another process holds it. Throws std::runtime_error
/// when the lock file cannot be opened or locked for another reason.
bool acquire(const std::string& databasePath, std::int64_t runId);

/// Gives the lock of a run up, if this process holds it.
void release(const std::string& databasePath, std::int64_t runId);

enum class Owner {
    Alive,   ///< some process (this one included) holds the lock
    Gone,    ///< nobody holds it: the owner ended without finishing the run
    Unknown, ///< no lock file to ask (a run from before the locks, or an unreadable folder)
};

/// Whether a run's owner still holds its lock.
Owner probe(const std::string& databasePath, std::int64_t runId);

} // namespace foxhunt::run_owner
