// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/mixed_precision.h"

#include "models/compat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace foxhunt::models::precision {

std::string to_string(HalfType type)
{
    return type == HalfType::F16 ? "f16" : "bf16";
}

HalfType half_type_from_string(const std::string& text)
{
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == "f16" || t == "fp16" || t == "float16" || t == "half") return HalfType::F16;
    if (t == "bf16" || t == "bfloat16") return HalfType::BF16;
    throw std::invalid_argument("mixed precision: unknown dtype '" + text + "' (expected f16 or bf16)");
}

MixedPrecisionConfig MixedPrecisionConfig::disabled()
{
    return {};
}

MixedPrecisionConfig MixedPrecisionConfig::for_ampere()
{
    MixedPrecisionConfig c;
    c.enabled = true;
    c.dtype = HalfType::BF16;
    c.loss_scale = 1.0;
    c.dynamic_loss_scale = false;
    return c;
}

MixedPrecisionConfig MixedPrecisionConfig::for_volta_turing()
{
    MixedPrecisionConfig c;
    c.enabled = true;
    c.dtype = HalfType::F16;
    c.loss_scale = 2048.0;
    c.dynamic_loss_scale = true;
    return c;
}

bool MixedPrecisionConfig::scales_loss() const
{
    if (!enabled) return false;
    if (dtype == HalfType::F16) return true;
    return dynamic_loss_scale || loss_scale != 1.0;
}

DeviceCapabilities capabilities_of(const hardware::MachineInfo& machine, ComputeDevice device, int cuda_index)
{
    DeviceCapabilities caps;
    caps.device = device;
    caps.cpu = machine.cpu;
    caps.name = machine.cpu_model;
    if (device == ComputeDevice::Cuda) {
        caps.name = "cuda:" + std::to_string(cuda_index);
        if (const hardware::GpuInfo* gpu = hardware::find_gpu(machine, cuda_index)) {
            caps.cuda_major = gpu->major;
            caps.cuda_minor = gpu->minor;
            caps.name = gpu->name;
        }
    }
    return caps;
}

DeviceCapabilities capabilities_of(ComputeDevice device, int cuda_index)
{
    return capabilities_of(hardware::this_machine(), device, cuda_index);
}

namespace {

std::string capability_text(const DeviceCapabilities& caps)
{
    return caps.name + " (compute capability " + std::to_string(caps.cuda_major) + "." +
           std::to_string(caps.cuda_minor) + ")";
}

std::string milliseconds(double ms)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g ms", ms);
    return buffer;
}

} // namespace

AmpCandidate auto_amp_candidate(const DeviceCapabilities& caps)
{
    if (caps.device == ComputeDevice::Cuda) {
        if (caps.cuda_major >= 8)
            return {MixedPrecisionConfig::for_ampere(),
                    capability_text(caps) + " has BF16 tensor cores: BF16, scale 1, static"};
        if (caps.cuda_major == 7)
            return {MixedPrecisionConfig::for_volta_turing(),
                    capability_text(caps) +
                        " has FP16 tensor cores but no BF16: FP16 with a dynamic loss scale from 2048"};
        return {MixedPrecisionConfig::disabled(), capability_text(caps) + " has no tensor cores: FP32"};
    }
    if (caps.cpu.native_bf16())
        return {MixedPrecisionConfig::for_ampere(), caps.name + " has native BF16 (" +
                                                        (caps.cpu.amx_bf16 ? "AMX-BF16" : "AVX512-BF16") +
                                                        "): BF16 is worth timing"};
    return {MixedPrecisionConfig::disabled(),
            caps.name + " has no native BF16 (AVX512-BF16 or AMX): BF16 would emulate and be slower, so FP32"};
}

AmpChoice no_amp(const AmpCandidate& candidate)
{
    AmpChoice c;
    c.config = MixedPrecisionConfig::disabled();
    c.reason = candidate.reason;
    return c;
}

