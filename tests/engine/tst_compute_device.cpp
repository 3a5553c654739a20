// SPDX-License-Identifier: GPL-3.0-or-later
// Where the models train: device names in run configs are parsed and checked once, with messages
// that name the device and what is available; the CPU named outright trains exactly like the
// default; and, where this build has CUDA, every trainer on cuda:0 learns what it learns on the CPU.

#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/bench/cyclic_series.h"
#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/devices.h"
#include "engine/session/error_text.h"
#include "engine/session/training_session.h"
#include "models/device.h"
#include "models/runtime.h"
#include "tests/support/test_bundle.h"

#include <torch/torch.h>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <thread>

namespace tst_compute_device {

using namespace foxhunt;

namespace {

// The message of the std::invalid_argument `f` throws, or "" when it throws none.
std::string invalidArgumentOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

ForecasterConfig smallForecaster(ForecasterKind kind, const std::string& device)
{
    ForecasterConfig c;
    c.kind = kind;
    c.windowing.pastLength = 16;
    c.windowing.horizon = 2;
    c.batchSize = 8;
    c.dModel = 16;
    c.hiddenSize = 8;
    c.dropout = 0.0; // dropout masks are drawn from each device's own generator
    c.seed = 3;
    c.device = device;
    return c;
}

DqnOptions smallDqn(const std::string& device)
{
    DqnOptions o;
    o.hidden = {16, 16};
    o.bufferSize = 256;
    o.batchSize = 8;
    o.learningStarts = 0;
    o.trainFreq = 1;
    o.gradients = DqnGradients::Autograd; // the path every device takes
    o.seed = 4;
    o.device = device;
    return o;
}

PpoOptions smallPpo(const std::string& device)
{
    PpoOptions o;
    o.hidden = {16, 16};
    o.nSteps = 32;
    o.batchSize = 8;
    o.nEpochs = 2;
    o.seed = 5;
    o.device = device;
    return o;
}

// Feeds `steps` transitions of a fixed little world (observation = step parity) into a DQN.
std::vector<float> trainDqn(Dqn& dqn, int steps)
{
    for (int t = 0; t < steps; ++t) {
        const std::vector<float> obs{static_cast<float>(t % 2), 1.0f};
        const std::vector<float> next{static_cast<float>((t + 1) % 2), 1.0f};
        dqn.observe(obs, t % 3, t % 2 == 0 ? 1.0 : -1.0, next, false, false);
    }
    return dqn.onlineParameters();
}

// One rollout and update of a PPO agent on the same little world.
std::vector<float> trainPpo(Ppo& ppo)
{
    for (int t = 0; t < 32; ++t) {
        const std::vector<float> obs{static_cast<float>(t % 2), 1.0f};
        const std::vector<float> next{static_cast<float>((t + 1) % 2), 1.0f};
        const PpoAction a = ppo.act(obs);
        ppo.store(obs, a, a.action == t % 3 ? 1.0 : -1.0, false, false, next);
    }
    return ppo.parameters();
}

double maxAbsDifference(const std::vector<float>& a, const std::vector<float>& b)
{
    double worst = a.size() == b.size() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
    return worst;
}

} // namespace

class TestComputeDevice : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { models::setThreads(1); }
    void namesAreParsed();
    void unavailableDeviceIsRefusedByEveryTrainer();
    void sessionOnUnavailableDeviceFailsReadably();
    void torchErrorsReadWithoutStackTrace();
    void explicitCpuTrainsLikeTheDefault();
    void cudaTrainsLikeTheCpu();
    void threadCapFollowsTheMachine_data();
    void threadCapFollowsTheMachine();
};

