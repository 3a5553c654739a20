// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Owns a TrainingSession on its worker thread. The worker signals "samples
// waiting" without payload; this object arms a single-shot timer (<= 10 Hz)
// and drains the staging buffer on the UI thread, handing batches to charts.

#include "engine/session/training_session.h"
#include "ui/handler_timing.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <thread>

namespace foxhunt {

/// A run's elapsed time that stands still while the run is paused. Times are the caller's
/// milliseconds on one monotonic clock, so a test can drive it by hand.
class PausableClock {
public:
    void start(qint64 nowMs)
    {
        m_banked = 0;
        m_since = nowMs;
        m_running = true;
        m_started = true;
    }
    void pause(qint64 nowMs)
    {
        if (!m_running) return;
        m_banked += nowMs - m_since;
        m_running = false;
    }
    void resume(qint64 nowMs)
    {
        if (m_running || !m_started) return;
        m_since = nowMs;
        m_running = true;
    }
    /// Freezes the figure for good (the run ended).
    void stop(qint64 nowMs)
    {
        pause(nowMs);
        m_started = false;
    }
    qint64 elapsedMs(qint64 nowMs) const { return m_banked + (m_running ? nowMs - m_since : 0); }
    bool ticking() const { return m_running; }

private:
    qint64 m_banked = 0; ///< time run before the last pause
    qint64 m_since = 0;  ///< when it last started ticking
    bool m_running = false;
    bool m_started = false;
};

/// Runs one training session at a time, off the UI thread.
class TrainingController : public QObject {
    Q_OBJECT
public:
    explicit TrainingController(QString databasePath, QObject* parent = nullptr);
    ~TrainingController() override;

    /// Starts a session with `config` at the current speed(); false while one is running. With
    /// resumeRunId > 0 the session continues that stored run (TrainingSession::resumeRun).
    bool start(const SessionConfig& config, qint64 resumeRunId = 0);
    void pause();
    void resume();
    void step();
    /// Asks the worker to stop; finished() follows once it has stored what it has.
    void stop();
    bool running() const { return m_session != nullptr; }
    /// Between stop() and finished(): the run is storing what it has.
    bool stopping() const { return m_session != nullptr && m_stopping; }
    bool paused() const;
    /// Bars replayed so far in the running session.
    long long tick() const;
    /// Bars the running session will replay (0 until it has loaded its series).
    long long totalTicks() const;
    /// Milliseconds the running (or last) session has run, not counting the time it was paused.
    qint64 elapsedMs() const { return m_clock.elapsedMs(m_monotonic.elapsed()); }
    /// The config the running (or last) session was started with.
    const SessionConfig& runConfig() const { return m_runConfig; }
    /// Replay pace applied live to the running session and to the next one: 0 = max, N = N x real time.
    void setSpeed(double speed);
    /// The pace set last.
    double speed() const { return m_speed; }
    /// The pace the running session replays at (speed() when none runs).
    double sessionSpeed() const { return m_session ? m_session->config().speed : m_speed; }
    /// Time the UI thread spent in drain() (which includes the chart update it triggers).
    HandlerTimings& timings() { return m_timings; }
    /// Milliseconds between drains (100 = 10 Hz).
    void setRefreshInterval(int ms) { m_timer.setInterval(ms); }
    /// Milliseconds between drains.
    int refreshInterval() const { return m_timer.interval(); }
    /// The program a multi-process run starts for each local worker (`<program> worker`); by default
    /// foxhunt-cli next to this executable. "" leaves the choice to the engine.
    void setWorkerProgram(const QString& program) { m_workerProgram = program; }
    /// The worker program the next session gets.
    const QString& workerProgram() const { return m_workerProgram; }
    /// The last finished session's result document (JSON text).
    const QString& lastResult() const { return m_lastResult; }

Q_SIGNALS:
    void started(qint64 runId);
    /// A drained batch of samples, in production order.
    void samples(const foxhunt::MetricBatch& batch);
    /// The session ended: status "finished", "stopped" or "failed", with the error if any.
    void finished(const QString& status, const QString& error);
    /// pause(), resume() or stop() changed paused() or stopping().
    void stateChanged();

private:
    void drain();
    void onWorkerDone(SessionResult result);

    QString m_databasePath;
    std::unique_ptr<TrainingSession> m_session;
    std::jthread m_worker;
    QTimer m_timer;
    QString m_lastResult;
    QString m_workerProgram;
    bool m_announced = false;
    SessionConfig m_runConfig;
    double m_speed = 0.0;
    QElapsedTimer m_monotonic; ///< started once; PausableClock reads it
    PausableClock m_clock;
    bool m_stopping = false;
    long long m_lastTick = 0; ///< progress of the last finished session
    long long m_lastTotalTicks = 0;
    HandlerTimings m_timings;
};

} // namespace foxhunt
