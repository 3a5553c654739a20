// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/devices.h"

#include "engine/session/session_json.h"
#include "models/hardware/machine_probe.h"
#include "models/precision/mixed_precision.h"
#include "models/process.h"
#include "models/runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <thread>

namespace foxhunt {

namespace mp = models::precision;

std::vector<std::string> computeDevices()
{
    return models::computeDevices();
}

std::string machineSummary()
{
    return models::hardware::this_machine().summary() + "; FP32 GEMM: " + models::blasInfo().summary();
}

std::string machineJsonText()
{
    const auto& machine = models::hardware::this_machine();
    nlohmann::json j = machineJson(machine);
    nlohmann::json devices = nlohmann::json::array();
    for (const std::string& device : computeDevices()) {
        const bool cuda = device.rfind("cuda:", 0) == 0;
        const auto caps = mp::capabilities_of(machine, cuda ? mp::ComputeDevice::Cuda : mp::ComputeDevice::Cpu,
                                              cuda ? std::stoi(device.substr(5)) : 0);
        const mp::AmpCandidate candidate = mp::auto_amp_candidate(caps);
        devices.push_back({{"device", device},
                           {"amp_auto", candidate.config.enabled ? mp::to_string(candidate.config.dtype) : "fp32"},
                           {"amp_reason", candidate.reason},
                           {"bf16_native", cuda ? caps.cuda_major >= 8 : machine.cpu.native_bf16()},
                           {"int8_dot_product", machine.cpu.int8_dot_product()}});
    }
    j["devices"] = devices;
    return j.dump();
}

mp::MixedPrecisionConfig ampPreset(AmpPreset preset)
{
    switch (preset) {
    case AmpPreset::Ampere: return mp::MixedPrecisionConfig::for_ampere();
    case AmpPreset::VoltaTuring: return mp::MixedPrecisionConfig::for_volta_turing();
    case AmpPreset::Disabled: break;
    }
    return mp::MixedPrecisionConfig::disabled();
}

std::optional<AmpPreset> matchingAmpPreset(const mp::MixedPrecisionConfig& config)
{
    for (const AmpPreset p : {AmpPreset::Disabled, AmpPreset::Ampere, AmpPreset::VoltaTuring})
        if (ampPreset(p) == config) return p;
    // Any config with AMP off trains in FP32 whatever its scaler fields say.
    if (!config.enabled) return AmpPreset::Disabled;
    return std::nullopt;
}

DeviceCheck checkPrecision(const mp::MixedPrecisionConfig& config, const std::string& device)
{
    const mp::ComputeDevice kind = device.rfind("cuda", 0) == 0 ? mp::ComputeDevice::Cuda : mp::ComputeDevice::Cpu;
    const mp::PrecisionCheck check = mp::validate(config, kind);
    return DeviceCheck{check.ok, check.problem, check.suggestion};
}

std::optional<std::string> preflightProblem(const SessionConfig& config)
{
    const std::vector<std::string> devices = computeDevices();
    if (std::find(devices.begin(), devices.end(), config.device) == devices.end())
        return "device " + config.device + " is not available in this build (LibTorch " + models::torchVersion() +
               "); choose cpu";
    const DeviceCheck check = checkPrecision(config.precision.amp, config.device);
    if (!check.ok)
        return "mixed precision on " + config.device + ": " + check.problem +
               (check.suggestion.empty() ? std::string() : "; " + check.suggestion);
    if (config.threads < 1) return "threads must be at least 1";
    return std::nullopt;
}

ThreadCap capThreads(int requested, unsigned hardwareThreads)
{
    if (hardwareThreads == 0) hardwareThreads = std::max(1u, std::thread::hardware_concurrency());
    const int most = static_cast<int>(std::min<unsigned>(hardwareThreads, std::numeric_limits<int>::max()));
    if (requested <= most) return {requested, {}};
    return {most, std::to_string(requested) + " threads asked for, but this machine has " + std::to_string(most) +
                      " hardware thread" + (most == 1 ? "" : "s") + "; using " + std::to_string(most)};
}

std::string cpuModel()
{
    return models::hardware::this_machine().cpu_model;
}

} // namespace foxhunt
