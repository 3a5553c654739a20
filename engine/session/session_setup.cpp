// SPDX-License-Identifier: GPL-3.0-or-later
// The run's set-up: the store (or, on ranks > 0, the run from rank 0), a resumed run's stored
// config, the checks that fail before anything is recorded, the bars, the run's record, the days
// cut into train, validation and test, and the forecasters' inputs.

#include "engine/session/session_run.h"

#include "engine/data/market_time.h"
#include "engine/session/devices.h"
#include "engine/session/session_json.h"
#include "engine/store/sha256.h"
#include "models/hardware/machine_probe.h"
#include "models/memory/memory_tracker.h"
#include "models/runtime.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace foxhunt::session {

namespace {

/// What a run needs beyond configProblems(), checked before it is recorded.
void checkRunnable(const SessionConfig& cfg)
{
    validate(cfg); // sizes that cannot build a model fail here, before a run is recorded
    if (cfg.device != "cpu") {
        const std::vector<std::string> devices = models::computeDevices();
        if (std::find(devices.begin(), devices.end(), cfg.device) == devices.end())
            throw std::invalid_argument("device " + cfg.device + " is not available in this build (LibTorch " +
                                        models::torchVersion() + "); use cpu");
    }
    const DeviceCheck check = checkPrecision(cfg.precision.amp, cfg.device);
    if (!check.ok) throw std::invalid_argument("mixed precision: " + check.problem + "; " + check.suggestion);
    if (cfg.ensemble && std::none_of(cfg.models.begin(), cfg.models.end(), isForecaster))
        throw std::invalid_argument("ensemble needs a forecaster (mamba2 or tft) in the run: the agents receive the "
                                    "forecasters' median forecasts; add one or turn the ensemble off");
    if (!std::isfinite(cfg.checkpointSeconds) || cfg.checkpointSeconds < 0)
        throw std::invalid_argument("checkpoint_seconds must be 0 (off) or a number of seconds");
    if (cfg.precision.int8 && cfg.precision.int8StaticActivations && cfg.precision.calibrationBars <= 0)
        throw std::invalid_argument("precision: static INT8 activations need calibration_bars > 0");
}

} // namespace

void SessionRun::open()
{
    if (m_owner) {
        m_store = std::make_unique<BarStore>(m_session.m_databasePath);
        m_runs = std::make_unique<RunStore>(*m_store);
        m_runs->markInterruptedRuns();
    } else {
        receiveRun(); // a worker rank: the run comes from rank 0, whole
    }
    if (m_owner && m_session.m_resumeRunId > 0) {
        const std::int64_t id = m_session.m_resumeRunId;
        m_resumed = m_runs->run(id);
        if (!m_resumed) throw std::invalid_argument("no run " + std::to_string(id) + " to resume");
        if (m_resumed->trashedNs > 0)
            throw std::invalid_argument("run " + std::to_string(id) +
                                        " is in the trash; restore it (Runs tab, Show trash) before resuming it");
        if (m_resumed->status == RunStatus::Running || m_resumed->status == RunStatus::Finished)
            throw std::invalid_argument("run " + std::to_string(id) + " is " + toString(m_resumed->status) +
                                        ": only stopped, failed or interrupted runs resume");
        const SessionConfig& given = m_session.m_config;
        SessionConfig stored = sessionConfigFromJson(nlohmann::json::parse(m_resumed->configJson));
        if (given.steps > 0) stored.steps = given.steps;
        stored.threads = given.threads;
        stored.speed = given.speed;
        stored.checkpointDir = given.checkpointDir;
        stored.workers = given.workers; // resume with the same or a different number of ranks
        stored.device = given.device;   // or on another device: checkpoints load onto any
        stored.distributedTimeoutSeconds = given.distributedTimeoutSeconds;
        std::lock_guard lock(m_controls.clockMutex);
        m_session.m_config = std::move(stored);
    }
    checkRunnable(cfg());
    // Capped here too for configs from files and the GUI; the CLI says so when it caps.
    models::setThreads(capThreads(cfg().threads).threads);
    models::installCountingCpuAllocator(); // exact activation_bytes; process-wide, once
}

void SessionRun::loadBars()
{
    if (m_owner) {
        m_series = chooseSeries(*m_store, cfg().series);
        if (!m_series)
            throw std::invalid_argument(cfg().series.empty()
                                            ? "the store holds no series"
                                            : "no series '" + cfg().series + "' in " + m_store->path());
        const std::int64_t fromTs = cfg().fromDay ? sessionOpenUtc(*cfg().fromDay) : INT64_MIN;
        const std::int64_t toTs = cfg().toDay ? sessionOpenUtc(*cfg().toDay + 1) : INT64_MAX;
        m_bars = m_store->loadBars(m_series->id, fromTs, toTs);
        if (m_bars.size() < 100) throw std::invalid_argument("too few bars of " + m_series->symbol + " in that range");
    } else {
        receiveBars();
    }
    m_split = splitForRun(m_bars, cfg().trainFraction, cfg().validationFraction, cfg().validationFromDay,
                          cfg().testFromDay);
    m_features = computeFeatures(m_bars);
}

