// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the UI may ask the engine about compute devices and precision before a
// run starts, in std types only (the ui never includes models or torch headers).

#include "engine/session/training_session.h"

#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

/// The devices this build can compute on: "cpu", then "cuda:0", "cuda:1", ... when CUDA is available.
std::vector<std::string> computeDevices();

/// The CPU's model name from /proc/cpuinfo ("unknown CPU" when it cannot be read).
std::string cpuModel();

/// This machine for people: "AMD EPYC, 2 cores / 2 threads; AVX2, AVX-512, AVX512-BF16, AVX512-VNNI; no GPU;
/// FP32 GEMM: OpenBLAS, Cooperlake kernels" (the BLAS that runs LibTorch's FP32 products, see models/process.h).
std::string machineSummary();

/// This machine as a JSON text: the probe (CPU model, cores, ISA features, GPUs, LibTorch) and, for each
/// compute device, what `auto` precision starts from there and why ({"devices": [{"device", "amp_auto",
/// "amp_reason", "bf16_native", "int8_dot_product"}]}).
std::string machineJsonText();

/// The AMP presets a user can pick.
enum class AmpPreset { Disabled, Ampere, VoltaTuring };

/// The settings of a preset (see DESIGN.md, Precision).
models::precision::MixedPrecisionConfig ampPreset(AmpPreset preset);

/// The preset `config` equals, if any.
std::optional<AmpPreset> matchingAmpPreset(const models::precision::MixedPrecisionConfig& config);

/// What the engine thinks of a precision choice on a device.
struct DeviceCheck {
    bool ok = true;         ///< the choice can run as given
    std::string problem;    ///< readable reason when !ok
    std::string suggestion; ///< what to use instead (may be set when ok)
};

/// Checks mixed precision on `device` ("cpu" or "cuda:N") with the engine's own rules:
/// FP16 autocast needs CUDA, scales and factors must be positive.
DeviceCheck checkPrecision(const models::precision::MixedPrecisionConfig& config, const std::string& device);

/// A thread count held to what the machine has.
struct ThreadCap {
    int threads = 1;  ///< the count to use
    std::string note; ///< why it differs from the one asked for; empty when it does not
};

/// `requested` intra-op threads, capped at `hardwareThreads` (std::thread::hardware_concurrency()
/// when 0, and 1 when even that is unknown): more threads than the machine has only contend, and
/// a count like 100000 never finished creating them. Counts below 1 are returned unchanged, for
/// preflightProblem to refuse.
ThreadCap capThreads(int requested, unsigned hardwareThreads = 0);

/// Checks what can be checked before a run starts (device present in this build, precision on it).
/// Returns the first problem as a readable sentence, or nullopt when the config may start.
std::optional<std::string> preflightProblem(const SessionConfig& config);

} // namespace foxhunt
