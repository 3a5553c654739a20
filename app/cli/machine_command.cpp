// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli machine : what this machine can compute with (CPU features, cores, GPUs) and what
// `auto` precision starts from on each device.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/session/devices.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

int run(bool json)
{
    try {
        const nlohmann::json machine = nlohmann::json::parse(machineJsonText());
        if (json) {
            printJson(machine);
            return kExitOk;
        }
        std::cout << "This machine: " << machine["summary"].get<std::string>() << '\n';
        std::cout << "FP32 products: " << machine["blas"]["summary"].get<std::string>() << '\n';
        if (machine["malloc_keep_bytes"].get<std::size_t>() == 0)
            std::cout << "Freed tensor memory: returned to the kernel (FOXHUNT_MALLOC=default)\n";
        for (const nlohmann::json& d : machine["devices"])
            std::cout << d["device"].get<std::string>() << ": auto precision starts from "
                      << d["amp_auto"].get<std::string>() << " (" << d["amp_reason"].get<std::string>() << ")\n";
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addMachineCommand(CLI::App& app)
{
    auto json = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand(
        "machine", "Show this machine's CPU features, cores and GPUs, and what auto precision uses");
    cmd->add_flag("--json", *json, "Print JSON");
    return [json] { return run(*json); };
}

} // namespace foxhunt::cli
