// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/training_session.h"

#include "engine/session/session_run.h"

#include "engine/replay/bar_clock.h"
#include "engine/session/error_text.h"
#include "engine/session/local_workers.h"
#include "engine/store/kernel_timings.h"

namespace foxhunt {

using session::SessionRun;

TrainingSession::TrainingSession(std::string databasePath, SessionConfig config)
    : m_databasePath(std::move(databasePath)), m_config(std::move(config)), m_impl(std::make_unique<Impl>())
{
}

TrainingSession::~TrainingSession() = default;

void TrainingSession::pause()
{
    std::lock_guard lock(m_impl->clockMutex);
    m_impl->paused = true;
    if (m_impl->clock && !m_impl->deferControls) m_impl->clock->pause();
}

void TrainingSession::resume()
{
    std::lock_guard lock(m_impl->clockMutex);
    m_impl->paused = false;
    m_impl->pendingSteps = 0;
    if (m_impl->clock) m_impl->clock->resume();
}

void TrainingSession::step()
{
    std::lock_guard lock(m_impl->clockMutex);
    if (!m_impl->paused) return;
    if (m_impl->clock) m_impl->clock->step();
    else ++m_impl->pendingSteps;
}

void TrainingSession::stop()
{
    std::lock_guard lock(m_impl->clockMutex);
    m_impl->stop = true;
    if (m_impl->clock && (!m_impl->deferControls || m_impl->atBoundary)) m_impl->clock->stop();
}

void TrainingSession::setSpeed(double speed)
{
    std::lock_guard lock(m_impl->clockMutex);
    m_config.speed = speed;
    if (m_impl->clock) m_impl->clock->setSpeed(speed);
}

bool TrainingSession::paused() const
{
    return m_impl->paused;
}

SessionResult TrainingSession::run()
{
    return SessionRun(*this).run();
}

namespace session {

SessionRun::SessionRun(TrainingSession& session)
    : m_session(session), m_controls(*session.m_impl), m_owner(!session.m_worker)
{
}

SessionRun::~SessionRun() = default;

SessionResult SessionRun::run()
{
    m_session.m_progress.running = true;
    try {
        open();
        loadBars();
        if (m_owner) recordRun();
        useCollectives();
        cutDays();
        buildForecastData();
        buildLearners();
        resumeLearners();
        m_doc["resumed"] = m_resumed.has_value();
        checkMemoryBudget();
        forgetSamplesAfterCheckpoints();
        connectEnsemble();
        prepareInt8();
        train();
        evaluate();
    } catch (const std::exception& e) {
        fail(e);
    }
    {
        std::lock_guard lock(m_controls.clockMutex);
        m_controls.clock = nullptr;
    }
    m_doc["status"] = toString(m_result.status);
    if (!m_result.error.empty()) m_doc["error"] = m_result.error;
    m_doc["config"] = toJson(cfg());
    m_result.json = m_doc.dump();
    m_session.m_progress.running = false;
    return m_result;
}

void SessionRun::fail(const std::exception& e)
{
    m_result.status = RunStatus::Failed;
    m_result.error = errorText(e);
    stopRanksAfterFailure();
    try {
        flush(true);
        if (m_runs && m_runId) m_runs->setStatus(m_runId, RunStatus::Failed, m_result.error);
    } catch (const std::exception&) {
        // The store itself failed (a full disk): the run stays "running", and the next start
        // records it as failed with the note left in the space set aside for it (or as
        // interrupted, if even that could not be written).
        if (m_runs && m_runId) m_runs->leaveNote(m_runId, m_result.error);
    }
}

} // namespace session

SessionResult runWorker(const Rendezvous& rendezvous)
{
    if (rendezvous.worldSize < 2 || rendezvous.rank < 1 || rendezvous.rank >= rendezvous.worldSize) {
        SessionResult r;
        r.status = RunStatus::Failed;
        r.error = "a worker needs a rank between 1 and WORLD_SIZE - 1 (rank 0 is the run's owner: foxhunt-cli train); "
                  "got rank " +
                  std::to_string(rendezvous.rank) + " of " + std::to_string(rendezvous.worldSize);
        return r;
    }
    TrainingSession session("", SessionConfig::defaults());
    session.m_worker = true;
    session.m_rendezvous = rendezvous;
    return session.run();
}

} // namespace foxhunt
