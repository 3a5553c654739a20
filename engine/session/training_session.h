// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One training session: a set of models (DQN, PPO, Mamba-2, TFT) over one
// replay of a stored series, on the calling (worker) thread. Controls are
// atomics callable from any thread; samples go to a staging buffer for the UI
// and, in batched transactions, to the run store. std-only header.

#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/env/trading_env.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/local_workers.h"
#include "engine/store/run_status.h"
#include "engine/telemetry/staging_buffer.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

/// The models a session can train.
enum class ModelKind { Dqn, Ppo, Mamba2, Tft };
/// "dqn", "ppo", "mamba2", "tft".
std::string toString(ModelKind kind);
/// The forecasters (Mamba-2, TFT): they learn from windows of bars, not from the environment.
bool isForecaster(ModelKind kind);
/// The agents (DQN, PPO): they act in the trading environment.
bool isAgent(ModelKind kind);
/// Parses the names above (case-insensitive); nullopt otherwise.
std::optional<ModelKind> modelKindFromString(std::string name);

/// What a run does when its served copies would not fit memory_budget_mb.
enum class MemoryBudgetAction { Refuse, Warn };

/// Precision of a run: one switch for all four models.
struct PrecisionSettings {
    models::precision::MixedPrecisionConfig amp; ///< AMP for DQN, PPO, Mamba-2 and TFT training (default FP32)
    /// "amp": "auto": each model trains under the device's preset (BF16 on a CPU with native BF16 or
    /// an Ampere GPU, FP16 on Volta/Turing) only where a short measurement of its own train step shows
    /// it faster than FP32, else in FP32; the reason is recorded per model. `amp` then holds nothing.
    bool ampAuto = false;
    bool int8 = false; ///< keep an INT8 inference copy of each model, validated against FP32
    /// INT8 kernels: "auto" (timed per layer shape on this machine, the fastest accurate one served)
    /// or one backend by hand for every layer ("fp32", "dequantize", "onednn", "static", "cuda-int-mm").
    std::string int8Backend = "auto";
    /// An INT8 copy degrading the validation loss by more than this share is not served (FP32 answers).
    double int8MaxDegradation = kDefaultInt8MaxDegradation;
    bool int8StaticActivations = true; ///< calibrated static activation ranges as well as dynamic per-batch ones
    int calibrationBars = 1000;        ///< train-split bars used to calibrate static ranges
    long long int8RefreshEvery =
        5'000; ///< ticks between refreshes of the INT8 copy from the FP32 weights (0 = at the end only)
    /// Memory the served copies of all models may take together (weights plus activations at the
    /// serving batch), MiB; 0 = no budget. Checked before training starts.
    double memoryBudgetMb = 0.0;
    MemoryBudgetAction memoryBudgetAction = MemoryBudgetAction::Refuse; ///< over budget: refuse to start, or warn
};

