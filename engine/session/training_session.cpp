// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/training_session.h"

#include "engine/agents/agent_runner.h"
#include "engine/data/market_time.h"
#include "engine/precision/int8_serving.h"
#include "engine/replay/bar_clock.h"
#include "engine/replay/features.h"
#include "engine/replay/split.h"
#include "engine/session/amp_auto.h"
#include "engine/session/memory_budget.h"
#include "engine/telemetry/metric_registry.h"
#include "engine/session/devices.h"
#include "engine/session/error_text.h"
#include "engine/session/session_json.h"
#include "engine/store/bar_store.h"
#include "engine/store/checkpoint_identity.h"
#include "engine/store/kernel_timings.h"
#include "engine/store/run_store.h"
#include "engine/store/sha256.h"

#include "models/distributed/communicator.h"
#include "models/hardware/machine_probe.h"
#include "models/memory/memory_tracker.h"
#include "models/runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <mutex>
#include <span>

#include <unistd.h>

namespace foxhunt {

namespace {

using Clock = std::chrono::steady_clock;

/// Live dashboard series (equity, position, forecasts) every this many steps of a model.
constexpr long long kLiveEvery = 10;

/// Multi-process runs at full speed: rank 0 releases ticks to the other ranks in blocks of this
/// many (one store message per block; pause and stop take effect between blocks). Paced replays
/// release one tick at a time, so pause and single steps act on the next bar.
constexpr long long kBlockTicks = 32;

namespace dist = foxhunt::models::dist;

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

std::string readFileBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read checkpoint " + path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Resident set size of this process in bytes, from /proc (0 where unavailable).
double residentBytes()
{
    std::ifstream statm("/proc/self/statm");
    long long pages = 0, resident = 0;
    if (!(statm >> pages >> resident)) return 0;
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

/// P50/P95/P99 of a latency sample (ms).
nlohmann::json percentiles(std::vector<double> v)
{
    if (v.empty()) return {{"p50_ms", nullptr}, {"p95_ms", nullptr}, {"p99_ms", nullptr}, {"count", 0}};
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
        return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
    };
    return {{"p50_ms", at(0.50)}, {"p95_ms", at(0.95)}, {"p99_ms", at(0.99)}, {"count", v.size()}};
}

/// The forecasters' latest median forecasts as extra agent inputs (SessionConfig::ensemble).
/// During training a bar's values are computed once per tick and shared by every agent at that
/// bar; for evaluation a table over the validation and test bars is computed in batches.
struct EnsembleFeed {
    std::vector<ForecasterTrainer*> forecasters;
    const ForecastData* data = nullptr;
    std::size_t size = 0;       ///< sum of the forecasters' horizons
    std::size_t bar = SIZE_MAX; ///< bar of `values`
    long long tick = -1;        ///< tick `values` were computed at
    std::vector<float> values;
    std::size_t tableFrom = 0, tableTo = 0;
    std::vector<float> table; ///< [tableTo - tableFrom, size]

    void fill(std::size_t at, long long now, std::span<float> out)
    {
        if (at >= tableFrom && at < tableTo) {
            const float* row = table.data() + (at - tableFrom) * size;
            std::copy(row, row + size, out.begin());
            return;
        }
        if (at != bar || now != tick) {
            values.assign(size, 0.0f);
            std::size_t offset = 0;
            for (ForecasterTrainer* f : forecasters) {
                const std::size_t h = f->config().windowing.horizon;
                const IndexRange valid = validAnchors(*data, f->config().windowing);
                // Bars without a full window (the first L-1, the last H) keep zeros.
                if (at >= valid.begin && at < valid.end) {
                    const std::vector<double> m = f->predictMedians({at, at + 1});
                    std::transform(m.begin(), m.end(), values.begin() + static_cast<std::ptrdiff_t>(offset),
                                   [](double v) { return static_cast<float>(v); });
                }
                offset += h;
            }
            bar = at;
            tick = now;
        }
        std::copy(values.begin(), values.end(), out.begin());
    }

    void buildTable(std::size_t from, std::size_t to)
    {
        tableFrom = tableTo = 0;
        std::vector<float> t((to - from) * size, 0.0f);
        std::size_t offset = 0;
        for (ForecasterTrainer* f : forecasters) {
            const std::size_t h = f->config().windowing.horizon;
            const IndexRange valid = validAnchors(*data, f->config().windowing);
            const IndexRange range{std::max(from, valid.begin), std::min(to, valid.end)};
            if (range.size() > 0) {
                const std::vector<double> m = f->predictMedians(range);
                for (std::size_t i = 0; i < range.size(); ++i)
                    for (std::size_t k = 0; k < h; ++k)
                        t[(range.begin - from + i) * size + offset + k] = static_cast<float>(m[i * h + k]);
            }
            offset += h;
        }
        table = std::move(t);
        tableFrom = from;
        tableTo = to;
    }
};

/// One model being trained in the session.
struct ModelSlot {
    ModelKind kind;
    std::string name;
    long long steps = 0;            ///< steps taken
    long long checkpointedStep = 0; ///< step of the newest checkpoint written or loaded (0 = none)
    long long lastUpdates = 0;      ///< agent updates already reported
    std::unique_ptr<TradingEnv> env;
    std::unique_ptr<AgentRunner> agent;
    std::unique_ptr<ForecasterTrainer> forecaster;
    std::unique_ptr<TradingEnv> holdEnv; ///< agents: the same bars held long 1 contract, for buy_hold_equity_ticks
    double equityTicks = 0;              ///< agents: cumulative training equity of this session, net of costs
    double holdEquityTicks = 0;          ///< agents: the same for holdEnv
    double episodeEquityTicks = 0;       ///< agents: env equity of the running episode at the last step
    double lastLossScale = std::numeric_limits<double>::quiet_NaN();
    long long skippedSteps = 0;  ///< agents: optimizer steps skipped for inf/NaN gradients so far
    long long scaleChanges = 0;  ///< forecasters: loss-scale changes seen in this session
    std::string int8Error;       ///< forecasters: why the INT8 copy cannot be made (refreshes stop)
    long long forecastsFp32 = 0; ///< forecasters: live forecasts the FP32 model answered
    long long forecastsInt8 = 0; ///< forecasters: live forecasts the kept INT8 copy answered
    std::vector<double> latenciesMs;
    std::map<std::string, double> last; ///< last value of each metric
    double paramBytes = 0;
    models::precision::MixedPrecisionConfig amp; ///< the precision this model trains with
    nlohmann::json ampChoice;                    ///< with "amp": "auto", what was measured and why this precision
    double blockSamples = 0;                     ///< multi-process: samples (env steps / windows) in this control block
    double blockAllreduceMs = 0;                 ///< multi-process: gradient all-reduce wait in this block
    double blockUpdates = 0;                     ///< multi-process: optimizer steps in this block
};

} // namespace

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
    SessionResult result;
    nlohmann::json doc;
    std::unique_ptr<BarStore> store;
    std::unique_ptr<RunStore> runs;
    std::shared_ptr<dist::Communicator> comm; // multi-process runs
    std::unique_ptr<LocalWorkers> localWorkers;
    const bool owner = !m_worker; // rank 0: store, telemetry, checkpoints, evaluation
    long long blocks = 0;         // control blocks published (rank 0) or followed
    std::int64_t runId = 0;
    MetricBatch storeBatch;
    auto lastFlush = Clock::now();
    m_progress.running = true;

