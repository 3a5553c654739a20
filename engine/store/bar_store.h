#pragma once
// The SQLite store of bars: instruments, bars, imports and rolls. One writer
// connection; schema versioned with PRAGMA user_version; WAL journal.

#include "engine/data/bar.h"
#include "engine/data/continuous.h"
#include "engine/data/import_error.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace foxhunt {

/// A database that cannot be opened or used: foreign, corrupt, newer schema, I/O error.
class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What kind of series an instrument row holds.
enum class SeriesKind { Contract, Continuous, Series, Synthetic };
std::string toString(SeriesKind kind);

/// One stored series (an instrument row) with its bar statistics.
struct SeriesInfo {
    std::int64_t id = 0;
    std::string symbol;         ///< "ESH1", "ES.c.0", "ES" (vendor CSV), "ES.SYNTH"
    std::string dataset;        ///< "GLBX.MDP3", "csv", "synthetic"
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
    std::int64_t importedAt = 0;   ///< UNIX ns
    std::vector<std::string> warnings;
    std::string summary;           ///< JSON object: counts, instrument, series ids, rolls
};

/// What an import does with bars whose timestamp a series already holds with other values.
enum class StoredConflicts {
    Reject,  ///< refuse the file: nothing is stored, the error names the first conflicting line
    Replace, ///< replace each series' stored bars between the file's first and last timestamp
};

/// A file rejected because its bars contradict stored ones (StoredConflicts::Reject).
/// what() reads `file:line: reason`, the reason giving the stored and the file's values.
class StoredBarConflict : public ImportError {
public:
    StoredBarConflict(std::string file, std::uint64_t line, std::string reason, std::string series,
                      std::uint64_t conflicts, std::int64_t fromTs, std::int64_t toTs)
        : ImportError(std::move(file), line, std::move(reason))
        , m_series(std::move(series)), m_conflicts(conflicts), m_fromTs(fromTs), m_toTs(toTs) {}

    /// The stored series the first conflict is in.
    const std::string& series() const { return m_series; }
    /// The file's bars that differ from stored ones in that series.
    std::uint64_t conflicts() const { return m_conflicts; }
    /// The file's range for that series, which a replace would rewrite.
    std::int64_t fromTs() const { return m_fromTs; }
    std::int64_t toTs() const { return m_toTs; }

private:
    std::string m_series;
    std::uint64_t m_conflicts = 0;
    std::int64_t m_fromTs = 0;
    std::int64_t m_toTs = 0;
};

/// How to import a file.
struct ImportOptions {
    ReadOptions read;
    /// Reject (default): bars that contradict stored ones refuse the file. Replace: the
    /// stored bars of each series in the file's range give way to the file's, and a file
    /// imported before (same SHA-256) is imported again.
    StoredConflicts conflicts = StoredConflicts::Reject;
    /// With backAdjust the continuous series is stored as "<root>.c.0.adj", so
    /// adjusted and raw prices never mix in one series.
    ContinuousOptions continuous;
};

/// The outcome of one import, ready for the CLI's JSON and the GUI's report.
struct ImportResult {
    std::string path;
    FileFormat format = FileFormat::Auto;
    std::string sha256;
    bool alreadyImported = false;  ///< same sha256 seen before: nothing was written
    std::uint64_t rowsRead = 0;
    std::uint64_t imported = 0;     ///< bars written (all series of this file)
    std::uint64_t alreadyStored = 0; ///< bars already stored for their series with the same values
    std::uint64_t replaced = 0;      ///< stored bars this file gave other values (Replace only)
    std::uint64_t removed = 0;       ///< stored bars in a replaced range that the file lacks (Replace only)
    std::uint64_t duplicatesDropped = 0;
    std::int64_t firstTs = 0;
    std::int64_t lastTs = 0;
    std::string instrument;         ///< the main series' symbol (continuous one for parent files)
    std::vector<std::string> warnings;
    ValidationReport validation;
    std::vector<Roll> rolls;
    std::vector<std::int64_t> seriesIds; ///< rows touched, main series first
};

/// Progress callback: fraction in [0, 1] and a stage name ("read", "validate", "store").
using ProgressFn = std::function<void(double fraction, std::string_view stage)>;

/// The bar store. Not thread-safe: use it from one thread (the engine's writer).
class BarStore {
public:
    /// Schema version written to PRAGMA user_version.
    static constexpr int kSchemaVersion = 4;

    /// Opens or creates the database and migrates it. Throws StoreError with a
    /// readable reason for a foreign, corrupt or newer file.
    explicit BarStore(const std::string& path);
    ~BarStore();
    BarStore(const BarStore&) = delete;
    BarStore& operator=(const BarStore&) = delete;

    const std::string& path() const { return m_path; }

    /// Reads, validates and stores one file in one transaction. Throws ImportError
    /// (`file:line: reason`; StoredBarConflict when its bars contradict stored ones)
    /// and leaves the store unchanged when the file is rejected.
    ImportResult importFile(const std::string& path, const ImportOptions& options = {},
                            const ProgressFn& progress = {});

    /// The core of importFile for a file already read: validates `file` (dropping
    /// exact duplicates), groups its bars into series (contracts, the continuous
    /// front month for ES.FUT parent data, or one vendor series) and stores them
    /// with the import record in one transaction. `sha256` identifies the import;
    /// empty = a digest of the parsed content. An exception thrown anywhere,
    /// including by `progress`, rolls everything back.
    ImportResult importParsed(ParsedFile&& file, const ImportOptions& options = {},
                              const ProgressFn& progress = {}, const std::string& sha256 = {});

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

    /// The raw connection, for other engine stores sharing this file on the same thread.
    sqlite3* handle() const { return m_db; }

private:
    void migrate();
    struct StoredBars {
        std::uint64_t inserted = 0;
        std::uint64_t alreadyStored = 0;
    };
    struct StoredOverlap;
    StoredOverlap compareStored(std::int64_t seriesId, const std::vector<Bar>& bars) const;
    std::int64_t upsertInstrument(const std::string& symbol, const std::string& dataset, SeriesKind kind,
                                  std::int64_t intervalNs);
    StoredBars insertBars(std::int64_t seriesId, const std::vector<Bar>& bars,
                          const std::function<void(std::uint64_t)>& advance);
    std::string m_path;
    sqlite3* m_db = nullptr;
};

/// $XDG_DATA_HOME/foxhunt (or ~/.local/share/foxhunt), created on demand.
std::string defaultDataDir();
/// defaultDataDir()/foxhunt.db
std::string defaultDatabasePath();

/// On an empty store, generates and stores the synthetic default series.
/// Returns true when it did.
bool ensureDefaultData(BarStore& store);

/// The series a run or replay uses: the one named (id or symbol; nullopt if
/// absent), else the first real continuous or plain series, else the first real
/// contract, else the synthetic default (generated on an empty store).
std::optional<SeriesInfo> chooseSeries(BarStore& store, const std::string& idOrSymbol);

} // namespace foxhunt
