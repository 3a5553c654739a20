// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/dqn.h"

#include "engine/agents/agent_int8.h"
#include "engine/agents/checkpoint_io.h"
#include "engine/agents/prioritized_replay.h"
#include "engine/agents/random.h"
#include "engine/agents/replay_buffer.h"
#include "engine/agents/schedules.h"
#include "engine/telemetry/metric_registry.h"
#include "models/agents/grad_utils.h"
#include "models/agents/q_backprop.h"
#include "models/distributed/communicator.h"
#include "models/agents/q_network.h"
#include "models/device.h"
#include "models/memory/memory_tracker.h"
#include "models/precision/amp_step.h"
#include "models/precision/autocast.h"
#include "models/precision/loss_scaler.h"
#include "models/precision/quantize.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace foxhunt {

using namespace foxhunt::detail;
namespace mp = foxhunt::models::precision;

namespace {

// Updates between two measurements of the activation peak (the first update is measured).
constexpr long long kActivationMeasureEvery = 100;

// Statistics that ride behind the gradients in the data-parallel all-reduce: loss, TD error mean, Q mean.
constexpr int64_t kReducedStats = 3;

// Builds a network without moving the default generator: the target copy must not shift what
// later draws from it see.
models::QNetwork freshNetwork(const models::QNetworkOptions& options)
{
    auto generator = at::detail::getDefaultCPUGenerator();
    torch::Tensor state;
    {
        std::lock_guard<std::mutex> lock(generator.mutex());
        state = generator.get_state();
    }
    models::QNetwork net(options);
    {
        std::lock_guard<std::mutex> lock(generator.mutex());
        generator.set_state(state);
    }
    return net;
}

} // namespace

struct Dqn::Impl {
    std::optional<DqnUpdateStats> last; ///< the last update observe() ran
    std::vector<float> stepObservation; ///< step()'s copy of the observation it acts on
    Impl(int observationSize, int actionCount, DqnOptions opts)
        : options(std::move(opts)), obsSize(observationSize), actions(actionCount), online(nullptr), target(nullptr),
          nstep(options.nSteps, options.gamma), rng(options.seed)
    {
        if (observationSize <= 0 || actionCount <= 0)
            throw std::invalid_argument("dqn: observation size and action count must be positive");
        if (options.batchSize <= 0 || options.trainFreq <= 0 || options.gradientSteps < 0 || options.bufferSize == 0 ||
            options.targetUpdateInterval <= 0 || options.totalTimesteps <= 0)
            throw std::invalid_argument("dqn: batchSize, trainFreq, bufferSize, targetUpdateInterval and "
                                        "totalTimesteps must be positive");
        device = models::training_device(options.device, options.mixedPrecision, "dqn: ");
        models::CudaWorkScope onDevice(cuda, device.is_cuda());
        torch::manual_seed(options.seed);
        std::vector<int64_t> hidden(options.hidden.begin(), options.hidden.end());
        online = models::QNetwork(
            models::QNetworkOptions(observationSize, actionCount).hidden(hidden).dueling(options.dueling));
        target = freshNetwork(online->options);
        // Initialised on the CPU under the seed: the same weights on every device.
        online->to(device);
        target->to(device);
        mp::copy_state(*online, *target);
        for (auto& p : target->parameters()) p.set_requires_grad(false);
        models::flatten_parameters(*online, onlineFlat, /*with_grads=*/true);
        models::flatten_parameters(*target, targetFlat, /*with_grads=*/false);
        flatList = {onlineFlat.values};
        // torch::optim::Adam over the one flat tensor: its exact update rule, in 8 ops per step.
        optimizer = std::make_unique<torch::optim::Adam>(
            flatList, torch::optim::AdamOptions(options.learningRate).eps(options.adamEpsilon));
        scaler = mp::LossScaler(options.mixedPrecision);
        amp = options.mixedPrecision.enabled;
        // The hand-written backward runs on host memory; other devices take the autograd path.
        if (options.gradients == DqnGradients::HandWritten && !amp && device.is_cpu()) {
            onlineProp = std::make_unique<models::QNetworkBackprop>(*online);
            targetProp = std::make_unique<models::QNetworkBackprop>(*target);
            gradQ = torch::zeros({options.batchSize, static_cast<int64_t>(actionCount)});
            targetHost.resize(static_cast<std::size_t>(options.batchSize));
            // Allocated here, the buffers are the same for every update; activationBytes adds them.
            onlineProp->reserve(options.batchSize, /*gradients=*/true);
            targetProp->reserve(options.batchSize, /*gradients=*/false);
        }
        if (options.prioritized) {
            auto per = std::make_unique<PrioritizedReplayBuffer>(
                options.bufferSize, static_cast<std::size_t>(observationSize),
                PrioritizedReplayOptions{options.priorityAlpha, options.priorityEpsilon});
            prioritized = per.get();
            buffer = std::move(per);
        } else {
            buffer = std::make_unique<ReplayBuffer>(options.bufferSize, static_cast<std::size_t>(observationSize));
        }
        const auto b = static_cast<std::size_t>(options.batchSize);
        batch.resize(b, static_cast<std::size_t>(observationSize));
        // The tensors view the host batch arrays: sampling writes straight into them.
        const int64_t bb = options.batchSize;
        obsT = torch::from_blob(batch.observations.data(), {bb, obsSize});
        nextObsT = torch::from_blob(batch.nextObservations.data(), {bb, obsSize});
        actionsT = torch::from_blob(batch.actions.data(), {bb, 1}, torch::kInt64);
        rewardsT = torch::from_blob(batch.rewards.data(), {bb});
        bootstrapHost.resize(b);
        bootstrapT = torch::from_blob(bootstrapHost.data(), {bb});
        weightsT = torch::from_blob(batch.weights.data(), {bb});
        single = torch::zeros({1, obsSize});
        schedule = LinearSchedule{options.explorationInitialEps, options.explorationFinalEps,
                                  options.explorationFraction};
        tdHost.resize(b);
    }

