// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/distributed/communicator.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#if defined(FOXHUNT_HAVE_C10D_GLOO)
// ProcessGroupGloo.hpp declares the group only under this switch (set by LibTorch's own build).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(FOXHUNT_HAVE_C10D_NCCL)
// Likewise for the NCCL group (LibTorch's CUDA builds; models/CMakeLists.txt finds nccl.h).
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

namespace foxhunt::models::dist {

namespace {

using Clock = std::chrono::steady_clock;

/// How often each rank beats; a peer is silent after missing a few.
constexpr std::chrono::milliseconds kHeartbeat{200};

int parseInt(const char* name, const char* text, int low, int high)
{
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < low || v > high)
        throw std::invalid_argument(std::string(name) + "=" + text + ": expected an integer in [" +
                                    std::to_string(low) + ", " + std::to_string(high) + "]");
    return static_cast<int>(v);
}

void validate(const RendezvousOptions& o)
{
    if (o.world_size < 1) throw std::invalid_argument("distributed: world size must be at least 1");
    if (o.rank < 0 || o.rank >= o.world_size)
        throw std::invalid_argument("distributed: rank " + std::to_string(o.rank) + " outside 0.." +
                                    std::to_string(o.world_size - 1));
    if (o.master_port < 1 || o.master_port > 65535)
        throw std::invalid_argument("distributed: port " + std::to_string(o.master_port) + " outside 1..65535");
    if (o.master_addr.empty()) throw std::invalid_argument("distributed: empty master address");
    if (o.timeout.count() <= 0) throw std::invalid_argument("distributed: the timeout must be positive");
}

bool isLoopback(const std::string& host)
{
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string heartbeatKey(int rank)
{
    return "foxhunt/heartbeat/" + std::to_string(rank);
}

std::string hostName()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

/// FOXHUNT_DIST_BACKEND=gloo keeps CUDA tensors off NCCL (for comparing the two, or around a
/// broken NCCL install); anything else leaves the choice to device_backend().
bool glooRequested()
{
    const char* v = std::getenv("FOXHUNT_DIST_BACKEND");
    return v && std::string(v) == "gloo";
}

std::string encode(const RankDevice& d)
{
    return std::to_string(d.cuda_index) + " " + (d.nccl ? "1" : "0") + " " + d.host;
}

RankDevice decode(const std::string& text)
{
    RankDevice d;
    const std::size_t a = text.find(' ');
    const std::size_t b = a == std::string::npos ? a : text.find(' ', a + 1);
    if (b == std::string::npos) throw std::runtime_error("distributed: malformed device claim '" + text + "'");
    d.cuda_index = std::stoi(text.substr(0, a));
    d.nccl = text.substr(a + 1, b - a - 1) == "1";
    d.host = text.substr(b + 1);
    return d;
}

} // namespace

std::string device_backend(const std::vector<RankDevice>& ranks)
{
    if (ranks.empty()) return "gloo";
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i].cuda_index < 0 || !ranks[i].nccl) return "gloo";
        for (std::size_t j = 0; j < i; ++j)
            if (ranks[j].host == ranks[i].host && ranks[j].cuda_index == ranks[i].cuda_index) return "gloo";
    }
    return "nccl";
}

int free_local_port()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    const int error = errno;
    ::close(fd);
    if (!ok) throw std::runtime_error(std::string("no free local port: ") + std::strerror(error));
    return ntohs(a.sin_port);
}

bool nccl_available()
{
#if defined(FOXHUNT_HAVE_C10D_GLOO) && defined(FOXHUNT_HAVE_C10D_NCCL)
    return true;
#else
    return false;
#endif
}

std::optional<RendezvousOptions> rendezvous_from_environment(RendezvousOptions o)
{
    const char* world = std::getenv("WORLD_SIZE");
    if (!world || !*world) return std::nullopt;
    o.world_size = parseInt("WORLD_SIZE", world, 1, 1 << 16);
    if (const char* v = std::getenv("RANK"); v && *v) o.rank = parseInt("RANK", v, 0, o.world_size - 1);
    if (const char* v = std::getenv("LOCAL_RANK"); v && *v) o.local_rank = parseInt("LOCAL_RANK", v, 0, 1 << 16);
    if (const char* v = std::getenv("MASTER_ADDR"); v && *v) o.master_addr = v;
    if (const char* v = std::getenv("MASTER_PORT"); v && *v) o.master_port = parseInt("MASTER_PORT", v, 1, 65535);
    validate(o);
    return o;
}

