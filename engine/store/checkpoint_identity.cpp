// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/checkpoint_identity.h"

#include <nlohmann/json.hpp>

namespace foxhunt {

std::string toString(const CheckpointIdentity& identity)
{
    return nlohmann::json{{"format", "foxhunt-checkpoint-identity-v1"},
                          {"run_uuid", identity.runUuid},
                          {"config_sha256", identity.configSha256},
                          {"model", identity.model},
                          {"step", identity.step}}
        .dump();
}

void verifyCheckpointIdentity(const std::string& path, const std::string& stored, const CheckpointIdentity& expected)
{
    if (stored.empty())
        throw CheckpointMismatch(
            path + ": the checkpoint does not say which run wrote it (it predates run UUIDs in "
                   "checkpoints), so it may be another database's run with the same id; it is not loaded. "
                   "Start a new run instead of resuming this one");
    const nlohmann::json j = nlohmann::json::parse(stored, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("run_uuid") || !j["run_uuid"].is_string())
        throw CheckpointMismatch(path + ": the checkpoint's run identity is unreadable; it is not loaded");
    const std::string uuid = j["run_uuid"].get<std::string>();
    if (uuid != expected.runUuid)
        throw CheckpointMismatch(path + ": the checkpoint belongs to another run (run UUID " + uuid + ", this run is " +
                                 expected.runUuid + "), e.g. one of another database; it is not loaded");
    const std::string config = j.value("config_sha256", std::string());
    if (config != expected.configSha256)
        throw CheckpointMismatch(path +
                                 ": the checkpoint was written under another configuration of this run (config hash " +
                                 config.substr(0, 12) + ", the stored config's is " +
                                 expected.configSha256.substr(0, 12) + "); it is not loaded");
    const std::string model = j.value("model", std::string());
    if (model != expected.model)
        throw CheckpointMismatch(path + ": the checkpoint holds model '" + model + "', not '" + expected.model +
                                 "'; it is not loaded");
    const std::int64_t step = j.contains("step") && j["step"].is_number_integer() ? j["step"].get<std::int64_t>() : -1;
    if (step != expected.step)
        throw CheckpointMismatch(path + ": the checkpoint is of step " + std::to_string(step) +
                                 ", the run records step " + std::to_string(expected.step) +
                                 " for it; it is not loaded");
}

} // namespace foxhunt
