// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-dist-bench: data-parallel scaling on this machine, JSON on stdout. For each model it
// measures training samples/s in one process and in two (1 intra-op thread each; this executable
// starts a copy of itself as rank 1), the gradient all-reduce wait per step, the gradient bytes
// all-reduced per step, and a bare all-reduce of those bytes (the link's cost without compute),
// which the README's scaling model for N machines is built from. Not a test.

#include "engine/agents/dqn.h"
#include "engine/bench/cyclic_series.h"
#include "engine/agents/ppo.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/local_workers.h"
#include "engine/session/training_session.h"
#include "models/distributed/communicator.h"
#include "models/process.h"
#include "models/runtime.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

namespace dist = foxhunt::models::dist;
using namespace foxhunt;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

ForecastData series(std::size_t rows)
{
    CyclicSeriesOptions o;
    o.period = 78;
    o.autoregression = 0.0;
    o.amplitude = 5e-4;
    o.scaledReturns = 4;
    return cyclicSeries(rows, o);
}

/// What one rank measured for one model.
struct Measured {
    double samplesPerSecond = 0.0;
    double allreduceMsPerStep = 0.0;
    double stepMs = 0.0;
    double gradientBytes = 0.0;
};

/// The session's default sizes for `model`, trained for `steps` steps after a warm-up.
Measured train(const std::string& model, std::shared_ptr<dist::Communicator> comm, int steps)
{
    const SessionConfig defaults = SessionConfig::defaults();
    Measured m;
    std::vector<double> allreduce;
    if (model == "mamba2" || model == "tft") {
        ForecasterConfig fc = model == "mamba2" ? defaults.mamba2 : defaults.tft;
        fc.kind = model == "mamba2" ? ForecasterKind::Mamba2 : ForecasterKind::Tft;
        fc.totalSteps = 1000;
        ForecasterTrainer t(fc, series(6000), {200, 5000}, {5000, 5900});
        t.setCommunicator(comm);
        m.gradientBytes = static_cast<double>(t.parameterBytes());
        for (int i = 0; i < 2; ++i) t.trainStep();
        const auto t0 = Clock::now();
        for (int i = 0; i < steps; ++i) allreduce.push_back(t.trainStep().allreduceSeconds * 1e3);
        const double s = seconds(t0);
        m.samplesPerSecond = static_cast<double>(steps) * static_cast<double>(fc.batchSize) / s;
        m.stepMs = 1e3 * s / steps;
    } else if (model == "dqn") {
        DqnOptions o = defaults.dqn;
        o.learningStarts = 0;
        o.seed = 3;
        const int obs = 64, actions = 3;
        Dqn dqn(obs, actions, o);
        dqn.setCommunicator(comm);
        std::mt19937_64 rng(7 + static_cast<unsigned>(comm ? comm->rank() : 0));
        std::normal_distribution<float> n(0.0f, 1.0f);
        std::vector<float> s(obs), s2(obs);
        for (int i = 0; i < 2000; ++i) {
            for (auto& v : s) v = n(rng);
            for (auto& v : s2) v = n(rng);
            (void)dqn.observe(s, static_cast<int>(rng() % actions), n(rng), s2, false, false);
        }
        m.gradientBytes = static_cast<double>(dqn.memoryBytes().gradientBytes);
        for (int i = 0; i < 20; ++i) dqn.update();
        const auto t0 = Clock::now();
        for (int i = 0; i < steps; ++i) allreduce.push_back(dqn.update().allreduceMs);
        const double sec = seconds(t0);
        m.samplesPerSecond = static_cast<double>(steps) * o.batchSize / sec;
        m.stepMs = 1e3 * sec / steps;
    }
    m.allreduceMsPerStep = median(allreduce);
    return m;
}

