// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Starting and reaping the child processes the CLI and the sessions launch (the local ranks of a
// multi-process run, the members of a run group): posix_spawn with an explicit environment,
// waitpid without blocking. Std-only.

#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace foxhunt {

/// This process's environment ("KEY=value" each) without the variables named in `drop`.
std::vector<std::string> environmentWithout(const std::vector<std::string_view>& drop);

/// Starts `program` with `args` after argv[0] and the environment `env`; returns its process ID.
/// `stdoutPath` non-empty: the child's standard output goes to that file (e.g. /dev/null) instead
/// of this process's. Throws std::runtime_error naming the program when it is not an executable
/// or cannot be started.
pid_t spawnProcess(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& env, const std::string& stdoutPath = {});

/// The outcome of a child that has ended, as waitpid's status describes it.
struct ChildExit {
    bool ended = false; ///< false while it runs
    int exitCode = 0;   ///< its exit status when it exited
    int signal = 0;     ///< the signal that ended it, 0 when it exited
};

/// Reaps `pid` if it has ended, without waiting.
ChildExit pollChild(pid_t pid);
/// "exited with 2", "was killed by signal 9", "" for a clean exit.
std::string describe(const ChildExit& exit);

} // namespace foxhunt
