#pragma once
// Readers for every supported bar format, with detection by content.

#include "engine/data/parsed_file.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace foxhunt {

/// Column and format overrides for the generic CSV reader, when auto-detection guesses wrong.
struct CsvOverrides {
    std::optional<std::string> timestampColumn; ///< one column holding date and time
    std::optional<std::string> dateColumn;      ///< a separate date column ...
    std::optional<std::string> timeColumn;      ///< ... and time column
    std::optional<std::string> openColumn, highColumn, lowColumn, closeColumn, volumeColumn;
    std::optional<std::string> symbolColumn;
    /// strptime-like format for the timestamp, e.g. "%Y%m%d  %H:%M:%S"; empty = detect.
    std::optional<std::string> timestampFormat;
    char delimiter = 0;                          ///< 0 = detect (',', ';', '\t')
};

/// How to read a file.
struct ReadOptions {
    FileFormat format = FileFormat::Auto;
    std::string timeZone = "America/New_York"; ///< zone of naive timestamps
    std::string symbol = "ES";                  ///< symbol when the file names none
    CsvOverrides csv;
};

/// Looks at the first bytes (DBN prelude, zstd magic, CSV header) and names the format.
/// Throws ImportError when the content is none of them.
FileFormat detectFormat(std::string_view path, std::string_view head);

/// Reads a whole file in the given (or detected) format. Throws ImportError with
/// `file:line: reason` on anything that does not parse; never returns partial data.
ParsedFile readBarFile(const std::string& path, const ReadOptions& options = {});

/// Reads from memory (used by readBarFile and by benchmarks and tests).
/// `name` is used in messages. Compressed DBN (zstd, one or more frames) is accepted.
ParsedFile readBarBuffer(std::string_view name, std::string_view bytes, const ReadOptions& options = {});

/// Decompresses a zstd stream of one or more frames. Throws ImportError on corrupt input.
std::string zstdDecompress(std::string_view name, std::string_view compressed);

} // namespace foxhunt
