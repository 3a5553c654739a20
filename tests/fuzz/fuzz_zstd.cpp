// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: arbitrary bytes through the zstd framing path (frame walk, bounded
// streaming decompression) and on into the DBN reader, as readBarBuffer takes a .dbn.zst.
// A rejected file (ImportError) is an expected outcome; a crash, sanitizer report, hang,
// runaway allocation or output beyond the decompression limit is a finding.

#include "engine/data/dbn_reader.h"
#include "engine/data/import_error.h"
#include "engine/data/reader.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

/// Tighter than the defaults so that a bomb is caught within the fuzzer's RSS limit; the
/// ratio is the production one, so the frame-claim and streaming checks are both exercised.
foxhunt::ReadLimits fuzzLimits()
{
    foxhunt::ReadLimits limits;
    limits.minDecompressedBytes = std::uint64_t{1} << 20;
    limits.maxDecompressedBytes = std::uint64_t{16} << 20;
    return limits;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const foxhunt::ReadLimits limits = fuzzLimits();
    const std::string_view compressed(reinterpret_cast<const char*>(data), size);
    std::string out;
    try {
        out = foxhunt::zstdDecompress("fuzz.dbn.zst", compressed, limits);
    } catch (const foxhunt::ImportError&) {
        return 0;
    }
    // The bound is the contract: output past it is a finding even though nothing crashed.
    if (out.size() > foxhunt::decompressedLimit(size, limits)) std::abort();
    try {
        (void)foxhunt::readDbn("fuzz.dbn.zst", out);
    } catch (const foxhunt::ImportError&) {
    }
    return 0;
}
