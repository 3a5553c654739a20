// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How long the UI thread spends inside our own handlers (drain, chart update,
// status refresh): wall time with QElapsedTimer around each call, and the
// thread's own CPU time over the same span, which leaves out the time the OS
// gave the core to other processes. Tests read it to prove the UI never
// blocks; it costs four clock reads per call.

#include <QElapsedTimer>
#include <QHash>
#include <QString>

#include <algorithm>

#include <time.h>

namespace foxhunt {

/// Per-handler call count, longest and total time, in nanoseconds.
struct HandlerStats {
    qint64 calls = 0;        ///< times the handler ran
    qint64 maxNs = 0;        ///< longest single call
    qint64 totalNs = 0;      ///< sum over calls
    qint64 maxCpuNs = 0;     ///< most UI-thread CPU time used by a single call
    qint64 slowestCall = -1; ///< 0-based index of the call with the longest wall time
};

/// CPU time consumed by the calling thread, in nanoseconds.
inline qint64 threadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<qint64>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Collects HandlerStats by handler name. UI thread only.
class HandlerTimings {
public:
    /// Adds one call of `handler` that took `ns` of wall time and `cpuNs` of the thread's CPU time.
    void record(const QString& handler, qint64 ns, qint64 cpuNs)
    {
        HandlerStats& s = m_stats[handler];
        if (ns > s.maxNs) {
            s.maxNs = ns;
            s.slowestCall = s.calls;
        }
        ++s.calls;
        s.totalNs += ns;
        s.maxCpuNs = std::max(s.maxCpuNs, cpuNs);
    }
    /// Stats of one handler (zeros if it never ran).
    HandlerStats stats(const QString& handler) const { return m_stats.value(handler); }
    /// Every handler measured so far.
    const QHash<QString, HandlerStats>& all() const { return m_stats; }
    /// Forgets everything (a new run starts).
    void clear() { m_stats.clear(); }

private:
    QHash<QString, HandlerStats> m_stats;
};

/// Records the lifetime of a scope as one call of a handler.
class ScopedHandlerTiming {
public:
    ScopedHandlerTiming(HandlerTimings& timings, QString handler) : m_timings(timings), m_handler(std::move(handler))
    {
        m_cpuStart = threadCpuNs();
        m_timer.start();
    }
    ~ScopedHandlerTiming() { m_timings.record(m_handler, m_timer.nsecsElapsed(), threadCpuNs() - m_cpuStart); }
    ScopedHandlerTiming(const ScopedHandlerTiming&) = delete;
    ScopedHandlerTiming& operator=(const ScopedHandlerTiming&) = delete;

private:
    HandlerTimings& m_timings;
    QString m_handler;
    QElapsedTimer m_timer;
    qint64 m_cpuStart = 0;
};

} // namespace foxhunt