#if defined(FOXHUNT_HAVE_C10D_GLOO)

bool available()
{
    return true;
}

struct PendingReduce::Impl {
    c10::intrusive_ptr<c10d::Work> work;
    bool onDevice = false; // an NCCL collective: poll for completion, then order the stream after it
    Communicator* communicator = nullptr;
    torch::Tensor host;   // a device tensor's host copy that Gloo reduces (undefined for CPU tensors)
    torch::Tensor device; // where wait() copies the result back
};

struct Communicator::Impl {
    RendezvousOptions options;
    c10::intrusive_ptr<c10d::TCPStore> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
#if defined(FOXHUNT_HAVE_C10D_NCCL)
    c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl; // CUDA tensors, when use_device() chose it
#endif
    bool deviceChosen = false;
    double collectiveSeconds = 0.0;

    /// Whether `tensor` goes to the NCCL group.
    bool onNccl(const torch::Tensor& tensor) const
    {
#if defined(FOXHUNT_HAVE_C10D_NCCL)
        return nccl && tensor.is_cuda();
#else
        (void)tensor;
        return false;
#endif
    }

    /// Gloo reduces host memory: a tensor elsewhere that NCCL does not take travels through a host copy.
    bool staged(const torch::Tensor& tensor) const
    {
        return !tensor.device().is_cpu() && !onNccl(tensor);
    }

    /// Starts `op` on the group that reduces `tensor` (which must not be staged).
    template <typename Op>
    c10::intrusive_ptr<c10d::Work> start(const torch::Tensor& tensor, Op&& op)
    {
#if defined(FOXHUNT_HAVE_C10D_NCCL)
        if (onNccl(tensor)) return op(*nccl);
#else
        (void)tensor;
#endif
        return op(*group);
    }

    // The heartbeat: its own store connection on its own thread, so a busy or paused training
    // thread still beats.
    std::thread beat;
    std::mutex beatMutex;
    std::condition_variable beatWake;
    bool beatStop = false;

    // Rank 0's last heartbeat count and when it last changed (await()).
    std::int64_t ownerBeats = -1;
    Clock::time_point ownerSeen = Clock::now();

    void wait(c10d::Work& work, Communicator& self, bool onDevice = false)
    {
        const auto t0 = Clock::now();
        try {
            // NCCL's wait() only orders the current CUDA stream after the collective and returns;
            // a peer that died would surface much later (or the NCCL watchdog would end the
            // process). Polling for completion under the group's timeout keeps Gloo's behaviour:
            // the host waits for the reduced values and a silent peer is named by fail().
            if (onDevice)
                while (!work.isCompleted()) {
                    if (Clock::now() - t0 > options.timeout)
                        throw std::runtime_error("NCCL collective unfinished after " +
                                                 std::to_string(options.timeout.count()) + " ms");
                    std::this_thread::yield();
                }
            work.wait();
        } catch (const std::exception& e) {
            collectiveSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
            self.fail(e.what());
        }
        collectiveSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
    }

    ~Impl()
    {
        {
            std::lock_guard lock(beatMutex);
            beatStop = true;
        }
        beatWake.notify_all();
        if (beat.joinable()) beat.join();
    }
};

PendingReduce::PendingReduce() = default;
PendingReduce::~PendingReduce() = default;
PendingReduce::PendingReduce(PendingReduce&&) noexcept = default;
PendingReduce& PendingReduce::operator=(PendingReduce&&) noexcept = default;
bool PendingReduce::valid() const
{
    return m_impl && m_impl->work;
}

void PendingReduce::wait()
{
    if (!valid()) return;
    m_impl->communicator->m_impl->wait(*m_impl->work, *m_impl->communicator, m_impl->onDevice);
    m_impl->work.reset();
    if (m_impl->device.defined()) {
        m_impl->device.copy_(m_impl->host);
        m_impl->device = m_impl->host = torch::Tensor();
    }
}

