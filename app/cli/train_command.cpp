// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli train : a headless training session (replay -> models ->
// evaluation beside the baselines), recorded in the run store.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"

#include "engine/data/market_time.h"
#include "engine/session/devices.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

namespace foxhunt::cli {

namespace {

struct TrainArgs {
    std::string db;
    std::string name;
    std::vector<std::string> tags;
    std::string models = "dqn";
    std::string preset = "default";
    std::string series;
    std::string from, to;
    long long steps = 0;
    long long seed = -1;
    std::string config;
    std::string report;
    std::string speed = "max";
    int threads = 0;
    std::string device;
    std::int64_t resume = 0;
    int nproc = 0;
    double timeout = 0.0;
    std::string masterAddr;
    int masterPort = 0;
    int worldSize = 0;
    int rank = -1;
    bool json = false;
    ProgressMode progress = ProgressMode::Auto;
};

std::atomic<TrainingSession*> g_session{nullptr};

extern "C" void onSignal(int)
{
    // Stop is an atomic store: safe from a signal handler. The run finishes as
    // "stopped" with everything so far stored.
    if (TrainingSession* s = g_session.load()) s->stop();
}

int run(const TrainArgs& a)
{
    SessionConfig config = SessionConfig::defaults();
    try {
        applyModelPreset(config, *modelPresetFromString(a.preset)); // --config's keys go on top
        if (!a.config.empty()) {
            std::ifstream in(a.config);
            if (!in) throw std::invalid_argument("cannot read config file " + a.config);
            config = sessionConfigFromJson(nlohmann::json::parse(in), config);
        }
        config.models.clear();
        if (a.models.empty()) throw std::invalid_argument("--models is empty: name one or more of dqn, ppo, mamba2, tft");
        std::stringstream list(a.models);
        for (std::string name; std::getline(list, name, ',');) {
            const auto kind = modelKindFromString(name);
            if (!kind) throw std::invalid_argument("unknown model '" + name + "' (dqn, ppo, mamba2, tft)");
            config.models.push_back(*kind);
        }
        if (!a.name.empty()) config.name = a.name;
        if (!config.name.empty()) config.name = RunStore::checkedName(config.name);
        for (const std::string& t : a.tags) RunStore::checkedTag(t);
        if (a.resume == 0) config.tags = a.tags;
        if (a.steps > 0) config.steps = a.steps;
        else if (a.resume > 0) config.steps = 0; // keep the stored run's budget
        if (a.seed >= 0) config.seed = static_cast<std::uint64_t>(a.seed);
        if (a.threads > 0) config.threads = a.threads;
        if (!a.device.empty()) config.device = a.device;
        if (a.nproc > 0) config.workers = a.nproc;
        if (a.timeout > 0.0) config.distributedTimeoutSeconds = a.timeout;
        if (!a.series.empty()) config.series = a.series;
        if (a.speed != "max") {
            // The whole text must be a number: std::stod alone takes "2x" as 2 and says "stod" for "abc".
            std::size_t used = 0;
            double speed = 0.0;
            try {
                speed = std::stod(a.speed, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != a.speed.size() || !(speed > 0.0) || !std::isfinite(speed))
                throw std::invalid_argument("--speed is max or a positive multiple of real time (e.g. 60), not '" +
                                            a.speed + "'");
            config.speed = speed;
        }
        for (auto [text, out] : {std::pair{&a.from, &config.fromDay}, std::pair{&a.to, &config.toDay}}) {
            if (text->empty()) continue;
            *out = parseDate(*text);
            if (!*out) throw std::invalid_argument("dates are YYYY-MM-DD ES trading days, not '" + *text + "'");
        }
        if (a.resume == 0) validate(config); // a resumed run's stored config is checked when it loads
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    // From --threads or the config file alike: no more intra-op threads than the machine has.
    if (const ThreadCap cap = capThreads(config.threads); !cap.note.empty()) {
        printError("note: " + cap.note);
        config.threads = cap.threads;
    }

    // Started by torchrun or by hand on several machines: WORLD_SIZE and RANK in the environment.
    Rendezvous rendezvous;
    try {
        rendezvous = rendezvousFromEnvironment();
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    if (a.timeout > 0.0) rendezvous.timeoutSeconds = a.timeout;
    if (!a.masterAddr.empty()) rendezvous.masterAddr = a.masterAddr;
    if (a.masterPort > 0) rendezvous.masterPort = a.masterPort;
    if (a.worldSize > 0) rendezvous.worldSize = a.worldSize;
    if (a.rank >= 0) rendezvous.rank = a.rank;
    if (rendezvous.rank >= rendezvous.worldSize) {
        printError("rank " + std::to_string(rendezvous.rank) + " is outside WORLD_SIZE " + std::to_string(rendezvous.worldSize));
        return kExitError;
    }
    const bool external = (std::getenv("WORLD_SIZE") != nullptr || a.worldSize > 0) && rendezvous.worldSize > 1;
    LocalWorkers local;
    if (external && a.nproc > 1) {
        // This machine's share: this process and nproc - 1 local ranks after it.
        if (rendezvous.rank + a.nproc > rendezvous.worldSize) {
            printError("--nproc " + std::to_string(a.nproc) + " from rank " + std::to_string(rendezvous.rank) +
                       " exceeds WORLD_SIZE " + std::to_string(rendezvous.worldSize));
            return kExitError;
        }
        try {
            local.start(defaultWorkerProgram(), rendezvous, rendezvous.rank + 1, a.nproc - 1);
        } catch (const std::exception& e) {
            printError(e.what());
            return kExitError;
        }
    }
    if (external && rendezvous.rank > 0) {
        // The same command on every rank, as with torchrun: ranks > 0 take the run from rank 0.
        const SessionResult result = runWorker(rendezvous);
        if (result.status == RunStatus::Failed) {
            printError("rank " + std::to_string(rendezvous.rank) + ": " + result.error);
            return kExitError;
        }
        return kExitOk;
    }

    const std::string db = resolveDbPath(a.db);
    TrainingSession session(db, config);
    if (a.resume > 0) session.resumeRun(a.resume);
    if (external) session.setRendezvous(rendezvous);
    g_session = &session;
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    // The session reports bars replayed through atomics; this thread polls them while run() blocks
    // and wakes at once when asked to stop, so the run's end is not held up by a sleep.
    std::jthread progress;
    if (progressEnabled(a.progress)) {
        progress = std::jthread([&session](std::stop_token stop) {
            ProgressLine line(ProgressMode::On, "train", "bars");
            std::mutex mutex;
            std::condition_variable_any wake;
            std::unique_lock lock(mutex);
            while (!stop.stop_requested()) {
                wake.wait_for(lock, stop, std::chrono::milliseconds(250), [] { return false; });
                const SessionProgress& p = session.progress();
                if (stop.stop_requested() || !p.running || p.totalTicks <= 0) continue;
                line.update(static_cast<std::uint64_t>(p.tick.load()), static_cast<std::uint64_t>(p.totalTicks.load()));
            }
            const SessionProgress& p = session.progress();
            if (p.totalTicks > 0) {
                line.update(static_cast<std::uint64_t>(p.tick.load()), static_cast<std::uint64_t>(p.totalTicks.load()));
                line.finish();
            }
        });
    }
    const SessionResult result = session.run();
    g_session = nullptr;
    if (progress.joinable()) {
        progress.request_stop();
        progress.join();
    }

    if (a.resume > 0 && (!a.tags.empty() || !a.name.empty()) && result.runId > 0) {
        // A new run gets its name and tags as the session creates it; a resumed one keeps its stored
        // name and tags, so these are added once it is back.
        try {
            BarStore store(db);
            RunStore runs(store);
            if (!a.name.empty()) runs.setName(result.runId, config.name);
            runs.addTags(result.runId, a.tags);
        } catch (const std::exception& e) {
            printError("labels: " + std::string(e.what()));
            return kExitError;
        }
    }
    const nlohmann::json doc = nlohmann::json::parse(result.json);
    if (!a.report.empty() && result.runId > 0) {
        try {
            exportReport(db, {result.runId}, a.report);
        } catch (const std::exception& e) {
            printError("report: " + std::string(e.what()));
            return kExitError;
        }
    }
    if (a.json) {
        printJson(doc);
    } else {
        std::cout << "run " << result.runId << ": " << toString(result.status) << '\n';
        if (doc.contains("models"))
            for (const auto& [name, m] : doc["models"].items()) {
                std::cout << "  " << name << ": " << m["training"]["steps"] << " steps";
                if (m.contains("test") && m["test"].contains("policy"))
                    std::cout << ", test PnL " << m["test"]["policy"]["pnl_usd"] << " USD (flat "
                              << m["test"]["flat"]["pnl_usd"] << ", buy-and-hold " << m["test"]["buy_and_hold"]["pnl_usd"]
                              << ")";
                if (m.contains("test") && m["test"].contains("model"))
                    std::cout << ", test quantile loss " << m["test"]["model"]["quantile_loss"] << " (zero "
                              << m["test"]["zero_return"]["quantile_loss"] << ", persistence "
                              << m["test"]["persistence"]["quantile_loss"] << ")";
                std::cout << '\n';
            }
        if (!a.report.empty()) std::cout << "report: " << a.report << '\n';
    }
    if (result.status == RunStatus::Failed) {
        printError(result.error);
        return kExitError;
    }
    return kExitOk;
}

} // namespace

Runner addTrainCommand(CLI::App& app)
{
    auto args = std::make_shared<TrainArgs>();
    CLI::App* cmd = app.add_subcommand("train", "Train models on a replayed series and evaluate them beside baselines");
    addDbOption(*cmd, args->db);
    cmd->add_option("--name", args->name, "Run name (at most 200 characters; default: series and start time)");
    cmd->add_option("--tag", args->tags, "Tag the run (repeatable; no commas)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--models", args->models, "Comma-separated: dqn, ppo, mamba2, tft")->capture_default_str();
    cmd->add_option("--preset", args->preset,
                    "Model sizes: default, small (a quick look) or seed (the seeds' layer sizes, where BF16 "
                    "and INT8 can pay)")
        ->check(CLI::IsMember({"default", "small", "seed"}))
        ->capture_default_str();
    cmd->add_option("--series", args->series, "Series id or symbol (default: first real series, else synthetic)");
    cmd->add_option("--from", args->from, "First ES trading day, YYYY-MM-DD");
    cmd->add_option("--to", args->to, "Last ES trading day (inclusive), YYYY-MM-DD");
    cmd->add_option("--steps", args->steps,
                    "Steps per model: environment steps (agents), optimizer steps (forecasters)")
        ->check(CLI::Range(1LL, kMaxSteps));
    cmd->add_option("--seed", args->seed, "Seed of every model")
        ->check(CLI::Range(0LL, static_cast<long long>(kMaxSeed)));
    cmd->add_option("--threads", args->threads, "LibTorch intra-op threads (default 1; at most the hardware threads)")->check(CLI::PositiveNumber);
    cmd->add_option("--device", args->device, "cpu or cuda:N (default cpu; a resumed run may change it)");
    cmd->add_option("--speed", args->speed, "Replay pace: max, or N x real time")->capture_default_str();
    cmd->add_option("--config", args->config, "JSON file with any SessionConfig keys (see README)");
    cmd->add_option("--report", args->report, "Write the run report at the end (.html, .json, .csv, .pdf)");
    cmd->add_option("--resume", args->resume, "Continue a stopped, failed or interrupted run from its last checkpoints")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--nproc", args->nproc,
                    "Processes training the run together, data parallel (like torchrun --nproc-per-node); "
                    "with WORLD_SIZE/RANK set, this machine's share")
        ->check(CLI::Range(1, 256));
    cmd->add_option("--timeout", args->timeout, "Seconds a silent process may take before the run fails (default 60)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--master-addr", args->masterAddr, "Several machines: host of rank 0 (MASTER_ADDR)");
    cmd->add_option("--master-port", args->masterPort, "Several machines: rank 0's store port (MASTER_PORT, default 29500)");
    cmd->add_option("--world-size", args->worldSize, "Several machines: processes in the run (WORLD_SIZE)");
    cmd->add_option("--rank", args->rank, "Several machines: this process's rank (RANK; 0 owns the run)");
    cmd->add_flag("--json", args->json, "Print the result as JSON");
    addProgressOptions(*cmd, args->progress);
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