/// Median wall time of a bare all-reduce of `bytes` (float32) over the group.
double bareAllreduceMs(dist::Communicator& comm, double bytes)
{
    torch::Tensor t = torch::ones({std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes / 4))});
    std::vector<double> ms;
    for (int i = 0; i < 30; ++i) {
        comm.barrier();
        const auto t0 = Clock::now();
        comm.all_reduce_sum_(t);
        ms.push_back(seconds(t0) * 1e3);
    }
    return median(ms);
}

int stepsFor(const std::string& model)
{
    return model == "dqn" ? 400 : model == "mamba2" ? 12 : 25;
}

int runPeer()
{
    const std::string model = std::getenv("FOXHUNT_DIST_BENCH_MODEL");
    Rendezvous r = rendezvousFromEnvironment();
    dist::RendezvousOptions o;
    o.master_port = r.masterPort;
    o.world_size = 2;
    o.rank = 1;
    auto comm = dist::Communicator::connect(o);
    const Measured m = train(model, comm, stepsFor(model));
    comm->all_gather(m.samplesPerSecond);
    comm->all_gather(m.stepMs);
    bareAllreduceMs(*comm, m.gradientBytes);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    models::prepareProcess();
    models::setThreads(1);
    if (std::getenv("FOXHUNT_DIST_BENCH_MODEL")) return runPeer();
    if (!dist::available()) {
        std::cerr << "foxhunt-dist-bench: this build has no c10d Gloo (libgloo-dev)\n";
        return 1;
    }
    std::vector<std::string> wanted{"dqn", "tft", "mamba2"};
    if (argc > 1) wanted.assign(argv + 1, argv + argc);
    nlohmann::json out = nlohmann::json::object();
    out["machine"] = {{"hardware_threads", std::thread::hardware_concurrency()},
                      {"torch", models::torchVersion()},
                      {"threads_per_process", 1},
                      {"backend", "gloo over 127.0.0.1"}};
    for (const std::string& model : wanted) {
        const int steps = stepsFor(model);
        const Measured one = train(model, nullptr, steps);

        Rendezvous r;
        r.worldSize = 2;
        r.masterPort = dist::free_local_port();
        ::setenv("FOXHUNT_DIST_BENCH_MODEL", model.c_str(), 1);
        LocalWorkers peer;
        // The peer is this executable again (LocalWorkers runs `<program> worker`; the argument is ignored here).
        char self[4096] = {};
        const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0) return 1;
        peer.start(std::string(self, static_cast<std::size_t>(len)), r, 1, 1);
        ::unsetenv("FOXHUNT_DIST_BENCH_MODEL");
        dist::RendezvousOptions o;
        o.master_port = r.masterPort;
        o.world_size = 2;
        auto comm = dist::Communicator::connect(o);
        const Measured two = train(model, comm, steps);
        const std::vector<double> rates = comm->all_gather(two.samplesPerSecond);
        const std::vector<double> stepMs = comm->all_gather(two.stepMs);
        const double bare = bareAllreduceMs(*comm, two.gradientBytes);
        comm.reset();
        const std::vector<std::string> problems = peer.wait(60);

        const double total = rates[0] + rates[1];
        out[model] = {{"samples_per_s_1_process", one.samplesPerSecond},
                      {"samples_per_s_2_processes", total},
                      {"samples_per_s_per_rank", rates},
                      {"speedup", total / one.samplesPerSecond},
                      {"step_ms_1_process", one.stepMs},
                      {"step_ms_2_processes", std::max(stepMs[0], stepMs[1])},
                      {"allreduce_wait_ms_per_step", two.allreduceMsPerStep},
                      {"gradient_bytes_per_step", two.gradientBytes},
                      {"bare_allreduce_ms", bare},
                      {"loopback_bus_bytes_per_s", bare > 0 ? two.gradientBytes / (bare / 1e3) : 0.0},
                      {"steps", steps}};
        if (!problems.empty()) out[model]["peer_problems"] = problems;
    }
    std::cout << out.dump(2) << std::endl;
    return 0;
}
