// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The hand-off between a training worker and its readers (the UI, the store
// writer): the worker appends under a mutex; a reader swaps the whole buffer
// out in O(1). The worker never waits on a reader's work.

#include "engine/telemetry/metric_sample.h"

#include <cstddef>
#include <mutex>

namespace foxhunt {

/// A mutex-guarded staging buffer of metric samples.
class StagingBuffer {
public:
    /// Appends samples; returns true when the buffer was empty before, i.e. when
    /// the reader must be notified (one payload-free signal per drain).
    bool append(MetricBatch&& samples);
    bool append(const MetricSample& sample);
    /// Moves everything staged so far into `out` (which is cleared first).
    void drain(MetricBatch& out);
    /// Samples waiting.
    std::size_t size() const;
    /// Samples dropped because the buffer hit its cap (a reader that stopped draining).
    std::size_t dropped() const;
    /// Upper bound of staged samples; older samples are kept, new ones dropped past it.
    void setCapacity(std::size_t capacity);

private:
    mutable std::mutex m_mutex;
    MetricBatch m_samples;
    std::size_t m_capacity = 4'000'000;
    std::size_t m_dropped = 0;
};

} // namespace foxhunt
