// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Foxhunt SQLite file: one connection with its open checks (header, quick_check once per
// process, application id), its pragmas (WAL, synchronous NORMAL, foreign keys, a 5 s busy
// timeout) and the migrations of every table, bars and runs alike, versioned with PRAGMA
// user_version. BarStore (bars) and RunStore (runs, metrics) sit on it. std-only.

#include <stdexcept>
#include <string>

struct sqlite3;

namespace foxhunt {

/// A database that cannot be opened or used: foreign, corrupt, newer schema, I/O error.
class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One connection to a Foxhunt database. Not thread-safe: each thread that reads or writes
/// opens its own; SQLite lets one of them write at a time (README, Layout).
class Database {
public:
    /// Schema version written to PRAGMA user_version.
    static constexpr int kSchemaVersion = 7;

    /// Opens or creates the database and migrates it. Throws StoreError with a
    /// readable reason for a foreign, corrupt or newer file.
    explicit Database(const std::string& path);
    /// Opens or creates the database and migrates it no further than `schemaVersion` (at most
    /// kSchemaVersion): how tests build a database as an older Foxhunt left it.
    Database(const std::string& path, int schemaVersion);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    /// The file as given to the constructor.
    const std::string& path() const { return m_path; }
    /// The raw connection, for the stores in engine/store (same thread as this object).
    sqlite3* handle() const { return m_db; }

private:
    void migrate(int schemaVersion);
    std::string m_path;
    sqlite3* m_db = nullptr;
};

/// $XDG_DATA_HOME/foxhunt (or ~/.local/share/foxhunt), created on demand.
std::string defaultDataDir();
/// defaultDataDir()/foxhunt.db
std::string defaultDatabasePath();

} // namespace foxhunt