void TestComputeDevice::namesAreParsed()
{
    QCOMPARE(models::compute_device("cpu"), torch::Device(torch::kCPU));
    QCOMPARE(models::compute_device("cpu:0"), torch::Device(torch::kCPU));
    QVERIFY(contains(invalidArgumentOf([] { models::compute_device("gpu"); }), "not a device name"));
    QVERIFY(contains(invalidArgumentOf([] { models::compute_device("cuda:x"); }), "cuda:x"));
    QVERIFY(contains(invalidArgumentOf([] { models::compute_device("meta"); }), "only the CPU and CUDA"));
    if (models::cudaAvailable()) {
        QCOMPARE(models::compute_device("cuda"), torch::Device(torch::kCUDA, 0));
        const std::string tooFar = invalidArgumentOf([] { models::compute_device("cuda:99"); });
        QVERIFY2(contains(tooFar, "cuda:99") && contains(tooFar, "CUDA device(s)"), tooFar.c_str());
    } else {
        const std::string none = invalidArgumentOf([] { models::compute_device("cuda:0"); });
        QVERIFY2(contains(none, "cuda:0") && contains(none, "use cpu"), none.c_str());
    }
}

void TestComputeDevice::unavailableDeviceIsRefusedByEveryTrainer()
{
    // cuda:99 is missing on every machine this runs on, with or without CUDA.
    const std::string device = "cuda:99";
    const ForecastData data = cyclicSeries(300);
    const IndexRange valid = validAnchors(data, smallForecaster(ForecasterKind::Mamba2, "cpu").windowing);
    const IndexRange train{valid.begin, valid.begin + 150}, validation{valid.begin + 150, valid.end};
    for (ForecasterKind kind : {ForecasterKind::Mamba2, ForecasterKind::Tft}) {
        const std::string why = invalidArgumentOf(
            [&] { ForecasterTrainer(smallForecaster(kind, device), data, train, validation); });
        QVERIFY2(contains(why, device), why.c_str());
    }
    const std::string dqn = invalidArgumentOf([&] { Dqn(2, 3, smallDqn(device)); });
    QVERIFY2(contains(dqn, "dqn") && contains(dqn, device), dqn.c_str());
    const std::string ppo = invalidArgumentOf([&] { Ppo(2, 3, smallPpo(device)); });
    QVERIFY2(contains(ppo, "ppo") && contains(ppo, device), ppo.c_str());
    // FP16 autocast is CUDA's; the CPU keeps refusing it where this LibTorch cannot (1.13).
    if (!models::cudaAvailable()) {
        DqnOptions fp16 = smallDqn("cpu");
        fp16.mixedPrecision = models::precision::MixedPrecisionConfig::for_volta_turing();
        const std::string why = invalidArgumentOf([&] { Dqn(2, 3, fp16); });
        if (!why.empty()) QVERIFY2(contains(why, "mixed precision on cpu"), why.c_str());
    }
}

void TestComputeDevice::sessionOnUnavailableDeviceFailsReadably()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    SessionConfig c = SessionConfig::defaults();
    c.models = {ModelKind::Dqn};
    c.steps = 5;
    c.device = "cuda:99";
    TrainingSession session(dir.filePath(QStringLiteral("device.db")).toStdString(), c);
    const SessionResult r = session.run();
    QVERIFY(r.status == RunStatus::Failed);
    QVERIFY2(contains(r.error, "cuda:99") && contains(r.error, "not available"), r.error.c_str());
}

void TestComputeDevice::explicitCpuTrainsLikeTheDefault()
{
    DqnOptions byDefault = smallDqn("cpu");
    byDefault.device = DqnOptions{}.device;
    Dqn a(2, 3, byDefault), b(2, 3, smallDqn("cpu"));
    QCOMPARE(trainDqn(a, 40), trainDqn(b, 40));
    QVERIFY(a.updates() > 0);
    QCOMPARE(a.memoryBytes().onCuda, false);
    QCOMPARE(a.memoryBytes().cudaPeakBytes, std::size_t{0});
}

