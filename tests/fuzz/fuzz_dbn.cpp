// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: arbitrary bytes through the uncompressed DBN reader (prelude, metadata,
// records). A rejected file (ImportError) is an expected outcome; a crash, sanitizer report,
// hang or runaway allocation is a finding. Built and run by tests/fuzz/run.sh.

#include "engine/data/dbn_reader.h"
#include "engine/data/import_error.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    (void)foxhunt::isDbnPrelude(bytes);
    try {
        (void)foxhunt::readDbn("fuzz.dbn", bytes);
    } catch (const foxhunt::ImportError&) {
    }
    return 0;
}