/// Everything a run is configured with. Serialised whole into the run store.
struct SessionConfig {
    std::string name; ///< run name ("" = generated)
    /// Tags the new run gets as it is created (not part of its stored config; a resumed run keeps its own).
    std::vector<std::string> tags;
    /// > 0: the new run is member `groupMember` of this run group, recorded as the run is created
    /// (like tags, not part of its stored config; a resumed run is in its group already).
    std::int64_t groupId = 0;
    std::int64_t groupMember = -1;
    std::vector<ModelKind> models{ModelKind::Dqn};
    std::string series;                  ///< id or symbol; "" = first real series, else the synthetic default
    std::optional<std::int64_t> fromDay; ///< first ES trading day (days since epoch)
    std::optional<std::int64_t> toDay;   ///< last ES trading day, inclusive
    long long steps = 20'000;            ///< per model: environment steps (agents) or optimizer steps (forecasters)
    std::uint64_t seed = 1;              ///< seeds every model
    double speed = 0.0;                  ///< replay pace: 0 = max, N = N x real time
    int threads = 1;                     ///< LibTorch intra-op threads (1 is fastest on 2 cores)
    std::string device = "cpu";          ///< "cpu" or "cuda:N" (see models::computeDevices())
    /// Processes training this run together (data parallel over c10d/Gloo): 1 = this process only;
    /// N > 1 = this process (rank 0, which owns the store and the telemetry) plus N - 1 local workers.
    int workers = 1;
    /// A rank that stops answering (dead, stalled, network down) fails the run after this many seconds.
    double distributedTimeoutSeconds = 60.0;
    /// Feed the forecasters' latest median forecasts (H log returns per forecaster, in model order) into the
    /// agents' observations, computed once per bar and shared by the agents; a forecaster that has not been
    /// trained yet (or has used up its steps) still gives its current output. Needs a forecaster in the run.
    bool ensemble = false;
    PrecisionSettings precision;
    double trainFraction = 0.7; ///< walk-forward split by trading day
    double validationFraction = 0.15;
    /// An explicit split instead of the fractions (a walk-forward fold member's): validation starts on
    /// this trading day and test on testFromDay (days since epoch). Both or neither.
    std::optional<std::int64_t> validationFromDay;
    std::optional<std::int64_t> testFromDay;
    long long checkpointEvery = 5'000; ///< ticks between checkpoints (0 = by time and at the end only)
    /// Wall-clock seconds between checkpoints as well (0 = off), so a killed run loses at most this much;
    /// a run also checkpoints when it stops or ends.
    double checkpointSeconds = 60.0;
    double flushSeconds = 0.5; ///< metric batches to SQLite at most this often
    /// "" = beside the database (RunStore::checkpointFolder(), "<database>.checkpoints"), which moves
    /// and copies with it; else a folder of one's choosing. Either way each run's files are in a
    /// folder named after the run's UUID, and carry that UUID.
    std::string checkpointDir;
    TradingEnvOptions env;
    DqnOptions dqn;
    PpoOptions ppo;
    ForecasterConfig mamba2;
    ForecasterConfig tft;

    /// The defaults this build trains with (agents tuned for intraday bars, small forecasters).
    static SessionConfig defaults();
};

/// Network sizes a run starts from: the defaults; "small" (half-width networks, short windows and
/// an agent that learns early: a quick look); "seed" (the seeds' layer sizes, where precision pays:
/// Mamba-2 d_model 512 / head_dim 64 / 2 layers on 60 bars, batch 8; TFT hidden 32 / 4 heads on 100
/// bars, batch 32; DQN and PPO 256x256, DQN batch 256).
enum class ModelPreset { Default, Small, Seed };
/// "default", "small", "seed".
std::string toString(ModelPreset preset);
/// Parses the names above; nullopt otherwise.
std::optional<ModelPreset> modelPresetFromString(const std::string& name);
/// Sets the preset's sizes in `config` (Default: those of SessionConfig::defaults()).
void applyModelPreset(SessionConfig& config, ModelPreset preset);

/// Full config as JSON (every hyperparameter).
nlohmann::json toJson(const SessionConfig& config);
/// Applies the keys present in `json` over `base`; throws std::invalid_argument on unknown models or bad values.
SessionConfig sessionConfigFromJson(const nlohmann::json& json, SessionConfig base = SessionConfig::defaults());
/// Most steps a run may take (beyond this a run is a typo, not a plan: 10^12).
inline constexpr long long kMaxSteps = 1'000'000'000'000LL;
/// Largest seed (seeds are stored as signed 64-bit integers in JSON and SQLite).
inline constexpr std::uint64_t kMaxSeed = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
/// Every problem with `config`'s values (sizes that cannot build a model, ranges), in plain words;
/// empty when it can run. Checked before a run touches the store.
std::vector<std::string> configProblems(const SessionConfig& config);
/// Throws std::invalid_argument listing configProblems(), if any.
void validate(const SessionConfig& config);
/// The config as the models train with it, which is what a run stores and its report shows: the
/// run's seed in every model, its step count as DQN's exploration horizon and as the forecasters'
/// schedule length, with their warmup at most a tenth of it. Applying it twice changes nothing.
SessionConfig effectiveConfig(SessionConfig config);

