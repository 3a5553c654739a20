// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli: the headless front end. Every command is also what tests and
// the README's checks call.

#include "app/cli/commands.h"

#include "models/process.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <string>

int main(int argc, char** argv)
{
    foxhunt::models::prepareProcess();
    CLI::App app{"Foxhunt: train and watch trading models on ES futures bars (headless)", "foxhunt-cli"};
    app.set_version_flag("--version", std::string("foxhunt-cli ") + FOXHUNT_VERSION);
    app.require_subcommand(1);

    std::map<CLI::App*, foxhunt::cli::Runner> runners;
    auto add = [&](foxhunt::cli::Runner (*adder)(CLI::App&)) {
        const std::size_t before = app.get_subcommands({}).size();
        foxhunt::cli::Runner runner = adder(app);
        runners[app.get_subcommands({}).at(before)] = std::move(runner);
    };
    add(&foxhunt::cli::addImportCommand);
    add(&foxhunt::cli::addBarsCommand);
    add(&foxhunt::cli::addReplayCommand);
    add(&foxhunt::cli::addTrainCommand);
    add(&foxhunt::cli::addReportCommand);
    add(&foxhunt::cli::addRunsCommand);
    add(&foxhunt::cli::addGroupsCommand);
    add(&foxhunt::cli::addMetricsCommand);
    add(&foxhunt::cli::addWorkerCommand);
    add(&foxhunt::cli::addBenchCommand);
    add(&foxhunt::cli::addMachineCommand);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints the message (or the help); its own codes (105, 106, ...) are not ours: a
        // usage error exits 1 as the README documents, --help and --version 0.
        return app.exit(e) == 0 ? foxhunt::cli::kExitOk : foxhunt::cli::kExitError;
    }
    for (auto& [sub, run] : runners)
        if (sub->parsed()) return run();
    return foxhunt::cli::kExitError;
}
