// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reading an import's bytes exactly once: regular files, and pipes a shell
// hands over as /dev/stdin or `<(...)`. Anything that could block or never end
// (a named FIFO without a writer, /dev/zero) is refused before it is opened.

#include "engine/data/reader.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace foxhunt {

/// Sees each chunk of a file as it is read (e.g. to hash it on the way).
using ChunkObserver = std::function<void(std::string_view chunk)>;

/// Why `path` cannot be imported, decided from its type alone without opening it ("is a named
/// FIFO (a pipe with a name), not a regular file: ..."), or nullopt when readInputFile reads it.
/// Regular files are readable, and so are /dev/stdin, /dev/fd/N and /proc/self/fd/N naming a
/// descriptor this process has open (a pipe, a terminal or a file); a named FIFO, a device, a
/// socket or a directory is not. A path that does not exist is left to readInputFile's message.
std::optional<std::string> inputFileProblem(const std::string& path);

/// The bytes of `path`, read once, each chunk shown to `observe` (if set) as it arrives. A
/// descriptor path (/dev/stdin, `<(...)`) is read from the open descriptor, up to
/// `limits.maxStreamBytes`. Throws ImportError with the reason when inputFileProblem refuses the
/// path, it cannot be opened or read, or a stream exceeds its bound.
std::string readInputFile(const std::string& path, const ReadLimits& limits = {}, const ChunkObserver& observe = {});

} // namespace foxhunt
