#include "engine/session/devices.h"

#include "models/precision/mixed_precision.h"
#include "models/runtime.h"

#include <algorithm>
#include <fstream>

namespace foxhunt {

namespace mp = models::precision;

std::vector<std::string> computeDevices() { return models::computeDevices(); }

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

std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

} // namespace foxhunt
