// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli worker : one rank (> 0) of a multi-process training run. Rank 0 (foxhunt-cli
// train, or the desktop app) owns the run; a worker gets config, bars and checkpoints from it
// over the process group and trains its share. torchrun's variables name the rendezvous.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/session/training_session.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct WorkerArgs {
    std::string masterAddr;
    int masterPort = 0;
    int worldSize = 0;
    int rank = -1;
    int nproc = 1;
    double timeout = 0.0;
    bool json = false;
};

int run(const WorkerArgs& a)
{
    Rendezvous r;
    try {
        r = rendezvousFromEnvironment();
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    if (!a.masterAddr.empty()) r.masterAddr = a.masterAddr;
    if (a.masterPort > 0) r.masterPort = a.masterPort;
    if (a.worldSize > 0) r.worldSize = a.worldSize;
    if (a.rank >= 0) r.rank = a.rank;
    if (a.timeout > 0.0) r.timeoutSeconds = a.timeout;
    // --nproc N: this process plus N - 1 local ranks after it (one machine's share of the run).
    LocalWorkers local;
    if (a.nproc > 1) {
        if (r.rank + a.nproc > r.worldSize) {
            printError("--nproc " + std::to_string(a.nproc) + " from rank " + std::to_string(r.rank) +
                       " exceeds WORLD_SIZE " + std::to_string(r.worldSize));
            return kExitError;
        }
        try {
            local.start(defaultWorkerProgram(), r, r.rank + 1, a.nproc - 1);
        } catch (const std::exception& e) {
            printError(e.what());
            return kExitError;
        }
    }
    const SessionResult result = runWorker(r);
    if (a.json) printJson(nlohmann::json::parse(result.json.empty() ? "{}" : result.json));
    if (result.status == RunStatus::Failed) {
        printError("rank " + std::to_string(r.rank) + ": " + result.error);
        local.kill();
        return kExitError;
    }
    for (const std::string& p : local.wait(r.timeoutSeconds)) printError(p);
    return kExitOk;
}

} // namespace

Runner addWorkerCommand(CLI::App& app)
{
    auto args = std::make_shared<WorkerArgs>();
    CLI::App* cmd = app.add_subcommand(
        "worker", "Join a multi-process training run as a rank > 0 (rendezvous from MASTER_ADDR, MASTER_PORT, "
                  "WORLD_SIZE, RANK, LOCAL_RANK or the options below)");
    cmd->add_option("--master-addr", args->masterAddr, "Host of rank 0 (MASTER_ADDR; default 127.0.0.1)");
    cmd->add_option("--master-port", args->masterPort, "Rank 0's store port (MASTER_PORT; default 29500)");
    cmd->add_option("--world-size", args->worldSize, "Processes in the run (WORLD_SIZE)");
    cmd->add_option("--rank", args->rank, "This process's rank, 1 .. WORLD_SIZE - 1 (RANK)");
    cmd->add_option("--nproc", args->nproc, "Also start this many - 1 local ranks after this one")
        ->capture_default_str();
    cmd->add_option("--timeout", args->timeout, "Seconds a silent rank may take before the run fails (default 60)");
    cmd->add_flag("--json", args->json, "Print this rank's summary as JSON");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
