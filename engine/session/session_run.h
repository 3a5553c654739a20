// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal: one TrainingSession::run(), as the sequence of its steps. Each step is a member
// function in a file of its own:
//   session_setup.cpp       open the store (or take the run from rank 0), load the bars, record the run,
//                           cut the days and build the forecasters' inputs;
//   session_ranks.cpp       rank control: start or join the other processes, share what rank 0 decides,
//                           release and follow control blocks (the only part that speaks to LibTorch);
//   session_learners.cpp    one learner per model, its precision, the memory budget, the ensemble feed;
//   session_loop.cpp        the per-bar loop: every learner steps once per replayed bar;
//   session_checkpoints.cpp writing checkpoints and continuing from them;
//   session_evaluation.cpp  the evaluation on validation and test, stored with the run.

#include "engine/data/bar.h"
#include "engine/forecast/forecast_data.h"
#include "engine/replay/features.h"
#include "engine/replay/split.h"
#include "engine/session/ensemble_feed.h"
#include "engine/session/learner.h"
#include "engine/session/training_session.h"
#include "engine/store/checkpoint_identity.h"
#include "engine/store/run_store.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace foxhunt {

class BarClock;
class KernelTimingTable;
class LocalWorkers;

namespace models::precision {
class KernelTimingCache;
}

/// The controls the UI thread sets while run() works.
struct TrainingSession::Impl {
    std::mutex clockMutex;
    BarClock* clock = nullptr; ///< alive only inside run()
    std::atomic<bool> stop{false};
    std::atomic<bool> paused{false};
    std::atomic<int> pendingSteps{0};
    /// Multi-process run: pause and stop act between control blocks only (a rank stopped
    /// mid-block would leave the others waiting in a collective).
    std::atomic<bool> deferControls{false};
    std::atomic<bool> atBoundary{true};
};

namespace session {

using Clock = std::chrono::steady_clock;

class SessionRun {
public:
    explicit SessionRun(TrainingSession& session);
    ~SessionRun();
    SessionRun(const SessionRun&) = delete;
    SessionRun& operator=(const SessionRun&) = delete;

    /// The whole run; never throws.
    SessionResult run();

private:
    // session_setup.cpp
    void open();
    void loadBars();
    void recordRun();
    void cutDays();
    void buildForecastData();
    // session_ranks.cpp
    void receiveRun();
    void receiveBars();
    void startRanks(int world);
    void useCollectives();
    /// Rank 0's `bytes` on every rank (the text itself on a single-process run).
    std::string shareFromOwner(const std::string& bytes);
    void releaseBlock();
    void endBlock(BarClock* ownerClock);
    void followBlocks();
    void endBlocks();
    void waitForRanks();
    void stopRanksAfterFailure();
    // session_learners.cpp
    void buildLearners();
    void resolveAmp(Learner& learner, const detail::StepFactory& timeStep);
    void checkMemoryBudget();
    void connectEnsemble();
    void prepareInt8();
    // session_checkpoints.cpp
    void resumeLearners();
    void forgetSamplesAfterCheckpoints();
    void checkpoint();
    // session_loop.cpp
    void train();
    void onBar(std::size_t index);
    bool allFinished() const;
    Clock::time_point checkpointNow() const;
    void publishTick();
    void flush(bool force);
    // session_evaluation.cpp
    void evaluate();
    // training_session.cpp
    void fail(const std::exception& e);

    const SessionConfig& cfg() const { return m_session.m_config; }

    TrainingSession& m_session;
    TrainingSession::Impl& m_controls;
    const bool m_owner; ///< rank 0: store, telemetry, checkpoints, evaluation

    SessionResult m_result;
    nlohmann::json m_doc;
    std::unique_ptr<BarStore> m_store;
    std::unique_ptr<RunStore> m_runs;
    std::shared_ptr<models::dist::Communicator> m_comm; ///< multi-process runs
    std::unique_ptr<LocalWorkers> m_localWorkers;
    int m_rank = 0;
    int m_ranks = 1;
    std::int64_t m_runId = 0;
    std::optional<RunInfo> m_resumed; ///< rank 0: the stored run this one continues
    bool m_workerResumes = false;     ///< ranks > 0: rank 0 continues a run

    std::optional<SeriesInfo> m_series;
    std::vector<Bar> m_bars;
    WalkForwardSplit m_split;
    FeatureMatrix m_features;
    nlohmann::json m_versions;           ///< rank 0: the machine and choices recorded with the run
    CheckpointIdentity m_identity;       ///< rank 0: the run's; model and step are filled per file
    std::filesystem::path m_checkpoints; ///< rank 0: this run's checkpoint folder

    std::vector<EpisodeRange> m_episodes; ///< one per trading day
    std::vector<int> m_trainEpisodes, m_validationEpisodes, m_testEpisodes;
    ForecastData m_forecastData;
    SessionConfig m_effective;
    RunInputs m_inputs;
    MetricBatch m_tickBatch;  ///< this tick's samples
    MetricBatch m_storeBatch; ///< samples not yet written to the store
    Clock::time_point m_lastFlush = Clock::now();
    std::vector<std::unique_ptr<Learner>> m_learners;
    EnsembleFeed m_feed;
    std::unique_ptr<KernelTimingTable> m_kernelTable;
    std::shared_ptr<models::precision::KernelTimingCache> m_kernelCache;
    Int8Settings m_int8;

    long long m_tick = 0;
    long long m_firstTick = 0;
    std::vector<Bar> m_trainBars;
    BarClock* m_clock = nullptr;
    long long m_blocks = 0;    ///< control blocks published (rank 0) or followed
    long long m_blockLeft = 0; ///< ticks left in this control block
    Clock::time_point m_blockStart;
    Clock::time_point m_lastRss;
    Clock::time_point m_lastCheckpointAt;
};

} // namespace session
} // namespace foxhunt