Communicator::Communicator() : m_impl(std::make_unique<Impl>()) { }
Communicator::~Communicator() = default;

std::shared_ptr<Communicator> Communicator::connect(const RendezvousOptions& options)
{
    validate(options);
    // A peer that died leaves its sockets closed, and the default action of the SIGPIPE that
    // writing to one raises is to kill this process: then no error names the rank and the run is
    // never marked failed. Ignored, the write fails with EPIPE and the collective throws instead
    // (Python, where torch.distributed usually runs, ignores SIGPIPE from the start).
    static const bool sigpipeIgnored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
    (void)sigpipeIgnored;
    std::shared_ptr<Communicator> c(new Communicator());
    Impl& d = *c->m_impl;
    d.options = options;
    const std::string where = options.master_addr + ":" + std::to_string(options.master_port);
    try {
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(options.master_port);
        so.isServer = options.rank == 0;
        so.numWorkers = static_cast<std::size_t>(options.world_size);
        so.waitWorkers = true;
        so.timeout = options.timeout;
        d.store = c10::make_intrusive<c10d::TCPStore>(options.master_addr, so);
    } catch (const std::exception& e) {
        throw PeerFailure(options.rank == 0 ? -1 : 0, "distributed: rendezvous at " + where + " failed (rank " +
                                                          std::to_string(options.rank) + " of " +
                                                          std::to_string(options.world_size) + "): " + e.what());
    }
    try {
        auto go = c10d::ProcessGroupGloo::Options::create(options.timeout);
        const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
        if (ifname && *ifname) go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
        else if (isLoopback(options.master_addr))
            go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        else go->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
        go->threads = 1; // one collective in flight at a time per rank is all the reducer issues
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("foxhunt/gloo", d.store);
        d.group = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, options.rank, options.world_size, go);
    } catch (const std::exception& e) {
        throw PeerFailure(-1, "distributed: connecting the Gloo group at " + where + " failed (rank " +
                                  std::to_string(options.rank) + "): " + e.what());
    }
    // Beat from now on, on a connection of its own.
    c10d::TCPStoreOptions bo;
    bo.port = static_cast<std::uint16_t>(options.master_port);
    bo.isServer = false;
    bo.waitWorkers = false;
    bo.timeout = options.timeout;
    auto beatStore = c10::make_intrusive<c10d::TCPStore>(options.master_addr, bo);
    beatStore->add(heartbeatKey(options.rank), 1);
    d.beat = std::thread([&d, beatStore, key = heartbeatKey(options.rank)] {
        std::unique_lock lock(d.beatMutex);
        while (!d.beatWake.wait_for(lock, kHeartbeat, [&d] { return d.beatStop; })) {
            try {
                beatStore->add(key, 1);
            } catch (const std::exception&) {
                return; // the store is gone (rank 0 ended); peers find out through their collectives
            }
        }
    });
    c->barrier();
    return c;
}

int Communicator::rank() const
{
    return m_impl->options.rank;
}
int Communicator::world_size() const
{
    return m_impl->options.world_size;
}
const RendezvousOptions& Communicator::options() const
{
    return m_impl->options;
}
double Communicator::collective_seconds() const
{
    return m_impl->collectiveSeconds;
}

