// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints: rank 0 writes each model that moved since its last one, whole or not at all, and
// records it; a resumed run continues every model from its newest one (rank 0 checks that the file
// is this run's and sends it to the other ranks) and drops what was recorded after it.

#include "engine/session/session_run.h"

#include "engine/telemetry/metric_registry.h"

#include <fstream>

namespace foxhunt::session {

namespace {

std::string readFileBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read checkpoint " + path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

void SessionRun::resumeLearners()
{
    if (!m_resumed && !m_workerResumes) return;
    // Continue from the newest checkpoint: weights, optimizer, RNG, replay and env state. Every rank
    // continues from rank 0's; the others keep their own days and position.
    for (const std::unique_ptr<Learner>& l : m_learners) {
        std::optional<CheckpointRecord> ckpt = m_owner ? m_runs->lastCheckpoint(m_runId, l->name()) : std::nullopt;
        if (ckpt) {
            // Rank 0 makes sure the file is this run's before it loads it or sends it on.
            std::error_code ec;
            if (!std::filesystem::is_regular_file(ckpt->path, ec))
                throw CheckpointMismatch(
                    ckpt->path + ": the checkpoint of " + l->name() + " at step " + std::to_string(ckpt->step) +
                    " is missing. A database keeps its checkpoints in " + m_runs->checkpointFolder() +
                    "; one moved or copied without that folder cannot resume its runs");
            const CheckpointIdentity expected{m_identity.runUuid, m_identity.configSha256, l->name(), ckpt->step};
            l->load(ckpt->path, /*restoreEnvironment=*/true,
                    [&](const std::string& stored) { verifyCheckpointIdentity(ckpt->path, stored, expected); });
        }
        if (m_comm) {
            const std::string bytes = shareFromOwner(ckpt ? readFileBytes(ckpt->path) : std::string());
            const long long step = std::stoll(
                shareFromOwner(std::to_string(ckpt ? static_cast<long long>(ckpt->step) : 0)));
            if (!m_owner && !bytes.empty()) {
                const std::filesystem::path received = std::filesystem::temp_directory_path() /
                                                       ("foxhunt-run" + std::to_string(m_runId) + "-rank" +
                                                        std::to_string(m_rank) + "-" + l->name() + ".pt");
                std::ofstream(received, std::ios::binary) << bytes;
                l->load(received.string(), /*restoreEnvironment=*/false);
                std::filesystem::remove(received);
                ckpt = CheckpointRecord{};
                ckpt->step = step;
            }
        }
        if (ckpt) l->resumeAt(ckpt->step);
    }
}

void SessionRun::forgetSamplesAfterCheckpoints()
{
    // A resumed run goes on from its checkpoints' step: what was recorded after it (by a run killed
    // before its next checkpoint) is replaced, not stored twice. Every model took one step per tick,
    // so the newest checkpoint's step is also the tick the run continues from.
    m_tick = 0;
    for (const std::unique_ptr<Learner>& l : m_learners) m_tick = std::max(m_tick, l->steps());
    m_firstTick = m_tick;
    if (m_owner && m_resumed) {
        std::vector<std::pair<std::string, std::int64_t>> lastKept{{std::string(metrics::kSessionModel), m_firstTick}};
        for (const std::unique_ptr<Learner>& l : m_learners) lastKept.emplace_back(l->name(), l->steps());
        m_runs->deleteMetricsAfter(m_runId, lastKept);
    }
    m_doc["first_tick"] = m_firstTick;
}

void SessionRun::checkpoint()
{
    if (!m_owner) return;
    flush(true); // the store holds every sample up to the checkpoint, which a resume keeps
    for (const std::unique_ptr<Learner>& l : m_learners) {
        if (l->steps() == l->checkpointedStep) continue;
        std::filesystem::create_directories(m_checkpoints);
        const std::filesystem::path path = m_checkpoints / (l->name() + "-" + std::to_string(l->steps()) + ".pt");
        CheckpointIdentity stamp = m_identity;
        stamp.model = l->name();
        stamp.step = l->steps();
        // Written whole or not at all (writeFileAtomically), so a kill leaves no partial file.
        l->save(path.string(), toString(stamp));
        m_runs->addCheckpoint(m_runId, l->name(), l->steps(), path.string());
        l->checkpointedStep = l->steps();
    }
}

} // namespace foxhunt::session
