// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collectives for data-parallel training over LibTorch's own c10d: a TCPStore rendezvous and a
// Gloo process group, which reduces host memory, plus, in CUDA builds whose LibTorch has it, an
// NCCL group that reduces CUDA tensors in place on the GPUs (where NCCL cannot be used, CUDA
// tensors travel to Gloo through host copies). torchrun's launch conventions name the
// rendezvous. A heartbeat per rank through the store lets a failed collective name the rank
// that went silent instead of only "connection reset".

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

/// A TCP port on 127.0.0.1 that nothing listens on right now (for a local group's store).
int free_local_port();

/// Whether this build also has c10d's NCCL process group (a CUDA LibTorch built with it, and
/// nccl.h at build time).
bool nccl_available();

/// Where one rank's tensors live, as use_device() exchanges it.
struct RankDevice {
    /// The rank's machine.
    std::string host;
    /// Its CUDA device, or -1 for the CPU.
    int cuda_index = -1;
    /// Its build has NCCL and FOXHUNT_DIST_BACKEND does not ask for gloo.
    bool nccl = false;
};

/// How a group reduces CUDA tensors: "nccl" when every rank is on CUDA, can use NCCL and has a GPU
/// of its own (NCCL refuses two ranks on one device), else "gloo" (through host copies).
std::string device_backend(const std::vector<RankDevice>& ranks);

/// A collective failed: `rank()` is the peer that went silent (-1 when it could not be told).
class PeerFailure : public std::runtime_error {
public:
    PeerFailure(int rank, const std::string& what) : std::runtime_error(what), m_rank(rank) { }
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

    /// Collective, once per group, after connect(): every rank names the device its tensors live
    /// on, and the group picks how tensors there are reduced (device_backend(): on NCCL the group
    /// is set up and tried before this returns). Returns the choice, "gloo" or "nccl".
    std::string use_device(const torch::Device& device);
    /// "nccl" when CUDA tensors are reduced in place by NCCL, else "gloo".
    std::string device_backend() const;
    /// Whether tensors on `device` are reduced where they are (CPU tensors, and CUDA tensors on
    /// NCCL) rather than through a host copy: gradient buckets then live on that device.
    bool reduces_on(const torch::Device& device) const;

    /// In place: the element-wise sum over ranks (identical bits on every rank).
    void all_reduce_sum_(torch::Tensor& tensor);
    /// In place: the element-wise mean over ranks.
    void all_reduce_mean_(torch::Tensor& tensor);
    /// In place: the element-wise maximum over ranks.
    void all_reduce_max_(torch::Tensor& tensor);
    /// Starts an in-place sum over ranks of a tensor (contiguous unless it is staged; a CUDA tensor
    /// the group does not reduce in place goes through a host copy, written back by
    /// PendingReduce::wait()).
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
