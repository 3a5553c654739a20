// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/local_workers.h"

#include "engine/session/child_process.h"

#include "models/distributed/communicator.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace foxhunt {

Rendezvous rendezvousFromEnvironment(Rendezvous r)
{
    // torchrun's variables are read where the process group is built; this adds our timeout.
    models::dist::RendezvousOptions base;
    base.master_addr = r.masterAddr;
    base.master_port = r.masterPort;
    base.world_size = r.worldSize;
    base.rank = r.rank;
    base.local_rank = r.localRank;
    const std::optional<models::dist::RendezvousOptions> o = models::dist::rendezvous_from_environment(base);
    if (!o) return r;
    r.masterAddr = o->master_addr;
    r.masterPort = o->master_port;
    r.worldSize = o->world_size;
    r.rank = o->rank;
    r.localRank = o->local_rank;
    if (const char* v = std::getenv("FOXHUNT_DIST_TIMEOUT"); v && *v) {
        char* end = nullptr;
        r.timeoutSeconds = std::strtod(v, &end);
        if (end == v || *end != '\0' || !(r.timeoutSeconds > 0.0))
            throw std::invalid_argument(std::string("FOXHUNT_DIST_TIMEOUT=") + v + ": expected seconds > 0");
    }
    return r;
}

int freeLocalPort()
{
    return models::dist::free_local_port();
}

std::string defaultWorkerProgram()
{
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("foxhunt-cli") : (self.parent_path() / "foxhunt-cli").string();
}

LocalWorkers::~LocalWorkers()
{
    wait(5.0); // a grace period for workers still writing their last words, then no stragglers
    kill();
}

void LocalWorkers::start(const std::string& program, const Rendezvous& r, int first, int count)
{
    if (::access(program.c_str(), X_OK) != 0)
        throw std::runtime_error("cannot start worker processes: " + program + " is not an executable (" +
                                 std::strerror(errno) + ")");
    for (int i = 0; i < count; ++i) {
        const int rank = first + i;
        std::vector<std::string> env = environmentWithout(
            {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "FOXHUNT_DIST_TIMEOUT"});
        env.push_back("MASTER_ADDR=" + r.masterAddr);
        env.push_back("MASTER_PORT=" + std::to_string(r.masterPort));
        env.push_back("WORLD_SIZE=" + std::to_string(r.worldSize));
        env.push_back("RANK=" + std::to_string(rank));
        env.push_back("LOCAL_RANK=" + std::to_string(r.localRank + i));
        env.push_back("FOXHUNT_DIST_TIMEOUT=" + std::to_string(r.timeoutSeconds));
        pid_t pid = -1;
        try {
            pid = spawnProcess(program, {"worker"}, env);
        } catch (const std::runtime_error& e) {
            kill();
            throw std::runtime_error("cannot start worker rank " + std::to_string(rank) + ": " + e.what());
        }
        m_workers.push_back({pid, rank, false, 0});
    }
}

std::vector<std::string> LocalWorkers::wait(double seconds)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
        bool running = false;
        for (Worker& w : m_workers) {
            if (w.reaped) continue;
            if (::waitpid(w.pid, &w.status, WNOHANG) == w.pid) w.reaped = true;
            else running = true;
        }
        if (!running || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::vector<std::string> failures;
    for (const Worker& w : m_workers) {
        const std::string who = "rank " + std::to_string(w.rank);
        if (!w.reaped) failures.push_back(who + " is still running");
        else if (WIFSIGNALED(w.status))
            failures.push_back(who + " was killed by signal " + std::to_string(WTERMSIG(w.status)));
        else if (WEXITSTATUS(w.status) != 0)
            failures.push_back(who + " exited with " + std::to_string(WEXITSTATUS(w.status)));
    }
    return failures;
}

void LocalWorkers::kill()
{
    for (Worker& w : m_workers) {
        if (w.reaped) continue;
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, &w.status, 0);
        w.reaped = true;
    }
}

} // namespace foxhunt
