// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Text bar formats: Databento CSV exports and generic vendor OHLCV CSV.

#include "engine/data/parsed_file.h"
#include "engine/data/reader.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace foxhunt {

/// Decimal text ("6884.75", "2427", "-0.5") to 1e-9 fixed point, exactly, without
/// going through double. Digits past the ninth decimal round half up. nullopt when
/// the text is not a plain decimal number or does not fit in int64.
std::optional<std::int64_t> parseFixedPoint(std::string_view text);

/// A timestamp as written in a file: `ns` is UTC when `exact`, else naive local wall time.
struct TextTimestamp {
    std::int64_t ns = 0;
    bool exact = false; ///< had a Z / UTC offset, or was an integer epoch
};

/// Parses the timestamp layouts the readers accept: ISO-8601 (T or spaces, optional
/// fraction, Z or +-HH:MM), `YYYYMMDD  HH:MM:SS`, `MM/DD/YYYY[ HH:MM[:SS]]`, a bare
/// date, and integer epochs (s, ms, us or ns by magnitude), on a fast path; when that
/// misses, date::parse tries a space before the offset, a UTC/GMT abbreviation, ISO basic
/// (`YYYYMMDDTHHMMSS`), `DD.MM.YYYY`, `MM/DD/YY`, month names (`04-Jan-2021`,
/// `4 Jan 2021`) and ctime's layout, each with the time optional where it makes sense.
/// A zone abbreviation other than UTC/GMT/Z is refused, not guessed. A well-formed time beyond
/// int64 nanoseconds (after 2262-04-11, before 1677-09-21) saturates to INT64_MAX or
/// INT64_MIN rather than wrapping, so that a range check refuses it as what it is.
std::optional<TextTimestamp> parseTextTimestamp(std::string_view text);

/// Parses with a strptime-like format (%Y %y %m %d %H %M %S %z %%; a space matches
/// one or more spaces; %S accepts a fraction). nullopt when the text does not match;
/// saturates like the overload above.
std::optional<TextTimestamp> parseTextTimestamp(std::string_view text, std::string_view format);

/// True when a header line names Databento's CSV columns (ts_event + instrument_id).
bool isDatabentoCsvHeader(std::string_view headerLine);
/// True when a header line names at least a time column plus open/high/low/close.
bool isGenericCsvHeader(std::string_view headerLine, const CsvOverrides& overrides = {});

/// Reads a Databento CSV export (raw or pretty prices, ns or ISO timestamps).
ParsedFile readDatabentoCsv(std::string_view name, std::string_view text, const ReadOptions& options);
/// Reads a vendor OHLCV CSV, finding columns by header name; naive times are local
/// to options.timeZone.
ParsedFile readGenericCsv(std::string_view name, std::string_view text, const ReadOptions& options);

} // namespace foxhunt