/// Live counters of a running session, readable from any thread.
struct SessionProgress {
    std::atomic<long long> tick{0};       ///< bars replayed (over all epochs)
    std::atomic<long long> totalTicks{0}; ///< bars the session will replay
    std::atomic<std::int64_t> runId{0};
    std::atomic<bool> running{false};
};

/// The outcome of run().
struct SessionResult {
    std::int64_t runId = 0;
    RunStatus status = RunStatus::Failed; ///< Finished, Stopped or Failed
    std::string error;                    ///< readable reason when failed
    std::string json; ///< the full result document (config, split, per-model training and evaluation)
};

namespace session {
class SessionRun;
}

/// Runs one session. Construct, optionally connect onSamples, call run() on a worker thread.
class TrainingSession {
public:
    TrainingSession(std::string databasePath, SessionConfig config);
    ~TrainingSession();
    TrainingSession(const TrainingSession&) = delete;
    TrainingSession& operator=(const TrainingSession&) = delete;

    /// Continue stored run `runId` from each model's last checkpoint instead of
    /// starting a new run: its stored config replaces the one given, except
    /// the machine's settings (device, threads, workers, worker timeout), speed, checkpoint folder
    /// and a positive step budget (the new total). Call before run().
    void resumeRun(std::int64_t runId) { m_resumeRunId = runId; }

    /// The program started for each local worker process when config().workers > 1 (it is run as
    /// `<program> worker` with the rendezvous in MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and
    /// LOCAL_RANK); "" = foxhunt-cli next to this executable. Call before run().
    void setWorkerProgram(std::string program) { m_workerProgram = std::move(program); }

    /// Owns a run whose ranks were started elsewhere (a multi-machine run; the CLI sets this from
    /// torchrun's variables, rank 0): joins that group instead of starting local workers. Call before run().
    void setRendezvous(Rendezvous rendezvous) { m_rendezvous = std::move(rendezvous); }

    /// The clock that times checkpoint_seconds (rank 0 reads it once when training starts and once
    /// per tick); empty = std::chrono::steady_clock. Tests inject one. Call before run().
    void setCheckpointClock(std::function<std::chrono::steady_clock::time_point()> now)
    {
        m_checkpointClock = std::move(now);
    }

    /// Trains, evaluates, stores. Never throws: failures come back as status "failed".
    SessionResult run();

    void pause();
    void resume();
    /// While paused: replay exactly one more bar (one training tick).
    void step();
    void stop();
    void setSpeed(double speed);
    bool paused() const;

    /// Samples for the UI; drained by the reader.
    StagingBuffer& samples() { return m_samples; }
    /// Called (on the worker thread) when the staging buffer turns non-empty. Payload-free.
    void setSamplesReadyCallback(std::function<void()> callback) { m_onSamples = std::move(callback); }
    const SessionProgress& progress() const { return m_progress; }
    const SessionConfig& config() const { return m_config; }

private:
    struct Impl;
    std::string m_databasePath;
    SessionConfig m_config;
    StagingBuffer m_samples;
    std::function<void()> m_onSamples;
    SessionProgress m_progress;
    std::unique_ptr<Impl> m_impl;
    std::int64_t m_resumeRunId = 0;
    std::string m_workerProgram;
    std::optional<Rendezvous> m_rendezvous;
    std::function<std::chrono::steady_clock::time_point()> m_checkpointClock;
    bool m_worker = false; ///< a rank > 0: no store, no telemetry, everything from rank 0
    friend SessionResult runWorker(const Rendezvous& rendezvous);
    friend class session::SessionRun; ///< the steps of run() (engine/session/session_run.h)
};

/// Runs one worker rank (> 0) of a multi-process run: receives the run (config, bars, checkpoints)
/// from rank 0, trains its share in lockstep with the other ranks and returns when rank 0 ends the
/// run. Never throws: failures come back as status "failed" with the reason (naming a silent rank).
SessionResult runWorker(const Rendezvous& rendezvous);

} // namespace foxhunt