    double progress() const { return static_cast<double>(envSteps) / static_cast<double>(options.totalTimesteps); }
    double epsilon() const { return schedule.value(progress()); }

    int greedy(std::span<const float> observation)
    {
        TORCH_CHECK(static_cast<int64_t>(observation.size()) == obsSize, "dqn: observation has ", observation.size(),
                    " values, expected ", obsSize);
        torch::NoGradGuard guard;
        std::copy(observation.begin(), observation.end(), single.data_ptr<float>());
        return static_cast<int>(online->forward(single.to(device)).argmax(1).item<int64_t>());
    }

    DqnUpdateStats update()
    {
        models::CudaWorkScope onDevice(cuda, device.is_cuda()); // first: it measures after the temporaries are gone
        const auto start = std::chrono::steady_clock::now();
        if (prioritized) {
            const double beta = options.priorityBeta0 + (1.0 - options.priorityBeta0) * std::min(1.0, progress());
            prioritized->sample(rng, beta, batch);
        } else {
            buffer->sample(rng, batch);
        }
        for (std::size_t b = 0; b < bootstrapHost.size(); ++b)
            bootstrapHost[b] = batch.discounts[b] * (1.0f - batch.terminated[b]);
        // The activation peak of some updates, read after backward and before the optimizer step
        // (Adam's state is not an activation; the flat gradients are allocated once, outside).
        std::optional<models::PeakMemoryScope> activations;
        if (updates % kActivationMeasureEvery == 0 && models::activation_peaks_measurable(device))
            activations.emplace(models::memory_device(device));
        if (onlineProp) return finish(handWrittenStep(activations ? &*activations : nullptr), start);
        // The sampled batch on the device (the host views themselves on the CPU).
        const torch::Tensor obs = obsT.to(device), nextObs = nextObsT.to(device), acts = actionsT.to(device);
        const torch::Tensor rewards = rewardsT.to(device), bootstrap = bootstrapT.to(device);
        const torch::Tensor weights = prioritized ? weightsT.to(device) : weightsT;
        torch::Tensor targetQ;
        {
            torch::NoGradGuard guard;
            mp::AutocastGuard autocast(options.mixedPrecision, device.type());
            const torch::Tensor nextTarget = target->forward(nextObs);
            torch::Tensor nextValue;
            if (options.doubleQ)
                nextValue = nextTarget.gather(1, online->forward(nextObs).argmax(1, /*keepdim=*/true)).squeeze(1);
            else nextValue = std::get<0>(nextTarget.max(1));
            targetQ = torch::addcmul(rewards, bootstrap, nextValue.to(torch::kFloat32));
        }
        torch::Tensor q;
        {
            mp::AutocastGuard autocast(options.mixedPrecision, device.type());
            q = online->forward(obs).gather(1, acts).squeeze(1);
        }
        torch::Tensor loss;
        if (amp) {
            // Half-precision Q values, float64 loss: the reduction must not round in bf16/f16.
            const torch::Tensor q64 = q.to(torch::kFloat64);
            const torch::Tensor y64 = targetQ.to(torch::kFloat64);
            if (prioritized)
                loss = (weights.to(torch::kFloat64) *
                        torch::huber_loss(q64, y64, torch::Reduction::None, options.huberDelta))
                           .mean();
            else loss = torch::huber_loss(q64, y64, torch::Reduction::Mean, options.huberDelta);
        } else if (prioritized) {
            loss = (weights * torch::huber_loss(q, targetQ, torch::Reduction::None, options.huberDelta)).mean();
        } else {
            loss = torch::huber_loss(q, targetQ, torch::Reduction::Mean, options.huberDelta);
        }
        onlineFlat.grads.zero_();
        DqnUpdateStats stats;
        // Before the step: the gradients' all-reduce carries these statistics too.
        double tdSum = 0.0;
        {
            // TD errors and the Q mean on the host: both tensors are small and
            // contiguous, and this saves several tensor ops per update.
            const torch::Tensor qc = q.detach().to(torch::kCPU, torch::kFloat32).contiguous();
            const torch::Tensor yc = targetQ.to(torch::kCPU).contiguous();
            const float* qv = qc.data_ptr<float>();
            const float* yv = yc.data_ptr<float>();
            double qSum = 0.0;
            for (std::size_t b = 0; b < tdHost.size(); ++b) {
                tdHost[b] = std::abs(qv[b] - yv[b]);
                tdSum += tdHost[b];
                qSum += qv[b];
            }
            stats.tdErrorMean = tdSum / static_cast<double>(tdHost.size());
            stats.qMean = qSum / static_cast<double>(tdHost.size());
        }
        stats.loss = loss.detach().item<double>();
        const mp::ScaledStepResult stepped = mp::scaled_step(
            scaler, *optimizer, loss,
            [this, &activations] {
                if (activations) activationBytes = activations->peakAboveStart();
                return models::clip_grad_norm_f64(flatList, options.maxGradNorm);
            },
            [this, &stats] { stats.allreduceMs = averageGradients(stats); });
        stats.gradNorm = stepped.grad_norm;
        stats.skipped = stepped.skipped;
        ++updates;
        // A non-finite forward (the step was skipped) must not poison the sum tree.
        if (prioritized && std::isfinite(tdSum)) prioritized->updatePriorities(batch.indices, tdHost);
        return finish(stats, start);
    }

