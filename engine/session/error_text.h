// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a user reads when something fails: the message, without the C++ stack trace LibTorch
// appends to its errors (c10::Error::what() carries a dozen "frame #N" lines).

#include <exception>
#include <string>

namespace foxhunt {

/// e.what(), or for a LibTorch error its message without the backtrace.
std::string errorText(const std::exception& e);

} // namespace foxhunt
