#pragma once
// Owns a TrainingSession on its worker thread. The worker signals "samples
// waiting" without payload; this object arms a single-shot timer (<= 10 Hz)
// and drains the staging buffer on the UI thread, handing batches to charts.

#include "engine/session/training_session.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <thread>

namespace foxhunt {

/// Runs one training session at a time, off the UI thread.
class TrainingController : public QObject {
    Q_OBJECT
public:
    explicit TrainingController(QString databasePath, QObject* parent = nullptr);
    ~TrainingController() override;

    /// Starts a session with `config`; false while one is running. With resumeRunId > 0
    /// the session continues that stored run (TrainingSession::resumeRun).
    bool start(const SessionConfig& config, qint64 resumeRunId = 0);
    void pause();
    void resume();
    void step();
    /// Asks the worker to stop; finished() follows once it has stored what it has.
    void stop();
    bool running() const { return m_session != nullptr; }
    bool paused() const;
    /// Bars replayed so far in the running session.
    long long tick() const;
    /// Milliseconds between drains (100 = 10 Hz).
    void setRefreshInterval(int ms) { m_timer.setInterval(ms); }
    /// The last finished session's result document (JSON text).
    const QString& lastResult() const { return m_lastResult; }

Q_SIGNALS:
    void started(qint64 runId);
    /// A drained batch of samples, in production order.
    void samples(const foxhunt::MetricBatch& batch);
    /// The session ended: status "finished", "stopped" or "failed", with the error if any.
    void finished(const QString& status, const QString& error);

private:
    void drain();
    void onWorkerDone(SessionResult result);

    QString m_databasePath;
    std::unique_ptr<TrainingSession> m_session;
    std::jthread m_worker;
    QTimer m_timer;
    QString m_lastResult;
    bool m_announced = false;
};

} // namespace foxhunt