    // The FP32 update without autograd: the same targets, Huber loss (its gradient written out),
    // clip and Adam update rule as the autograd path, with QNetworkBackprop's forward and backward
    // and Adam's step fused into one pass.
    DqnUpdateStats handWrittenStep(const models::PeakMemoryScope* activations)
    {
        const std::size_t n = tdHost.size();
        const auto a = static_cast<std::size_t>(actions);
        {
            const float* nextTarget = targetProp->forward(nextObsT).data_ptr<float>();
            // Double DQN picks the action with the online network and values it with the target one.
            const float* chooser = options.doubleQ ? onlineProp->forward(nextObsT).data_ptr<float>() : nextTarget;
            for (std::size_t b = 0; b < n; ++b) {
                const float* row = chooser + b * a;
                std::size_t best = 0;
                for (std::size_t j = 1; j < a; ++j) {
                    // torch::argmax: the first maximum, NaN counting as the largest value.
                    if (row[j] > row[best] || (std::isnan(row[j]) && !std::isnan(row[best]))) best = j;
                }
                targetHost[b] = batch.rewards[b] + bootstrapHost[b] * nextTarget[b * a + best];
            }
        }
        const float* q = onlineProp->forward(obsT).data_ptr<float>();
        float* gradRow = gradQ.data_ptr<float>();
        std::fill(gradRow, gradRow + n * a, 0.0f);
        const auto delta = static_cast<float>(options.huberDelta);
        const float invBatch = 1.0f / static_cast<float>(n);
        double lossSum = 0.0;
        double tdSum = 0.0;
        double qSum = 0.0;
        for (std::size_t b = 0; b < n; ++b) {
            const std::size_t cell = b * a + static_cast<std::size_t>(batch.actions[b]);
            const float diff = q[cell] - targetHost[b];
            const float absDiff = std::abs(diff);
            const float weight = prioritized ? batch.weights[b] : 1.0f;
            const float huber = absDiff < delta ? 0.5f * diff * diff : delta * (absDiff - 0.5f * delta);
            lossSum += static_cast<double>(weight * huber);
            // d mean(w * huber(q - y)) / dq = w * clamp(q - y, -delta, delta) / B.
            gradRow[cell] = std::clamp(diff, -delta, delta) * (weight * invBatch);
            tdHost[b] = absDiff;
            tdSum += absDiff;
            qSum += q[cell];
        }
        onlineProp->backward(gradQ);
        if (activations)
            activationBytes = activations->peakAboveStart() + onlineProp->workspace_bytes() +
                              targetProp->workspace_bytes() + static_cast<std::size_t>(gradQ.nbytes());
        // No loss scaling on this path (FP32), so no unscale and no skipped steps.
        DqnUpdateStats stats;
        stats.tdErrorMean = tdSum / static_cast<double>(n);
        stats.qMean = qSum / static_cast<double>(n);
        stats.loss = lossSum / static_cast<double>(n);
        stats.allreduceMs = averageGradients(stats);
        stats.gradNorm = models::clip_grad_norm_f64(flatList, options.maxGradNorm);
        models::adam_step_fused(*optimizer);
        ++updates;
        if (prioritized && std::isfinite(tdSum)) prioritized->updatePriorities(batch.indices, tdHost);
        return stats;
    }

