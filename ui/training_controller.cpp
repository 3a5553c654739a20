// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/training_controller.h"

#include <QCoreApplication>
#include <QMetaObject>

#include <algorithm>

namespace foxhunt {

TrainingController::TrainingController(QString databasePath, QObject* parent)
    : QObject(parent), m_databasePath(std::move(databasePath))
{
    // The GUI and the CLI are installed side by side; naming it here keeps the choice visible.
    if (QCoreApplication::instance())
        m_workerProgram = QCoreApplication::applicationDirPath() + QStringLiteral("/foxhunt-cli");
    m_monotonic.start();
    m_timer.setSingleShot(true);
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &TrainingController::drain);
}

TrainingController::~TrainingController()
{
    // Closing the window mid-run: stop the worker and wait for it to store what it has.
    if (m_session) m_session->stop();
    if (m_worker.joinable()) m_worker.join();
}

bool TrainingController::start(const SessionConfig& config, qint64 resumeRunId)
{
    if (m_session) return false;
    if (m_worker.joinable()) m_worker.join();
    m_runConfig = config;
    m_runConfig.speed = m_speed;
    m_session = std::make_unique<TrainingSession>(m_databasePath.toStdString(), m_runConfig);
    if (resumeRunId > 0) m_session->resumeRun(resumeRunId);
    m_session->setWorkerProgram(m_workerProgram.toStdString());
    m_announced = false;
    m_timings.clear();
    m_stopping = false;
    m_clock.start(m_monotonic.elapsed());
    // Payload-free notification from the worker: arm the drain timer on the UI thread.
    m_session->setSamplesReadyCallback([this] {
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (!m_timer.isActive()) m_timer.start();
            },
            Qt::QueuedConnection);
    });
    TrainingSession* session = m_session.get();
    m_worker = std::jthread([this, session] {
        SessionResult result = session->run();
        QMetaObject::invokeMethod(
            this, [this, result = std::move(result)]() mutable { onWorkerDone(std::move(result)); },
            Qt::QueuedConnection);
    });
    return true;
}

void TrainingController::pause()
{
    if (!m_session || m_stopping) return;
    m_session->pause();
    m_clock.pause(m_monotonic.elapsed());
    Q_EMIT stateChanged();
}

void TrainingController::resume()
{
    if (!m_session || m_stopping) return;
    m_session->resume();
    m_clock.resume(m_monotonic.elapsed());
    Q_EMIT stateChanged();
}

void TrainingController::step()
{
    if (m_session) m_session->step();
}

void TrainingController::stop()
{
    if (!m_session || m_stopping) return;
    m_stopping = true;
    m_session->stop();
    Q_EMIT stateChanged();
}

bool TrainingController::paused() const
{
    return m_session && m_session->paused();
}

long long TrainingController::tick() const
{
    return m_session ? m_session->progress().tick.load() : m_lastTick;
}

long long TrainingController::totalTicks() const
{
    return m_session ? m_session->progress().totalTicks.load() : m_lastTotalTicks;
}

void TrainingController::setSpeed(double speed)
{
    m_speed = std::max(0.0, speed);
    m_runConfig.speed = m_speed;
    if (m_session) m_session->setSpeed(m_speed);
}

void TrainingController::drain()
{
    if (!m_session) return;
    const ScopedHandlerTiming timing(m_timings, QStringLiteral("drain"));
    if (!m_announced && m_session->progress().runId > 0) {
        m_announced = true;
        Q_EMIT started(m_session->progress().runId.load());
    }
    MetricBatch batch;
    m_session->samples().drain(batch);
    if (!batch.empty()) Q_EMIT samples(batch);
}

void TrainingController::onWorkerDone(SessionResult result)
{
    drain();
    m_clock.stop(m_monotonic.elapsed());
    m_stopping = false;
    // Kept for the status bar once the session is gone (a short run may end between two refreshes).
    m_lastTick = m_session->progress().tick.load();
    m_lastTotalTicks = m_session->progress().totalTicks.load();
    if (m_worker.joinable()) m_worker.join();
    m_session.reset();
    m_lastResult = QString::fromStdString(result.json);
    Q_EMIT finished(QString::fromStdString(toString(result.status)), QString::fromStdString(result.error));
}

} // namespace foxhunt