std::string Communicator::use_device(const torch::Device& device)
{
    Impl& d = *m_impl;
    TORCH_CHECK(!d.deviceChosen, "Communicator::use_device: called twice");
    d.deviceChosen = true;
    RankDevice mine;
    mine.host = hostName();
    mine.cuda_index = device.is_cuda() ? (device.has_index() ? device.index() : 0) : -1;
    mine.nccl = nccl_available() && !glooRequested();
    std::vector<RankDevice> ranks;
    try {
        const std::string claim = encode(mine);
        d.store->set("foxhunt/device/" + std::to_string(d.options.rank),
                     std::vector<std::uint8_t>(claim.begin(), claim.end()));
        for (int r = 0; r < d.options.world_size; ++r) {
            const std::vector<std::uint8_t> v = d.store->get("foxhunt/device/" + std::to_string(r)); // waits for it
            ranks.push_back(decode(std::string(v.begin(), v.end())));
        }
    } catch (const PeerFailure&) {
        throw;
    } catch (const std::exception& e) {
        fail(e.what());
    }
    const std::string backend = dist::device_backend(ranks);
#if defined(FOXHUNT_HAVE_C10D_NCCL)
    if (backend == "nccl") {
        try {
            auto no = c10d::ProcessGroupNCCL::Options::create();
            // Our own poll (Impl::wait) gives up after options.timeout and names the silent rank;
            // NCCL's watchdog, which would end the process instead, waits twice as long.
            no->timeout = d.options.timeout * 2;
            auto prefixed = c10::make_intrusive<c10d::PrefixStore>("foxhunt/nccl", d.store);
            d.nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, d.options.rank, d.options.world_size, no);
        } catch (const std::exception& e) {
            fail(std::string("setting up the NCCL group: ") + e.what());
        }
        // NCCL makes its communicator on the first collective: make it here, where a failure is
        // plainly about the set-up, and prove the sum.
        torch::Tensor probe = torch::ones({1}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
        all_reduce_sum_(probe);
        const double sum = probe.item<double>();
        if (sum != static_cast<double>(d.options.world_size))
            throw std::runtime_error("distributed: the NCCL group summed " + std::to_string(sum) + " over " +
                                     std::to_string(d.options.world_size) + " ranks");
    }
#endif
    barrier();
    return backend;
}

std::string Communicator::device_backend() const
{
#if defined(FOXHUNT_HAVE_C10D_NCCL)
    if (m_impl->nccl) return "nccl";
#endif
    return "gloo";
}

bool Communicator::reduces_on(const torch::Device& device) const
{
    return device.is_cpu() || (device.is_cuda() && device_backend() == "nccl");
}

void Communicator::all_reduce_sum_(torch::Tensor& tensor)
{
    PendingReduce p = all_reduce_sum_async(tensor);
    p.wait();
}

void Communicator::all_reduce_mean_(torch::Tensor& tensor)
{
    all_reduce_sum_(tensor);
    if (world_size() > 1) tensor.div_(world_size());
}

void Communicator::all_reduce_max_(torch::Tensor& tensor)
{
    if (m_impl->staged(tensor)) {
        torch::Tensor host = tensor.to(torch::kCPU).contiguous();
        all_reduce_max_(host);
        tensor.copy_(host);
        return;
    }
    TORCH_CHECK(tensor.is_contiguous(), "all_reduce_max_: a contiguous tensor");
    std::vector<torch::Tensor> t{tensor};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    auto work = m_impl->start(tensor, [&](auto& g) { return g.allreduce(t, o); });
    m_impl->wait(*work, *this, m_impl->onNccl(tensor));
}

PendingReduce Communicator::all_reduce_sum_async(torch::Tensor tensor)
{
    PendingReduce p;
    p.m_impl = std::make_unique<PendingReduce::Impl>();
    p.m_impl->communicator = this;
    if (m_impl->staged(tensor)) {
        p.m_impl->device = tensor;
        p.m_impl->host = tensor.to(torch::kCPU).contiguous();
        tensor = p.m_impl->host;
    }
    TORCH_CHECK(tensor.is_contiguous(), "all_reduce_sum_async: a contiguous tensor");
    p.m_impl->onDevice = m_impl->onNccl(tensor);
    std::vector<torch::Tensor> t{tensor};
    try {
        p.m_impl->work = m_impl->start(tensor, [&](auto& g) { return g.allreduce(t); });
    } catch (const std::exception& e) {
        fail(e.what());
    }
    return p;
}

void Communicator::broadcast_(torch::Tensor& tensor, int root)
{
    if (m_impl->staged(tensor)) {
        torch::Tensor host = tensor.to(torch::kCPU).contiguous();
        broadcast_(host, root);
        tensor.copy_(host);
        return;
    }
    TORCH_CHECK(tensor.is_contiguous(), "broadcast_: a contiguous tensor");
    std::vector<torch::Tensor> t{tensor};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    auto work = m_impl->start(tensor, [&](auto& g) { return g.broadcast(t, o); });
    m_impl->wait(*work, *this, m_impl->onNccl(tensor));
}