void TestComputeDevice::cudaTrainsLikeTheCpu()
{
    if (!models::cudaAvailable()) QSKIP("this LibTorch has no CUDA or the machine no GPU");
    // Same seeds, same data: the devices differ only in kernel rounding.
    Dqn dqnCpu(2, 3, smallDqn("cpu")), dqnCuda(2, 3, smallDqn("cuda:0"));
    QVERIFY(maxAbsDifference(trainDqn(dqnCpu, 40), trainDqn(dqnCuda, 40)) < 1e-4);
    const ModelMemory dqnMemory = dqnCuda.memoryBytes();
    QVERIFY(dqnMemory.onCuda);
    QVERIFY(dqnMemory.cudaAllocatedBytes >= dqnMemory.parameterBytes);
    QVERIFY(dqnMemory.cudaPeakBytes >= dqnMemory.cudaAllocatedBytes);

    Ppo ppoCpu(2, 3, smallPpo("cpu")), ppoCuda(2, 3, smallPpo("cuda:0"));
    QVERIFY(maxAbsDifference(trainPpo(ppoCpu), trainPpo(ppoCuda)) < 1e-4);

    const ForecastData data = cyclicSeries(300);
    const IndexRange valid = validAnchors(data, smallForecaster(ForecasterKind::Mamba2, "cpu").windowing);
    const IndexRange train{valid.begin, valid.begin + 150}, validation{valid.begin + 150, valid.end};
    for (ForecasterKind kind : {ForecasterKind::Mamba2, ForecasterKind::Tft}) {
        ForecasterTrainer cpu(smallForecaster(kind, "cpu"), data, train, validation);
        ForecasterTrainer cuda(smallForecaster(kind, "cuda:0"), data, train, validation);
        double lossCpu = 0.0, lossCuda = 0.0;
        for (int i = 0; i < 5; ++i) {
            lossCpu = cpu.trainStep().loss;
            lossCuda = cuda.trainStep().loss;
        }
        QVERIFY2(std::abs(lossCpu - lossCuda) <= 1e-3 * std::abs(lossCpu), qPrintable(QString::number(lossCuda)));
        QVERIFY(std::abs(cpu.evaluate().model.quantileLoss - cuda.evaluate().model.quantileLoss) < 1e-3);
        const ModelMemory m = cuda.memory();
        QVERIFY(m.onCuda && m.cudaPeakBytes > 0 && m.activationPeakBytes > 0);
    }
}

void TestComputeDevice::threadCapFollowsTheMachine_data()
{
    QTest::addColumn<int>("requested");
    QTest::addColumn<unsigned>("hardware");
    QTest::addColumn<int>("threads");
    QTest::addColumn<QString>("note");
    QTest::newRow("within") << 2 << 2u << 2 << "";
    QTest::newRow("one of many") << 1 << 64u << 1 << "";
    QTest::newRow("100000 on 2") << 100000 << 2u << 2
                                 << "100000 threads asked for, but this machine has 2 hardware threads; using 2";
    QTest::newRow("3 on 1") << 3 << 1u << 1 << "3 threads asked for, but this machine has 1 hardware thread; using 1";
    QTest::newRow("below 1 is left to preflight") << -3 << 2u << -3 << "";
}

void TestComputeDevice::threadCapFollowsTheMachine()
{
    QFETCH(int, requested);
    QFETCH(unsigned, hardware);
    QFETCH(int, threads);
    QFETCH(QString, note);
    const ThreadCap cap = capThreads(requested, hardware);
    QCOMPARE(cap.threads, threads);
    QCOMPARE(QString::fromStdString(cap.note), note);
    // Without a count given, this machine's own.
    const unsigned here = std::max(1u, std::thread::hardware_concurrency());
    QCOMPARE(capThreads(1'000'000).threads, static_cast<int>(here));
}

void TestComputeDevice::torchErrorsReadWithoutStackTrace()
{
    // A LibTorch error's what() carries "Exception raised from ... frame #0 ..." lines: users got
    // fifteen of them under a failed run.
    try {
        const torch::Tensor a = torch::zeros({2, 3});
        const torch::Tensor b = torch::zeros({4, 5});
        (void)torch::matmul(a, b);
        QFAIL("matmul of mismatched shapes did not throw");
    } catch (const std::exception& e) {
        const std::string full = e.what();
        const std::string text = errorText(e);
        QVERIFY2(text.find("mat1 and mat2 shapes cannot be multiplied") != std::string::npos ||
                     text.find("size mismatch") != std::string::npos || text.find("shapes") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("frame #") == std::string::npos, text.c_str());
        QVERIFY2(text.find("Exception raised from") == std::string::npos, text.c_str());
        QVERIFY(text.size() < full.size());
    }
    QCOMPARE(errorText(std::runtime_error("plain")), std::string("plain"));
}

} // namespace tst_compute_device

FOXHUNT_TEST_APPLESS_MAIN(tst_compute_device::TestComputeDevice)
#include "tst_compute_device.moc"