    // Data-parallel learners: the mean of every rank's gradients between backward and clip, in one
    // all-reduce whose message also carries the loss, TD error mean and Q mean of `stats` (the slots
    // behind the flat gradients), so what rank 0 charts is the mean over ranks as well. They travel
    // in float32 like the gradients: 1e-7 relative, far below what a chart shows, for no second
    // collective per update. Returns the milliseconds it waited.
    double averageGradients(DqnUpdateStats& stats)
    {
        if (!communicator) return 0.0;
        const double before = communicator->collective_seconds();
        torch::Tensor tail = message.narrow(0, onlineFlat.grads.numel(), kReducedStats);
        tail.copy_(torch::tensor({stats.loss, stats.tdErrorMean, stats.qMean}, torch::kFloat64));
        communicator->all_reduce_mean_(message);
        const torch::Tensor means = tail.to(torch::kCPU, torch::kFloat64);
        const double* m = means.data_ptr<double>();
        stats.loss = m[0];
        stats.tdErrorMean = m[1];
        stats.qMean = m[2];
        return 1e3 * (communicator->collective_seconds() - before);
    }

    // The statistics both update paths report alike.
    DqnUpdateStats finish(DqnUpdateStats stats, std::chrono::steady_clock::time_point start) const
    {
        stats.lossScale = scaler.current_scale();
        stats.skippedSteps = scaler.skipped_steps();
        stats.epsilon = epsilon();
        stats.learningRate = options.learningRate;
        stats.envSteps = envSteps;
        stats.updates = updates;
        stats.stepTimeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return stats;
    }

    DqnOptions options;
    torch::Device device{torch::kCPU};
    int64_t obsSize;
    int actions;
    models::QNetwork online;
    models::QNetwork target;
    models::FlatParameters onlineFlat;
    models::FlatParameters targetFlat;
    std::vector<torch::Tensor> flatList; ///< {onlineFlat.values}: the optimizer's and the clip's parameter list
    std::shared_ptr<models::dist::Communicator> communicator; ///< data-parallel learners (none: one process)
    torch::Tensor message; ///< with a communicator: [flat gradients (onlineFlat.grads views it), kReducedStats]
    std::unique_ptr<torch::optim::Adam> optimizer;
    mp::LossScaler scaler;
    bool amp = false;
    std::unique_ptr<models::QNetworkBackprop> onlineProp; ///< hand-written backward (FP32 runs), else null
    std::unique_ptr<models::QNetworkBackprop> targetProp; ///< the target network's forward, beside onlineProp
    torch::Tensor gradQ;                                  ///< [B, A] d loss / d Q for onlineProp
    std::vector<float> targetHost;                        ///< TD targets r + discount * Q_target(s', a*)
    std::size_t activationBytes = 0;                      ///< peak activation bytes of the last measured update
    models::CudaAttribution cuda;                         ///< what the agent holds in the CUDA caching allocator
    models::QNetwork int8Net{nullptr};                    ///< INT8 inference copy (built on demand)
    bool int8Refused = false; ///< the last INT8 check's gate refused the copy: FP32 acts instead
    std::unique_ptr<ReplayBuffer> buffer;
    PrioritizedReplayBuffer* prioritized = nullptr;
    NStepAccumulator nstep;
    ReplayBatch batch;
    torch::Tensor obsT, nextObsT, actionsT, rewardsT, bootstrapT, weightsT, single;
    std::vector<float> bootstrapHost; ///< discount * (1 - terminated) per sampled row
    std::vector<float> tdHost;
    LinearSchedule schedule;
    std::mt19937_64 rng;
    long long envSteps = 0;
    long long updates = 0;
};

