#include "models/distributed/communicator.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#if defined(FOXHUNT_HAVE_C10D_GLOO)
// ProcessGroupGloo.hpp declares the group only under this switch (set by LibTorch's own build).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
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
        throw std::invalid_argument(std::string(name) + "=" + text + ": expected an integer in [" + std::to_string(low) +
                                    ", " + std::to_string(high) + "]");
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

std::string heartbeatKey(int rank) { return "foxhunt/heartbeat/" + std::to_string(rank); }

} // namespace

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

bool available() { return true; }

struct PendingReduce::Impl {
    c10::intrusive_ptr<c10d::Work> work;
    Communicator* communicator = nullptr;
    torch::Tensor host;   // a device tensor's host copy that Gloo reduces (undefined for CPU tensors)
    torch::Tensor device; // where wait() copies the result back
};

namespace {

// Gloo reduces host memory: a tensor elsewhere (CUDA) travels through a host copy.
bool staged(const torch::Tensor& tensor) { return !tensor.device().is_cpu(); }

} // namespace

struct Communicator::Impl {
    RendezvousOptions options;
    c10::intrusive_ptr<c10d::TCPStore> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
    double collectiveSeconds = 0.0;

    // The heartbeat: its own store connection on its own thread, so a busy or paused training
    // thread still beats.
    std::thread beat;
    std::mutex beatMutex;
    std::condition_variable beatWake;
    bool beatStop = false;

    // Rank 0's last heartbeat count and when it last changed (await()).
    std::int64_t ownerBeats = -1;
    Clock::time_point ownerSeen = Clock::now();

    void wait(c10d::Work& work, Communicator& self)
    {
        const auto t0 = Clock::now();
        try {
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
bool PendingReduce::valid() const { return m_impl && m_impl->work; }

void PendingReduce::wait()
{
    if (!valid()) return;
    m_impl->communicator->m_impl->wait(*m_impl->work, *m_impl->communicator);
    m_impl->work.reset();
    if (m_impl->device.defined()) {
        m_impl->device.copy_(m_impl->host);
        m_impl->device = m_impl->host = torch::Tensor();
    }
}

Communicator::Communicator() : m_impl(std::make_unique<Impl>()) {}
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
        throw PeerFailure(options.rank == 0 ? -1 : 0,
                          "distributed: rendezvous at " + where + " failed (rank " + std::to_string(options.rank) + " of " +
                              std::to_string(options.world_size) + "): " + e.what());
    }
    try {
        auto go = c10d::ProcessGroupGloo::Options::create(options.timeout);
        const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
        if (ifname && *ifname)
            go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
        else if (isLoopback(options.master_addr))
            go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        else
            go->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
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

int Communicator::rank() const { return m_impl->options.rank; }
int Communicator::world_size() const { return m_impl->options.world_size; }
const RendezvousOptions& Communicator::options() const { return m_impl->options; }
double Communicator::collective_seconds() const { return m_impl->collectiveSeconds; }

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
    if (staged(tensor)) {
        torch::Tensor host = tensor.to(torch::kCPU).contiguous();
        all_reduce_max_(host);
        tensor.copy_(host);
        return;
    }
    TORCH_CHECK(tensor.is_contiguous(), "all_reduce_max_: a contiguous tensor");
    std::vector<torch::Tensor> t{tensor};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    auto work = m_impl->group->allreduce(t, o);
    m_impl->wait(*work, *this);
}

PendingReduce Communicator::all_reduce_sum_async(torch::Tensor tensor)
{
    PendingReduce p;
    p.m_impl = std::make_unique<PendingReduce::Impl>();
    p.m_impl->communicator = this;
    if (staged(tensor)) {
        p.m_impl->device = tensor;
        p.m_impl->host = tensor.to(torch::kCPU).contiguous();
        tensor = p.m_impl->host;
    }
    TORCH_CHECK(tensor.is_contiguous(), "all_reduce_sum_async: a contiguous tensor");
    std::vector<torch::Tensor> t{std::move(tensor)};
    try {
        p.m_impl->work = m_impl->group->allreduce(t);
    } catch (const std::exception& e) {
        fail(e.what());
    }
    return p;
}

void Communicator::broadcast_(torch::Tensor& tensor, int root)
{
    if (staged(tensor)) {
        torch::Tensor host = tensor.to(torch::kCPU).contiguous();
        broadcast_(host, root);
        tensor.copy_(host);
        return;
    }
    TORCH_CHECK(tensor.is_contiguous(), "broadcast_: a contiguous tensor");
    std::vector<torch::Tensor> t{tensor};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    auto work = m_impl->group->broadcast(t, o);
    m_impl->wait(*work, *this);
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
    if (!storeAlive && d.options.rank != 0)
        silent.push_back(0); // the store lives in rank 0's process
    else
        for (int r = 0; r < n; ++r)
            if (r != d.options.rank && after[static_cast<std::size_t>(r)] == before[static_cast<std::size_t>(r)])
                silent.push_back(r);
    std::string who;
    for (int r : silent) who += (who.empty() ? "rank " : ", rank ") + std::to_string(r);
    const std::string first = error.substr(0, error.find('\n'));
    if (silent.empty())
        throw PeerFailure(-1, "distributed: a collective failed on rank " + std::to_string(d.options.rank) + ": " + first);
    throw PeerFailure(silent.front(), "distributed: " + who + " stopped answering (seen from rank " + std::to_string(d.options.rank) + "): " + first);
}

#else // no c10d Gloo in this build

bool available() { return false; }

struct PendingReduce::Impl {};
struct Communicator::Impl {
    RendezvousOptions options;
};

PendingReduce::PendingReduce() = default;
PendingReduce::~PendingReduce() = default;
PendingReduce::PendingReduce(PendingReduce&&) noexcept = default;
PendingReduce& PendingReduce::operator=(PendingReduce&&) noexcept = default;
bool PendingReduce::valid() const { return false; }
void PendingReduce::wait() {}

Communicator::Communicator() : m_impl(std::make_unique<Impl>()) {}
Communicator::~Communicator() = default;

std::shared_ptr<Communicator> Communicator::connect(const RendezvousOptions& options)
{
    validate(options);
    throw std::runtime_error("distributed: this build has no c10d Gloo process group (build with libgloo-dev installed)");
}

int Communicator::rank() const { return m_impl->options.rank; }
int Communicator::world_size() const { return m_impl->options.world_size; }
const RendezvousOptions& Communicator::options() const { return m_impl->options; }
double Communicator::collective_seconds() const { return 0.0; }
void Communicator::all_reduce_sum_(torch::Tensor&) {}
void Communicator::all_reduce_mean_(torch::Tensor&) {}
void Communicator::all_reduce_max_(torch::Tensor&) {}
PendingReduce Communicator::all_reduce_sum_async(torch::Tensor) { return {}; }
void Communicator::broadcast_(torch::Tensor&, int) {}
std::string Communicator::broadcast_bytes(const std::string& bytes, int) { return bytes; }
std::vector<double> Communicator::all_reduce_sum(std::vector<double> values) { return values; }
std::vector<double> Communicator::all_gather(double value) { return {value}; }
void Communicator::barrier() {}
void Communicator::publish(const std::string&, const std::string&) {}
std::string Communicator::await(const std::string& key)
{
    throw std::runtime_error("distributed: no store to wait for " + key);
}
void Communicator::fail(const std::string& error) { throw PeerFailure(-1, error); }

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
