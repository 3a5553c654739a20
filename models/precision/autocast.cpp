// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/autocast.h"

#include "models/compat.h"

namespace foxhunt::models::precision {

c10::ScalarType autocast_scalar_type(const MixedPrecisionConfig& config)
{
    return config.dtype == HalfType::F16 ? c10::ScalarType::Half : c10::ScalarType::BFloat16;
}

AutocastGuard::AutocastGuard(const MixedPrecisionConfig& config, c10::DeviceType device) : m_device(device)
{
    if (!config.enabled) return;
    TORCH_CHECK(device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA,
                "AutocastGuard: autocast supports CPU and CUDA, not ", c10::DeviceTypeName(device));
    const PrecisionCheck check = validate(config,
                                          device == c10::DeviceType::CUDA ? ComputeDevice::Cuda : ComputeDevice::Cpu);
    TORCH_CHECK(check.ok, "AutocastGuard: ", check.problem, "; ", check.suggestion);
    m_prev_enabled = compat::autocast_enabled(device);
    m_prev_dtype = compat::autocast_dtype(device);
    compat::set_autocast_enabled(device, true);
    compat::set_autocast_dtype(device, autocast_scalar_type(config));
    at::autocast::increment_nesting();
    m_active = true;
}

AutocastGuard::~AutocastGuard()
{
    if (!m_active) return;
    // Cached casts of the weights stay valid only inside the outermost region.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    compat::set_autocast_enabled(m_device, m_prev_enabled);
    compat::set_autocast_dtype(m_device, m_prev_dtype);
}

} // namespace foxhunt::models::precision