Dqn::Dqn(int observationSize, int actionCount, DqnOptions options)
    : m_impl(std::make_unique<Impl>(observationSize, actionCount, std::move(options)))
{
}

Dqn::~Dqn() = default;
Dqn::Dqn(Dqn&&) noexcept = default;
Dqn& Dqn::operator=(Dqn&&) noexcept = default;

int Dqn::act(std::span<const float> observation)
{
    Impl& d = *m_impl;
    if (d.envSteps < d.options.learningStarts || uniform01(d.rng) < d.epsilon())
        return static_cast<int>(uniformIndex(d.rng, static_cast<std::uint64_t>(d.actions)));
    return d.greedy(observation);
}

int Dqn::greedyAction(std::span<const float> observation) const
{
    return m_impl->greedy(observation);
}

std::vector<float> Dqn::qValues(std::span<const float> observation) const
{
    Impl& d = *m_impl;
    TORCH_CHECK(static_cast<int64_t>(observation.size()) == d.obsSize, "dqn: bad observation size");
    torch::NoGradGuard guard;
    std::copy(observation.begin(), observation.end(), d.single.data_ptr<float>());
    const torch::Tensor q = d.online->forward(d.single.to(d.device)).to(torch::kCPU).contiguous();
    return std::vector<float>(q.data_ptr<float>(), q.data_ptr<float>() + q.numel());
}

std::optional<DqnUpdateStats> Dqn::observe(std::span<const float> observation, int action, double reward,
                                           std::span<const float> nextObservation, bool terminated, bool truncated)
{
    Impl& d = *m_impl;
    if (action < 0 || action >= d.actions)
        throw std::out_of_range("dqn: action " + std::to_string(action) + " out of range");
    d.nstep.push(observation, action, static_cast<float>(reward), nextObservation, terminated, truncated,
                 [&d](std::span<const float> o, int a, float r, std::span<const float> n, bool t, float disc) {
                     if (d.prioritized) d.prioritized->add(o, a, r, n, t, disc);
                     else d.buffer->add(o, a, r, n, t, disc);
                 });
    ++d.envSteps;
    if (d.envSteps % d.options.targetUpdateInterval == 0) updateTarget();
    std::optional<DqnUpdateStats> last;
    if (d.envSteps > d.options.learningStarts && d.envSteps % d.options.trainFreq == 0 && d.buffer->size() > 0) {
        for (int i = 0; i < d.options.gradientSteps; ++i) last = d.update();
    }
    if (last) d.last = last;
    return last;
}

AgentStep Dqn::step(TradingEnv& env)
{
    Impl& d = *m_impl;
    const std::span<const float> current = env.observation();
    d.stepObservation.assign(current.begin(), current.end());
    AgentStep out;
    const int action = act(d.stepObservation);
    out.result = env.step(action);
    if (const std::optional<DqnUpdateStats> u = observe(d.stepObservation, action, out.result.reward, env.observation(),
                                                        out.result.terminated, false))
        out.update = detail::agentUpdate(
            *u, u->loss,
            {{metrics::kQMean, u->qMean}, {metrics::kEpsilon, u->epsilon}, {metrics::kTdError, u->tdErrorMean}});
    return out;
}

const std::optional<DqnUpdateStats>& Dqn::lastUpdate() const
{
    return m_impl->last;
}

DqnUpdateStats Dqn::update()
{
    return m_impl->update();
}

void Dqn::updateTarget()
{
    models::polyak_update(m_impl->targetFlat.values, m_impl->onlineFlat.values, m_impl->options.tau);
}

