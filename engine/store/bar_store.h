// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The bars of a Foxhunt database: instruments, bars, imports and rolls, on a Database
// (the connection, pragmas and schema). Files come in through BarImporter.

#include "engine/data/bar.h"
#include "engine/data/continuous.h"
#include "engine/store/database.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace foxhunt {

/// What kind of series an instrument row holds.
enum class SeriesKind { Contract, Continuous, Series, Synthetic };
std::string toString(SeriesKind kind);

/// One stored series (an instrument row) with its bar statistics.
struct SeriesInfo {
    std::int64_t id = 0;
    std::string symbol;  ///< "ESH1", "ES.c.0", "ES" (vendor CSV), "ES.SYNTH"
    std::string dataset; ///< "GLBX.MDP3", "csv", "synthetic"
    SeriesKind kind = SeriesKind::Series;
    std::int64_t intervalNs = 0;
    std::uint64_t barCount = 0;
    std::int64_t firstTs = 0;
    std::int64_t lastTs = 0;
    bool synthetic() const { return kind == SeriesKind::Synthetic; }
};

/// One import as recorded in the store.
struct ImportRecord {
    std::int64_t id = 0;
    std::string path;
    std::string sha256;
    std::string format;
    std::uint64_t rows = 0;
    std::int64_t importedAt = 0; ///< UNIX ns
    std::vector<std::string> warnings;
    std::string summary; ///< JSON object: counts, instrument, series ids, rolls
};

/// The bar store. Not thread-safe: use it from one thread, the one its Database belongs to.
class BarStore {
public:
    /// Opens (or creates and migrates) the database at `path` and holds it. Throws StoreError
    /// with a readable reason for a foreign, corrupt or newer file.
    explicit BarStore(const std::string& path);
    /// Works on a database opened elsewhere, which must outlive this store.
    explicit BarStore(Database& database);
    ~BarStore();
    BarStore(const BarStore&) = delete;
    BarStore& operator=(const BarStore&) = delete;

    /// The database file.
    const std::string& path() const { return m_database.path(); }
    /// The database this store sits on, for the other stores of the same file (RunStore).
    Database& database() const { return m_database; }

    /// The import with this sha256, if any.
    std::optional<ImportRecord> findImport(const std::string& sha256) const;

    /// Stores already-validated bars as one series (used for the synthetic default).
    std::int64_t storeSeries(const std::string& symbol, const std::string& dataset, SeriesKind kind,
                             std::int64_t intervalNs, const std::vector<Bar>& bars);

    /// All series, ordered by kind then symbol.
    std::vector<SeriesInfo> series() const;
    /// By id ("3") or symbol ("ES.c.0"); the most recent match for a symbol.
    std::optional<SeriesInfo> findSeries(std::string_view idOrSymbol) const;
    /// Bars of a series with fromTs <= ts < toTs, in time order; each bar's
    /// instrumentId is the series id (truncated to 32 bits).
    std::vector<Bar> loadBars(std::int64_t seriesId, std::int64_t fromTs = INT64_MIN,
                              std::int64_t toTs = INT64_MAX) const;
    /// Rolls recorded for a continuous series.
    std::vector<Roll> rolls(std::int64_t seriesId) const;
    /// Every import, newest first.
    std::vector<ImportRecord> imports() const;
    /// True when no series is stored.
    bool empty() const;

private:
    // The importer writes bars and instruments through the same two helpers as storeSeries().
    friend class BarImporter;
    struct StoredBars {
        std::uint64_t inserted = 0;
        std::uint64_t alreadyStored = 0;
    };
    std::int64_t upsertInstrument(const std::string& symbol, const std::string& dataset, SeriesKind kind,
                                  std::int64_t intervalNs);
    StoredBars insertBars(std::int64_t seriesId, const std::vector<Bar>& bars,
                          const std::function<void(std::uint64_t)>& advance);
    std::unique_ptr<Database> m_owned; ///< set when this store opened the database itself
    Database& m_database;
    sqlite3* m_db = nullptr; ///< m_database's connection
};

/// On an empty store, generates and stores the synthetic default series.
/// Returns true when it did.
bool ensureDefaultData(BarStore& store);

/// The series a run or replay uses: the one named (id or symbol; nullopt if
/// absent), else the first real continuous or plain series, else the first real
/// contract, else the synthetic default (generated on an empty store).
std::optional<SeriesInfo> chooseSeries(BarStore& store, const std::string& idOrSymbol);

} // namespace foxhunt