void SessionRun::recordRun()
{
    const SessionConfig& c = cfg();
    // The machine the run trained on, for its report (GPU fields only when CUDA is present).
    m_versions = {{"foxhunt", FOXHUNT_VERSION},
                  {"torch", models::torchVersion()},
                  {"cuda", models::cudaAvailable()},
                  {"cpu", cpuModel()},
                  {"hardware_threads", std::thread::hardware_concurrency()},
                  {"device", c.device},
                  {"machine", machineJson(models::hardware::this_machine())}};
    const int world = m_session.m_rendezvous ? m_session.m_rendezvous->worldSize : c.workers;
    if (world > 1) m_versions["ranks"] = world;
    const std::string name = c.name.empty() ? m_series->symbol + " " + formatUtc(wallClockNs()).substr(0, 19) : c.name;
    if (m_resumed) {
        m_runId = m_resumed->id;
        m_runs->reopenRun(m_runId);
    } else {
        // Stored as the models train with it, so the report's hyperparameters are the ones used; its
        // tags and group place in the same transaction.
        m_runId = m_runs->createRun(name, toJson(effectiveConfig(c)).dump(), *m_series, m_bars.front().tsEvent,
                                    m_bars.back().tsEvent, m_versions.dump(),
                                    NewRunLabels{c.tags, c.groupId, c.groupMember});
    }
    // What every checkpoint of this run carries, and a resume checks.
    const std::optional<RunInfo> info = m_runs->run(m_runId);
    if (!info) throw std::runtime_error("run " + std::to_string(m_runId) + " vanished from " + m_store->path());
    m_identity.runUuid = info->uuid;
    m_identity.configSha256 = sha256Hex(info->configJson);
    m_checkpoints = (c.checkpointDir.empty() ? std::filesystem::path(m_runs->checkpointFolder())
                                             : std::filesystem::path(c.checkpointDir)) /
                    RunStore::runFolderName(*info);

    m_result.runId = m_runId;
    m_session.m_progress.runId = m_runId;
    m_doc["run_id"] = m_runId;
    m_doc["name"] = name;
    m_doc["series"] = {{"id", m_series->id},
                       {"symbol", m_series->symbol},
                       {"synthetic", m_series->synthetic()},
                       {"bars", m_bars.size()}};
    auto part = [&](const DateRange& d, std::size_t n) {
        return nlohmann::json{{"from", formatUtc(d.fromTs)}, {"to", formatUtc(d.toTs)}, {"bars", n}};
    };
    m_doc["split"] = {{"train", part(m_split.train, m_split.trainBars)},
                      {"validation", part(m_split.validation, m_split.validationBars)},
                      {"test", part(m_split.test, m_split.testBars)}};
    // Several processes: start the local workers (or join the ranks started elsewhere) and hand
    // them the run: config, bars and, when resuming, the checkpoints.
    if (world > 1) startRanks(world);
}

void SessionRun::cutDays()
{
    // Episodes (one per trading day) assigned to the parts they start in.
    m_episodes = episodesByTradingDay(m_bars);
    for (int e = 0; e < static_cast<int>(m_episodes.size()); ++e) {
        const std::size_t b = m_episodes[static_cast<std::size_t>(e)].begin;
        if (b >= m_split.testIndex.begin) m_testEpisodes.push_back(e);
        else if (b >= m_split.validationIndex.begin) m_validationEpisodes.push_back(e);
        else m_trainEpisodes.push_back(e);
    }
    if (m_ranks == 1) return;
    // Each rank's agents collect experience on their own slice of the training days.
    std::vector<int> mine;
    for (std::size_t i = static_cast<std::size_t>(m_rank); i < m_trainEpisodes.size();
         i += static_cast<std::size_t>(m_ranks))
        mine.push_back(m_trainEpisodes[i]);
    if (std::any_of(cfg().models.begin(), cfg().models.end(), isAgent) && mine.empty())
        throw std::invalid_argument(std::to_string(m_trainEpisodes.size()) + " training days cannot be shared by " +
                                    std::to_string(m_ranks) + " processes: use fewer workers or a longer range");
    m_trainEpisodes = std::move(mine);
}

void SessionRun::buildForecastData()
{
    // Observed market features, plus the clock features as known-future covariates.
    ForecastData& fdata = m_forecastData;
    std::vector<std::size_t> observed, known;
    for (std::size_t f = 0; f < kFeatureCount; ++f)
        (isNormalizedFeature(static_cast<Feature>(f)) ? observed : known).push_back(f);
    fdata.rows = m_bars.size();
    fdata.cols = observed.size();
    fdata.knownCols = known.size();
    fdata.features.reserve(fdata.rows * fdata.cols);
    fdata.knownFuture.reserve(fdata.rows * fdata.knownCols);
    fdata.logReturns.resize(m_bars.size(), 0.0);
    for (std::size_t f : observed) fdata.featureNames.emplace_back(FeaturePipeline::featureNames()[f]);
    for (std::size_t f : known) fdata.knownNames.emplace_back(FeaturePipeline::featureNames()[f]);
    // The climatology baseline's time-of-day buckets: half-hours of the ES session (18:00 ET = 0).
    EsCalendar sessionClock;
    fdata.timeOfDay.reserve(m_bars.size());
    const FeatureMatrix& features = m_features;
    for (std::size_t t = 0; t < m_bars.size(); ++t) {
        fdata.timeOfDay.push_back(static_cast<int>(sessionClock.minutesSinceSessionOpen(m_bars[t].tsEvent) / 30.0));
        for (std::size_t f : observed) fdata.features.push_back(features.values[t * features.cols + f]);
        for (std::size_t f : known) fdata.knownFuture.push_back(features.values[t * features.cols + f]);
        if (t > 0)
            fdata.logReturns[t] = std::log(static_cast<double>(m_bars[t].close) /
                                           static_cast<double>(m_bars[t - 1].close));
    }
}

} // namespace foxhunt::session