double Dqn::epsilon() const
{
    return m_impl->epsilon();
}
long long Dqn::envSteps() const
{
    return m_impl->envSteps;
}
long long Dqn::updates() const
{
    return m_impl->updates;
}
std::size_t Dqn::bufferSize() const
{
    return m_impl->buffer->size();
}
const DqnOptions& Dqn::options() const
{
    return m_impl->options;
}
double Dqn::lossScale() const
{
    return m_impl->scaler.current_scale();
}

std::size_t Dqn::servingBytes(int batch) const
{
    // A holder copy shares the module (forward() is not const).
    return servingBytesOf(m_impl->online, m_impl->obsSize, batch, m_impl->device);
}

ModelMemory Dqn::memoryBytes() const
{
    const Impl& d = *m_impl;
    ModelMemory m = detail::agentMemory(d.activationBytes, d.device, d.cuda);
    for (const auto& p : d.online->parameters()) m.parameterBytes += static_cast<std::size_t>(p.nbytes());
    for (const auto& p : d.target->parameters()) m.parameterBytes += static_cast<std::size_t>(p.nbytes());
    if (d.onlineFlat.grads.defined()) m.gradientBytes = static_cast<std::size_t>(d.onlineFlat.grads.nbytes());
    detail::addAdamStateBytes(*d.optimizer, m);
    return m;
}

Int8Evaluation Dqn::evaluateInt8(const AgentInt8Options& options)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda()); // the kept INT8 copy is this agent's
    const ReplayStorage& s = d.buffer->storage();
    const PolicyTransitions* held = options.heldOut && options.heldOut->size() > 0 ? options.heldOut : nullptr;
    if (!held && s.size == 0)
        throw std::logic_error("dqn: evaluateInt8 needs held-out transitions or transitions in the replay buffer");
    if (held && held->observationSize != d.obsSize)
        throw std::invalid_argument("dqn: held-out transitions have " + std::to_string(held->observationSize) +
                                    " values per observation, expected " + std::to_string(d.obsSize));
    torch::NoGradGuard guard;
    const std::size_t available = held ? held->size() : s.size;
    const auto n = static_cast<int64_t>(std::min(options.samples == 0 ? available : options.samples, available));
    const int64_t o = d.obsSize;
    const torch::Device dev = d.device;
    const auto rows = [n, o, &dev](const float* data) {
        return torch::from_blob(const_cast<float*>(data), {n, o}).clone().to(dev);
    };
    const auto column = [n, &dev](const float* data) {
        return torch::from_blob(const_cast<float*>(data), {n}).to(dev, torch::kFloat64);
    };
    torch::Tensor obs, next, act, rew, term, disc;
    if (held) {
        // The validation split as the FP32 greedy policy walks it: one-step TD targets.
        obs = rows(held->observations.data());
        next = rows(held->nextObservations.data());
        std::vector<int64_t> actions(held->actions.begin(), held->actions.begin() + n);
        act = torch::tensor(actions, torch::kInt64).view({n, 1}).to(dev);
        rew = column(held->rewards.data());
        term = column(held->terminated.data());
        disc = torch::full({n}, d.options.gamma, torch::TensorOptions(torch::kFloat64).device(dev));
    } else {
        // Rows [0, n) of the storage: a fixed sample, the same from one call to the next.
        obs = rows(s.observations.data());
        next = rows(s.nextObservations.data());
        act = torch::from_blob(const_cast<int64_t*>(s.actions.data()), {n, 1}, torch::kInt64).clone().to(dev);
        rew = column(s.rewards.data());
        term = column(s.terminated.data());
        disc = column(s.discounts.data());
    }

    // FP32 targets, computed once: both models are scored against the same y.
    const torch::Tensor nextTarget = d.target->forward(next);
    const torch::Tensor nextValue =
        d.options.doubleQ ? nextTarget.gather(1, d.online->forward(next).argmax(1, /*keepdim=*/true)).squeeze(1)
                          : std::get<0>(nextTarget.max(1));
    const torch::Tensor y = rew + disc * (1.0 - term) * nextValue.to(torch::kFloat64);

    mp::QuantizeOptions qopts;
    Int8Evaluation e;
    const std::size_t storedCalibration = options.calibrationObservations.size() / static_cast<std::size_t>(o);
    if (options.calibrationSamples > 0 && (storedCalibration > 0 || s.size > 0)) {
        torch::Tensor calib;
        if (storedCalibration > 0) {
            const auto c = static_cast<int64_t>(std::min(options.calibrationSamples, storedCalibration));
            calib =
                torch::from_blob(const_cast<float*>(options.calibrationObservations.data()), {c, o}).clone().to(dev);
        } else {
            const auto c = static_cast<int64_t>(std::min(options.calibrationSamples, s.size));
            calib = torch::from_blob(const_cast<float*>(s.observations.data()) + (static_cast<int64_t>(s.size) - c) * o,
                                     {c, o})
                        .clone()
                        .to(dev);
        }
        qopts.calibrate = [calib](torch::nn::Module& m) { m.as<models::QNetworkImpl>()->forward(calib); };
        e.staticActivations = true;
        e.calibrationSamples = static_cast<std::size_t>(calib.size(0));
    }
    e.evaluatedSamples = static_cast<std::size_t>(n);

    const torch::Tensor q32 = d.online->forward(obs);
    const auto tdLoss = [&](const torch::Tensor& q) {
        return torch::huber_loss(q.gather(1, act).squeeze(1).to(torch::kFloat64), y, torch::Reduction::Mean,
                                 d.options.huberDelta)
            .item<double>();
    };
    const auto score = [&](models::QNetwork& copy) {
        const torch::Tensor q8 = copy->forward(obs);
        e.setLosses(tdLoss(q32), tdLoss(q8));
        e.actionAgreement = q32.argmax(1).eq(q8.argmax(1)).to(torch::kFloat64).mean().item<double>();
    };
    const auto logits = [](models::QNetwork net, const torch::Tensor& x) { return net->forward(x); };
    d.int8Net = checkAgentInt8(e, d.online, qopts, obs, options, score, logits, dev);
    d.int8Refused = !d.int8Net;
    return e;
}

