// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Databento Binary Encoding (DBN) v1-v3: metadata and OHLCV records.

#include "engine/data/parsed_file.h"
#include "engine/data/reader.h"

#include <cstdint>
#include <string_view>

namespace foxhunt {

/// DBN record types this reader turns into bars.
inline constexpr std::uint8_t kRtypeOhlcv1s = 0x20;
inline constexpr std::uint8_t kRtypeOhlcv1m = 0x21;
inline constexpr std::uint8_t kRtypeOhlcv1h = 0x22;
inline constexpr std::uint8_t kRtypeOhlcv1d = 0x23;
inline constexpr std::uint8_t kRtypeOhlcvEod = 0x24;
/// The v1 OHLCV rtype whose interval comes from the metadata schema.
inline constexpr std::uint8_t kRtypeOhlcvDeprecated = 0x11;

/// Size of an OHLCV record (16-byte header + 40-byte body), without ts_out.
inline constexpr std::size_t kDbnOhlcvSize = 56;

/// Bar length in ns for a DBN schema number (ohlcv-1s/1m/1h/1d/eod); 0 for others.
std::int64_t dbnSchemaIntervalNs(std::uint16_t schema);
/// Bar length in ns for an OHLCV rtype; 0 for others (and for 0x11).
std::int64_t dbnRtypeIntervalNs(std::uint8_t rtype);

/// True when the bytes start with a DBN prelude: "DBN" and a binary version byte
/// (readDbn accepts 1..3 and names any other).
bool isDbnPrelude(std::string_view head);

/// Decodes uncompressed DBN. Records of other types are skipped by their length
/// and counted; a truncated record throws ImportError naming its record number. `progress`, if
/// set, hears the share of the bytes decoded about every 64 Ki records.
ParsedFile readDbn(std::string_view name, std::string_view bytes, const ParseProgress& progress = {});

} // namespace foxhunt
