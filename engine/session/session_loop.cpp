// SPDX-License-Identifier: GPL-3.0-or-later
// The per-bar loop: the replay of the train split paces training, and every replayed bar is one
// step of each model that still has steps to take. Rank 0 also samples the process's memory,
// hands each tick's samples to the UI and the store, and checkpoints on its schedule.

#include "engine/session/session_run.h"

#include "engine/replay/bar_clock.h"
#include "engine/telemetry/metric_registry.h"

#include <algorithm>
#include <fstream>

#include <unistd.h>

namespace foxhunt::session {

namespace {

/// Resident set size of this process in bytes, from /proc (0 where unavailable).
double residentBytes()
{
    std::ifstream statm("/proc/self/statm");
    long long pages = 0, resident = 0;
    if (!(statm >> pages >> resident)) return 0;
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

} // namespace

bool SessionRun::allFinished() const
{
    return std::all_of(m_learners.begin(), m_learners.end(), [](const auto& l) { return l->finished(); });
}

Clock::time_point SessionRun::checkpointNow() const
{
    return m_session.m_checkpointClock ? m_session.m_checkpointClock() : Clock::now();
}

void SessionRun::train()
{
    const SessionConfig& c = cfg();
    m_trainBars.assign(m_bars.begin() + static_cast<std::ptrdiff_t>(m_split.trainIndex.begin),
                       m_bars.begin() + static_cast<std::ptrdiff_t>(m_split.trainIndex.end));
    BarClock clock(m_trainBars, BarClockOptions{.speed = c.speed, .startPaused = m_controls.paused.load()});
    {
        std::lock_guard lock(m_controls.clockMutex);
        m_controls.clock = &clock;
        for (int k = m_controls.pendingSteps.exchange(0); k > 0; --k) clock.step();
        if (m_controls.stop) clock.stop();
    }
    m_clock = &clock;
    m_session.m_progress.totalTicks = std::max(0LL, c.steps - m_firstTick);
    if (m_owner) m_lastCheckpointAt = checkpointNow();
    m_lastRss = Clock::now() - std::chrono::seconds(10);

    if (m_owner) {
        // Replay the train split as many times as the step budget needs. A stop inside a control
        // block waits for the block's end (m_blockLeft == 0).
        auto finished = [&] { return allFinished() || (m_controls.stop && m_blockLeft == 0); };
        while (!finished()) {
            clock.run([this](const Bar&, std::size_t index) { onBar(index); });
            if (finished()) break;
            clock.rewind(0);
        }
        endBlocks();
    } else {
        followBlocks();
    }
    {
        std::lock_guard lock(m_controls.clockMutex);
        m_controls.clock = nullptr;
    }
    m_clock = nullptr;
    flush(true);
    checkpoint();
    waitForRanks();
}

void SessionRun::onBar(std::size_t index)
{
    const SessionConfig& c = cfg();
    if (m_comm && m_owner && m_blockLeft == 0) releaseBlock();
    ++m_tick;
    bool anyLeft = false;
    for (const std::unique_ptr<Learner>& l : m_learners) {
        if (l->finished()) continue;
        l->advance(m_tick, index);
        anyLeft = anyLeft || !l->finished();
    }
    // INT8 refreshes of the models still training (a finished one gets the full check at the end).
    if (m_owner && c.precision.int8 && c.precision.int8RefreshEvery > 0 && m_tick % c.precision.int8RefreshEvery == 0)
        for (const std::unique_ptr<Learner>& l : m_learners) l->refreshInt8(m_int8);
    if (m_comm && (--m_blockLeft == 0 || !anyLeft)) endBlock(m_owner ? m_clock : nullptr);
    if (!m_owner) {
        m_tickBatch.clear(); // rank 0 speaks for the run
        return;
    }
    if (Clock::now() - m_lastRss > std::chrono::seconds(1)) {
        m_lastRss = Clock::now();
        m_tickBatch.push_back(
            {std::string(metrics::kSessionModel), std::string(metrics::kRssBytes), m_tick, 0, residentBytes()});
    }
    publishTick();
    m_session.m_progress.tick = m_tick - m_firstTick;
    flush(false);
    const auto now = checkpointNow();
    if ((c.checkpointEvery > 0 && m_tick % c.checkpointEvery == 0) ||
        (c.checkpointSeconds > 0 &&
         std::chrono::duration<double>(now - m_lastCheckpointAt).count() >= c.checkpointSeconds)) {
        checkpoint();
        m_lastCheckpointAt = now;
    }
    if (!anyLeft) m_clock->stop();
}

void SessionRun::publishTick()
{
    if (m_tickBatch.empty()) return;
    const std::int64_t now = wallClockNs();
    for (MetricSample& s : m_tickBatch) s.wallNs = now;
    m_storeBatch.insert(m_storeBatch.end(), m_tickBatch.begin(), m_tickBatch.end());
    if (m_session.m_samples.append(std::move(m_tickBatch)) && m_session.m_onSamples) m_session.m_onSamples();
    m_tickBatch.clear();
}

void SessionRun::flush(bool force)
{
    if (!m_runs || m_runId == 0 || m_storeBatch.empty()) return;
    if (!force && m_storeBatch.size() < 20'000 &&
        std::chrono::duration<double>(Clock::now() - m_lastFlush).count() < cfg().flushSeconds)
        return;
    m_runs->appendMetrics(m_runId, m_storeBatch);
    m_storeBatch.clear();
    m_lastFlush = Clock::now();
}

} // namespace foxhunt::session
