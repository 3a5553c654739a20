// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which run a checkpoint file belongs to. Every checkpoint carries its run's
// UUID, a hash of the run's stored config, the model and the step; a resume
// checks them before loading anything, so a file written by another
// database's run (or another config) is refused instead of silently loaded.

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace foxhunt {

/// The identity written into a checkpoint file.
struct CheckpointIdentity {
    std::string runUuid;      ///< RunInfo::uuid
    std::string configSha256; ///< SHA-256 of the run's stored config JSON (RunInfo::configJson)
    std::string model;        ///< "dqn", "ppo", "mamba2", "tft"
    std::int64_t step = 0;    ///< the model's step when written
};

/// A checkpoint that does not belong where it was found; what() names the file and why.
class CheckpointMismatch : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The identity as the text stored in a checkpoint file (one JSON object).
std::string toString(const CheckpointIdentity& identity);

/// Throws CheckpointMismatch naming `path` unless `stored` (the identity text read from the file,
/// "" when it carries none) is `expected`: same run, same config, same model, same step.
void verifyCheckpointIdentity(const std::string& path, const std::string& stored, const CheckpointIdentity& expected);

/// Called by a checkpoint loader with the identity text it found in the file ("" for none),
/// after reading the file and before changing any state; it throws to refuse the file.
using CheckpointCheck = std::function<void(const std::string& storedIdentity)>;

} // namespace foxhunt
