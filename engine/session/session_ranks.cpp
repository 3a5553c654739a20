// SPDX-License-Identifier: GPL-3.0-or-later
// Rank control of a multi-process run. Rank 0 starts the local workers (or joins ranks started
// elsewhere) and hands them the run; every decision rank 0 makes (precision, memory budget,
// checkpoints) reaches the others through shareFromOwner(). Ticks are released in control blocks:
// rank 0 publishes each block's length, the others follow, and every block ends with one
// all-reduce of the ranks' throughput and all-reduce wait. This is the run's only LibTorch part.

#include "engine/session/session_run.h"

#include "engine/replay/bar_clock.h"
#include "engine/session/local_workers.h"
#include "engine/telemetry/metric_registry.h"
#include "models/distributed/communicator.h"

#include <cstring>

namespace foxhunt::session {

namespace {

namespace dist = foxhunt::models::dist;

/// Multi-process runs at full speed: rank 0 releases ticks to the other ranks in blocks of this
/// many (one store message per block; pause and stop take effect between blocks). Paced replays
/// release one tick at a time, so pause and single steps act on the next bar.
constexpr long long kBlockTicks = 32;

std::shared_ptr<dist::Communicator> joinGroup(const Rendezvous& r)
{
    dist::RendezvousOptions o;
    o.master_addr = r.masterAddr;
    o.master_port = r.masterPort;
    o.world_size = r.worldSize;
    o.rank = r.rank;
    o.local_rank = r.localRank;
    o.timeout = std::chrono::milliseconds(static_cast<long long>(r.timeoutSeconds * 1e3));
    return dist::Communicator::connect(o);
}

} // namespace

void SessionRun::receiveRun()
{
    m_comm = joinGroup(*m_session.m_rendezvous);
    const nlohmann::json header = nlohmann::json::parse(m_comm->broadcast_bytes(""));
    SessionConfig received = sessionConfigFromJson(header.at("config"));
    m_workerResumes = header.at("resumed").get<bool>();
    m_runId = header.at("run_id").get<std::int64_t>();
    std::lock_guard lock(m_controls.clockMutex);
    m_session.m_config = std::move(received);
}

void SessionRun::receiveBars()
{
    const std::string raw = m_comm->broadcast_bytes("");
    m_bars.resize(raw.size() / sizeof(Bar));
    std::memcpy(static_cast<void*>(m_bars.data()), raw.data(), m_bars.size() * sizeof(Bar));
}

void SessionRun::startRanks(int world)
{
    Rendezvous r = m_session.m_rendezvous.value_or(Rendezvous{});
    if (!m_session.m_rendezvous) {
        r.worldSize = world;
        r.masterPort = dist::free_local_port();
        r.timeoutSeconds = cfg().distributedTimeoutSeconds;
        m_localWorkers = std::make_unique<LocalWorkers>();
        m_localWorkers->start(m_session.m_workerProgram.empty() ? defaultWorkerProgram() : m_session.m_workerProgram, r,
                              1, world - 1);
    }
    m_comm = joinGroup(r);
    m_comm->broadcast_bytes(
        nlohmann::json{{"config", toJson(cfg())}, {"resumed", m_resumed.has_value()}, {"run_id", m_runId}}.dump());
    m_comm->broadcast_bytes(std::string(reinterpret_cast<const char*>(m_bars.data()), m_bars.size() * sizeof(Bar)));
    m_doc["ranks"] = world;
}

void SessionRun::useCollectives()
{
    m_rank = m_comm ? m_comm->rank() : 0;
    m_ranks = m_comm ? m_comm->world_size() : 1;
    m_controls.deferControls = m_ranks > 1;
    if (!m_comm) return;
    // How the ranks reduce tensors on the run's device: in place by NCCL when every rank has a GPU
    // of its own, else through host copies by Gloo (collective: every rank, same point).
    const std::string collectives = m_comm->use_device(torch::Device(cfg().device));
    if (!m_owner) return;
    m_doc["collectives"] = collectives;
    if (!m_resumed) { // a resumed run keeps the record of where it started
        m_versions["collectives"] = collectives;
        m_runs->setVersions(m_runId, m_versions.dump());
    }
}

std::string SessionRun::shareFromOwner(const std::string& bytes)
{
    if (!m_comm) return bytes;
    return m_comm->broadcast_bytes(m_owner ? bytes : std::string());
}

void SessionRun::releaseBlock()
{
    {
        // setSpeed() and stop() write these from the UI thread under the same lock.
        std::lock_guard lock(m_controls.clockMutex);
        m_blockLeft = (m_session.m_config.speed == 0.0 && !m_controls.paused) ? kBlockTicks : 1;
        m_controls.atBoundary = false;
    }
    m_comm->publish("block/" + std::to_string(m_blocks++), std::to_string(m_blockLeft));
    m_blockStart = Clock::now();
}

void SessionRun::endBlock(BarClock* ownerClock)
{
    const double seconds = std::max(1e-9, std::chrono::duration<double>(Clock::now() - m_blockStart).count());
    const std::size_t ranks = static_cast<std::size_t>(m_ranks);
    std::vector<double> v(m_learners.size() * ranks * 2, 0.0);
    for (std::size_t i = 0; i < m_learners.size(); ++i) {
        const Learner& l = *m_learners[i];
        const std::size_t at = (i * ranks + static_cast<std::size_t>(m_rank)) * 2;
        v[at] = l.blockSamples / seconds;
        v[at + 1] = l.blockUpdates > 0 ? l.blockAllreduceMs / l.blockUpdates : 0.0;
    }
    v = m_comm->all_reduce_sum(v);
    for (std::size_t i = 0; i < m_learners.size(); ++i) {
        Learner& l = *m_learners[i];
        if (m_owner && l.blockSamples > 0) {
            double slowest = 0.0;
            for (std::size_t r = 0; r < ranks; ++r) {
                const std::size_t at = (i * ranks + r) * 2;
                l.emit(std::string(metrics::kThroughputRank) + std::to_string(r), v[at]);
                slowest = std::max(slowest, v[at + 1]);
            }
            if (l.blockUpdates > 0) l.emit(metrics::kAllreduceMs, slowest);
        }
        l.blockSamples = l.blockAllreduceMs = l.blockUpdates = 0;
    }
    m_blockLeft = 0;
    if (ownerClock) {
        // Between blocks every rank waits for the next release, so pausing or stopping here is safe.
        std::lock_guard lock(m_controls.clockMutex);
        m_controls.atBoundary = true;
        if (m_controls.stop) ownerClock->stop();
        else if (m_controls.paused) ownerClock->pause();
    }
}

void SessionRun::followBlocks()
{
    // Follow rank 0's releases until it ends the run.
    std::size_t index = 0;
    for (;;) {
        const std::string release = m_comm->await("block/" + std::to_string(m_blocks++));
        if (release == "end") break;
        m_blockLeft = std::stoll(release);
        m_blockStart = Clock::now();
        for (long long n = m_blockLeft; n > 0 && !allFinished(); --n) {
            onBar(index);
            index = (index + 1) % m_trainBars.size();
        }
    }
}

void SessionRun::endBlocks()
{
    if (m_comm) m_comm->publish("block/" + std::to_string(m_blocks), "end");
}

void SessionRun::waitForRanks()
{
    if (!m_localWorkers) return;
    // They leave as soon as they read the end of the run; one that did not is worth a line.
    const std::vector<std::string> problems = m_localWorkers->wait(cfg().distributedTimeoutSeconds);
    if (!problems.empty()) m_doc["worker_problems"] = problems;
}

void SessionRun::stopRanksAfterFailure()
{
    if (!m_localWorkers) return;
    // Say what became of the local workers (a killed one explains a collective's failure).
    if (m_comm) {
        try {
            m_comm->publish("block/" + std::to_string(m_blocks), "end");
        } catch (const std::exception&) {
            // The store went with the failure; the workers time out on their own.
        }
    }
    for (const std::string& p : m_localWorkers->wait(1.0)) m_result.error += "; " + p;
    m_localWorkers->kill();
}

} // namespace foxhunt::session
