// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The life cycle of a run, as stored and as a session ends it.

#include <string>

namespace foxhunt {

enum class RunStatus { Running, Finished, Stopped, Failed, Interrupted };
std::string toString(RunStatus status);
/// Parses the names above; throws std::invalid_argument otherwise.
RunStatus runStatusFromString(const std::string& name);

} // namespace foxhunt
