// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/device.h"

#include "models/compat.h"
#include "models/runtime.h"

#include <torch/cuda.h>

#include <optional>
#include <stdexcept>

namespace foxhunt::models {

torch::Device compute_device(const std::string& name)
{
    std::optional<torch::Device> device;
    try {
        device.emplace(name);
    } catch (const c10::Error&) {
        throw std::invalid_argument("device \"" + name + "\" is not a device name (cpu, cuda or cuda:N)");
    }
    if (device->is_cpu()) return torch::kCPU; // "cpu:0" and "cpu" alike
    if (!device->is_cuda())
        throw std::invalid_argument("device " + name + ": only the CPU and CUDA devices are supported");
    if (!torch::cuda::is_available())
        throw std::invalid_argument("device " + name + " is not available: this LibTorch (" + torchVersion() +
                                    ") has no CUDA or the machine no GPU; use cpu");
    const auto count = static_cast<int>(torch::cuda::device_count());
    const int index = device->has_index() ? device->index() : 0;
    if (index < 0 || index >= count)
        throw std::invalid_argument("device " + name + " is not available: this machine has " + std::to_string(count) +
                                    " CUDA device(s), cuda:0 to cuda:" + std::to_string(count - 1));
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

torch::Device training_device(const std::string& name, const precision::MixedPrecisionConfig& amp,
                              const std::string& who)
{
    torch::Device device{torch::kCPU};
    try {
        device = compute_device(name);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(who + e.what());
    }
    if (const auto check = precision::validate(amp, precision_device(device)); !check.ok)
        throw std::invalid_argument(who + "mixed precision on " + name + ": " + check.problem + " (" +
                                    check.suggestion + ")");
    bind_thread_to_device(device);
    return device;
}

void bind_thread_to_device(const torch::Device& device)
{
    if (device.is_cuda()) compat::set_cuda_device(device.index());
}

void synchronize(const torch::Device& device)
{
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

bool activation_peaks_measurable(const torch::Device& device)
{
    return device.is_cuda() ? cudaMemoryStatsAvailable() : countingCpuAllocatorInstalled();
}

} // namespace foxhunt::models
