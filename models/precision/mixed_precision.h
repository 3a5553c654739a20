#pragma once
// Mixed-precision settings: which half type autocast uses and how the loss scaler behaves.
// std-only, so engine headers the ui sees can carry it.

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

/// What is wrong with a config on a device, and what to use instead.
struct PrecisionCheck {
    /// True when the config can run as given.
    bool ok = true;
    /// Readable reason when !ok (empty otherwise).
    std::string problem;
    /// What to change, when there is a better choice (may be set even when ok).
    std::string suggestion;
    /// A config that runs on the device: the input when ok, otherwise the suggested fix.
    MixedPrecisionConfig usable;
};

/// Checks `config` against `device` and the LibTorch build: FP16 autocast is a CUDA feature in
/// LibTorch 1.13, so on a CPU it reports the problem and offers BF16 (CPU autocast) instead;
/// it also rejects non-positive scales, factors and intervals.
PrecisionCheck validate(const MixedPrecisionConfig& config, ComputeDevice device);

} // namespace foxhunt::models::precision
