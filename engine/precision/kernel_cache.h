// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal, std-only: the INT8 kernel timing cache over a store's kernel_timings table, for
// code that hands it to Int8Serving::cache without seeing LibTorch (see int8_serving.h).

#include <memory>

namespace foxhunt {

class KernelTimingTable;

namespace models::precision {
class KernelTimingCache;
}

/// Each layer shape timed once per machine: reads and writes `table`, which must outlive the cache.
std::shared_ptr<models::precision::KernelTimingCache> storedKernelTimings(KernelTimingTable& table);

} // namespace foxhunt
