// SPDX-License-Identifier: GPL-3.0-or-later
// The evaluation: rank 0 evaluates every model on validation and test beside its baselines and
// stores the documents with the run; a worker rank's part ended with training.

#include "engine/session/session_run.h"

namespace foxhunt::session {

void SessionRun::evaluate()
{
    if (!m_owner) {
        m_result.runId = m_runId;
        m_result.status = RunStatus::Finished;
        m_doc["rank"] = m_rank;
        m_doc["ticks"] = m_tick - m_firstTick;
        return;
    }
    // The agents' ensemble inputs over validation and test, computed once in batches.
    if (!m_feed.forecasters.empty()) m_feed.buildTable(m_split.validationIndex.begin, m_bars.size());
    nlohmann::json models = nlohmann::json::object();
    for (const std::unique_ptr<Learner>& l : m_learners) {
        const nlohmann::json m = l->evaluate(m_int8);
        m_runs->saveEvaluation(m_runId, l->name(), "validation", m["validation"].dump());
        if (m.contains("test")) m_runs->saveEvaluation(m_runId, l->name(), "test", m["test"].dump());
        m_runs->saveEvaluation(m_runId, l->name(), "training", m["training"].dump());
        models[l->name()] = m;
    }
    publishTick(); // the final INT8 checks' samples
    flush(true);
    m_doc["models"] = models;
    m_doc["ticks"] = m_tick - m_firstTick;
    m_result.status = m_controls.stop ? RunStatus::Stopped : RunStatus::Finished;
    m_runs->setStatus(m_runId, m_result.status);
}

} // namespace foxhunt::session