AmpChoice decide_amp(const AmpCandidate& candidate, double fp32_ms, double amp_ms)
{
    if (!candidate.config.enabled) return no_amp(candidate);
    AmpChoice c;
    c.measured = true;
    c.fp32_ms = fp32_ms;
    c.amp_ms = amp_ms;
    const std::string name = candidate.config.dtype == HalfType::F16 ? "FP16" : "BF16";
    const std::string figures = name + " step " + milliseconds(amp_ms) + " vs FP32 " + milliseconds(fp32_ms);
    const bool wins = fp32_ms > 0.0 && std::isfinite(amp_ms) && amp_ms <= kAmpMustWin * fp32_ms;
    c.config = wins ? candidate.config : MixedPrecisionConfig::disabled();
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx", fp32_ms > 0.0 ? amp_ms / fp32_ms : 0.0);
    char needed[32];
    std::snprintf(needed, sizeof needed, "%.2fx", kAmpMustWin);
    c.reason = wins ? figures + " (" + ratio + "): " + name + " chosen"
                    : figures + " (" + ratio + ", needs <= " + needed + "): FP32 kept";
    return c;
}

PrecisionCheck validate(const MixedPrecisionConfig& config, ComputeDevice device, int cuda_index)
{
    return validate(config, capabilities_of(device, cuda_index));
}

PrecisionCheck validate(const MixedPrecisionConfig& config, const DeviceCapabilities& caps)
{
    PrecisionCheck r;
    r.usable = config;
    auto fail = [&](std::string problem, std::string suggestion, MixedPrecisionConfig fix) {
        r.ok = false;
        r.problem = std::move(problem);
        r.suggestion = std::move(suggestion);
        r.usable = fix;
        return r;
    };
    if (!config.enabled) return r;
    if (!(config.loss_scale > 0.0) || !std::isfinite(config.loss_scale))
        return fail("loss scale must be a positive finite number", "use 2048 (FP16, dynamic) or 1 (BF16, static)",
                    config.dtype == HalfType::F16 ? MixedPrecisionConfig::for_volta_turing()
                                                  : MixedPrecisionConfig::for_ampere());
    if (!(config.growth_factor > 1.0) || !(config.backoff_factor > 0.0 && config.backoff_factor < 1.0) ||
        config.growth_interval <= 0) {
        MixedPrecisionConfig fix = config;
        fix.growth_factor = 2.0;
        fix.backoff_factor = 0.5;
        fix.growth_interval = 2000;
        return fail("loss scaler needs growth_factor > 1, 0 < backoff_factor < 1 and growth_interval > 0",
                    "use growth 2.0, backoff 0.5, interval 2000 (torch.amp.GradScaler's defaults)", fix);
    }
    if (caps.device == ComputeDevice::Cpu) {
        if (config.dtype == HalfType::F16 && !compat::kCpuAutocastSupportsHalf) {
            MixedPrecisionConfig fix = MixedPrecisionConfig::for_ampere();
            return fail("FP16 autocast is a CUDA feature; this LibTorch (" TORCH_VERSION
                        ") has no FP16 autocast on the CPU",
                        "use BF16 (CPU autocast; no loss scaling needed), e.g. the for_ampere() preset", fix);
        }
        if (config.dtype == HalfType::BF16 && !caps.cpu.native_bf16())
            r.suggestion = caps.name + " has no native BF16 arithmetic (AVX512-BF16 or AMX): BF16 will be slower than "
                                       "FP32 here";
        return r;
    }
    if (config.dtype == HalfType::BF16 && caps.cuda_major < 8) {
        const MixedPrecisionConfig fix = caps.cuda_major == 7 ? MixedPrecisionConfig::for_volta_turing()
                                                              : MixedPrecisionConfig::disabled();
        return fail(
            "BF16 needs an Ampere or newer GPU (compute capability 8.0); " + capability_text(caps) + " has none",
            caps.cuda_major == 7 ? "use FP16 with a dynamic loss scale (the Volta/Turing preset)" : "train in FP32",
            fix);
    }
    if (config.dtype == HalfType::BF16 && config.scales_loss())
        r.suggestion =
            "BF16 has FP32's exponent range: loss scaling is unnecessary (for_ampere() uses scale 1, static)";
    return r;
}

} // namespace foxhunt::models::precision