std::string Communicator::broadcast_bytes(const std::string& bytes, int root)
{
    torch::Tensor size = torch::tensor({static_cast<std::int64_t>(bytes.size())}, torch::kInt64);
    broadcast_(size, root);
    const std::int64_t n = size.item<std::int64_t>();
    torch::Tensor data = torch::empty({std::max<std::int64_t>(n, 1)}, torch::kUInt8);
    if (rank() == root && n > 0) std::memcpy(data.data_ptr(), bytes.data(), static_cast<std::size_t>(n));
    broadcast_(data, root);
    return std::string(reinterpret_cast<const char*>(data.data_ptr()), static_cast<std::size_t>(n));
}

std::vector<double> Communicator::all_reduce_sum(std::vector<double> values)
{
    if (values.empty()) return values;
    torch::Tensor t = torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kFloat64);
    all_reduce_sum_(t); // in place on `values`' storage
    return values;
}

std::vector<double> Communicator::all_gather(double value)
{
    torch::Tensor slots = torch::zeros({world_size()}, torch::kFloat64);
    slots[rank()] = value;
    all_reduce_sum_(slots); // adding zeros is exact: every rank gets each value bit for bit
    return std::vector<double>(slots.data_ptr<double>(), slots.data_ptr<double>() + world_size());
}

void Communicator::barrier()
{
    auto work = m_impl->group->barrier();
    m_impl->wait(*work, *this);
}

void Communicator::publish(const std::string& key, const std::string& value)
{
    try {
        m_impl->store->set("foxhunt/" + key, std::vector<std::uint8_t>(value.begin(), value.end()));
    } catch (const std::exception& e) {
        fail(e.what());
    }
}

std::string Communicator::await(const std::string& key)
{
    Impl& d = *m_impl;
    const std::string k = "foxhunt/" + key;
    for (;;) {
        try {
            d.store->wait({k}, std::chrono::milliseconds(500));
            const std::vector<std::uint8_t> v = d.store->get(k);
            return std::string(v.begin(), v.end());
        } catch (const std::exception& e) {
            // A wait that timed out: fine while rank 0 keeps beating.
            std::int64_t beats = -1;
            try {
                beats = d.store->add(heartbeatKey(0), 0);
            } catch (const std::exception&) {
                throw PeerFailure(0, "distributed: rank 0 (the run's owner) is gone: " + std::string(e.what()));
            }
            if (beats != d.ownerBeats) {
                d.ownerBeats = beats;
                d.ownerSeen = Clock::now();
            } else if (Clock::now() - d.ownerSeen > d.options.timeout) {
                throw PeerFailure(0, "distributed: rank 0 (the run's owner) stopped answering for " +
                                         std::to_string(d.options.timeout.count() / 1000) + " s");
            }
        }
    }
}

