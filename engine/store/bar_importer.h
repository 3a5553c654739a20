// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Files into the bar store: reads, validates and groups a file's bars into series (contracts,
// the continuous front month, one vendor series) and stores them with the import record in one
// transaction. std-only.

#include "engine/data/continuous.h"
#include "engine/data/import_error.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"
#include "engine/store/bar_store.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace foxhunt {

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
        : ImportError(std::move(file), line, std::move(reason)), m_series(std::move(series)), m_conflicts(conflicts),
          m_fromTs(fromTs), m_toTs(toTs)
    {
    }

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
    bool alreadyImported = false; ///< same sha256 seen before: nothing was written
    std::uint64_t rowsRead = 0;
    std::uint64_t imported = 0;      ///< bars written (all series of this file)
    std::uint64_t alreadyStored = 0; ///< bars already stored for their series with the same values
    std::uint64_t replaced = 0;      ///< stored bars this file gave other values (Replace only)
    std::uint64_t removed = 0;       ///< stored bars in a replaced range that the file lacks (Replace only)
    std::uint64_t duplicatesDropped = 0;
    std::int64_t firstTs = 0;
    std::int64_t lastTs = 0;
    std::string instrument; ///< the main series' symbol (continuous one for parent files)
    std::vector<std::string> warnings;
    ValidationReport validation;
    std::vector<Roll> rolls;
    std::vector<std::int64_t> seriesIds; ///< rows touched, main series first
};

/// Progress callback: fraction in [0, 1] and a stage name ("read", "parse", "validate", "store"),
/// each stage rising from 0 to 1 in that order. It may throw to stop the import (nothing is stored).
using ProgressFn = std::function<void(double fraction, std::string_view stage)>;

/// One figure in [0, 1] for a whole import from a stage's own fraction, each stage weighted by its
/// measured share of an import's time (BM_ImportStages), so successive calls never go back and
/// the figure moves at about one speed. An unknown stage counts as done (1).
double overallImportFraction(double fraction, std::string_view stage);

/// Imports files into a bar store, on the store's connection (same thread as it).
class BarImporter {
public:
    /// Writes into `store`, which must outlive the importer.
    explicit BarImporter(BarStore& store);

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
    ImportResult importParsed(ParsedFile&& file, const ImportOptions& options = {}, const ProgressFn& progress = {},
                              const std::string& sha256 = {});

private:
    struct StoredOverlap;
    StoredOverlap compareStored(std::int64_t seriesId, const std::vector<Bar>& bars) const;
    BarStore& m_store;
    sqlite3* m_db = nullptr; ///< the store's connection
};

} // namespace foxhunt
