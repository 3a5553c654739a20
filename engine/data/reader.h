// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Readers for every supported bar format, with detection by content.

#include "engine/data/parsed_file.h"

#include <cstddef>
#include <cstdint>
#include <functional>
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
    char delimiter = 0; ///< 0 = detect (',', ';', '\t')
};

/// Bounds on what reading one file may cost in memory, so a hostile or broken file is
/// refused with a reason instead of exhausting the machine.
struct ReadLimits {
    /// Decompressed bytes allowed per compressed byte. A zstd bomb reaches thousands; Databento's
    /// DBN bars compress about 4-10x.
    std::uint64_t maxCompressionRatio = 200;
    /// Decompressed bytes always allowed, whatever the ratio (a small file of repetitive bars).
    std::uint64_t minDecompressedBytes = std::uint64_t{64} << 20;
    /// Decompressed bytes never exceeded, whatever the file's size.
    std::uint64_t maxDecompressedBytes = std::uint64_t{4} << 30;
    /// Bytes read from a pipe or an inherited descriptor (/dev/stdin, a shell's `<(...)`),
    /// whose size is not known before it is read.
    std::uint64_t maxStreamBytes = std::uint64_t{1} << 30;
};

/// The most bytes `compressedBytes` of zstd input may decompress to under `limits`:
/// the ratio times the input, at least minDecompressedBytes, at most maxDecompressedBytes.
std::uint64_t decompressedLimit(std::uint64_t compressedBytes, const ReadLimits& limits);

/// Told now and then how far parsing has come: the share of the (decompressed) bytes parsed,
/// rising from 0 to 1. It may throw to stop the read (a cancelled import); nothing is returned then.
using ParseProgress = std::function<void(double fraction)>;

/// How to read a file.
struct ReadOptions {
    FileFormat format = FileFormat::Auto;
    std::string timeZone = "America/New_York"; ///< zone of naive timestamps
    std::string symbol = "ES";                 ///< symbol when the file names none
    CsvOverrides csv;
    ReadLimits limits;
    ParseProgress progress; ///< optional; called about every 64 Ki rows while parsing
};

/// Looks at the first bytes (DBN prelude, zstd magic, CSV header) and names the format.
/// Throws ImportError when the content is none of them.
FileFormat detectFormat(std::string_view path, std::string_view head);

/// Reads a whole file, once (readInputFile in engine/data/input_file.h), in the given (or
/// detected) format. Throws ImportError with `file:line: reason` on anything that does not
/// parse or is not a readable file; never returns partial data.
ParsedFile readBarFile(const std::string& path, const ReadOptions& options = {});

/// Reads from memory (used by readBarFile and by benchmarks and tests).
/// `name` is used in messages. Compressed DBN (zstd, one or more frames) is accepted.
ParsedFile readBarBuffer(std::string_view name, std::string_view bytes, const ReadOptions& options = {});

/// Decompresses a zstd stream of one or more frames, streamed through a fixed-size buffer.
/// Throws ImportError on corrupt or truncated input, and when the frames claim, or turn out to
/// hold, more than decompressedLimit(compressed.size(), limits) bytes; that check comes before
/// any memory is set aside for a claimed size.
std::string zstdDecompress(std::string_view name, std::string_view compressed, const ReadLimits& limits = {});

} // namespace foxhunt
