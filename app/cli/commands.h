// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// foxhunt-cli subcommands. Each registers its options on a CLI11 app and
// returns the process exit code when run.

#include <functional>

namespace CLI {
class App;
}

namespace foxhunt::cli {

/// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;    ///< store, I/O or usage errors
inline constexpr int kExitRejected = 2; ///< a file was rejected (file:line: reason)

/// A registered command: call it after parsing to run it.
using Runner = std::function<int()>;

Runner addImportCommand(CLI::App& app);
Runner addBarsCommand(CLI::App& app);
Runner addReplayCommand(CLI::App& app);
Runner addBenchCommand(CLI::App& app);
Runner addTrainCommand(CLI::App& app);
Runner addReportCommand(CLI::App& app);
Runner addRunsCommand(CLI::App& app);
Runner addGroupsCommand(CLI::App& app);
Runner addWorkerCommand(CLI::App& app);
Runner addMachineCommand(CLI::App& app);
Runner addMetricsCommand(CLI::App& app);

} // namespace foxhunt::cli
