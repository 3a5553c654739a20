// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/database.h"

#include "engine/store/sqlite_util.h"

#include <sqlite3.h>

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

namespace foxhunt {

namespace {

/// PRAGMA application_id of every Foxhunt database: "FxHt" in ASCII.
constexpr std::int32_t kApplicationId = 0x46784874;

/// One schema step. Adding a version is appending an entry and bumping
/// Database::kSchemaVersion; each runs in its own transaction.
struct Migration {
    int version;
    const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, R"sql(
PRAGMA application_id = 1182287988;
CREATE TABLE app_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO app_meta(key, value) VALUES ('application', 'foxhunt');
CREATE TABLE instruments (
    id          INTEGER PRIMARY KEY,
    symbol      TEXT    NOT NULL,
    dataset     TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('contract', 'continuous', 'series', 'synthetic')),
    interval_ns INTEGER NOT NULL,
    created     INTEGER NOT NULL,
    bar_count   INTEGER NOT NULL DEFAULT 0,
    first_ts    INTEGER,
    last_ts     INTEGER,
    UNIQUE (symbol, dataset, interval_ns)
);
CREATE TABLE bars (
    instrument_id INTEGER NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
    ts     INTEGER NOT NULL,
    open   INTEGER NOT NULL,
    high   INTEGER NOT NULL,
    low    INTEGER NOT NULL,
    close  INTEGER NOT NULL,
    volume INTEGER NOT NULL,
    PRIMARY KEY (instrument_id, ts)
) WITHOUT ROWID;
CREATE TABLE imports (
    id          INTEGER PRIMARY KEY,
    path        TEXT    NOT NULL,
    sha256      TEXT    NOT NULL UNIQUE,
    format      TEXT    NOT NULL,
    rows        INTEGER NOT NULL,
    imported_at INTEGER NOT NULL,
    warnings    TEXT    NOT NULL DEFAULT '[]',
    summary     TEXT    NOT NULL DEFAULT '{}'
);
CREATE TABLE rolls (
    instrument_id INTEGER NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
    ts          INTEGER NOT NULL,
    trading_day INTEGER NOT NULL,
    from_symbol TEXT    NOT NULL,
    to_symbol   TEXT    NOT NULL,
    price_gap   INTEGER NOT NULL,
    PRIMARY KEY (instrument_id, ts)
) WITHOUT ROWID;
)sql"},
    {2, R"sql(
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    finished    INTEGER,
    status      TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'stopped', 'failed', 'interrupted')),
    config      TEXT    NOT NULL DEFAULT '{}',
    series_id   INTEGER REFERENCES instruments(id) ON DELETE SET NULL,
    series      TEXT    NOT NULL DEFAULT '',
    from_ts     INTEGER,
    to_ts       INTEGER,
    versions    TEXT    NOT NULL DEFAULT '{}',
    owner_pid   INTEGER,
    error       TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE metric_series (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model  TEXT    NOT NULL,
    metric TEXT    NOT NULL,
    UNIQUE (run_id, model, metric)
);
CREATE TABLE metrics (
    series_id INTEGER NOT NULL REFERENCES metric_series(id) ON DELETE CASCADE,
    step      INTEGER NOT NULL,
    wall_ns   INTEGER NOT NULL,
    value     REAL
);
CREATE INDEX metrics_by_series ON metrics(series_id, step);
CREATE TABLE evaluations (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model  TEXT    NOT NULL,
    split  TEXT    NOT NULL,
    result TEXT    NOT NULL,
    PRIMARY KEY (run_id, model, split)
) WITHOUT ROWID;
CREATE TABLE checkpoints (
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model   TEXT    NOT NULL,
    step    INTEGER NOT NULL,
    path    TEXT    NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (run_id, model, step)
) WITHOUT ROWID;
)sql"},
    {3, R"sql(
CREATE TABLE kernel_timings (
    machine TEXT NOT NULL,
    device TEXT NOT NULL,
    shape TEXT NOT NULL,
    backend TEXT NOT NULL,
    micros REAL NOT NULL,
    relative_error REAL NOT NULL,
    measured INTEGER NOT NULL,
    PRIMARY KEY (machine, device, shape, backend)
) WITHOUT ROWID;
)sql"},
    // Each run gets a UUID, written into its checkpoint files, so a file of another database's
    // run with the same id is recognised and refused.
    {4, R"sql(
ALTER TABLE runs ADD COLUMN uuid TEXT NOT NULL DEFAULT '';
UPDATE runs SET uuid = lower(hex(randomblob(16)));
)sql"},
    // Runs get notes and tags (runs.name exists since version 2). A tag is unique per run whatever
    // its case; the first spelling given is the one kept.
    {5, R"sql(
ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';
CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag    TEXT    NOT NULL COLLATE NOCASE,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
CREATE INDEX run_tags_by_tag ON run_tags(tag);
)sql"},
    // Deleted runs go to a trash first: trashed_at (wall-clock ns) hides them from the run list
    // until they are restored (NULL again) or purged; trash_path is where the desktop trash took
    // the run's checkpoint folder, so a restore can bring it back.
    {6, R"sql(
ALTER TABLE runs ADD COLUMN trashed_at INTEGER;
ALTER TABLE runs ADD COLUMN trash_path TEXT NOT NULL DEFAULT '';
)sql"},
    // Run groups: one config trained once per member (a seed; later a fold or a sweep point), each
    // member an ordinary run that names its group and its member. A member appears once per group.
    {7, R"sql(
CREATE TABLE run_groups (
    id        INTEGER PRIMARY KEY,
    uuid      TEXT    NOT NULL,
    kind      TEXT    NOT NULL CHECK (kind IN ('seeds', 'folds', 'sweep')),
    config    TEXT    NOT NULL DEFAULT '{}',
    members   TEXT    NOT NULL DEFAULT '[]',
    created   INTEGER NOT NULL,
    finished  INTEGER,
    status    TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'stopped', 'failed', 'interrupted')),
    owner_pid INTEGER
);
ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES run_groups(id) ON DELETE SET NULL;
ALTER TABLE runs ADD COLUMN group_member INTEGER;
CREATE UNIQUE INDEX runs_by_group_member ON runs(group_id, group_member) WHERE group_id IS NOT NULL;
)sql"},
};

