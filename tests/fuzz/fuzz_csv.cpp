// libFuzzer target: arbitrary bytes through both CSV readers (Databento and generic vendor CSV).
// A rejected file (ImportError) is an expected outcome; a crash, sanitizer report, hang or
// runaway allocation is a finding. Built and run by tests/fuzz/run.sh, not by CMake or CI.

#include "engine/data/csv_reader.h"
#include "engine/data/import_error.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

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
    const foxhunt::ReadOptions options;
    // Both readers see every input: either can be forced on a file with --format, so neither
    // may rely on detection having vetted its header.
    tolerateRefusal([&] { foxhunt::readGenericCsv("fuzz.csv", text, options); });
    tolerateRefusal([&] { foxhunt::readDatabentoCsv("fuzz.csv", text, options); });
    // The header checks and the field parsers run on raw text from the file too.
    const std::string_view firstLine = text.substr(0, text.find('\n'));
    (void)foxhunt::isDatabentoCsvHeader(firstLine);
    (void)foxhunt::isGenericCsvHeader(firstLine);
    (void)foxhunt::parseFixedPoint(firstLine);
    (void)foxhunt::parseTextTimestamp(firstLine);
    return 0;
}
