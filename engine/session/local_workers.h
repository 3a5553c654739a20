// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The worker processes a multi-process run starts on this machine (like torchrun
// --nproc-per-node): each is `<program> worker` with torchrun's rendezvous variables in its
// environment. Std-only.

#include <string>
#include <vector>

#include <sys/types.h>

namespace foxhunt {

/// Where one process joins a multi-process run (torchrun's variables).
struct Rendezvous {
    std::string masterAddr = "127.0.0.1"; ///< MASTER_ADDR: host of rank 0
    int masterPort = 29500;               ///< MASTER_PORT: rank 0's store port
    int worldSize = 1;                    ///< WORLD_SIZE: processes in the run
    int rank = 0;                         ///< RANK: this process
    int localRank = 0;                    ///< LOCAL_RANK: this process on its machine
    double timeoutSeconds = 60.0;         ///< a silent rank fails the run after this long (FOXHUNT_DIST_TIMEOUT)
};

/// Reads MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK and FOXHUNT_DIST_TIMEOUT over `base`;
/// `base` unchanged when WORLD_SIZE is unset. Throws std::invalid_argument naming a malformed one.
Rendezvous rendezvousFromEnvironment(Rendezvous base = {});

/// A TCP port on 127.0.0.1 that nothing listens on right now (models::dist::free_local_port for
/// code that does not see LibTorch).
int freeLocalPort();

/// `foxhunt-cli` beside the running executable.
std::string defaultWorkerProgram();

/// Started worker processes; the destructor reaps them (SIGKILL after a grace period).
class LocalWorkers {
public:
    LocalWorkers() = default;
    ~LocalWorkers();
    LocalWorkers(const LocalWorkers&) = delete;
    LocalWorkers& operator=(const LocalWorkers&) = delete;

    /// Starts `<program> worker` for ranks first .. first + count - 1 of `rendezvous`.
    /// Throws std::runtime_error naming the program when it cannot be started.
    void start(const std::string& program, const Rendezvous& rendezvous, int first, int count);
    /// Waits up to `seconds` for every worker to exit; returns a description of each one that
    /// failed ("rank 1 exited with 2", "rank 2 was killed by signal 9"), empty when all ended well.
    std::vector<std::string> wait(double seconds);
    /// Kills the workers still running.
    void kill();

private:
    struct Worker {
        pid_t pid = -1;
        int rank = 0;
        bool reaped = false;
        int status = 0;
    };
    std::vector<Worker> m_workers;
};

} // namespace foxhunt
