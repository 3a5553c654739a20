// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a reader hands to validation and the store: bars plus where they came from.

#include "engine/data/bar.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace foxhunt {

/// The formats the importer understands.
enum class FileFormat { Auto, Dbn, DatabentoCsv, Csv };

/// "auto", "dbn", "databento-csv", "csv".
std::string toString(FileFormat format);
/// Parses the names above; throws std::invalid_argument on anything else.
FileFormat fileFormatFromString(const std::string& name);

/// One symbol mapping interval from DBN metadata (raw symbol -> instrument id).
struct SymbolMapping {
    std::string rawSymbol;       ///< e.g. "ESH1"
    std::uint32_t startDate = 0; ///< YYYYMMDD
    std::uint32_t endDate = 0;   ///< YYYYMMDD, exclusive
    std::string symbol;          ///< the mapped id or symbol as text, e.g. "5482"
};

/// DBN metadata, filled only for DBN files.
struct DbnMetadata {
    std::uint8_t version = 0;
    std::string dataset;      ///< e.g. "GLBX.MDP3"
    std::uint16_t schema = 0; ///< 0xFFFF when mixed
    std::uint64_t start = 0;  ///< UNIX ns
    std::uint64_t end = 0;    ///< UNIX ns
    std::uint64_t limit = 0;
    std::uint8_t stypeIn = 0;
    std::uint8_t stypeOut = 0;
    bool tsOut = false;
    std::vector<std::string> symbols;
    std::vector<std::string> partial;
    std::vector<std::string> notFound;
    std::vector<SymbolMapping> mappings;
};

/// The raw output of a reader, before validation.
struct ParsedFile {
    std::string path;
    FileFormat format = FileFormat::Auto;         ///< the detected (or forced) format
    std::vector<Bar> bars;                        ///< in file order
    std::vector<std::uint64_t> lines;             ///< per bar: 1-based CSV line or DBN record number
    std::map<std::uint32_t, std::string> symbols; ///< instrument id -> symbol, when known
    std::string defaultSymbol;                    ///< symbol for bars whose id has none (CSV without a symbol column)
    std::int64_t intervalNs = 0;                  ///< bar length from the schema; 0 = infer from the data
    std::string dataset;                          ///< e.g. "GLBX.MDP3"; empty for vendor CSV
    std::uint64_t recordsSkipped = 0;             ///< DBN records of other types, skipped by length
    std::vector<std::string> warnings;            ///< e.g. "line 12: price off the 0.25 tick grid"
    DbnMetadata dbn;                              ///< filled for DBN only
};

} // namespace foxhunt