int Dqn::int8GreedyAction(std::span<const float> observation)
{
    Impl& d = *m_impl;
    return detail::int8GreedyOf(
        d.int8Net, d.int8Refused, d.online, observation, d.single, d.device, d.cuda,
        [](models::QNetwork& net, const torch::Tensor& x) { return net->forward(x); },
        [&] { return greedyAction(observation); }, "dqn");
}

void Dqn::setCommunicator(std::shared_ptr<models::dist::Communicator> communicator)
{
    Impl& d = *m_impl;
    d.communicator.reset();
    if (!communicator || communicator->world_size() == 1) return;
    models::dist::broadcast_tensors(*communicator, {d.onlineFlat.values, d.targetFlat.values});
    if (!d.message.defined()) {
        // The flat gradients become the head of the all-reduce message; flatten_parameters()
        // keeps a gradient buffer of the right size, so it points every .grad() into it.
        const int64_t n = d.onlineFlat.grads.numel();
        d.message = torch::zeros({n + kReducedStats}, d.onlineFlat.grads.options());
        d.onlineFlat.grads = d.message.narrow(0, 0, n);
        models::flatten_parameters(*d.online, d.onlineFlat, /*with_grads=*/true);
    }
    d.communicator = std::move(communicator);
}

std::vector<float> Dqn::onlineParameters() const
{
    return flatParameters(*m_impl->online);
}
std::vector<float> Dqn::targetParameters() const
{
    return flatParameters(*m_impl->target);
}

void Dqn::save(const std::string& path, const std::string& userData, const std::string& identity) const
{
    const Impl& d = *m_impl;
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive onlineArchive, targetArchive, optimArchive;
    d.online->save(onlineArchive);
    d.target->save(targetArchive);
    d.optimizer->save(optimArchive);
    archive.write("online", onlineArchive);
    archive.write("target", targetArchive);
    archive.write("optimizer", optimArchive);
    archive.write("loss_scaler", d.scaler.state());
    archive.write("env_steps", c10::IValue(static_cast<int64_t>(d.envSteps)));
    archive.write("updates", c10::IValue(static_cast<int64_t>(d.updates)));
    archive.write("rng", c10::IValue(rngState(d.rng)));
    archive.write("user_data", c10::IValue(userData));
    writeIdentity(archive, identity);
    const ReplayStorage& s = d.buffer->storage();
    archive.write("buffer_next", c10::IValue(static_cast<int64_t>(s.next)));
    archive.write("buffer_size", c10::IValue(static_cast<int64_t>(s.size)));
    archive.write("buffer_obs", toTensor(s.observations, torch::kFloat32));
    archive.write("buffer_next_obs", toTensor(s.nextObservations, torch::kFloat32));
    archive.write("buffer_actions", toTensor(s.actions, torch::kInt64));
    archive.write("buffer_rewards", toTensor(s.rewards, torch::kFloat32));
    archive.write("buffer_terminated", toTensor(s.terminated, torch::kFloat32));
    archive.write("buffer_discounts", toTensor(s.discounts, torch::kFloat32));
    if (d.prioritized) {
        archive.write("priorities", toTensor(d.prioritized->tree().leaves(), torch::kFloat64));
        archive.write("max_priority", c10::IValue(d.prioritized->maxPriority()));
    }
    std::vector<float> pendingObs;
    std::vector<int64_t> pendingActions;
    std::vector<float> pendingRewards;
    for (const PendingStep& p : d.nstep.pending()) {
        pendingObs.insert(pendingObs.end(), p.observation.begin(), p.observation.end());
        pendingActions.push_back(p.action);
        pendingRewards.push_back(p.reward);
    }
    archive.write("pending_obs", toTensor(pendingObs, torch::kFloat32));
    archive.write("pending_actions", toTensor(pendingActions, torch::kInt64));
    archive.write("pending_rewards", toTensor(pendingRewards, torch::kFloat32));
    saveArchive(archive, path, "DQN checkpoint");
}

