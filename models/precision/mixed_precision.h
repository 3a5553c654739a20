// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Mixed-precision settings: which half type autocast uses and how the loss scaler behaves.
// std-only, so engine headers the ui sees can carry it.

#include "models/hardware/machine_probe.h"

#include <cstdint>
#include <string>

namespace foxhunt::models::precision {

/// The reduced type autocast runs eligible ops in.
enum class HalfType { F16, BF16 };

/// "f16" / "bf16".
std::string to_string(HalfType type);
/// Parses "f16"/"fp16"/"float16" and "bf16"/"bfloat16" (case-insensitive); throws std::invalid_argument otherwise.
HalfType half_type_from_string(const std::string& text);

/// Mixed-precision (AMP) settings of one training run. Plain data: serialised by the engine.
struct MixedPrecisionConfig {
    /// Run forward passes under autocast (false: everything in FP32).
    bool enabled = false;
    /// The autocast type.
    HalfType dtype = HalfType::BF16;
    /// Initial (or, when static, fixed) loss scale.
    double loss_scale = 1024.0;
    /// Adapt the scale as torch.amp.GradScaler does; false keeps loss_scale fixed.
    bool dynamic_loss_scale = true;
    /// Scale multiplier after growth_interval consecutive clean steps.
    double growth_factor = 2.0;
    /// Scale multiplier after a step with inf/NaN gradients.
    double backoff_factor = 0.5;
    /// Clean steps before the scale grows.
    int64_t growth_interval = 2000;

    /// FP32 training (the default).
    static MixedPrecisionConfig disabled();
    /// BF16 autocast, no loss scaling (BF16 has FP32's exponent range).
    static MixedPrecisionConfig for_ampere();
    /// FP16 autocast with a dynamic loss scale starting at 2048.
    static MixedPrecisionConfig for_volta_turing();

    /// Whether a loss scaler scales and checks gradients under this config: FP16 always; BF16 only when
    /// configured with a scale other than 1 or a dynamic scale (for_ampere() turns both off).
    bool scales_loss() const;

    /// Field-wise equality.
    bool operator==(const MixedPrecisionConfig&) const = default;
};

/// Where a config is meant to run.
enum class ComputeDevice { Cpu, Cuda };

/// What a precision choice is judged against: the device class and what its hardware has.
/// Built from the probe of this machine (capabilities_of) or, in tests, by hand.
struct DeviceCapabilities {
    /// CPU or CUDA.
    ComputeDevice device = ComputeDevice::Cpu;
    /// The CPU's features (also set for CUDA devices: the host's).
    hardware::CpuFeatures cpu;
    /// CUDA compute capability, major (0 on the CPU).
    int cuda_major = 0;
    /// CUDA compute capability, minor.
    int cuda_minor = 0;
    /// The device's name for messages ("AMD EPYC", "NVIDIA H200").
    std::string name;
};

/// The capabilities of `device` on this machine (for CUDA, of device `cuda_index`; a build or
/// machine without it gives compute capability 0.0).
DeviceCapabilities capabilities_of(ComputeDevice device, int cuda_index = 0);
/// The capabilities of `machine`'s CPU, or of its CUDA device `cuda_index`.
DeviceCapabilities capabilities_of(const hardware::MachineInfo& machine, ComputeDevice device, int cuda_index = 0);

/// What `auto` mixed precision starts from on a device, before any measurement (seed 000):
/// CUDA compute capability >= 8.0 for_ampere(), 7.x for_volta_turing(), below that AMP off; a CPU
/// with native BF16 (AVX512-BF16 or AMX) for_ampere(), any other CPU AMP off.
struct AmpCandidate {
    /// The preset to try (disabled() when there is none).
    MixedPrecisionConfig config;
    /// Why, for people: which hardware fact decided.
    std::string reason;
};

/// The `auto` candidate for `caps` (see AmpCandidate).
AmpCandidate auto_amp_candidate(const DeviceCapabilities& caps);

/// What `auto` chose for one model after timing its own train step both ways.
struct AmpChoice {
    /// The config to train with: the candidate or disabled().
    MixedPrecisionConfig config;
    /// Whether both steps were timed (false: no candidate, so nothing was measured).
    bool measured = false;
    /// Median FP32 train step, milliseconds (0 when not measured).
    double fp32_ms = 0.0;
    /// Median train step under the candidate, milliseconds (0 when not measured).
    double amp_ms = 0.0;
    /// Why, for people, with the figures.
    std::string reason;
};

/// The candidate must take at most this share of the FP32 step to be chosen: a margin for noise,
/// so that `auto` never picks a precision that is slower than FP32.
inline constexpr double kAmpMustWin = 0.95;

/// Decides between FP32 and `candidate` from their median step times (pure: tests inject times).
/// Chooses the candidate only when amp_ms <= kAmpMustWin * fp32_ms.
AmpChoice decide_amp(const AmpCandidate& candidate, double fp32_ms, double amp_ms);
/// The choice when there is no candidate to time (candidate.config disabled).
AmpChoice no_amp(const AmpCandidate& candidate);

/// What is wrong with a config on a device, and what to use instead.
struct PrecisionCheck {
    /// True when the config can run as given.
    bool ok = true;
    /// Readable reason when !ok (empty otherwise).
    std::string problem;
    /// What to change, when there is a better choice (may be set even when ok: a warning).
    std::string suggestion;
    /// A config that runs on the device: the input when ok, otherwise the suggested fix.
    MixedPrecisionConfig usable;
};

/// Checks `config` against a device and the LibTorch build:
/// - non-positive or non-finite scales, factors and intervals are rejected;
/// - CUDA: BF16 needs compute capability >= 8.0 (Ampere), so it is rejected below that with FP16
///   (7.x) or FP32 offered; BF16 with loss scaling on gets a hint that scale 1, static, suffices;
/// - CPU: FP16 autocast needs LibTorch >= 2.5 (rejected before, BF16 offered); BF16 without native
///   BF16 arithmetic (AVX512-BF16 or AMX) runs, with the warning that it will be slower than FP32.
PrecisionCheck validate(const MixedPrecisionConfig& config, const DeviceCapabilities& caps);
/// validate() against this machine's `device` (CUDA device `cuda_index`).
PrecisionCheck validate(const MixedPrecisionConfig& config, ComputeDevice device, int cuda_index = 0);

} // namespace foxhunt::models::precision
