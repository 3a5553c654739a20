// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// All-or-nothing file output: bytes go to a temporary file beside the target,
// are flushed to disk, and replace the target by rename only when every byte
// made it. A full disk, a quota or a missing folder leaves the old target (or
// none) and no temporary behind.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace foxhunt {

/// A write(2)-shaped call: writes up to `size` bytes of `data` to `fd` and returns how many
/// were written, or -1 with errno set. Tests pass one that fails part way (a full disk).
using WriteCall = std::function<ssize_t(int fd, const char* data, std::size_t size)>;

/// Writes `bytes` to `path` through a temporary file in the same folder, fsyncs it and renames it
/// over `path`. Short writes are continued; a write that fails or makes no progress, a failed
/// fsync, close or rename throws std::runtime_error("cannot write PATH: reason") after removing
/// the temporary, so `path` is either the complete new content or untouched. `write` replaces
/// write(2) when set.
void writeFileAtomically(const std::string& path, std::string_view bytes, const WriteCall& write = {});

} // namespace foxhunt
