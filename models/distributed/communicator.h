#pragma once
// Collectives for data-parallel training over LibTorch's own c10d: a TCPStore rendezvous and a
// Gloo process group, which reduces host memory: CUDA tensors travel through a host copy (the
// NCCL group, which would reduce them in place, is not used yet). torchrun's launch
// conventions name the rendezvous. A heartbeat per rank through the store lets a failed
// collective name the rank that went silent instead of only "connection reset".

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace foxhunt::models::dist {

/// Where and as whom a process joins a group.
struct RendezvousOptions {
    /// Host of rank 0's store (MASTER_ADDR).
    std::string master_addr = "127.0.0.1";
    /// Port of rank 0's store (MASTER_PORT).
    int master_port = 29500;
    /// Processes in the group (WORLD_SIZE).
    int world_size = 1;
    /// This process's rank, 0 .. world_size - 1 (RANK).
    int rank = 0;
    /// Rank within this machine (LOCAL_RANK); informational.
    int local_rank = 0;
    /// A peer silent for this long (dead, stalled, network down) fails the collective waiting on it.
    std::chrono::milliseconds timeout{60'000};
};

/// Reads MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and LOCAL_RANK (torchrun's variables) over
/// `base`; nullopt when WORLD_SIZE is unset. Throws std::invalid_argument naming a malformed one.
std::optional<RendezvousOptions> rendezvous_from_environment(RendezvousOptions base = {});

/// Whether this build has the c10d Gloo process group (Debian: libgloo-dev at build time).
bool available();

/// A collective failed: `rank()` is the peer that went silent (-1 when it could not be told).
class PeerFailure : public std::runtime_error {
public:
    PeerFailure(int rank, const std::string& what) : std::runtime_error(what), m_rank(rank) {}
    /// The silent peer, or -1.
    int rank() const { return m_rank; }

private:
    int m_rank;
};

/// An all-reduce in flight.
class PendingReduce {
public:
    PendingReduce();
    ~PendingReduce();
    PendingReduce(PendingReduce&&) noexcept;
    PendingReduce& operator=(PendingReduce&&) noexcept;
    /// Blocks until done; throws PeerFailure.
    void wait();
    /// Whether there is anything to wait for.
    bool valid() const;

private:
    friend class Communicator;
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// One rank's membership of a process group. Not thread-safe: one training thread drives it.
class Communicator {
public:
    /// Joins the group (rank 0 hosts the store and waits for the others up to options.timeout).
    /// Throws PeerFailure when the rendezvous times out, std::invalid_argument on bad options and
    /// std::runtime_error when this build has no Gloo.
    static std::shared_ptr<Communicator> connect(const RendezvousOptions& options);
    ~Communicator();
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    /// This rank.
    int rank() const;
    /// Processes in the group.
    int world_size() const;
    /// The options it joined with.
    const RendezvousOptions& options() const;

    /// In place: the element-wise sum over ranks (identical bits on every rank).
    void all_reduce_sum_(torch::Tensor& tensor);
    /// In place: the element-wise mean over ranks.
    void all_reduce_mean_(torch::Tensor& tensor);
    /// In place: the element-wise maximum over ranks.
    void all_reduce_max_(torch::Tensor& tensor);
    /// Starts an in-place sum over ranks of a tensor (contiguous when on the CPU; a CUDA tensor is
    /// reduced through a host copy and updated by PendingReduce::wait()).
    PendingReduce all_reduce_sum_async(torch::Tensor tensor);
    /// In place: `root`'s values on every rank.
    void broadcast_(torch::Tensor& tensor, int root = 0);
    /// `root`'s bytes on every rank (the argument is ignored on the others).
    std::string broadcast_bytes(const std::string& bytes, int root = 0);
    /// The element-wise sum over ranks of `values` (float64).
    std::vector<double> all_reduce_sum(std::vector<double> values);
    /// One value per rank, in rank order.
    std::vector<double> all_gather(double value);
    /// Waits for every rank.
    void barrier();

    /// Rank 0 publishes `value` under `key` in the store.
    void publish(const std::string& key, const std::string& value);
    /// Waits for `key` in the store without a deadline as long as rank 0's heartbeat keeps
    /// beating (a paused owner is not a failure); throws PeerFailure naming rank 0 when it stops.
    std::string await(const std::string& key);

    /// Seconds spent waiting in collectives since construction (the time data parallelism costs).
    double collective_seconds() const;

    /// Names the rank(s) that stopped beating, after `error` was raised by a collective, and
    /// throws PeerFailure. Never returns.
    [[noreturn]] void fail(const std::string& error);

private:
    friend class PendingReduce;
    Communicator();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Copies rank 0's values of `tensors` (parameters and buffers) to every rank.
void broadcast_tensors(Communicator& communicator, const std::vector<torch::Tensor>& tensors, int root = 0);

} // namespace foxhunt::models::dist
