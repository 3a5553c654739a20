// SPDX-License-Identifier: GPL-3.0-or-later
// Data parallelism over real processes: this test executable starts a copy of itself as rank 1
// (FOXHUNT_DIST_ROLE names what the copy does) and plays rank 0 itself, over LibTorch's c10d
// TCPStore + Gloo on 127.0.0.1.

#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/bench/cyclic_series.h"
#include "engine/forecast/forecaster_trainer.h"
#include "models/distributed/communicator.h"
#include "models/distributed/gradient_reducer.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>

#include <torch/torch.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <numbers>
#include <random>

#include <unistd.h>

using namespace foxhunt;
namespace dist = foxhunt::models::dist;

Q_DECLARE_METATYPE(foxhunt::ForecasterKind)
Q_DECLARE_METATYPE(foxhunt::DqnGradients)

namespace {

dist::RendezvousOptions rendezvous(int port, int rank, int seconds = 30)
{
    dist::RendezvousOptions o;
    o.master_port = port;
    o.world_size = 2;
    o.rank = rank;
    o.timeout = std::chrono::seconds(seconds);
    return o;
}

// ---- shared by both ranks --------------------------------------------------------------------

ForecastData series(std::size_t rows)
{
    return cyclicSeries(rows);
}

ForecasterConfig forecasterConfig(ForecasterKind kind, std::size_t batch)
{
    ForecasterConfig c;
    c.kind = kind;
    c.windowing = {/*pastLength=*/16, /*horizon=*/3};
    c.batchSize = batch;
    c.learningRate = 3e-3;
    c.warmupSteps = 1;
    c.totalSteps = 50;
    c.dModel = 16;
    c.layers = 1;
    c.dState = 8;
    c.headDim = 8;
    c.chunkSize = 8;
    c.hiddenSize = 16;
    c.embeddingSize = 4;
    c.heads = 2;
    c.dropout = 0.0; // dropout draws differ per rank by design; equivalence needs none
    c.seed = 11;
    return c;
}

constexpr int kSteps = 4;

ForecasterTrainer forecaster(ForecasterKind kind, std::size_t batch)
{
    ForecastData d = series(400);
    return ForecasterTrainer(forecasterConfig(kind, batch), std::move(d), {40, 300}, {300, 390});
}

/// The trainer's forecasts at fixed validation anchors: they pin its weights.
std::vector<double> forecastsOf(ForecasterTrainer& t)
{
    std::vector<double> all;
    for (std::size_t anchor : {310u, 330u, 350u, 370u}) {
        const std::vector<double> p = t.predict(anchor);
        all.insert(all.end(), p.begin(), p.end());
    }
    return all;
}

PpoOptions ppoOptions(int steps)
{
    PpoOptions o;
    o.nSteps = steps;
    o.batchSize = steps; // one minibatch: 2 ranks x n = 1 process x 2n with the same data
    o.nEpochs = 3;
    o.hidden = {16, 16};
    o.seed = 3;
    o.learningRate = 1e-3;
    return o;
}

constexpr int kObs = 4, kActions = 3, kRollout = 24;

/// Stores rank `r`'s deterministic rollout (whole episodes, so GAE never crosses ranks).
void fillRollout(Ppo& ppo, int r)
{
    std::mt19937_64 rng(100 + static_cast<std::uint64_t>(r));
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> obs(kObs), next(kObs);
    for (auto& v : obs) v = n(rng);
    for (int t = 0; t < kRollout; ++t) {
        for (auto& v : next) v = n(rng);
        PpoAction a{static_cast<int>(rng() % kActions), 0.1f * n(rng), -1.1f + 0.1f * n(rng)};
        ppo.store(obs, a, n(rng), /*terminated=*/(t + 1) % 8 == 0, false, next);
        obs = next;
    }
}

std::vector<float> ppoAfterUpdate(std::shared_ptr<dist::Communicator> c, int rank)
{
    Ppo ppo(kObs, kActions, ppoOptions(kRollout));
    ppo.setCommunicator(std::move(c));
    fillRollout(ppo, rank);
    ppo.update(std::vector<float>(kObs, 0.0f));
    return ppo.parameters();
}

/// The reference: one process, both ranks' rollouts, minibatch 2n.
std::vector<float> ppoSingleProcess()
{
    Ppo ppo(kObs, kActions, ppoOptions(2 * kRollout));
    fillRollout(ppo, 0);
    fillRollout(ppo, 1);
    ppo.update(std::vector<float>(kObs, 0.0f));
    return ppo.parameters();
}

DqnOptions dqnOptions(DqnGradients gradients)
{
    DqnOptions o;
    o.hidden = {16, 16};
    o.batchSize = 16;
    o.bufferSize = 256;
    o.learningStarts = 1'000'000; // observe() only stores; the test calls update()
    o.learningRate = 1e-3;
    o.seed = 4;
    o.gradients = gradients;
    return o;
}

constexpr int kDqnObs = 4, kDqnActions = 3, kDqnTransitions = 40;

/// One update of a DQN whose replay holds rank `r`'s transitions; without a communicator, that
/// rank's own update.
DqnUpdateStats dqnUpdate(std::shared_ptr<dist::Communicator> c, int r, DqnGradients gradients)
{
    Dqn dqn(kDqnObs, kDqnActions, dqnOptions(gradients));
    if (c) dqn.setCommunicator(std::move(c));
    std::mt19937_64 rng(200 + static_cast<std::uint64_t>(r));
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> obs(kDqnObs), next(kDqnObs);
    for (auto& v : obs) v = n(rng);
    for (int t = 0; t < kDqnTransitions; ++t) {
        for (auto& v : next) v = n(rng);
        dqn.observe(obs, static_cast<int>(rng() % kDqnActions), n(rng), next, (t + 1) % 10 == 0, false);
        obs = next;
    }
    return dqn.update();
}

/// A small network whose gradients rank `r` computes on its own inputs.
struct Mlp : torch::nn::Module {
    torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
    Mlp()
    {
        torch::manual_seed(9);
        a = register_module("a", torch::nn::Linear(6, 32));
        b = register_module("b", torch::nn::Linear(32, 32));
        c = register_module("c", torch::nn::Linear(32, 2));
    }
    torch::Tensor forward(const torch::Tensor& x) { return c(torch::relu(b(torch::relu(a(x))))); }
};

torch::Tensor inputsOf(int rank)
{
    torch::manual_seed(50 + rank);
    return torch::randn({8, 6});
}

/// Rank 1's side of each scenario; the exit code is its verdict.
int runRole(const std::string& role)
{
    torch::set_num_threads(1);
    const int port = std::atoi(std::getenv("FOXHUNT_DIST_PORT"));
    try {
        auto c = dist::Communicator::connect(rendezvous(port, 1, role == "stall" ? 2 : 30));
        if (role == "collectives") {
            torch::Tensor t = torch::tensor({1.0, 2.0, 3.0}, torch::kFloat64) * 2.0;
            c->all_reduce_sum_(t);
            torch::Tensor m = torch::tensor({5.0f, -1.0f});
            c->all_reduce_max_(m);
            const std::string bytes = c->broadcast_bytes("");
            const std::vector<double> g = c->all_gather(7.5);
            if (c->use_device(torch::kCPU) != "gloo") return 5;
            const bool ok = t[2].item<double>() == 9.0 && m[0].item<float>() == 5.0f && m[1].item<float>() == 4.0f &&
                            bytes == std::string("foxhunt\0bytes", 13) && g == std::vector<double>{-2.0, 7.5};
            return ok ? 0 : 1;
        }
        if (role == "reducer") {
            Mlp net;
            dist::GradientReducer reducer(net.parameters(), c, /*bucket_bytes=*/2048);
            for (int step = 0; step < 2; ++step) {
                net.zero_grad();
                net.forward(inputsOf(1)).square().mean().backward();
                reducer.synchronize();
            }
            return 0;
        }
        if (role == "mamba2" || role == "tft") {
            ForecasterTrainer t = forecaster(role == "tft" ? ForecasterKind::Tft : ForecasterKind::Mamba2, 8);
            t.setCommunicator(c);
            for (int s = 0; s < kSteps; ++s) t.trainStep();
            return 0;
        }
        if (role == "ppo") {
            ppoAfterUpdate(c, 1);
            return 0;
        }
        if (role == "dqn-hand-written" || role == "dqn-autograd") {
            dqnUpdate(c, 1, role == "dqn-autograd" ? DqnGradients::Autograd : DqnGradients::HandWritten);
            return 0;
        }
        if (role == "die") {
            torch::Tensor t = torch::ones({4});
            c->all_reduce_sum_(t);
            std::_Exit(3);
        }
        if (role == "stall") {
            torch::Tensor t = torch::ones({4});
            c->all_reduce_sum_(t);
            ::raise(SIGSTOP); // the parent kills this process once it has its verdict
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank 1 (%s): %s\n", role.c_str(), e.what());
        return 2;
    }
    return 4;
}

/// Starts rank 1 of `role`.
std::unique_ptr<QProcess> startRank1(const std::string& role, int port)
{
    auto p = std::make_unique<QProcess>();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FOXHUNT_DIST_ROLE", QString::fromStdString(role));
    env.insert("FOXHUNT_DIST_PORT", QString::number(port));
    p->setProcessEnvironment(env);
    p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p->start(QString::fromStdString(std::filesystem::read_symlink("/proc/self/exe").string()), {});
    if (!p->waitForStarted(10'000)) return nullptr;
    return p;
}

int finish(QProcess& p)
{
    if (!p.waitForFinished(120'000)) {
        p.kill();
        p.waitForFinished();
        return -1;
    }
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
}

} // namespace

class TestDistributed : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        torch::set_num_threads(1);
        if (!dist::available()) QSKIP("this build has no c10d Gloo (libgloo-dev)");
    }

    void environmentFollowsTorchrun()
    {
        ::setenv("WORLD_SIZE", "4", 1);
        ::setenv("RANK", "2", 1);
        ::setenv("LOCAL_RANK", "0", 1);
        ::setenv("MASTER_ADDR", "10.0.0.7", 1);
        ::setenv("MASTER_PORT", "29511", 1);
        const auto o = dist::rendezvous_from_environment();
        QVERIFY(o.has_value());
        QCOMPARE(o->world_size, 4);
        QCOMPARE(o->rank, 2);
        QCOMPARE(o->master_addr, std::string("10.0.0.7"));
        QCOMPARE(o->master_port, 29511);
        ::setenv("RANK", "4", 1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dist::rendezvous_from_environment());
        for (const char* k : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(k);
        QVERIFY(!dist::rendezvous_from_environment().has_value());
    }

    void collectives()
    {
        const int port = dist::free_local_port();
        auto child = startRank1("collectives", port);
        QVERIFY(child);
        auto c = dist::Communicator::connect(rendezvous(port, 0));
        // Writing to a dead peer's socket must fail a collective, not kill this process.
        struct sigaction pipe { };
        QCOMPARE(::sigaction(SIGPIPE, nullptr, &pipe), 0);
        QVERIFY(pipe.sa_handler == SIG_IGN);
        torch::Tensor t = torch::tensor({1.0, 2.0, 3.0}, torch::kFloat64);
        c->all_reduce_sum_(t);
        QCOMPARE(t[0].item<double>(), 3.0);
        QCOMPARE(t[2].item<double>(), 9.0);
        torch::Tensor m = torch::tensor({1.0f, 4.0f});
        c->all_reduce_max_(m);
        QCOMPARE(m[0].item<float>(), 5.0f);
        QCOMPARE(m[1].item<float>(), 4.0f);
        QCOMPARE(c->broadcast_bytes(std::string("foxhunt\0bytes", 13)), std::string("foxhunt\0bytes", 13));
        QCOMPARE(c->all_gather(-2.0), (std::vector<double>{-2.0, 7.5}));
        QVERIFY(c->collective_seconds() > 0.0);
        // CPU ranks: Gloo reduces in place; a CUDA tensor would go through a host copy.
        QCOMPARE(c->device_backend(), std::string("gloo"));
        QCOMPARE(c->use_device(torch::kCPU), std::string("gloo"));
        QVERIFY(c->reduces_on(torch::kCPU));
        QVERIFY(!c->reduces_on(torch::Device(torch::kCUDA, 0)));
        QCOMPARE(finish(*child), 0);
    }

    void deviceBackendNeedsAGpuPerRank()
    {
        using R = dist::RankDevice;
        // One GPU each, NCCL everywhere: in place on the GPUs (also across machines).
        QCOMPARE(dist::device_backend({R{"a", 0, true}, R{"a", 1, true}}), std::string("nccl"));
        QCOMPARE(dist::device_backend({R{"a", 0, true}, R{"b", 0, true}}), std::string("nccl"));
        QCOMPARE(dist::device_backend({R{"a", 0, true}}), std::string("nccl"));
        // Two ranks on one GPU (NCCL refuses that), a CPU rank, or a rank without NCCL: Gloo.
        QCOMPARE(dist::device_backend({R{"a", 0, true}, R{"b", 1, true}, R{"a", 0, true}}), std::string("gloo"));
        QCOMPARE(dist::device_backend({R{"a", 0, true}, R{"a", -1, true}}), std::string("gloo"));
        QCOMPARE(dist::device_backend({R{"a", 0, true}, R{"a", 1, false}}), std::string("gloo"));
        QCOMPARE(dist::device_backend({}), std::string("gloo"));
        // NCCL only in a CUDA build of LibTorch.
#if !defined(FOXHUNT_TORCH_CUDA)
        QVERIFY(!dist::nccl_available());
#endif
    }

    void reducerAveragesGradientsInBuckets()
    {
        const int port = dist::free_local_port();
        auto child = startRank1("reducer", port);
        QVERIFY(child);
        auto c = dist::Communicator::connect(rendezvous(port, 0));
        Mlp net;
        dist::GradientReducer reducer(net.parameters(), c, /*bucket_bytes=*/2048);
        QVERIFY(reducer.bucket_count() > 2);
        dist::ReduceTimes times;
        for (int step = 0; step < 2; ++step) {
            net.zero_grad();
            net.forward(inputsOf(0)).square().mean().backward();
            times = reducer.synchronize();
        }
        // Buckets full before backward ended were started from inside it.
        QVERIFY(times.overlapped_buckets > 0);
        QCOMPARE(times.bytes, static_cast<std::int64_t>((6 * 32 + 32 + 32 * 32 + 32 + 32 * 2 + 2) * 4));
        // Reference: both ranks' gradients on one process, averaged.
        Mlp ref;
        std::vector<torch::Tensor> mean;
        for (int r = 0; r < 2; ++r) {
            ref.zero_grad();
            ref.forward(inputsOf(r)).square().mean().backward();
            for (std::size_t i = 0; i < ref.parameters().size(); ++i) {
                torch::Tensor g = ref.parameters()[i].grad().clone() / 2.0;
                if (r == 0) mean.push_back(g);
                else mean[i] += g;
            }
        }
        for (std::size_t i = 0; i < mean.size(); ++i)
            QVERIFY2(torch::allclose(net.parameters()[i].grad(), mean[i], 1e-5, 1e-7), qPrintable(QString::number(i)));
        QCOMPARE(finish(*child), 0);
    }

    void forecasterTwoRanksEqualOneProcessDoubleBatch_data()
    {
        QTest::addColumn<ForecasterKind>("kind");
        QTest::newRow("mamba2") << ForecasterKind::Mamba2;
        QTest::newRow("tft") << ForecasterKind::Tft;
    }

    void forecasterTwoRanksEqualOneProcessDoubleBatch()
    {
        QFETCH(ForecasterKind, kind);
        const int port = dist::free_local_port();
        auto child = startRank1(kind == ForecasterKind::Tft ? "tft" : "mamba2", port);
        QVERIFY(child);
        std::vector<double> lossesDistributed;
        std::vector<double> distributed;
        {
            auto c = dist::Communicator::connect(rendezvous(port, 0));
            ForecasterTrainer t = forecaster(kind, 8);
            t.setCommunicator(c);
            for (int s = 0; s < kSteps; ++s) lossesDistributed.push_back(t.trainStep().loss);
            distributed = forecastsOf(t);
        }
        QCOMPARE(finish(*child), 0);

        ForecasterTrainer single = forecaster(kind, 16);
        std::vector<double> lossesSingle;
        for (int s = 0; s < kSteps; ++s) lossesSingle.push_back(single.trainStep().loss);
        const std::vector<double> reference = forecastsOf(single);
        for (int s = 0; s < kSteps; ++s)
            QVERIFY2(std::abs(lossesDistributed[s] - lossesSingle[s]) <= 1e-5 * std::abs(lossesSingle[s]),
                     qPrintable(QString("step %1: %2 vs %3").arg(s).arg(lossesDistributed[s]).arg(lossesSingle[s])));
        double worst = 0.0, scale = 0.0;
        for (std::size_t i = 0; i < reference.size(); ++i) {
            worst = std::max(worst, std::abs(distributed[i] - reference[i]));
            scale = std::max(scale, std::abs(reference[i]));
        }
        QVERIFY2(worst <= 1e-3 * scale, qPrintable(QString("max difference %1 of %2").arg(worst).arg(scale)));
        // And the ranks really trained: the weights moved away from the initial ones.
        ForecasterTrainer untouched = forecaster(kind, 16);
        QVERIFY(forecastsOf(untouched) != reference);
    }

    void ppoTwoRanksEqualOneProcessDoubleBatch()
    {
        const int port = dist::free_local_port();
        auto child = startRank1("ppo", port);
        QVERIFY(child);
        std::vector<float> distributed;
        {
            auto c = dist::Communicator::connect(rendezvous(port, 0));
            distributed = ppoAfterUpdate(c, 0);
        }
        QCOMPARE(finish(*child), 0);
        const std::vector<float> reference = ppoSingleProcess();
        const std::vector<float> initial = Ppo(kObs, kActions, ppoOptions(kRollout)).parameters();
        QCOMPARE(distributed.size(), reference.size());
        double worst = 0.0, moved = 0.0;
        for (std::size_t i = 0; i < reference.size(); ++i) {
            worst = std::max(worst, static_cast<double>(std::abs(distributed[i] - reference[i])));
            moved = std::max(moved, static_cast<double>(std::abs(reference[i] - initial[i])));
        }
        QVERIFY2(moved > 1e-3, qPrintable(QString("the update moved the weights by only %1").arg(moved)));
        QVERIFY2(worst <= 1e-5, qPrintable(QString("max parameter difference %1").arg(worst)));
    }

    void dqnReportsMeansOverRanks_data()
    {
        QTest::addColumn<DqnGradients>("gradients");
        QTest::newRow("hand-written") << DqnGradients::HandWritten;
        QTest::newRow("autograd") << DqnGradients::Autograd;
    }

    // What rank 0 charts after a 2-rank update is the mean of both ranks' own statistics: they ride
    // in the gradients' all-reduce.
    void dqnReportsMeansOverRanks()
    {
        QFETCH(DqnGradients, gradients);
        const int port = dist::free_local_port();
        auto child = startRank1(gradients == DqnGradients::Autograd ? "dqn-autograd" : "dqn-hand-written", port);
        QVERIFY(child);
        DqnUpdateStats distributed;
        {
            auto c = dist::Communicator::connect(rendezvous(port, 0));
            distributed = dqnUpdate(c, 0, gradients);
        }
        QCOMPARE(finish(*child), 0);
        const DqnUpdateStats own0 = dqnUpdate(nullptr, 0, gradients);
        const DqnUpdateStats own1 = dqnUpdate(nullptr, 1, gradients);
        // The ranks' batches differ, so rank 0's own value is not the answer.
        QVERIFY(std::abs(own0.loss - own1.loss) > 1e-3);
        const std::pair<double, double> pairs[] = {
            {distributed.loss, (own0.loss + own1.loss) / 2.0},
            {distributed.tdErrorMean, (own0.tdErrorMean + own1.tdErrorMean) / 2.0},
            {distributed.qMean, (own0.qMean + own1.qMean) / 2.0}};
        for (const auto& [reported, mean] : pairs)
            QVERIFY2(std::abs(reported - mean) <= 1e-6,
                     qPrintable(QString("%1 vs %2").arg(reported, 0, 'g', 10).arg(mean, 0, 'g', 10)));
    }

    void deadPeerIsNamed()
    {
        const int port = dist::free_local_port();
        auto child = startRank1("die", port);
        QVERIFY(child);
        auto c = dist::Communicator::connect(rendezvous(port, 0, 10));
        torch::Tensor t = torch::ones({4});
        c->all_reduce_sum_(t);
        QCOMPARE(finish(*child), 3);
        try {
            c->all_reduce_sum_(t);
            QFAIL("an all-reduce with a dead peer succeeded");
        } catch (const dist::PeerFailure& e) {
            QCOMPARE(e.rank(), 1);
            QVERIFY2(std::string(e.what()).find("rank 1") != std::string::npos, e.what());
        }
    }

    void stalledPeerTimesOutAndIsNamed()
    {
        const int port = dist::free_local_port();
        auto child = startRank1("stall", port);
        QVERIFY(child);
        auto c = dist::Communicator::connect(rendezvous(port, 0, 2));
        torch::Tensor t = torch::ones({4});
        c->all_reduce_sum_(t);
        try {
            c->all_reduce_sum_(t); // rank 1 is stopped: the 2 s timeout ends the wait
            QFAIL("an all-reduce with a stalled peer succeeded");
        } catch (const dist::PeerFailure& e) {
            QCOMPARE(e.rank(), 1);
            QVERIFY2(std::string(e.what()).find("rank 1 stopped answering") != std::string::npos, e.what());
        }
        child->kill();
        child->waitForFinished();
    }
};

int main(int argc, char** argv)
{
    if (const char* role = std::getenv("FOXHUNT_DIST_ROLE")) return runRole(role);
    TestDistributed test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_distributed.moc"
