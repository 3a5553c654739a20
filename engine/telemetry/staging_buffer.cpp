// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/telemetry/staging_buffer.h"

#include <chrono>
#include <iterator>

namespace foxhunt {

std::int64_t wallClockNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool StagingBuffer::append(MetricBatch&& samples)
{
    std::lock_guard lock(m_mutex);
    const bool wasEmpty = m_samples.empty();
    const std::size_t room = m_samples.size() < m_capacity ? m_capacity - m_samples.size() : 0;
    if (samples.size() > room) {
        m_dropped += samples.size() - room;
        samples.resize(room);
    }
    if (m_samples.empty()) m_samples = std::move(samples);
    else
        m_samples.insert(m_samples.end(), std::make_move_iterator(samples.begin()),
                         std::make_move_iterator(samples.end()));
    return wasEmpty && !m_samples.empty();
}

bool StagingBuffer::append(const MetricSample& sample)
{
    std::lock_guard lock(m_mutex);
    const bool wasEmpty = m_samples.empty();
    if (m_samples.size() >= m_capacity) {
        ++m_dropped;
        return false;
    }
    m_samples.push_back(sample);
    return wasEmpty;
}

void StagingBuffer::drain(MetricBatch& out)
{
    out.clear();
    std::lock_guard lock(m_mutex);
    out.swap(m_samples);
}

std::size_t StagingBuffer::size() const
{
    std::lock_guard lock(m_mutex);
    return m_samples.size();
}

std::size_t StagingBuffer::dropped() const
{
    std::lock_guard lock(m_mutex);
    return m_dropped;
}

void StagingBuffer::setCapacity(std::size_t capacity)
{
    std::lock_guard lock(m_mutex);
    m_capacity = capacity;
}

} // namespace foxhunt