static_assert(kApplicationId == 1182287988, "migration 1 writes the application id literally");
static_assert(std::size(kMigrations) == Database::kSchemaVersion &&
                  kMigrations[std::size(kMigrations) - 1].version == Database::kSchemaVersion,
              "every schema version needs its migration");

std::uint32_t bigEndian(const unsigned char* p, int bytes)
{
    std::uint32_t value = 0;
    for (int i = 0; i < bytes; ++i) value = (value << 8) | p[i];
    return value;
}

// Looks at the 100-byte SQLite header before SQLite touches the file, so that
// text, random bytes and cut-off copies get a plain answer instead of an
// obscure one later (or a silently re-initialised file).
std::mutex g_checkedMutex;
std::set<std::string> g_checked; ///< database files this process has quick_check'ed and found sound

std::string checkKey(const std::string& path)
{
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(path, ec);
    return ec ? path : canonical.string();
}

bool checkedThisProcess(const std::string& path)
{
    std::lock_guard lock(g_checkedMutex);
    return g_checked.count(checkKey(path)) > 0;
}

void markChecked(const std::string& path)
{
    std::lock_guard lock(g_checkedMutex);
    g_checked.insert(checkKey(path));
}

bool hasTable(sqlite3* db, const char* name)
{
    sql::Statement st(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    st.bind(1, std::string_view(name)); // a literal: outlives the statement
    return st.step();
}

/// Why this user cannot write a database at `path`, or "" when the folder and the
/// file (if any) are writable. SQLite then reports only "unable to open database
/// file" or "readonly database", which names neither.
std::string writeAccessProblem(const std::string& path)
{
    std::error_code ec;
    std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
    if (folder.empty()) folder = ".";
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
        const int error = errno;
        if (error == ENOENT) return "the folder " + folder.string() + " does not exist";
        return "the folder " + folder.string() + " is not writable (" + std::strerror(error) +
               "): Foxhunt writes the database and its journal files (-wal, -shm) there. "
               "Choose a folder you can write to, or copy the database into one";
    }
    if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
        return "the database file is not writable (" + std::string(std::strerror(errno)) +
               "): Foxhunt records imports and runs in it. Make it writable, or copy it";
    return {};
}

