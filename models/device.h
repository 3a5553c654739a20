// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The device a trainer computes on, chosen by name ("cpu", "cuda", "cuda:N") as in run configs.

#include "models/memory/memory_tracker.h"
#include "models/precision/mixed_precision.h"

#include <torch/types.h>

#include <string>

namespace foxhunt::models {

/// Parses `name` and checks that this build and machine can compute there. Throws
/// std::invalid_argument naming the device and what is available instead.
torch::Device compute_device(const std::string& name);

/// What every trainer does first: compute_device(`name`), the mixed-precision check of `amp` on that
/// device, and bind_thread_to_device(). Throws std::invalid_argument with both messages prefixed by
/// `who` (e.g. "dqn: ").
torch::Device training_device(const std::string& name, const precision::MixedPrecisionConfig& amp,
                              const std::string& who);

/// Makes `device` the calling thread's current CUDA device, so that kernels, streams and the
/// caching allocator's statistics refer to it (nothing for the CPU).
void bind_thread_to_device(const torch::Device& device);

/// Waits for the work queued on `device` (nothing for the CPU), so that a timer around it measures
/// the kernels and not their launch.
void synchronize(const torch::Device& device);

/// The precision layer's device class of `device`.
inline precision::ComputeDevice precision_device(const torch::Device& device)
{
    return device.is_cuda() ? precision::ComputeDevice::Cuda : precision::ComputeDevice::Cpu;
}

/// The allocator whose statistics measure work on `device`.
inline MemoryDevice memory_device(const torch::Device& device)
{
    return device.is_cuda() ? MemoryDevice::Cuda : MemoryDevice::Cpu;
}

/// Whether activation peaks can be measured on `device` now (CPU: the counting allocator is
/// installed; CUDA: the caching allocator reports statistics).
bool activation_peaks_measurable(const torch::Device& device);

} // namespace foxhunt::models