    auto flush = [&](bool force) {
        if (!runs || runId == 0 || storeBatch.empty()) return;
        if (!force && storeBatch.size() < 20'000 &&
            std::chrono::duration<double>(Clock::now() - lastFlush).count() < m_config.flushSeconds)
            return;
        runs->appendMetrics(runId, storeBatch);
        storeBatch.clear();
        lastFlush = Clock::now();
    };

    try {
        std::optional<RunInfo> resumed;
        bool workerResumes = false;
        if (owner) {
            store = std::make_unique<BarStore>(m_databasePath);
            runs = std::make_unique<RunStore>(*store);
            runs->markInterruptedRuns();
        } else {
            // A worker rank: the run comes from rank 0, whole.
            comm = joinGroup(*m_rendezvous);
            const nlohmann::json header = nlohmann::json::parse(comm->broadcast_bytes(""));
            SessionConfig received = sessionConfigFromJson(header.at("config"));
            workerResumes = header.at("resumed").get<bool>();
            runId = header.at("run_id").get<std::int64_t>();
            std::lock_guard lock(m_impl->clockMutex);
            m_config = std::move(received);
        }
        if (owner && m_resumeRunId > 0) {
            resumed = runs->run(m_resumeRunId);
            if (!resumed) throw std::invalid_argument("no run " + std::to_string(m_resumeRunId) + " to resume");
            if (resumed->trashedNs > 0)
                throw std::invalid_argument("run " + std::to_string(m_resumeRunId) +
                                            " is in the trash; restore it (Runs tab, Show trash) before resuming it");
            if (resumed->status == RunStatus::Running || resumed->status == RunStatus::Finished)
                throw std::invalid_argument("run " + std::to_string(m_resumeRunId) + " is " +
                                            toString(resumed->status) +
                                            ": only stopped, failed or interrupted runs resume");
            SessionConfig stored = sessionConfigFromJson(nlohmann::json::parse(resumed->configJson));
            if (m_config.steps > 0) stored.steps = m_config.steps;
            stored.threads = m_config.threads;
            stored.speed = m_config.speed;
            stored.checkpointDir = m_config.checkpointDir;
            stored.workers = m_config.workers; // resume with the same or a different number of ranks
            stored.device = m_config.device;   // or on another device: checkpoints load onto any
            stored.distributedTimeoutSeconds = m_config.distributedTimeoutSeconds;
            std::lock_guard lock(m_impl->clockMutex);
            m_config = std::move(stored);
        }
        const SessionConfig& cfg = m_config;
        validate(cfg); // sizes that cannot build a model fail here, before a run is recorded
        // Capped here too for configs from files and the GUI; the CLI says so when it caps.
        models::setThreads(capThreads(cfg.threads).threads);
        models::installCountingCpuAllocator(); // exact activation_bytes; process-wide, once
        if (cfg.device != "cpu") {
            const std::vector<std::string> devices = models::computeDevices();
            if (std::find(devices.begin(), devices.end(), cfg.device) == devices.end())
                throw std::invalid_argument("device " + cfg.device + " is not available in this build (LibTorch " +
                                            models::torchVersion() + "); use cpu");
        }
        {
            const DeviceCheck check = checkPrecision(cfg.precision.amp, cfg.device);
            if (!check.ok) throw std::invalid_argument("mixed precision: " + check.problem + "; " + check.suggestion);
        }
        const auto isForecaster = [](ModelKind k) { return k == ModelKind::Mamba2 || k == ModelKind::Tft; };
        if (cfg.ensemble && std::none_of(cfg.models.begin(), cfg.models.end(), isForecaster))
            throw std::invalid_argument(
                "ensemble needs a forecaster (mamba2 or tft) in the run: the agents receive the "
                "forecasters' median forecasts; add one or turn the ensemble off");
        if (!std::isfinite(cfg.checkpointSeconds) || cfg.checkpointSeconds < 0)
            throw std::invalid_argument("checkpoint_seconds must be 0 (off) or a number of seconds");
        if (cfg.precision.int8 && cfg.precision.int8StaticActivations && cfg.precision.calibrationBars <= 0)
            throw std::invalid_argument("precision: static INT8 activations need calibration_bars > 0");

        std::optional<SeriesInfo> series;
        std::vector<Bar> bars;
        if (owner) {
            series = chooseSeries(*store, cfg.series);
            if (!series)
                throw std::invalid_argument(cfg.series.empty() ? "the store holds no series"
                                                               : "no series '" + cfg.series + "' in " + store->path());
            const std::int64_t fromTs = cfg.fromDay ? sessionOpenUtc(*cfg.fromDay) : INT64_MIN;
            const std::int64_t toTs = cfg.toDay ? sessionOpenUtc(*cfg.toDay + 1) : INT64_MAX;
            bars = store->loadBars(series->id, fromTs, toTs);
            if (bars.size() < 100) throw std::invalid_argument("too few bars of " + series->symbol + " in that range");
        } else {
            const std::string raw = comm->broadcast_bytes("");
            bars.resize(raw.size() / sizeof(Bar));
            std::memcpy(static_cast<void*>(bars.data()), raw.data(), bars.size() * sizeof(Bar));
        }
        const WalkForwardSplit split = splitByFraction(bars, cfg.trainFraction, cfg.validationFraction);
        const FeatureMatrix features = computeFeatures(bars);
        const int featureCount = static_cast<int>(features.cols);

        nlohmann::json versions;
        CheckpointIdentity identity;            // rank 0: the run's, model and step filled per file
        std::filesystem::path checkpointFolder; // rank 0: this run's checkpoint files
        if (owner) {
            // The machine the run trained on, for its report (GPU fields only when CUDA is present).
            versions = {{"foxhunt", FOXHUNT_VERSION},
                        {"torch", models::torchVersion()},
                        {"cuda", models::cudaAvailable()},
                        {"cpu", cpuModel()},
                        {"hardware_threads", std::thread::hardware_concurrency()},
                        {"device", cfg.device},
                        {"machine", machineJson(models::hardware::this_machine())}};
            const int world = m_rendezvous ? m_rendezvous->worldSize : cfg.workers;
            if (world > 1) versions["ranks"] = world;
            const std::string name = cfg.name.empty() ? series->symbol + " " + formatUtc(wallClockNs()).substr(0, 19)
                                                      : cfg.name;
            if (resumed) {
                runId = resumed->id;
                runs->reopenRun(runId);
            } else {
                // Stored as the models train with it, so the report's hyperparameters are the ones used.
                runId = runs->createRun(name, toJson(effectiveConfig(cfg)).dump(), *series, bars.front().tsEvent,
                                        bars.back().tsEvent, versions.dump(),
                                        NewRunLabels{cfg.tags, cfg.groupId, cfg.groupMember});
            }
            {
                // What every checkpoint of this run carries, and a resume checks.
                const std::optional<RunInfo> info = runs->run(runId);
                if (!info) throw std::runtime_error("run " + std::to_string(runId) + " vanished from " + store->path());
                identity.runUuid = info->uuid;
                identity.configSha256 = sha256Hex(info->configJson);
                checkpointFolder = (cfg.checkpointDir.empty() ? std::filesystem::path(runs->checkpointFolder())
                                                              : std::filesystem::path(cfg.checkpointDir)) /
                                   RunStore::runFolderName(*info);
            }
            result.runId = runId;
            m_progress.runId = runId;
            doc["run_id"] = runId;
            doc["name"] = name;
            doc["series"] = {{"id", series->id},
                             {"symbol", series->symbol},
                             {"synthetic", series->synthetic()},
                             {"bars", bars.size()}};
            auto part = [&](const DateRange& d, std::size_t n) {
                return nlohmann::json{{"from", formatUtc(d.fromTs)}, {"to", formatUtc(d.toTs)}, {"bars", n}};
            };
            doc["split"] = {{"train", part(split.train, split.trainBars)},
                            {"validation", part(split.validation, split.validationBars)},
                            {"test", part(split.test, split.testBars)}};

            // Several processes: start the local workers (or join the ranks started elsewhere) and hand
            // them the run: config, bars and, when resuming, the checkpoints below.
            if (world > 1) {
                Rendezvous r = m_rendezvous.value_or(Rendezvous{});
                if (!m_rendezvous) {
                    r.worldSize = world;
                    r.masterPort = dist::free_local_port();
                    r.timeoutSeconds = cfg.distributedTimeoutSeconds;
                    localWorkers = std::make_unique<LocalWorkers>();
                    localWorkers->start(m_workerProgram.empty() ? defaultWorkerProgram() : m_workerProgram, r, 1,
                                        world - 1);
                }
                comm = joinGroup(r);
                comm->broadcast_bytes(nlohmann::json{
                    {"config", toJson(cfg)},
                    {"resumed", resumed.has_value()},
                    {"run_id", runId}}.dump());
                comm->broadcast_bytes(
                    std::string(reinterpret_cast<const char*>(bars.data()), bars.size() * sizeof(Bar)));
                doc["ranks"] = world;
            }
        }
        const int rank = comm ? comm->rank() : 0;
        const int ranks = comm ? comm->world_size() : 1;
        m_impl->deferControls = ranks > 1;
        // How the ranks reduce tensors on the run's device: in place by NCCL when every rank has
        // a GPU of its own, else through host copies by Gloo (collective: every rank, same point).
        if (comm) {
            const std::string collectives = comm->use_device(torch::Device(cfg.device));
            if (owner) doc["collectives"] = collectives;
            if (owner && !resumed) { // a resumed run keeps the record of where it started
                versions["collectives"] = collectives;
                runs->setVersions(runId, versions.dump());
            }
        }

        // Episodes (one per trading day) assigned to the parts they start in.
        const std::vector<EpisodeRange> episodes = episodesByTradingDay(bars);
        std::vector<int> trainEpisodes, validationEpisodes, testEpisodes;
        for (int e = 0; e < static_cast<int>(episodes.size()); ++e) {
            const std::size_t b = episodes[static_cast<std::size_t>(e)].begin;
            if (b >= split.testIndex.begin) testEpisodes.push_back(e);
            else if (b >= split.validationIndex.begin) validationEpisodes.push_back(e);
            else trainEpisodes.push_back(e);
        }
        if (ranks > 1) {
            // Each rank's agents collect experience on their own slice of the training days.
            std::vector<int> mine;
            for (std::size_t i = static_cast<std::size_t>(rank); i < trainEpisodes.size();
                 i += static_cast<std::size_t>(ranks))
                mine.push_back(trainEpisodes[i]);
            const bool agents = std::any_of(cfg.models.begin(), cfg.models.end(),
                                            [](ModelKind k) { return k == ModelKind::Dqn || k == ModelKind::Ppo; });
            if (agents && mine.empty())
                throw std::invalid_argument(std::to_string(trainEpisodes.size()) +
                                            " training days cannot be shared by " + std::to_string(ranks) +
                                            " processes: use fewer workers or a longer range");
            trainEpisodes = std::move(mine);
        }

        // Forecaster data: observed market features, plus the clock features as known-future covariates.
        ForecastData fdata;
        std::vector<std::size_t> observed, known;
        for (std::size_t f = 0; f < kFeatureCount; ++f)
            (isNormalizedFeature(static_cast<Feature>(f)) ? observed : known).push_back(f);
        fdata.rows = bars.size();
        fdata.cols = observed.size();
        fdata.knownCols = known.size();
        fdata.features.reserve(fdata.rows * fdata.cols);
        fdata.knownFuture.reserve(fdata.rows * fdata.knownCols);
        fdata.logReturns.resize(bars.size(), 0.0);
        for (std::size_t f : observed) fdata.featureNames.emplace_back(FeaturePipeline::featureNames()[f]);
        for (std::size_t f : known) fdata.knownNames.emplace_back(FeaturePipeline::featureNames()[f]);
        // The climatology baseline's time-of-day buckets: half-hours of the ES session (18:00 ET = 0).
        EsCalendar sessionClock;
        fdata.timeOfDay.reserve(bars.size());
        for (std::size_t t = 0; t < bars.size(); ++t) {
            fdata.timeOfDay.push_back(static_cast<int>(sessionClock.minutesSinceSessionOpen(bars[t].tsEvent) / 30.0));
            for (std::size_t f : observed) fdata.features.push_back(features.values[t * features.cols + f]);
            for (std::size_t f : known) fdata.knownFuture.push_back(features.values[t * features.cols + f]);
            if (t > 0)
                fdata.logReturns[t] = std::log(static_cast<double>(bars[t].close) /
                                               static_cast<double>(bars[t - 1].close));
        }

        // The ensemble's extra inputs: H median log returns per forecaster, in the order of cfg.models.
        TradingEnvOptions agentEnv = cfg.env;
        agentEnv.extraObservationSize = 0;
        if (cfg.ensemble)
            for (ModelKind kind : cfg.models)
                if (isForecaster(kind))
                    agentEnv.extraObservationSize += static_cast<int>(
                        (kind == ModelKind::Mamba2 ? cfg.mamba2 : cfg.tft).windowing.horizon);

        const SessionConfig effective = effectiveConfig(cfg);
        const auto capabilities = models::precision::capabilities_of(
            cfg.device.rfind("cuda", 0) == 0 ? models::precision::ComputeDevice::Cuda
                                             : models::precision::ComputeDevice::Cpu,
            cfg.device.rfind("cuda:", 0) == 0 ? std::stoi(cfg.device.substr(5)) : 0);
        // "amp": "auto": rank 0 times the model's own step both ways and every rank trains as it chose.
        const auto resolveAmp = [&](ModelSlot& slot, const detail::StepFactory& timeStep) {
            slot.amp = cfg.precision.amp;
            if (!cfg.precision.ampAuto) return;
            nlohmann::json choice;
            // A resumed run trains on as it chose at its start (its checkpoints and loss scale are that
            // precision's); only a run that never recorded a choice measures again.
            nlohmann::json kept;
            if (owner && resumed) {
                const auto stored = nlohmann::json::parse(resumed->versionsJson, nullptr, false);
                if (stored.is_object() && stored.contains("amp_choice") && stored["amp_choice"].contains(slot.name))
                    kept = stored["amp_choice"][slot.name];
            }
            if (owner && kept.is_object()) {
                choice = kept;
                choice["kept_from_start"] = true;
            } else if (owner) {
                const models::precision::AmpChoice c = detail::chooseAmp(capabilities, timeStep);
                choice = {{"mode", "auto"},
                          {"enabled", c.config.enabled},
                          {"measured", c.measured},
                          {"fp32_step_ms", c.fp32_ms},
                          {"amp_step_ms", c.amp_ms},
                          {"reason", c.reason},
                          {"dtype", c.config.enabled ? models::precision::to_string(c.config.dtype) : "fp32"},
                          {"config",
                           {{"loss_scale", c.config.loss_scale}, {"dynamic_loss_scale", c.config.dynamic_loss_scale}}}};
            }
            if (comm) choice = nlohmann::json::parse(comm->broadcast_bytes(owner ? choice.dump() : ""));
            slot.ampChoice = choice;
            if (owner && !resumed) { // a resumed run keeps the record of where it started
                versions["amp_choice"][slot.name] = choice;
                runs->setVersions(runId, versions.dump());
            }
            slot.amp = models::precision::MixedPrecisionConfig::disabled();
            if (choice.value("enabled", false)) {
                slot.amp = models::precision::auto_amp_candidate(capabilities).config;
            }
        };
        std::vector<ModelSlot> slots;
        for (ModelKind kind : cfg.models) {
            ModelSlot slot;
            slot.kind = kind;
            slot.name = toString(kind);
            if (kind == ModelKind::Dqn || kind == ModelKind::Ppo) {
                slot.env = std::make_unique<TradingEnv>(bars, features.values, featureCount, episodes, agentEnv);
                TradingEnvOptions holdOptions = cfg.env;
                holdOptions.extraObservationSize = 0;
                slot.holdEnv = std::make_unique<TradingEnv>(bars, features.values, featureCount, episodes, holdOptions);
                if (kind == ModelKind::Dqn) {
                    DqnOptions o = effective.dqn;
                    o.device = cfg.device;
                    resolveAmp(slot, detail::dqnUpdateSteps(slot.env->observationSize(), slot.env->actionCount(), o));
                    o.mixedPrecision = slot.amp;
                    slot.agent = std::make_unique<AgentRunner>(*slot.env, trainEpisodes, o);
                    if (comm) slot.agent->dqn()->setCommunicator(comm);
                } else {
                    PpoOptions o = effective.ppo;
                    o.device = cfg.device;
                    resolveAmp(slot, detail::ppoUpdateSteps(slot.env->observationSize(), slot.env->actionCount(), o));
                    o.mixedPrecision = slot.amp;
                    slot.agent = std::make_unique<AgentRunner>(*slot.env, trainEpisodes, o);
                    if (comm) slot.agent->ppo()->setCommunicator(comm);
                }
                slot.paramBytes = static_cast<double>(slot.agent->memoryBytes().parameterBytes);
            } else {
                ForecasterConfig fc = kind == ModelKind::Mamba2 ? effective.mamba2 : effective.tft;
                fc.device = cfg.device;
                const IndexRange valid = validAnchors(fdata, fc.windowing);
                const std::size_t h = fc.windowing.horizon;
                auto anchors = [&](const IndexRange& bars) {
                    const std::size_t end = bars.end > h ? bars.end - h : 0;
                    return IndexRange{std::max(valid.begin, bars.begin), std::min(valid.end, end)};
                };
                const IndexRange trainA = anchors(split.trainIndex), validA = anchors(split.validationIndex);
                if (trainA.size() == 0 || validA.size() == 0)
                    throw std::invalid_argument("too few bars for " + slot.name + "'s windows of " +
                                                std::to_string(fc.windowing.pastLength) + " bars");
                resolveAmp(slot, detail::forecasterSteps(fc, fdata, trainA, validA));
                fc.mixedPrecision = slot.amp;
                slot.forecaster = std::make_unique<ForecasterTrainer>(fc, fdata, trainA, validA);
                if (comm) slot.forecaster->setCommunicator(comm);
                slot.paramBytes = static_cast<double>(slot.forecaster->parameterBytes());
            }
            if (resumed || workerResumes) {
                // Continue from the newest checkpoint: weights, optimizer, RNG, replay and env state.
                // Every rank continues from rank 0's; the others keep their own days and position.
                std::optional<CheckpointRecord> ckpt = owner ? runs->lastCheckpoint(runId, slot.name) : std::nullopt;
                if (ckpt) {
                    // Rank 0 makes sure the file is this run's before it loads it or sends it on.
                    std::error_code ec;
                    if (!std::filesystem::is_regular_file(ckpt->path, ec))
                        throw CheckpointMismatch(
                            ckpt->path + ": the checkpoint of " + slot.name + " at step " + std::to_string(ckpt->step) +
                            " is missing. A database keeps its checkpoints in " + runs->checkpointFolder() +
                            "; one moved or copied without that folder cannot resume its runs");
                    const CheckpointIdentity expected{identity.runUuid, identity.configSha256, slot.name, ckpt->step};
                    const CheckpointCheck check = [&](const std::string& stored) {
                        verifyCheckpointIdentity(ckpt->path, stored, expected);
                    };
                    if (slot.agent) slot.agent->load(ckpt->path, /*restoreEnvironment=*/true, check);
                    else slot.forecaster->loadCheckpoint(ckpt->path, check);
                }
                if (comm) {
                    const std::string bytes = comm->broadcast_bytes(ckpt ? readFileBytes(ckpt->path) : std::string());
                    const long long step = std::stoll(
                        comm->broadcast_bytes(std::to_string(ckpt ? static_cast<long long>(ckpt->step) : 0)));
                    if (!owner && !bytes.empty()) {
                        const std::filesystem::path received = std::filesystem::temp_directory_path() /
                                                               ("foxhunt-run" + std::to_string(runId) + "-rank" +
                                                                std::to_string(rank) + "-" + slot.name + ".pt");
                        std::ofstream(received, std::ios::binary) << bytes;
                        if (slot.agent) slot.agent->load(received.string(), /*restoreEnvironment=*/false);
                        else slot.forecaster->loadCheckpoint(received.string());
                        std::filesystem::remove(received);
                        ckpt = CheckpointRecord{};
                        ckpt->step = step;
                    }
                }
                if (ckpt) {
                    slot.steps = ckpt->step;
                    slot.checkpointedStep = ckpt->step;
                    if (slot.agent) slot.episodeEquityTicks = slot.env->state().equityTicks;
                    if (slot.agent)
                        slot.lastUpdates = slot.agent->kind() == AgentKind::Dqn ? slot.agent->dqn()->updates()
                                                                                : slot.agent->ppo()->updates();
                }
            }
            slots.push_back(std::move(slot));
        }
        doc["resumed"] = resumed.has_value();

        // The served copies against the memory budget, before the first step: rank 0 measures
        // (weights plus activations at the serving batch) and every rank refuses or goes on alike.
        nlohmann::json budget;
        if (cfg.precision.memoryBudgetMb > 0.0) {
            if (owner) {
                budget = memoryBudgetJson(cfg.precision, [&] {
                    std::vector<std::pair<std::string, std::size_t>> bytes;
                    for (ModelSlot& s : slots)
                        bytes.emplace_back(s.name, s.agent ? s.agent->servingBytes(kServingBatch)
                                                           : s.forecaster->servingBytes(kServingBatch));
                    return bytes;
                }());
                if (!resumed) { // a resumed run keeps the record of where it started
                    versions["memory_budget"] = budget;
                    runs->setVersions(runId, versions.dump());
                }
            }
            if (comm) budget = nlohmann::json::parse(comm->broadcast_bytes(owner ? budget.dump() : ""));
            if (budget.value("refused", false)) {
                // Refused before it began: a new run leaves no row behind, a resumed one is as it was.
                if (owner) {
                    if (resumed) runs->setStatus(runId, resumed->status, resumed->error);
                    else runs->deleteRun(runId);
                    runId = 0;
                    result.runId = 0;
                    m_progress.runId = 0;
                    doc.erase("run_id");
                }
                throw std::invalid_argument(budget.value("message", std::string()));
            }
            doc["memory_budget"] = budget;
        }

        // A resumed run goes on from its checkpoints' step: what was recorded after it (by a run
        // killed before its next checkpoint) is replaced, not stored twice. Every model took one
        // step per tick, so the newest checkpoint's step is also the tick the run continues from.
        long long tick = 0;
        for (const ModelSlot& s : slots) tick = std::max(tick, s.steps);
        const long long firstTick = tick;
        if (owner && resumed) {
            std::vector<std::pair<std::string, std::int64_t>> lastKept{
                {std::string(metrics::kSessionModel), firstTick}};
            for (const ModelSlot& s : slots) lastKept.emplace_back(s.name, s.steps);
            runs->deleteMetricsAfter(runId, lastKept);
        }
        doc["first_tick"] = firstTick;

        // The replay of the train split paces training: every replayed bar is
        // one step of each model that still has steps to take.
        const std::vector<Bar> trainBars(bars.begin() + static_cast<std::ptrdiff_t>(split.trainIndex.begin),
                                         bars.begin() + static_cast<std::ptrdiff_t>(split.trainIndex.end));
        BarClock clock(trainBars, BarClockOptions{.speed = cfg.speed, .startPaused = m_impl->paused.load()});
        {
            std::lock_guard lock(m_impl->clockMutex);
            m_impl->clock = &clock;
            for (int k = m_impl->pendingSteps.exchange(0); k > 0; --k) clock.step();
            if (m_impl->stop) clock.stop();
        }
        m_progress.totalTicks = std::max(0LL, cfg.steps - firstTick);

        // Rank 0 writes each model that moved since its last checkpoint (a model's weights are the
        // same on every rank), through a temporary file renamed into place, and records it.
        auto checkpoint = [&] {
            if (!owner) return;
            flush(true); // the store holds every sample up to the checkpoint, which a resume keeps
            for (ModelSlot& s : slots) {
                if (s.steps == s.checkpointedStep) continue;
                std::filesystem::create_directories(checkpointFolder);
                const std::filesystem::path path = checkpointFolder / (s.name + "-" + std::to_string(s.steps) + ".pt");
                CheckpointIdentity stamp = identity;
                stamp.model = s.name;
                stamp.step = s.steps;
                // Written whole or not at all (writeFileAtomically), so a kill leaves no partial file.
                if (s.agent) s.agent->save(path.string(), toString(stamp));
                else s.forecaster->saveCheckpoint(path.string(), toString(stamp));
                runs->addCheckpoint(runId, s.name, s.steps, path.string());
                s.checkpointedStep = s.steps;
            }
        };
        const auto checkpointNow = [this] { return m_checkpointClock ? m_checkpointClock() : Clock::now(); };
        auto lastCheckpointAt = owner ? checkpointNow() : Clock::time_point{};

        MetricBatch tickBatch;
        // Metric names come from the registry (engine/telemetry/metric_registry.h).
        auto emitAt = [&](ModelSlot& s, std::string_view metric, long long step, double value) {
            tickBatch.push_back({s.name, std::string(metric), step, 0, value});
            s.last[std::string(metric)] = value;
        };
        auto emit = [&](ModelSlot& s, std::string_view metric, double value) { emitAt(s, metric, s.steps, value); };
        auto lastRss = Clock::now() - std::chrono::seconds(10);

        EnsembleFeed feed;
        if (cfg.ensemble) {
            feed.data = &fdata;
            feed.size = static_cast<std::size_t>(agentEnv.extraObservationSize);
            for (ModelSlot& s : slots)
                if (s.forecaster) feed.forecasters.push_back(s.forecaster.get());
            for (ModelSlot& s : slots)
                if (s.env)
                    s.env->setExtraObservationSource(
                        [&feed, &tick](std::size_t bar, std::span<float> out) { feed.fill(bar, tick, out); });
        }
        // With INT8 on, the forecasters' live forecasts (charted and fed to the agents) come from the kept
        // INT8 copy each refresh replaces; agents keep acting with FP32 while they learn.
        if (cfg.precision.int8)
            for (ModelSlot& s : slots)
                if (s.forecaster) s.forecaster->setInferenceWeights(InferenceWeights::Int8);
        // Kernel timings persist in the store (rank 0), so each layer shape is timed once per machine.
        std::unique_ptr<KernelTimingTable> kernelTable;
        std::unique_ptr<detail::StoredKernelTimings> kernelCache;
        if (owner && cfg.precision.int8) {
            kernelTable = std::make_unique<KernelTimingTable>(*store);
            kernelCache = std::make_unique<detail::StoredKernelTimings>(*kernelTable);
        }
        const Int8Serving serving{.backend = cfg.precision.int8Backend,
                                  .maxDegradation = cfg.precision.int8MaxDegradation,
                                  .cache = kernelCache.get()};
        const Int8RefreshOptions refreshOptions{
            .windows = 64,
            .calibrationWindows = cfg.precision.int8StaticActivations
                                      ? static_cast<std::size_t>(cfg.precision.calibrationBars)
                                      : 0,
            .serving = serving};
        // Agents' refreshes: a small fixed sample and few timed passes, so a refresh stays cheap.
        const AgentInt8Options agentRefreshOptions{
            .samples = 256,
            .calibrationSamples = cfg.precision.int8StaticActivations
                                      ? static_cast<std::size_t>(cfg.precision.calibrationBars)
                                      : 0,
            .latencyRepeats = 5,
            .serving = serving,
            .heldOut = nullptr,
            .calibrationObservations = {}};

        // Multi-process control: rank 0 releases ticks in blocks; every rank ends a block with one
        // all-reduce of its per-model throughput and all-reduce wait, which rank 0 charts.
        long long blockLeft = 0;
        auto blockStart = Clock::now();
        auto endBlock = [&](BarClock* ownerClock) {
            const double seconds = std::max(1e-9, std::chrono::duration<double>(Clock::now() - blockStart).count());
            std::vector<double> v(slots.size() * static_cast<std::size_t>(ranks) * 2, 0.0);
            for (std::size_t i = 0; i < slots.size(); ++i) {
                const std::size_t at = (i * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(rank)) * 2;
                v[at] = slots[i].blockSamples / seconds;
                v[at + 1] = slots[i].blockUpdates > 0 ? slots[i].blockAllreduceMs / slots[i].blockUpdates : 0.0;
            }
            v = comm->all_reduce_sum(v);
            for (std::size_t i = 0; i < slots.size(); ++i) {
                ModelSlot& s = slots[i];
                if (owner && s.blockSamples > 0) {
                    double slowest = 0.0;
                    for (int r = 0; r < ranks; ++r) {
                        const std::size_t at = (i * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(r)) * 2;
                        emit(s, std::string(metrics::kThroughputRank) + std::to_string(r), v[at]);
                        slowest = std::max(slowest, v[at + 1]);
                    }
                    if (s.blockUpdates > 0) emit(s, metrics::kAllreduceMs, slowest);
                }
                s.blockSamples = s.blockAllreduceMs = s.blockUpdates = 0;
            }
            blockLeft = 0;
            if (ownerClock) {
                // Between blocks every rank waits for the next release, so pausing or stopping here is safe.
                std::lock_guard lock(m_impl->clockMutex);
                m_impl->atBoundary = true;
                if (m_impl->stop) ownerClock->stop();
                else if (m_impl->paused) ownerClock->pause();
            }
        };

        auto onBar = [&](const Bar&, std::size_t index) {
            if (comm && owner && blockLeft == 0) {
                {
                    // setSpeed() and stop() write these from the UI thread under the same lock.
                    std::lock_guard lock(m_impl->clockMutex);
                    blockLeft = (m_config.speed == 0.0 && !m_impl->paused) ? kBlockTicks : 1;
                    m_impl->atBoundary = false;
                }
                comm->publish("block/" + std::to_string(blocks++), std::to_string(blockLeft));
                blockStart = Clock::now();
            }
            ++tick;
            bool anyLeft = false;
            for (ModelSlot& s : slots) {
                if (s.steps >= cfg.steps) continue;
                const auto t0 = Clock::now();
                if (s.agent) {
                    const bool freshEpisode = s.env->done();
                    const TrainStats st = s.agent->train(1);
                    s.steps = st.envSteps;
                    const double ms = msSince(t0);
                    // Equity of this session's training steps; the hold env mirrors the agent's bars.
                    const TradingEnvState& es = s.env->state();
                    s.equityTicks += es.equityTicks - (freshEpisode ? 0.0 : s.episodeEquityTicks);
                    s.episodeEquityTicks = es.equityTicks;
                    const TradingEnvState& hs = s.holdEnv->state();
                    if (hs.done || hs.episode != es.episode || hs.bar + 1 != es.bar) {
                        TradingEnvState flat;
                        flat.episode = es.episode;
                        flat.bar = es.bar - 1;
                        flat.done = false;
                        s.holdEnv->restoreState(flat);
                    }
                    s.holdEquityTicks += s.holdEnv->step(s.holdEnv->actionForPosition(1)).pnlTicks;
                    if (s.steps % kLiveEvery == 0) {
                        emit(s, metrics::kEquityTicks, s.equityTicks);
                        emit(s, metrics::kBuyHoldEquityTicks, s.holdEquityTicks);
                        emit(s, metrics::kPosition, es.position);
                    }
                    s.blockSamples += 1;
                    if (st.updates != s.lastUpdates && (st.dqn || st.ppo)) {
                        s.lastUpdates = st.updates;
                        s.blockUpdates += 1;
                        s.blockAllreduceMs += st.dqn ? st.dqn->allreduceMs : st.ppo->allreduceMs;
                        if (st.dqn) {
                            emit(s, metrics::kLoss, st.dqn->loss);
                            emit(s, metrics::kQMean, st.dqn->qMean);
                            emit(s, metrics::kGradNorm, st.dqn->gradNorm);
                            emit(s, metrics::kEpsilon, st.dqn->epsilon);
                            emit(s, metrics::kLearningRate, st.dqn->learningRate);
                            emit(s, metrics::kTdError, st.dqn->tdErrorMean);
                            emit(s, metrics::kUpdateMs, st.dqn->stepTimeMs);
                        } else {
                            // The objective PPO minimises, with the run's own coefficients.
                            emit(s, metrics::kLoss,
                                 st.ppo->policyLoss - cfg.ppo.entCoef * st.ppo->entropy +
                                     cfg.ppo.vfCoef * st.ppo->valueLoss);
                            emit(s, metrics::kPolicyLoss, st.ppo->policyLoss);
                            emit(s, metrics::kValueLoss, st.ppo->valueLoss);
                            emit(s, metrics::kEntropy, st.ppo->entropy);
                            emit(s, metrics::kApproxKl, st.ppo->approxKl);
                            emit(s, metrics::kClipFraction, st.ppo->clipFraction);
                            emit(s, metrics::kExplainedVariance, st.ppo->explainedVariance);
                            emit(s, metrics::kGradNorm, st.ppo->gradNorm);
                            emit(s, metrics::kLearningRate, st.ppo->learningRate);
                            emit(s, metrics::kUpdateMs, st.ppo->stepTimeMs);
                        }
                        const double scale = st.dqn ? st.dqn->lossScale : st.ppo->lossScale;
                        if (!std::isnan(s.lastLossScale) && scale != s.lastLossScale) ++s.scaleChanges;
                        s.lastLossScale = scale;
                        emit(s, metrics::kLossScale, scale);
                        s.skippedSteps = st.dqn ? st.dqn->skippedSteps : st.ppo->skippedSteps;
                        emit(s, metrics::kSkippedSteps, static_cast<double>(s.skippedSteps));
                        emit(s, metrics::kStepMs, ms);
                    }
                    if (st.episodesFinished > 0) emit(s, metrics::kEpisodePnlTicks, st.meanEpisodePnlTicks);
                    if (owner && s.steps % 100 == 0) {
                        const auto l0 = Clock::now();
                        (void)s.agent->greedyAction(s.env->observation());
                        const double lat = msSince(l0);
                        s.latenciesMs.push_back(lat);
                        emit(s, metrics::kLatencyMs, lat);
                    }
                } else {
                    const ForecastStepStats st = s.forecaster->trainStep();
                    s.steps = st.step;
                    s.blockSamples += static_cast<double>(s.forecaster->config().batchSize);
                    s.blockUpdates += 1;
                    s.blockAllreduceMs += st.allreduceSeconds * 1e3;
                    emit(s, metrics::kLoss, st.loss);
                    emit(s, metrics::kGradNorm, st.gradNorm);
                    emit(s, metrics::kLearningRate, st.learningRate);
                    emit(s, metrics::kStepMs, st.stepSeconds * 1e3);
                    emit(s, metrics::kLossScale, st.lossScale);
                    emit(s, metrics::kSkippedSteps, static_cast<double>(st.skippedSteps));
                    if (!std::isnan(s.lastLossScale) && st.lossScale != s.lastLossScale) ++s.scaleChanges;
                    s.lastLossScale = st.lossScale;
                    if (owner && s.steps % kLiveEvery == 0) {
                        // The forecast made at the replayed bar, timed as the inference latency.
                        const std::size_t replayed = split.trainIndex.begin + index;
                        const IndexRange valid = validAnchors(fdata, s.forecaster->config().windowing);
                        const std::size_t anchor = std::clamp(replayed, valid.begin, valid.end - 1);
                        const auto l0 = Clock::now();
                        const std::vector<double> forecast = s.forecaster->predict(anchor);
                        const double lat = msSince(l0);
                        ++(s.forecaster->lastInferenceWeights() == InferenceWeights::Int8 ? s.forecastsInt8
                                                                                          : s.forecastsFp32);
                        s.latenciesMs.push_back(lat);
                        emit(s, metrics::kLatencyMs, lat);
                        if (anchor == replayed) {
                            emitAt(s, metrics::kForecastQ10, tick, forecast[s.forecaster->quantileIndex(0.1)]);
                            emitAt(s, metrics::kForecastQ50, tick, forecast[s.forecaster->quantileIndex(0.5)]);
                            emitAt(s, metrics::kForecastQ90, tick, forecast[s.forecaster->quantileIndex(0.9)]);
                            emitAt(s, metrics::kRealised, tick, fdata.logReturns[anchor + 1]);
                        }
                    }
                }
                // First step, every 500th and the last: a short run's memory chart still ends where the model ended.
                if (s.steps % 500 == 0 || s.steps == 1 || s.steps == cfg.steps) {
                    emit(s, metrics::kParamBytes, s.paramBytes);
                    if (s.forecaster) {
                        const ModelMemory mem = s.forecaster->memory();
                        emit(s, metrics::kGradBytes, static_cast<double>(mem.gradientBytes));
                        emit(s, metrics::kOptimizerBytes, static_cast<double>(mem.optimizerBytes));
                        emit(s, metrics::kActivationBytes, static_cast<double>(mem.activationPeakBytes));
                        if (mem.onCuda) {
                            emit(s, metrics::kCudaAllocatedBytes, static_cast<double>(mem.cudaAllocatedBytes));
                            emit(s, metrics::kCudaPeakBytes, static_cast<double>(mem.cudaPeakBytes));
                        }
                    } else {
                        const AgentMemoryBytes mem = s.agent->memoryBytes();
                        emit(s, metrics::kGradBytes, static_cast<double>(mem.gradientBytes));
                        emit(s, metrics::kOptimizerBytes, static_cast<double>(mem.optimizerBytes));
                        emit(s, metrics::kActivationBytes, static_cast<double>(mem.activationBytes));
                        if (mem.onCuda) {
                            emit(s, metrics::kCudaAllocatedBytes, static_cast<double>(mem.cudaAllocatedBytes));
                            emit(s, metrics::kCudaPeakBytes, static_cast<double>(mem.cudaPeakBytes));
                        }
                    }
                }
                anyLeft = anyLeft || s.steps < cfg.steps;
            }
            // INT8 refreshes of the forecasters still training (a finished one gets the full check at the end).
            if (owner && cfg.precision.int8 && cfg.precision.int8RefreshEvery > 0 &&
                tick % cfg.precision.int8RefreshEvery == 0)
                for (ModelSlot& s : slots) {
                    if (s.steps >= cfg.steps || !s.int8Error.empty()) continue;
                    if (s.agent && s.lastUpdates == 0) continue; // nothing learned, no rollout to measure on yet
                    try {
                        double degradation = 0.0;
                        bool served = true;
                        if (s.forecaster) {
                            const Int8Refresh r = s.forecaster->refreshInt8(refreshOptions);
                            degradation = r.degradation;
                            served = r.served;
                        } else {
                            // Measured on the validation split as the FP32 greedy policy walks it.
                            AgentInt8Options o = agentRefreshOptions;
                            const PolicyTransitions held = s.agent->heldOutTransitions(validationEpisodes, o.samples);
                            o.heldOut = &held;
                            const Int8Evaluation e = s.agent->evaluateInt8(o);
                            degradation = e.degradation;
                            served = e.served;
                        }
                        emit(s, metrics::kInt8Degradation, degradation);
                        emit(s, metrics::kInt8Rejected, served ? 0.0 : 1.0);
                    } catch (const std::exception& e) {
                        s.int8Error = errorText(e);
                    }
                }
            if (comm && (--blockLeft == 0 || !anyLeft)) endBlock(owner ? &clock : nullptr);
            if (!owner) {
                tickBatch.clear(); // rank 0 speaks for the run
                return;
            }
            if (Clock::now() - lastRss > std::chrono::seconds(1)) {
                lastRss = Clock::now();
                tickBatch.push_back(
                    {std::string(metrics::kSessionModel), std::string(metrics::kRssBytes), tick, 0, residentBytes()});
            }
            if (!tickBatch.empty()) {
                const std::int64_t now = wallClockNs();
                for (MetricSample& s : tickBatch) s.wallNs = now;
                storeBatch.insert(storeBatch.end(), tickBatch.begin(), tickBatch.end());
                if (m_samples.append(std::move(tickBatch)) && m_onSamples) m_onSamples();
                tickBatch.clear();
            }
            m_progress.tick = tick - firstTick;
            flush(false);
            const auto now = checkpointNow();
            if ((cfg.checkpointEvery > 0 && tick % cfg.checkpointEvery == 0) ||
                (cfg.checkpointSeconds > 0 &&
                 std::chrono::duration<double>(now - lastCheckpointAt).count() >= cfg.checkpointSeconds)) {
                checkpoint();
                lastCheckpointAt = now;
            }
            if (!anyLeft) clock.stop();
        };

        // Replay the train split as many times as the step budget needs.
        auto allDone = [&] {
            return std::all_of(slots.begin(), slots.end(), [&](const ModelSlot& s) { return s.steps >= cfg.steps; });
        };
        if (owner) {
            // A stop inside a control block waits for the block's end (blockLeft == 0).
            auto finished = [&] { return allDone() || (m_impl->stop && blockLeft == 0); };
            while (!finished()) {
                clock.run(onBar);
                if (finished()) break;
                clock.rewind(0);
            }
            if (comm) comm->publish("block/" + std::to_string(blocks), "end");
        } else {
            // Follow rank 0's releases until it ends the run.
            std::size_t index = 0;
            for (;;) {
                const std::string release = comm->await("block/" + std::to_string(blocks++));
                if (release == "end") break;
                blockLeft = std::stoll(release);
                blockStart = Clock::now();
                for (long long n = blockLeft; n > 0 && !allDone(); --n) {
                    onBar(trainBars[index], index);
                    index = (index + 1) % trainBars.size();
                }
            }
        }
        {
            std::lock_guard lock(m_impl->clockMutex);
            m_impl->clock = nullptr;
        }
        flush(true);
        checkpoint();
        if (localWorkers) {
            // They leave as soon as they read the end of the run; one that did not is worth a line.
            const std::vector<std::string> problems = localWorkers->wait(cfg.distributedTimeoutSeconds);
            if (!problems.empty()) doc["worker_problems"] = problems;
        }
        if (!owner) {
            // A worker's part ends with training: rank 0 evaluates and stores.
            result.runId = runId;
            result.status = RunStatus::Finished;
            doc["rank"] = rank;
            doc["ticks"] = tick - firstTick;
        } else {
            // Evaluation on validation and test, beside the baselines.
            auto ampDocument = [](const ModelSlot& s, double finalScale, long long skippedSteps) {
                const auto& amp = s.amp;
                nlohmann::json j{{"enabled", amp.enabled},
                                 {"dtype", amp.enabled ? models::precision::to_string(amp.dtype) : "fp32"},
                                 {"final_scale", finalScale},
                                 {"skipped_steps", skippedSteps},
                                 {"scale_changes", s.scaleChanges}};
                if (!s.ampChoice.is_null()) j["choice"] = s.ampChoice;
                return j;
            };
            // The final INT8 check of one model, or why there is none (also emitted as its last int8_degradation).
            auto int8Document = [&](ModelSlot& s, const std::function<Int8Evaluation()>& evaluate, int latencyRepeats) {
                try {
                    if (!s.int8Error.empty()) throw std::invalid_argument(s.int8Error);
                    const Int8Evaluation e = evaluate();
                    emit(s, metrics::kInt8Degradation, e.degradation);
                    emit(s, metrics::kInt8Rejected, e.served ? 0.0 : 1.0);
                    return toJson(e, latencyRepeats);
                } catch (const std::exception& e) {
                    return nlohmann::json{{"error", errorText(e)}};
                }
            };
            nlohmann::json modelsDoc = nlohmann::json::object();
            if (!feed.forecasters.empty()) feed.buildTable(split.validationIndex.begin, bars.size());
            for (ModelSlot& s : slots) {
                nlohmann::json m;
                m["training"] = {{"steps", s.steps},
                                 {"final", s.last},
                                 {"param_bytes", s.paramBytes},
                                 {"latency", percentiles(s.latenciesMs)}};
                if (s.agent) {
                    m["training"]["updates"] = s.lastUpdates;
                    m["training"]["observation_size"] = s.env->observationSize();
                    m["training"]["extra_observation_size"] = s.env->options().extraObservationSize;
                    m["validation"] = toJson(s.agent->evaluate(validationEpisodes));
                    m["test"] = toJson(s.agent->evaluate(testEpisodes));
                    m["validation"]["amp"] = ampDocument(
                        s, s.agent->dqn() ? s.agent->dqn()->lossScale() : s.agent->ppo()->lossScale(), s.skippedSteps);
                    if (cfg.precision.int8) {
                        AgentInt8Options o = agentRefreshOptions;
                        o.samples = 1024;
                        o.latencyRepeats = 50;
                        const PolicyTransitions held = s.agent->heldOutTransitions(validationEpisodes, o.samples);
                        o.heldOut = &held;
                        m["validation"]["int8"] = int8Document(
                            s, [&] { return s.agent->evaluateInt8(o); }, o.latencyRepeats);
                        // The greedy policy through the INT8 copy just checked, on the same episodes;
                        // a copy the gate refused has no INT8 policy (FP32 acts for it).
                        if (!m["validation"]["int8"].contains("error") &&
                            m["validation"]["int8"].value("served", false)) {
                            m["validation"]["int8_policy"] = toJson(
                                s.agent->evaluate(validationEpisodes, InferenceWeights::Int8).policy);
                            m["test"]["int8_policy"] = toJson(
                                s.agent->evaluate(testEpisodes, InferenceWeights::Int8).policy);
                        }
                    }
                } else {
                    m["training"]["forecasts_served"] = {{"fp32", s.forecastsFp32}, {"int8", s.forecastsInt8}};
                    const std::size_t h = s.forecaster->config().windowing.horizon;
                    const IndexRange valid = validAnchors(fdata, s.forecaster->config().windowing);
                    const IndexRange testA{std::max(valid.begin, split.testIndex.begin),
                                           std::min(valid.end, split.testIndex.end > h ? split.testIndex.end - h : 0)};
                    m["validation"] = toJson(s.forecaster->evaluate());
                    if (testA.size() > 0) m["test"] = toJson(s.forecaster->evaluate(testA));
                    const ForecastAmpStatus amp = s.forecaster->ampStatus();
                    m["validation"]["amp"] = ampDocument(s, amp.lossScale, amp.skippedSteps);
                    if (cfg.precision.int8) {
                        Int8EvaluationOptions o;
                        o.calibrationWindows = refreshOptions.calibrationWindows;
                        o.serving = serving;
                        m["validation"]["int8"] = int8Document(
                            s, [&] { return s.forecaster->evaluateInt8(o); }, o.latencyRepeats);
                    }
                    if (s.kind == ModelKind::Tft) m["validation"]["interpretation"] = toJson(s.forecaster->interpret());
                }
                runs->saveEvaluation(runId, s.name, "validation", m["validation"].dump());
                if (m.contains("test")) runs->saveEvaluation(runId, s.name, "test", m["test"].dump());
                runs->saveEvaluation(runId, s.name, "training", m["training"].dump());
                modelsDoc[s.name] = m;
            }
            if (!tickBatch.empty()) {
                const std::int64_t now = wallClockNs();
                for (MetricSample& s : tickBatch) s.wallNs = now;
                storeBatch.insert(storeBatch.end(), tickBatch.begin(), tickBatch.end());
                if (m_samples.append(std::move(tickBatch)) && m_onSamples) m_onSamples();
                tickBatch.clear();
            }
            flush(true);
            doc["models"] = modelsDoc;
            doc["ticks"] = tick - firstTick;
            result.status = m_impl->stop ? RunStatus::Stopped : RunStatus::Finished;
            runs->setStatus(runId, m_impl->stop ? RunStatus::Stopped : RunStatus::Finished);
        }
    } catch (const std::exception& e) {
        result.status = RunStatus::Failed;
        result.error = errorText(e);
        if (localWorkers) {
            // Say what became of the local workers (a killed one explains a collective's failure).
            if (comm) {
                try {
                    comm->publish("block/" + std::to_string(blocks), "end");
                } catch (const std::exception&) {
                    // The store went with the failure; the workers time out on their own.
                }
            }
            for (const std::string& p : localWorkers->wait(1.0)) result.error += "; " + p;
            localWorkers->kill();
        }
        try {
            flush(true);
            if (runs && runId) runs->setStatus(runId, RunStatus::Failed, result.error);
        } catch (const std::exception&) {
            // The store itself failed (a full disk): the run stays "running", and the
            // next start records it as failed with the note left in the space set
            // aside for it (or as interrupted, if even that could not be written).
            if (runs && runId) runs->leaveNote(runId, result.error);
        }
    }
    {
        std::lock_guard lock(m_impl->clockMutex);
        m_impl->clock = nullptr;
    }
    doc["status"] = toString(result.status);
    if (!result.error.empty()) doc["error"] = result.error;
    doc["config"] = toJson(m_config);
    result.json = doc.dump();
    m_progress.running = false;
    return result;
}

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
