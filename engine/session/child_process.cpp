// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/child_process.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace foxhunt {

std::vector<std::string> environmentWithout(const std::vector<std::string_view>& drop)
{
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string_view kv = *e;
        const std::string_view key = kv.substr(0, kv.find('='));
        if (std::find(drop.begin(), drop.end(), key) == drop.end()) env.emplace_back(kv);
    }
    return env;
}

pid_t spawnProcess(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& env, const std::string& stdoutPath)
{
    if (::access(program.c_str(), X_OK) != 0)
        throw std::runtime_error("cannot start " + program + ": not an executable (" + std::strerror(errno) + ")");
    std::vector<std::string> argStore;
    argStore.reserve(args.size() + 1);
    argStore.push_back(program);
    argStore.insert(argStore.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argStore) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envStore = env;
    std::vector<char*> envp;
    for (std::string& kv : envStore) envp.push_back(kv.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    if (!stdoutPath.empty())
        ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdoutPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                           0644);
    const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
    return pid;
}

ChildExit pollChild(pid_t pid)
{
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) return {};
    ChildExit e;
    e.ended = true;
    if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
    else e.exitCode = WEXITSTATUS(status);
    return e;
}

std::string describe(const ChildExit& exit)
{
    if (exit.signal != 0) return "was killed by signal " + std::to_string(exit.signal);
    if (exit.exitCode != 0) return "exited with " + std::to_string(exit.exitCode);
    return {};
}

} // namespace foxhunt
