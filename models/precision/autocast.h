// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// RAII autocast region: LibTorch 1.13's C++ API has no torch.autocast equivalent.

#include "models/precision/mixed_precision.h"

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace foxhunt::models::precision {

/// The autocast ScalarType of a config (kHalf or kBFloat16).
c10::ScalarType autocast_scalar_type(const MixedPrecisionConfig& config);

/// Runs the enclosing scope under autocast for one device type, in the config's half type, and
/// restores the previous autocast state (enabled flag and dtype) on exit. Nests like torch.autocast:
/// the cast cache is cleared when the outermost region ends. Does nothing when the config is
/// disabled. Compute losses after the region ends (or cast predictions to float32 first):
/// autocast leaves reductions like mean() in the half type.
class AutocastGuard {
public:
    /// Enters autocast for `device` (CPU or CUDA) under `config`; throws c10::Error when the
    /// config cannot run there (see validate()).
    AutocastGuard(const MixedPrecisionConfig& config, c10::DeviceType device);
    /// Leaves the region.
    ~AutocastGuard();
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

    /// Whether this guard turned autocast on.
    bool active() const { return m_active; }

private:
    bool m_active = false;
    c10::DeviceType m_device = c10::DeviceType::CPU;
    bool m_prev_enabled = false;
    c10::ScalarType m_prev_dtype = c10::ScalarType::Float;
};

} // namespace foxhunt::models::precision
