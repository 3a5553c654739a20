#pragma once
// How long the UI thread spends inside our own handlers (drain, chart update,
// status refresh), measured with QElapsedTimer around each call. Tests read it
// to prove the UI never blocks; it costs two clock reads per call.

#include <QElapsedTimer>
#include <QHash>
#include <QString>

#include <algorithm>

namespace foxhunt {

/// Per-handler call count, longest and total time, in nanoseconds.
struct HandlerStats {
    qint64 calls = 0;    ///< times the handler ran
    qint64 maxNs = 0;    ///< longest single call
    qint64 totalNs = 0;  ///< sum over calls
};

/// Collects HandlerStats by handler name. UI thread only.
class HandlerTimings {
public:
    /// Adds one call of `handler` that took `ns`.
    void record(const QString& handler, qint64 ns)
    {
        HandlerStats& s = m_stats[handler];
        ++s.calls;
        s.totalNs += ns;
        if (ns > s.maxNs) s.maxNs = ns;
    }
    /// Stats of one handler (zeros if it never ran).
    HandlerStats stats(const QString& handler) const { return m_stats.value(handler); }
    /// Every handler measured so far.
    const QHash<QString, HandlerStats>& all() const { return m_stats; }
    /// Longest call over all handlers.
    qint64 maxNs() const
    {
        qint64 m = 0;
        for (const HandlerStats& s : m_stats) m = std::max(m, s.maxNs);
        return m;
    }
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
        m_timer.start();
    }
    ~ScopedHandlerTiming() { m_timings.record(m_handler, m_timer.nsecsElapsed()); }
    ScopedHandlerTiming(const ScopedHandlerTiming&) = delete;
    ScopedHandlerTiming& operator=(const ScopedHandlerTiming&) = delete;

private:
    HandlerTimings& m_timings;
    QString m_handler;
    QElapsedTimer m_timer;
};

} // namespace foxhunt
