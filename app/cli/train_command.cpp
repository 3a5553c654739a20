// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli train : a headless training session (replay -> models ->
// evaluation beside the baselines), recorded in the run store.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"

#include "engine/data/market_time.h"
#include "engine/replay/fold_plan.h"
#include "engine/replay/sweep_plan.h"
#include "engine/replay/split.h"
#include "engine/report/group_summary.h"
#include "engine/session/child_process.h"
#include "engine/session/devices.h"
#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <map>
#include <sstream>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

#include <unistd.h>

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
    std::string seeds;            ///< a run group: one member per seed ("1-5", "1,3,7")
    int folds = 0;                ///< a run group of walk-forward folds (x seeds)
    std::string window;           ///< folds: "expanding" (default) or "rolling"
    std::string sweep;            ///< a run group: one member per trial of this sweep file
    int jobs = 0;                 ///< members trained at once (default: the hardware threads)
    std::int64_t resumeGroup = 0; ///< finish a group: start, resume or skip each member
    std::int64_t groupId = 0;     ///< internal: this process trains member groupMember of that group
    long long groupMember = -1;
};

std::atomic<TrainingSession*> g_session{nullptr};

extern "C" void onSignal(int)
{
    // Stop is an atomic store: safe from a signal handler. The run finishes as
    // "stopped" with everything so far stored.
    if (TrainingSession* s = g_session.load()) s->stop();
}

/// The session config the options describe (preset, --config, then the options on top).
/// Throws std::invalid_argument naming the option at fault.
SessionConfig configFromArgs(const TrainArgs& a)
{
    SessionConfig config = SessionConfig::defaults();
    {
        applyModelPreset(config, *modelPresetFromString(a.preset)); // --config's keys go on top
        if (!a.config.empty()) {
            std::ifstream in(a.config);
            if (!in) throw std::invalid_argument("cannot read config file " + a.config);
            config = sessionConfigFromJson(nlohmann::json::parse(in), config);
        }
        config.models.clear();
        if (a.models.empty())
            throw std::invalid_argument("--models is empty: name one or more of dqn, ppo, mamba2, tft");
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
    }
    return config;
}

int runGroup(const TrainArgs& a);