void Communicator::fail(const std::string& error)
{
    Impl& d = *m_impl;
    const int n = d.options.world_size;
    // Which peers still beat? Sample the heartbeats a few beats apart.
    std::vector<std::int64_t> before(static_cast<std::size_t>(n), -1), after(before);
    bool storeAlive = true;
    try {
        d.store->setTimeout(std::chrono::milliseconds(2'000));
        for (int r = 0; r < n; ++r) before[static_cast<std::size_t>(r)] = d.store->add(heartbeatKey(r), 0);
        std::this_thread::sleep_for(kHeartbeat * 4);
        for (int r = 0; r < n; ++r) after[static_cast<std::size_t>(r)] = d.store->add(heartbeatKey(r), 0);
    } catch (const std::exception&) {
        storeAlive = false;
    }
    std::vector<int> silent;
    if (!storeAlive && d.options.rank != 0) silent.push_back(0); // the store lives in rank 0's process
    else
        for (int r = 0; r < n; ++r)
            if (r != d.options.rank && after[static_cast<std::size_t>(r)] == before[static_cast<std::size_t>(r)])
                silent.push_back(r);
    std::string who;
    for (int r : silent) who += (who.empty() ? "rank " : ", rank ") + std::to_string(r);
    const std::string first = error.substr(0, error.find('\n'));
    if (silent.empty())
        throw PeerFailure(-1,
                          "distributed: a collective failed on rank " + std::to_string(d.options.rank) + ": " + first);
    throw PeerFailure(silent.front(), "distributed: " + who + " stopped answering (seen from rank " +
                                          std::to_string(d.options.rank) + "): " + first);
}

#else // no c10d Gloo in this build

bool available()
{
    return false;
}

struct PendingReduce::Impl { };
struct Communicator::Impl {
    RendezvousOptions options;
};

PendingReduce::PendingReduce() = default;
PendingReduce::~PendingReduce() = default;
PendingReduce::PendingReduce(PendingReduce&&) noexcept = default;
PendingReduce& PendingReduce::operator=(PendingReduce&&) noexcept = default;
bool PendingReduce::valid() const
{
    return false;
}
void PendingReduce::wait() { }

Communicator::Communicator() : m_impl(std::make_unique<Impl>()) { }
Communicator::~Communicator() = default;

std::shared_ptr<Communicator> Communicator::connect(const RendezvousOptions& options)
{
    validate(options);
    throw std::runtime_error(
        "distributed: this build has no c10d Gloo process group (build with libgloo-dev installed)");
}

int Communicator::rank() const
{
    return m_impl->options.rank;
}
int Communicator::world_size() const
{
    return m_impl->options.world_size;
}
const RendezvousOptions& Communicator::options() const
{
    return m_impl->options;
}
double Communicator::collective_seconds() const
{
    return 0.0;
}
std::string Communicator::use_device(const torch::Device&)
{
    return "gloo";
}
std::string Communicator::device_backend() const
{
    return "gloo";
}
bool Communicator::reduces_on(const torch::Device& device) const
{
    return device.is_cpu();
}
void Communicator::all_reduce_sum_(torch::Tensor&) { }
void Communicator::all_reduce_mean_(torch::Tensor&) { }
void Communicator::all_reduce_max_(torch::Tensor&) { }
PendingReduce Communicator::all_reduce_sum_async(torch::Tensor)
{
    return {};
}
void Communicator::broadcast_(torch::Tensor&, int) { }
std::string Communicator::broadcast_bytes(const std::string& bytes, int)
{
    return bytes;
}
std::vector<double> Communicator::all_reduce_sum(std::vector<double> values)
{
    return values;
}
std::vector<double> Communicator::all_gather(double value)
{
    return {value};
}
void Communicator::barrier() { }
void Communicator::publish(const std::string&, const std::string&) { }
std::string Communicator::await(const std::string& key)
{
    throw std::runtime_error("distributed: no store to wait for " + key);
}
void Communicator::fail(const std::string& error)
{
    throw PeerFailure(-1, error);
}

#endif

void broadcast_tensors(Communicator& communicator, const std::vector<torch::Tensor>& tensors, int root)
{
    if (communicator.world_size() == 1 || tensors.empty()) return;
    torch::NoGradGuard guard;
    // One flat message per dtype keeps it to a couple of collectives.
    std::vector<torch::ScalarType> types;
    for (const auto& t : tensors)
        if (std::find(types.begin(), types.end(), t.scalar_type()) == types.end()) types.push_back(t.scalar_type());
    for (torch::ScalarType type : types) {
        std::vector<torch::Tensor> parts;
        for (const auto& t : tensors)
            if (t.scalar_type() == type) parts.push_back(t.detach().reshape({-1}));
        torch::Tensor flat = torch::cat(parts).contiguous();
        communicator.broadcast_(flat, root);
        std::int64_t offset = 0;
        for (const auto& t : tensors) {
            if (t.scalar_type() != type) continue;
            const std::int64_t n = t.numel();
            t.detach().copy_(flat.narrow(0, offset, n).view_as(t));
            offset += n;
        }
    }
}

} // namespace foxhunt::models::dist
