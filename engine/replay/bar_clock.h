// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The deterministic bar clock: hands the bars of one series, in order, to a
// callback on the worker thread, at max speed or paced to N x real time, and
// obeys pause / step / stop / speed changes made from any other thread.

#include "engine/data/bar.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace foxhunt {

/// How a BarClock paces and where it starts.
struct BarClockOptions {
    /// 0 = as fast as possible; N > 0 = N x real time (wall wait = bar time gap / N).
    double speed = 0.0;
    /// Longest wall-clock wait between two bars, so that overnight and weekend
    /// gaps do not stall a real-time replay.
    std::int64_t maxWaitNs = 2 * kNsPerSecond;
    /// Index of the first bar to deliver.
    std::size_t startIndex = 0;
    /// Start paused: nothing is delivered until resume() or step().
    bool startPaused = false;
};

/// What one BarClock::run() did.
struct ReplayStats {
    std::size_t barsReplayed = 0; ///< bars handed to the callback by this run
    bool stoppedEarly = false;    ///< stop() ended the run before the last bar
    double wallSeconds = 0.0;     ///< wall-clock duration of the run
};

/// Replays an in-memory bar series in exact order. run() executes on the
/// calling (worker) thread; pause(), resume(), step(), stop() and setSpeed()
/// may be called from any thread at any time and take effect before the next
/// bar. The bar sequence delivered never depends on timing: only on which
/// bars were released, so the same input gives the same stream.
class BarClock {
public:
    /// The clock keeps a reference to `bars`: they must outlive it and stay unchanged.
    /// Throws std::invalid_argument for a negative speed or a start index past the end.
    explicit BarClock(const std::vector<Bar>& bars, BarClockOptions options = {});
    BarClock(std::vector<Bar>&&, BarClockOptions = {}) = delete;
    BarClock(const BarClock&) = delete;
    BarClock& operator=(const BarClock&) = delete;

    /// Delivers the bars from position() to the end, calling onBar(const Bar&, std::size_t index)
    /// for each; returns when all are delivered or stop() was called. A template so that
    /// the per-bar call inlines; the waiting lives out of line, off the fast path.
    template <typename OnBar>
    ReplayStats run(OnBar&& onBar);

    /// Holds the next bar until resume() or step().
    void pause();
    /// Lets bars flow again; unused step() releases are dropped.
    void resume();
    /// While paused: releases exactly one more bar (calls accumulate). Ignored when not paused.
    void step();
    /// Ends run() before the next bar. Sticky until rewind().
    void stop();
    /// Changes the pace, also while running (0 = max speed). Throws std::invalid_argument if negative or NaN.
    void setSpeed(double speed);
    /// Moves the next bar to `index` and clears a stop. Only while run() is not executing.
    void rewind(std::size_t index);

    /// Index of the next bar to deliver (= number delivered so far when starting at 0).
    std::size_t position() const { return m_position.load(std::memory_order_acquire); }
    /// True while pause() is in effect.
    bool paused() const { return m_paused.load(std::memory_order_acquire); }
    /// True once the last bar was delivered.
    bool finished() const { return position() >= m_count; }
    /// True after stop() (until rewind()).
    bool stopRequested() const { return m_stop.load(std::memory_order_acquire); }
    /// Current pace (0 = max speed).
    double speed() const { return m_speed.load(std::memory_order_acquire); }
    /// Number of bars in the series.
    std::size_t size() const { return m_count; }

private:
    using SteadyClock = std::chrono::steady_clock;

    // Blocks as long as pause or pacing requires before bar `index`; false when stopped.
    bool gate(std::size_t index);
    void beginRun();
    // Recomputes m_attention; call with m_mutex held.
    void updateAttention();

    const Bar* m_bars = nullptr;
    std::size_t m_count = 0;
    std::int64_t m_maxWaitNs = 0;

    std::atomic<std::size_t> m_position{0};
    std::atomic<bool> m_paused{false};
    std::atomic<bool> m_stop{false};
    std::atomic<double> m_speed{0.0};
    // Set by every control call so the fast path needs a single load to see "nothing changed".
    std::atomic<bool> m_attention{false};

    std::mutex m_mutex;
    std::condition_variable m_wake;
    // Guarded by m_mutex: pending step() releases and the pacing anchor (when
    // the previous bar was due; invalid after a pause or a change from max speed).
    std::size_t m_stepCredits = 0;
    bool m_haveLastDue = false;
    SteadyClock::time_point m_lastDue{};
};

template <typename OnBar>
ReplayStats BarClock::run(OnBar&& onBar)
{
    const auto started = SteadyClock::now();
    ReplayStats stats;
    beginRun();
    std::size_t i = m_position.load(std::memory_order_relaxed);
    for (; i < m_count; ++i) {
        // Fast path: one relaxed load per bar when nobody touched the controls
        // and the clock runs at max speed.
        const bool slow = m_attention.load(std::memory_order_acquire) || m_speed.load(std::memory_order_relaxed) != 0.0;
        if (slow && !gate(i)) break;
        onBar(static_cast<const Bar&>(m_bars[i]), i);
        ++stats.barsReplayed;
        m_position.store(i + 1, std::memory_order_release);
    }
    stats.stoppedEarly = i < m_count;
    stats.wallSeconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
    return stats;
}

} // namespace foxhunt
