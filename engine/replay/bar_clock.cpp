// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/replay/bar_clock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace foxhunt {

namespace {

void checkSpeed(double speed)
{
    if (!(speed >= 0.0) || std::isinf(speed))
        throw std::invalid_argument("bar clock: speed must be 0 (max) or a positive factor, got " +
                                    std::to_string(speed));
}

} // namespace

BarClock::BarClock(const std::vector<Bar>& bars, BarClockOptions options)
    : m_bars(bars.data()), m_count(bars.size()), m_maxWaitNs(std::max<std::int64_t>(0, options.maxWaitNs))
{
    checkSpeed(options.speed);
    if (options.startIndex > m_count)
        throw std::invalid_argument("bar clock: start index " + std::to_string(options.startIndex) +
                                    " is past the end of " + std::to_string(m_count) + " bars");
    m_position.store(options.startIndex);
    m_speed.store(options.speed);
    m_paused.store(options.startPaused);
    m_attention.store(options.startPaused);
}

void BarClock::updateAttention()
{
    m_attention.store(m_paused.load() || m_stop.load(), std::memory_order_release);
}

void BarClock::pause()
{
    {
        std::lock_guard lock(m_mutex);
        m_paused.store(true);
        updateAttention();
    }
    m_wake.notify_all();
}

void BarClock::resume()
{
    {
        std::lock_guard lock(m_mutex);
        m_paused.store(false);
        m_stepCredits = 0;
        updateAttention();
    }
    m_wake.notify_all();
}

void BarClock::step()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_paused.load()) return;
        ++m_stepCredits;
    }
    m_wake.notify_all();
}

void BarClock::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop.store(true);
        updateAttention();
    }
    m_wake.notify_all();
}

void BarClock::setSpeed(double speed)
{
    checkSpeed(speed);
    {
        std::lock_guard lock(m_mutex);
        // Bars flowed unpaced until now, so the old anchor says nothing about
        // when the next one is due.
        if (m_speed.load() == 0.0) m_haveLastDue = false;
        m_speed.store(speed);
    }
    m_wake.notify_all();
}

void BarClock::rewind(std::size_t index)
{
    if (index > m_count)
        throw std::invalid_argument("bar clock: cannot rewind to " + std::to_string(index) + " of " +
                                    std::to_string(m_count) + " bars");
    std::lock_guard lock(m_mutex);
    m_position.store(index);
    m_stop.store(false);
    m_stepCredits = 0;
    updateAttention();
}

void BarClock::beginRun()
{
    std::lock_guard lock(m_mutex);
    m_haveLastDue = false;
}

bool BarClock::gate(std::size_t index)
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (m_stop.load()) return false;
        const auto now = SteadyClock::now();
        if (m_paused.load()) {
            // A stepped bar is released at once and anchors the pace that follows.
            m_haveLastDue = false;
            if (m_stepCredits == 0) {
                m_wake.wait(lock);
                continue;
            }
            --m_stepCredits;
            m_lastDue = now;
            m_haveLastDue = true;
            return true;
        }
        const double speed = m_speed.load();
        if (speed == 0.0 || !m_haveLastDue || index == 0) {
            m_lastDue = now;
            m_haveLastDue = true;
            return true;
        }
        const std::int64_t gapNs = std::max<std::int64_t>(0, m_bars[index].tsEvent - m_bars[index - 1].tsEvent);
        const double waitNs = std::min(static_cast<double>(gapNs) / speed, static_cast<double>(m_maxWaitNs));
        const auto due = m_lastDue + std::chrono::nanoseconds(static_cast<std::int64_t>(waitNs));
        if (now >= due) {
            // Keep the schedule when slightly late (a slow callback), but do not
            // rush through a backlog after a long stall.
            m_lastDue = (now - due) > std::chrono::nanoseconds(m_maxWaitNs) ? now : due;
            return true;
        }
        m_wake.wait_until(lock, due);
    }
}

} // namespace foxhunt