void checkFileHeader(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return;
    if (std::filesystem::is_directory(path, ec)) throw StoreError(path + ": is a directory, not a database file");
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw StoreError(path + ": cannot read: " + ec.message());
    if (size == 0) return; // a new, empty file: SQLite creates the database in it
    std::ifstream in(path, std::ios::binary);
    unsigned char header[100] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    static constexpr char kMagic[] = "SQLite format 3";
    if (in.gcount() < 100 || std::memcmp(header, kMagic, sizeof kMagic) != 0)
        throw StoreError(path + ": not a Foxhunt database (the file is not an SQLite database)");

    std::uint64_t pageSize = bigEndian(header + 16, 2);
    if (pageSize == 1) pageSize = 65536;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0)
        throw StoreError(path + ": the database is corrupt (invalid page size in its header)");
    const std::uint64_t pageCount = bigEndian(header + 28, 4);
    const bool countValid = bigEndian(header + 24, 4) == bigEndian(header + 92, 4);
    // A hot WAL may legitimately hold pages beyond the main file's end.
    const auto walSize = std::filesystem::file_size(path + "-wal", ec);
    const bool hotWal = !ec && walSize > 0;
    if (countValid && !hotWal && pageCount * pageSize > size)
        throw StoreError(path + ": the database is truncated or corrupt (its header promises " +
                         std::to_string(pageCount * pageSize) + " bytes, the file has " + std::to_string(size) + ")");
}

std::int64_t pragmaInt(sqlite3* db, const char* name)
{
    sql::Statement st(db, std::string("PRAGMA ") + name);
    return st.step() ? st.int64(0) : 0;
}

} // namespace

Database::Database(const std::string& path) : Database(path, kSchemaVersion) { }