std::string Dqn::load(const std::string& path, const CheckpointCheck& checkIdentity)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda());
    torch::serialize::InputArchive archive;
    try {
        archive.load_from(path, d.device); // a checkpoint of any device loads onto this one
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": cannot read DQN checkpoint: " + e.what());
    }
    if (checkIdentity) checkIdentity(readIdentity(archive));
    torch::serialize::InputArchive onlineArchive, targetArchive, optimArchive;
    archive.read("online", onlineArchive);
    archive.read("target", targetArchive);
    archive.read("optimizer", optimArchive);
    d.online->load(onlineArchive);
    d.target->load(targetArchive);
    // Module::load() rebinds each parameter to the loaded storage: move them back into the flat buffers.
    models::flatten_parameters(*d.online, d.onlineFlat, /*with_grads=*/true);
    models::flatten_parameters(*d.target, d.targetFlat, /*with_grads=*/false);
    d.optimizer->load(optimArchive);
    torch::Tensor scalerState;
    if (archive.try_read("loss_scaler", scalerState)) d.scaler.load_state(scalerState);
    d.int8Net = nullptr;
    d.int8Refused = false;
    d.envSteps = readInt(archive, "env_steps");
    d.updates = readInt(archive, "updates");
    setRngState(d.rng, readString(archive, "rng"));
    ReplayStorage s = d.buffer->storage();
    s.next = static_cast<std::size_t>(readInt(archive, "buffer_next"));
    s.size = static_cast<std::size_t>(readInt(archive, "buffer_size"));
    s.observations = fromTensor<float>(readTensor(archive, "buffer_obs"));
    s.nextObservations = fromTensor<float>(readTensor(archive, "buffer_next_obs"));
    s.actions = fromTensor<int64_t>(readTensor(archive, "buffer_actions"));
    s.rewards = fromTensor<float>(readTensor(archive, "buffer_rewards"));
    s.terminated = fromTensor<float>(readTensor(archive, "buffer_terminated"));
    s.discounts = fromTensor<float>(readTensor(archive, "buffer_discounts"));
    d.buffer->restore(std::move(s));
    if (d.prioritized) {
        d.prioritized->restorePriorities(fromTensor<double>(readTensor(archive, "priorities")),
                                         readDouble(archive, "max_priority"));
    }
    const std::vector<float> pendingObs = fromTensor<float>(readTensor(archive, "pending_obs"));
    const std::vector<int64_t> pendingActions = fromTensor<int64_t>(readTensor(archive, "pending_actions"));
    const std::vector<float> pendingRewards = fromTensor<float>(readTensor(archive, "pending_rewards"));
    std::deque<PendingStep> pending;
    const auto o = static_cast<std::size_t>(d.obsSize);
    for (std::size_t i = 0; i < pendingActions.size(); ++i) {
        pending.push_back({std::vector<float>(pendingObs.begin() + static_cast<std::ptrdiff_t>(i * o),
                                              pendingObs.begin() + static_cast<std::ptrdiff_t>((i + 1) * o)),
                           static_cast<int>(pendingActions[i]), pendingRewards[i]});
    }
    d.nstep.restore(std::move(pending));
    return readString(archive, "user_data");
}

} // namespace foxhunt