int run(const TrainArgs& a)
{
    if (!a.window.empty() && a.folds == 0) {
        printError("--window goes with --folds");
        return kExitError;
    }
    if (!a.seeds.empty() || a.folds > 0 || a.resumeGroup > 0 || !a.sweep.empty()) return runGroup(a);
    if ((a.groupId > 0) != (a.groupMember >= 0)) {
        printError("--group-id and --group-member go together");
        return kExitError;
    }
    SessionConfig config;
    try {
        config = configFromArgs(a);
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    if (a.resume == 0) {
        // Recorded by the session in the transaction that creates the run (a resumed member is in its group).
        config.groupId = a.groupId;
        config.groupMember = a.groupMember;
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
        printError("rank " + std::to_string(rendezvous.rank) + " is outside WORLD_SIZE " +
                   std::to_string(rendezvous.worldSize));
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
                              << m["test"]["flat"]["pnl_usd"] << ", buy-and-hold "
                              << m["test"]["buy_and_hold"]["pnl_usd"] << ")";
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

/// "1-5", "1,3,7" or both ("1-3,7"): the seeds in the order given. Throws std::invalid_argument.
std::vector<std::int64_t> parseSeeds(const std::string& text)
{
    const auto number = [&](const std::string& part) {
        std::size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(part, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (part.empty() || used != part.size() || v < 0 || static_cast<std::uint64_t>(v) > kMaxSeed)
            throw std::invalid_argument("--seeds takes seeds like 1-5 or 1,3,7 (whole numbers >= 0), not '" + text +
                                        "'");
        return static_cast<std::int64_t>(v);
    };
    std::vector<std::int64_t> seeds;
    std::stringstream list(text);
    for (std::string part; std::getline(list, part, ',');) {
        const std::size_t dash = part.find('-');
        if (dash == std::string::npos) {
            seeds.push_back(number(part));
            continue;
        }
        const std::int64_t from = number(part.substr(0, dash)), to = number(part.substr(dash + 1));
        if (to < from || to - from >= 10'000)
            throw std::invalid_argument("--seeds range " + part + " must run upwards, at most 10000 seeds");
        for (std::int64_t s = from; s <= to; ++s) seeds.push_back(s);
    }
    if (seeds.empty()) throw std::invalid_argument("--seeds names no seed");
    std::vector<std::int64_t> sorted = seeds;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw std::invalid_argument("--seeds names a seed twice: '" + text + "'");
    return seeds;
}

std::atomic<bool> g_groupStop{false};

extern "C" void onGroupSignal(int)
{
    g_groupStop = true;
}

/// One member a group launcher still has to train: fresh (resumeRunId 0) or resumed.
struct MemberJob {
    std::int64_t member = 0; ///< its id in the group: the seed, or the index into the fold plan
    std::int64_t seed = 0;
    std::int64_t resumeRunId = 0;
};

/// Plans a folds group over the bars `config` selects in `store` (seed-major: member i is seed
/// i / folds on fold i % folds) and pins the series, so that every member loads the same bars.
FoldPlan planFoldGroup(BarStore& store, SessionConfig& config, const std::vector<std::int64_t>& seeds, int folds,
                       FoldWindow window)
{
    const std::optional<SeriesInfo> series = chooseSeries(store, config.series);
    if (!series)
        throw std::invalid_argument(config.series.empty() ? "the store holds no series"
                                                          : "no series '" + config.series + "'");
    config.series = std::to_string(series->id);
    const std::int64_t fromTs = config.fromDay ? sessionOpenUtc(*config.fromDay)
                                               : std::numeric_limits<std::int64_t>::min();
    const std::int64_t toTs = config.toDay ? sessionOpenUtc(*config.toDay + 1)
                                           : std::numeric_limits<std::int64_t>::max();
    const std::vector<Bar> bars = store.loadBars(series->id, fromTs, toTs);
    FoldPlan plan;
    plan.folds = static_cast<std::size_t>(folds);
    plan.window = window;
    // A fold's window is split between train and validation as the config splits a whole run.
    plan.validationShare = config.validationFraction / (config.trainFraction + config.validationFraction);
    const std::vector<FoldDays> days = planFolds(tradingDaysOf(bars), plan.folds, window, plan.validationShare);
    std::vector<FoldRunSettings> settings;
    for (const FoldDays& d : days) settings.push_back(foldRunSettings(bars, d));
    for (std::int64_t seed : seeds)
        for (std::size_t k = 0; k < days.size(); ++k) plan.members.push_back({seed, days[k], settings[k]});
    return plan;
}

/// The config a fold member trains with: the group's, cut to its fold's days and split.
nlohmann::json foldMemberConfig(nlohmann::json config, const FoldMember& m)
{
    config.erase("walk_forward");
    config["from_day"] = m.settings.fromDay;
    config["to_day"] = m.settings.toDay;
    config["train_fraction"] = m.settings.trainFraction;
    config["validation_fraction"] = m.settings.validationFraction;
    // The fold's own days, not shares of its bars: the member's split is the plan's, exactly.
    config["validation_from_day"] = m.days.validationFrom;
    config["test_from_day"] = m.days.testFrom;
    return config;
}

int runGroup(const TrainArgs& a)
{
    const bool resuming = a.resumeGroup > 0;
    if (resuming && (!a.seeds.empty() || a.folds > 0 || !a.sweep.empty())) {
        printError("--resume-group takes the seeds, folds and trials the group was made with; leave out --seeds, "
                   "--folds and --sweep");
        return kExitError;
    }
    if (!a.sweep.empty() && (!a.seeds.empty() || a.folds > 0)) {
        printError("--sweep trains one run per trial with the config's seed; leave out --seeds and --folds");
        return kExitError;
    }
    // --folds alone trains one seed: the config's, or --seed's.
    for (const auto& [given, name] :
         {std::pair{a.seed >= 0 && (!a.seeds.empty() || resuming), "--seed"}, std::pair{a.resume > 0, "--resume"},
          std::pair{!a.report.empty(), "--report"}, std::pair{a.groupId > 0, "--group-id"},
          std::pair{a.worldSize > 0 || a.rank >= 0, "--world-size/--rank"}})
        if (given) {
            printError(std::string(name) + " does not go with a run group (--seeds, --folds, --resume-group)");
            return kExitError;
        }
    std::vector<std::int64_t> seeds;
    std::optional<SweepPlan> sweep; // a sweep group's members
    std::string configJson;
    SessionConfig base;
    std::optional<FoldWindow> window;
    try {
        if (!resuming) {
            if (a.folds > 0) {
                window = foldWindowFromString(a.window.empty() ? "expanding" : a.window);
                if (!window) throw std::invalid_argument("--window is expanding or rolling, not '" + a.window + "'");
            }
            base = configFromArgs(a); // checked before the store is touched
            seeds = a.seeds.empty() ? std::vector<std::int64_t>{static_cast<std::int64_t>(base.seed)}
                                    : parseSeeds(a.seeds);
            configJson = toJson(base).dump();
            if (!a.sweep.empty()) {
                // The trials are drawn here, once, and every trial's config is checked before the
                // group is made.
                std::ifstream in(a.sweep);
                if (!in) throw std::invalid_argument("cannot read sweep file " + a.sweep);
                const nlohmann::json spec = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
                if (spec.is_discarded()) throw std::invalid_argument(a.sweep + " is not JSON");
                nlohmann::json config = nlohmann::json::parse(configJson);
                sweep = planSweep(spec, config);
                for (std::size_t i = 0; i < sweep->trials.size(); ++i) {
                    try {
                        validate(sessionConfigFromJson(trialConfig(config, sweep->trials[i]), base));
                    } catch (const std::exception& e) {
                        throw std::invalid_argument("sweep trial " + std::to_string(i) + " (" +
                                                    describeTrial(sweep->trials[i], sweep->keys) + "): " + e.what());
                    }
                }
                config["sweep"] = toJson(*sweep);
                configJson = config.dump();
            }
        }
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    std::optional<FoldPlan> plan; // a folds group's members
    std::vector<std::int64_t> memberIds;

    const std::string db = resolveDbPath(a.db);
    std::int64_t groupId = 0;
    std::vector<MemberJob> jobs;
    std::size_t done = 0;
    std::unique_ptr<BarStore> store;
    std::unique_ptr<RunStore> runs;
    try {
        store = std::make_unique<BarStore>(db);
        runs = std::make_unique<RunStore>(*store);
        runs->markInterruptedRuns();
        if (resuming) {
            const std::optional<RunGroupInfo> group = runs->group(a.resumeGroup);
            if (!group) throw std::invalid_argument("no run group " + std::to_string(a.resumeGroup) + " in " + db);
            groupId = group->id;
            memberIds = group->members;
            configJson = group->configJson;
            if (group->kind == GroupKind::Folds)
                plan = foldPlanFromJson(nlohmann::json::parse(configJson).at("walk_forward"));
            if (group->kind == GroupKind::Sweep)
                sweep = sweepPlanFromJson(nlohmann::json::parse(configJson).at("sweep"));
            runs->reopenGroup(groupId); // refuses a group another process is running
            std::map<std::int64_t, RunInfo> byMember;
            for (RunInfo& r : runs->groupMembers(groupId)) byMember.emplace(r.groupMember, std::move(r));
            for (std::int64_t member : memberIds) {
                std::int64_t seed = member;
                if (sweep) {
                    if (member < 0 || static_cast<std::size_t>(member) >= sweep->trials.size())
                        throw std::runtime_error("member " + std::to_string(member) + " is not a trial of the sweep");
                    seed = nlohmann::json::parse(configJson).value("seed", std::int64_t{1});
                }
                if (plan) {
                    if (member < 0 || static_cast<std::size_t>(member) >= plan->members.size())
                        throw std::runtime_error("member " + std::to_string(member) +
                                                 " is not in the group's fold plan");
                    seed = plan->members[static_cast<std::size_t>(member)].seed;
                }
                const auto it = byMember.find(member);
                if (it == byMember.end()) jobs.push_back({member, seed, 0});
                else if (it->second.status == RunStatus::Finished) ++done;
                else if (it->second.status == RunStatus::Running)
                    throw std::runtime_error("member " + std::to_string(member) + " (run " +
                                             std::to_string(it->second.id) + ") is still running in another process");
                else jobs.push_back({member, seed, it->second.id});
            }
        } else if (a.folds > 0) {
            // The folds are cut once, here, from the series' trading days, and stored with the group.
            plan = planFoldGroup(*store, base, seeds, a.folds, *window);
            nlohmann::json config = toJson(base);
            config["walk_forward"] = toJson(*plan);
            configJson = config.dump();
        }
        // Here, once: the members would otherwise race to store the synthetic default series.
        const std::string series = nlohmann::json::parse(configJson).value("series", std::string());
        if (!chooseSeries(*store, series))
            throw std::invalid_argument(series.empty() ? "the store holds no series"
                                                       : "no series '" + series + "' in " + db);
        if (!resuming) {
            if (plan) {
                for (std::size_t i = 0; i < plan->members.size(); ++i) {
                    memberIds.push_back(static_cast<std::int64_t>(i));
                    jobs.push_back({static_cast<std::int64_t>(i), plan->members[i].seed, 0});
                }
                groupId = runs->createGroup(GroupKind::Folds, configJson, memberIds);
            } else if (sweep) {
                for (std::size_t i = 0; i < sweep->trials.size(); ++i) {
                    memberIds.push_back(static_cast<std::int64_t>(i));
                    jobs.push_back({static_cast<std::int64_t>(i), static_cast<std::int64_t>(base.seed), 0});
                }
                groupId = runs->createGroup(GroupKind::Sweep, configJson, memberIds);
            } else {
                memberIds = seeds;
                groupId = runs->createGroup(GroupKind::Seeds, configJson, seeds);
                for (std::int64_t seed : seeds) jobs.push_back({seed, seed, 0});
            }
        }
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }

    // The members share the group's config through a file (a folds group: one per fresh member, cut
    // to its fold); each gets its seed on the command line.
    const nlohmann::json config = nlohmann::json::parse(configJson);
    std::string models;
    for (const nlohmann::json& m : config.value("models", nlohmann::json::array()))
        models += (models.empty() ? "" : ",") + m.get<std::string>();
    const std::string filePrefix = "foxhunt-group-" + std::to_string(groupId) + "-" + std::to_string(::getpid());
    std::map<std::int64_t, std::filesystem::path> configFiles; // member -> its config file (-1: the shared one)
    const auto writeConfig = [&](std::int64_t key, const std::string& name, const std::string& text) {
        const std::filesystem::path file = std::filesystem::temp_directory_path() / name;
        std::ofstream out(file);
        out << text;
        if (!out) throw std::runtime_error("cannot write " + file.string());
        configFiles[key] = file;
    };
    try {
        if (plan) {
            for (const MemberJob& job : jobs)
                if (job.resumeRunId == 0)
                    writeConfig(job.member, filePrefix + "-m" + std::to_string(job.member) + ".json",
                                foldMemberConfig(config, plan->members[static_cast<std::size_t>(job.member)]).dump());
        } else if (sweep) {
            for (const MemberJob& job : jobs)
                if (job.resumeRunId == 0)
                    writeConfig(job.member, filePrefix + "-t" + std::to_string(job.member) + ".json",
                                trialConfig(config, sweep->trials[static_cast<std::size_t>(job.member)]).dump());
        } else {
            writeConfig(-1, filePrefix + ".json", configJson);
        }
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int parallel = std::max(
        1, std::min<int>(a.jobs > 0 ? a.jobs : hardware, static_cast<int>(std::max<std::size_t>(jobs.size(), 1))));
    const int threads = a.threads > 0 ? a.threads : std::max(1, hardware / parallel);
    const std::string program = defaultWorkerProgram();
    const std::vector<std::string> env = environmentWithout(
        {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK"});
    auto commandFor = [&](const MemberJob& job) {
        std::vector<std::string> args{"train",
                                      "--db",
                                      db,
                                      "--threads",
                                      std::to_string(threads),
                                      "--group-id",
                                      std::to_string(groupId),
                                      "--group-member",
                                      std::to_string(job.member),
                                      "--no-progress"};
        if (job.resumeRunId > 0) {
            for (std::string s : {std::string("--resume"), std::to_string(job.resumeRunId)})
                args.push_back(std::move(s));
        } else {
            const std::filesystem::path& configFile = configFiles.at(plan || sweep ? job.member : -1);
            for (std::string s : {std::string("--config"), configFile.string(), std::string("--models"), models,
                                  std::string("--seed"), std::to_string(job.seed)})
                args.push_back(std::move(s));
        }
        // With --resume-group: a new step budget (the total) for every member, as --resume takes it.
        if (resuming && a.steps > 0)
            for (std::string s : {std::string("--steps"), std::to_string(a.steps)}) args.push_back(std::move(s));
        if (!a.device.empty())
            for (std::string s : {std::string("--device"), a.device}) args.push_back(std::move(s));
        if (a.nproc > 0)
            for (std::string s : {std::string("--nproc"), std::to_string(a.nproc)}) args.push_back(std::move(s));
        if (a.timeout > 0.0)
            for (std::string s : {std::string("--timeout"), std::to_string(a.timeout)}) args.push_back(std::move(s));
        return args;
    };

    g_groupStop = false;
    std::signal(SIGINT, onGroupSignal);
    std::signal(SIGTERM, onGroupSignal);
    std::vector<std::string> failures;
    {
        ProgressLine line(progressEnabled(a.progress) ? ProgressMode::On : ProgressMode::Off,
                          "group " + std::to_string(groupId), "members");
        line.update(done, memberIds.size());
        std::vector<std::pair<pid_t, std::int64_t>> running; // pid, member
        std::size_t next = 0;
        bool stopping = false;
        while (next < jobs.size() || !running.empty()) {
            while (!stopping && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
                const MemberJob& job = jobs[next++];
                try {
                    running.emplace_back(spawnProcess(program, commandFor(job), env, "/dev/null"), job.member);
                } catch (const std::exception& e) {
                    failures.push_back("member " + std::to_string(job.member) + ": " + e.what());
                }
            }
            for (auto it = running.begin(); it != running.end();) {
                const ChildExit exit = pollChild(it->first);
                if (!exit.ended) {
                    ++it;
                    continue;
                }
                if (const std::string why = describe(exit); !why.empty())
                    failures.push_back("member " + std::to_string(it->second) + " " + why);
                ++done;
                line.update(done, memberIds.size());
                it = running.erase(it);
            }
            if (g_groupStop && !stopping) {
                // Every member stops as `train` does on a signal: "stopped", checkpointed, resumable.
                stopping = true;
                for (const auto& [pid, seed] : running) ::kill(pid, SIGTERM);
            }
            if (!running.empty() || (!stopping && next < jobs.size()))
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (stopping && running.empty()) break;
        }
        line.finish();
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    for (const auto& [member, file] : configFiles) {
        std::error_code ec;
        std::filesystem::remove(file, ec);
    }

    try {
        std::size_t finished = 0;
        for (const RunInfo& r : runs->groupMembers(groupId)) finished += r.status == RunStatus::Finished;
        const RunStatus status = finished == memberIds.size() ? RunStatus::Finished
                                 : g_groupStop                ? RunStatus::Stopped
                                                              : RunStatus::Failed;
        runs->setGroupStatus(groupId, status);
        const GroupSummary summary = summarizeGroup(*runs, groupId);
        if (a.json) {
            printJson(toJson(summary));
        } else {
            std::cout << "group " << groupId << ": " << summary.status << '\n';
            for (const GroupMemberLine& m : summary.members) {
                if (m.fold >= 0)
                    std::cout << "  member " << m.member << " (seed " << m.seed << ", fold " << m.fold << ")";
                else if (sweep) std::cout << "  trial " << m.member;
                else std::cout << "  seed " << m.member;
                std::cout << ": run " << m.runId << " " << m.status << '\n';
            }
            for (const TrialLine& t : summary.trials)
                std::cout << "  #" << t.rank << " trial " << t.member << " (" << t.settings << "): " << t.scoreName
                          << " " << t.score << '\n';
            for (const ModelGroupSummary& g : summary.models) {
                std::cout << "  " << g.model << ":";
                const auto figure = [](const MemberAggregate& x) {
                    std::ostringstream o;
                    o << "IQM " << x.iqm << " [" << x.iqmCi.lower << ", " << x.iqmCi.upper << "] over " << x.count;
                    return o.str();
                };
                if (g.agent) {
                    std::cout << " test P&L " << figure(g.policy.pnlUsd) << ", buy-and-hold "
                              << figure(g.buyAndHold.pnlUsd);
                    if (g.hasBest)
                        std::cout << "; best " << (summary.folds ? "member " : "seed ") << g.best.member
                                  << " deflated Sharpe " << g.best.verdict.probability
                                  << (g.best.verdict.significant ? " (significant)" : " (not significant)");
                    for (const JoinedEquity& j : g.walkForward.joined)
                        std::cout << "\n    seed " << j.seed << " out of sample over " << j.foldsJoined << "/"
                                  << j.folds << " folds: P&L " << j.pnlUsd << " USD, buy-and-hold " << j.buyHoldPnlUsd
                                  << " USD";
                } else {
                    std::cout << " test quantile loss " << figure(g.quantileLoss) << ", persistence "
                              << figure(g.persistenceLoss);
                }
                std::cout << '\n';
            }
        }
        for (const std::string& f : failures) printError(f);
        return status == RunStatus::Finished ? kExitOk : kExitError;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
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
    cmd->add_option("--threads", args->threads, "LibTorch intra-op threads (default 1; at most the hardware threads)")
        ->check(CLI::PositiveNumber);
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
    cmd->add_option("--master-port", args->masterPort,
                    "Several machines: rank 0's store port (MASTER_PORT, default 29500)");
    cmd->add_option("--world-size", args->worldSize, "Several machines: processes in the run (WORLD_SIZE)");
    cmd->add_option("--rank", args->rank, "Several machines: this process's rank (RANK; 0 owns the run)");
    cmd->add_option("--seeds", args->seeds,
                    "A run group: one run per seed, e.g. 1-5 or 1,3,7 (members in parallel up to --jobs)");
    cmd->add_option("--folds", args->folds,
                    "A run group of K walk-forward folds by trading day (x --seeds): each fold trains afresh and "
                    "is tested on the days after its window")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--sweep", args->sweep,
                    "A run group searching hyperparameters: grid or random search over config keys within a trial "
                    "budget, one run per trial, ranked by test result (JSON file; see README)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--window", args->window, "Folds: the training window, expanding (from the first day) or rolling")
        ->check(CLI::IsMember({"expanding", "rolling"}));
    cmd->add_option("--jobs", args->jobs, "A run group: members trained at once (default: the hardware threads)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--resume-group", args->resumeGroup,
                    "Finish a run group: start the members that never ran, resume the stopped, failed or "
                    "interrupted ones, skip the finished")
        ->check(CLI::PositiveNumber);
    // Internal: how a group launcher tells a member process which member it is.
    cmd->add_option("--group-id", args->groupId)->group("")->check(CLI::PositiveNumber);
    cmd->add_option("--group-member", args->groupMember)->group("")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--json", args->json, "Print the result as JSON (a run group: its summary)");
    addProgressOptions(*cmd, args->progress);
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