Database::Database(const std::string& path, int schemaVersion) : m_path(path)
{
    checkFileHeader(path);
    if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
        const std::string message = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        sqlite3_close(m_db);
        m_db = nullptr;
        const std::string why = writeAccessProblem(path);
        throw StoreError(path + ": cannot open the database: " + (why.empty() ? message : why));
    }
    try {
        sqlite3_extended_result_codes(m_db, 1);
        sqlite3_busy_timeout(m_db, 5000);
        if (sqlite3_db_readonly(m_db, "main") == 1) {
            // SQLite falls back to reading a file it may not write; the first import would fail.
            const std::string why = writeAccessProblem(path);
            throw StoreError(path + ": cannot open the database: " +
                             (why.empty() ? std::string("SQLite can open it only for reading") : why));
        }
        std::int64_t applicationId = 0, version = 0, objects = 0;
        try {
            // One read transaction: a consistent snapshot even while another process is creating
            // the same new file (its mark and its tables become visible together).
            sql::exec(m_db, "BEGIN");
            applicationId = pragmaInt(m_db, "application_id");
            version = pragmaInt(m_db, "user_version");
            {
                sql::Statement count(m_db, "SELECT count(*) FROM sqlite_schema");
                objects = count.step() ? count.int64(0) : 0;
            }
            sql::exec(m_db, "COMMIT");
        } catch (const StoreError&) {
            const std::string why = writeAccessProblem(path);
            if (!why.empty()) throw StoreError(path + ": cannot open the database: " + why);
            throw StoreError(path + ": not a usable Foxhunt database (" + sqlite3_errmsg(m_db) + ")");
        }
        if (applicationId != kApplicationId && (applicationId != 0 || objects > 0))
            throw StoreError(path + ": not a Foxhunt database (it belongs to another application); "
                                    "refusing to modify it");
        // Our mark is written with the first schema in one transaction, so a file that carries it
        // with tables but without a schema version or the app_meta table is someone else's file.
        if (objects > 0 && (version == 0 || !hasTable(m_db, "app_meta")))
            throw StoreError(path + ": carries Foxhunt's application id but has no Foxhunt schema (tables of its own, "
                                    "no app_meta); refusing to modify it");
        if (objects > 0 && !checkedThisProcess(path)) {
            // A damaged page is found now, before anything is written through it. The check reads
            // every page, so each file pays it once per process, not on every connection.
            std::string problems;
            try {
                sql::Statement check(m_db, "PRAGMA quick_check(5)");
                while (check.step()) {
                    const std::string line = check.text(0);
                    if (line == "ok") break;
                    problems += (problems.empty() ? "" : "; ") + line;
                }
            } catch (const StoreError&) {
                // So damaged that the check itself cannot read it (SQLITE_CORRUPT).
                problems = sqlite3_errmsg(m_db);
            }
            if (!problems.empty())
                throw StoreError(path + ": the database file is damaged (SQLite quick_check: " + problems +
                                 "). Nothing was changed. Restore it from a backup, or save what is still readable "
                                 "with: sqlite3 '" +
                                 path + "' .recover > recovered.sql");
            markChecked(path);
        }
        if (version > kSchemaVersion)
            throw StoreError(path + ": made by a newer Foxhunt (schema version " + std::to_string(version) +
                             ", this build knows up to " + std::to_string(kSchemaVersion) + ")");
        if (objects == 0) sql::exec(m_db, "PRAGMA page_size = 8192");

        // Switching to WAL takes an exclusive lock and SQLite answers "locked" at once, without its busy
        // handler, while another connection opening the same new file holds a shared one: retry briefly.
        for (int attempt = 0;; ++attempt) {
            try {
                sql::Statement journal(m_db, "PRAGMA journal_mode = WAL");
                if (!journal.step() || journal.text(0) != "wal")
                    throw StoreError(path + ": cannot switch the database to WAL journaling");
                break;
            } catch (const StoreError& e) {
                if (attempt >= 500 || std::string_view(e.what()).find("database is locked") == std::string_view::npos)
                    throw;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        sql::exec(m_db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
                        "PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY");
        migrate(schemaVersion);

        sql::Statement meta(m_db, "SELECT value FROM app_meta WHERE key = 'application'");
        if (!meta.step() || meta.text(0) != "foxhunt")
            throw StoreError(path + ": not a Foxhunt database (its app_meta table is missing the Foxhunt mark)");
    } catch (const StoreError&) {
        const int code = sqlite3_extended_errcode(m_db) & 0xff;
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY) {
            const std::string why = writeAccessProblem(path);
            if (!why.empty()) throw StoreError(path + ": cannot open the database: " + why);
        }
        throw;
    } catch (const std::exception& e) {
        sqlite3_close_v2(m_db);
        m_db = nullptr;
        throw StoreError(path + ": " + e.what());
    }
}

Database::~Database()
{
    sqlite3_close_v2(m_db);
}

void Database::migrate(int schemaVersion)
{
    for (const Migration& migration : kMigrations) {
        if (migration.version > schemaVersion) break;
        if (migration.version <= pragmaInt(m_db, "user_version")) continue;
        sql::Transaction tx(m_db);
        // Decide again under the write lock: another process opening the same new file (a run
        // and `foxhunt-cli runs`, say) may have migrated between the read above and the lock.
        if (migration.version <= pragmaInt(m_db, "user_version")) continue;
        sql::exec(m_db, migration.sql);
        sql::exec(m_db, "PRAGMA user_version = " + std::to_string(migration.version));
        tx.commit();
    }
}

std::string defaultDataDir()
{
    std::filesystem::path base;
    const char* xdg = std::getenv("XDG_DATA_HOME");
    // The XDG spec says relative values are invalid and must be ignored.
    if (xdg && *xdg == '/') {
        base = xdg;
    } else {
        const char* home = std::getenv("HOME");
        if (!home || !*home) {
            const passwd* pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : nullptr;
        }
        if (!home || !*home) throw StoreError("cannot find a data folder: neither XDG_DATA_HOME nor HOME is set");
        base = std::filesystem::path(home) / ".local" / "share";
    }
    const std::filesystem::path dir = base / "foxhunt";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw StoreError(dir.string() + ": cannot create the data folder: " + ec.message());
    return dir.string();
}

std::string defaultDatabasePath()
{
    return (std::filesystem::path(defaultDataDir()) / "foxhunt.db").string();
}

} // namespace foxhunt
