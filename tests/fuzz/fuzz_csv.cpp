// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: arbitrary bytes through both CSV readers (Databento and generic vendor CSV).
// A rejected file (ImportError) is an expected outcome; a crash, sanitizer report, hang or
// runaway allocation is a finding. Built and run by tests/fuzz/run.sh, not by CMake or CI.

#include "engine/data/csv_reader.h"
#include "engine/data/import_error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

/// Zones whose rules differ in kind: DST at 02:00, none, DST at 01:00 UTC, a 30-minute DST shift.
constexpr std::array<std::string_view, 4> kZones = {"America/New_York", "UTC", "Europe/London", "Australia/Lord_Howe"};
/// Formats a user may pass as --ts-format, one per layout the parser knows.
constexpr std::array<std::string_view, 4> kFormats = {"", "%Y%m%d %H:%M:%S", "%m/%d/%Y %H:%M", "%Y-%m-%dT%H:%M:%S%z"};
constexpr std::array<char, 4> kDelimiters = {0, ',', ';', '\t'};

/// The options a user could have given, picked by the input's last byte, so that the fuzzer
/// explores them along with the text (and a crash file replays exactly).
foxhunt::ReadOptions optionsFor(std::string_view text)
{
    const unsigned pick = text.empty() ? 0 : static_cast<unsigned char>(text.back());
    foxhunt::ReadOptions options;
    options.timeZone = std::string(kZones[pick & 3]);
    const std::string_view format = kFormats[(pick >> 2) & 3];
    if (!format.empty()) options.csv.timestampFormat = std::string(format);
    options.csv.delimiter = kDelimiters[(pick >> 4) & 3];
    return options;
}

/// Runs one reader; a file it refuses is the expected outcome for most inputs.
template <typename Read>
void tolerateRefusal(Read read)
{
    try {
        read();
    } catch (const foxhunt::ImportError&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // Both readers see every input: either can be forced on a file with --format, so neither
    // may rely on detection having vetted its header.
    tolerateRefusal([&] { foxhunt::readGenericCsv("fuzz.csv", text, foxhunt::ReadOptions{}); });
    tolerateRefusal([&] { foxhunt::readDatabentoCsv("fuzz.csv", text, foxhunt::ReadOptions{}); });
    const foxhunt::ReadOptions options = optionsFor(text);
    tolerateRefusal([&] { foxhunt::readGenericCsv("fuzz.csv", text, options); });

    // The header checks and the field parsers on raw text; the second line doubles as a
    // user-given timestamp format for the first.
    const std::size_t eol = text.find('\n');
    const std::string_view firstLine = text.substr(0, eol);
    const std::string_view secondLine = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1, 64);
    (void)foxhunt::isDatabentoCsvHeader(firstLine);
    (void)foxhunt::isGenericCsvHeader(firstLine);
    (void)foxhunt::parseFixedPoint(firstLine);
    (void)foxhunt::parseTextTimestamp(firstLine);
    (void)foxhunt::parseTextTimestamp(firstLine, secondLine);
    return 0;
}
