// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/ppo.h"

#include "engine/agents/agent_int8.h"
#include "engine/agents/checkpoint_io.h"
#include "engine/agents/random.h"
#include "engine/agents/rollout_buffer.h"
#include "engine/telemetry/metric_registry.h"
#include "models/agents/actor_critic.h"
#include "models/agents/grad_utils.h"
#include "models/device.h"
#include "models/distributed/gradient_reducer.h"
#include "models/memory/memory_tracker.h"
#include "models/precision/amp_step.h"
#include "models/precision/autocast.h"
#include "models/precision/loss_scaler.h"
#include "models/precision/quantize.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace foxhunt {

using namespace foxhunt::detail;
namespace mp = foxhunt::models::precision;

struct Ppo::Impl {
    std::optional<PpoUpdateStats> last; ///< the last update update() ran
    std::vector<float> stepObservation; ///< step()'s copy of the observation it acts on
    Impl(int observationSize, int actionCount, PpoOptions opts)
        : options(std::move(opts)), obsSize(observationSize), actions(actionCount), net(nullptr),
          rollout(static_cast<std::size_t>(std::max(options.nSteps, 1)),
                  static_cast<std::size_t>(std::max(observationSize, 1))),
          rng(options.seed)
    {
        if (observationSize <= 0 || actionCount <= 0)
            throw std::invalid_argument("ppo: observation size and action count must be positive");
        if (options.nSteps <= 0 || options.batchSize <= 0 || options.nEpochs <= 0)
            throw std::invalid_argument("ppo: nSteps, batchSize and nEpochs must be positive");
        device = models::training_device(options.device, options.mixedPrecision, "ppo: ");
        models::CudaWorkScope onDevice(cuda, device.is_cuda());
        torch::manual_seed(options.seed);
        std::vector<int64_t> hidden(options.hidden.begin(), options.hidden.end());
        net = models::ActorCritic(
            models::ActorCriticOptions(observationSize, actionCount).hidden(hidden).shared(options.sharedNetwork));
        net->to(device); // initialised on the CPU: the same weights on every device
        optimizer = std::make_unique<torch::optim::Adam>(
            net->parameters(), torch::optim::AdamOptions(options.learningRate).eps(options.adamEpsilon));
        scaler = mp::LossScaler(options.mixedPrecision);
        amp = options.mixedPrecision.enabled;
        single = torch::zeros({1, obsSize});
        order.resize(static_cast<std::size_t>(options.nSteps));
    }

    models::PolicyOutput forwardOne(std::span<const float> observation)
    {
        TORCH_CHECK(static_cast<int64_t>(observation.size()) == obsSize, "ppo: observation has ", observation.size(),
                    " values, expected ", obsSize);
        std::copy(observation.begin(), observation.end(), single.data_ptr<float>());
        return net->forward(single.to(device));
    }

    PpoUpdateStats update(std::span<const float> nextObservation);

    PpoOptions options;
    torch::Device device{torch::kCPU};
    int64_t obsSize;
    int actions;
    models::ActorCritic net;
    std::unique_ptr<torch::optim::Adam> optimizer;
    mp::LossScaler scaler;
    bool amp = false;
    models::ActorCritic int8Net{nullptr}; ///< INT8 inference copy (built on demand)
    bool int8Refused = false;             ///< the last INT8 check's gate refused the copy: FP32 acts instead
    std::size_t lastRolloutSize = 0;      ///< rows of the rollout the last update learned from
    RolloutBuffer rollout;
    std::shared_ptr<models::dist::Communicator> communicator; // DD-PPO (none: one process)
    std::unique_ptr<models::dist::GradientReducer> reducer;
    torch::Tensor single;
    std::vector<int64_t> order;
    std::mt19937_64 rng;
    long long envSteps = 0;
    long long updates = 0;
    std::size_t activationBytes = 0; ///< peak activation bytes of the last measured minibatch
    models::CudaAttribution cuda;    ///< what the agent holds in the CUDA caching allocator
};

PpoUpdateStats Ppo::Impl::update(std::span<const float> nextObservation)
{
    models::CudaWorkScope onDevice(cuda, device.is_cuda()); // first: it measures after the temporaries are gone
    const auto start = std::chrono::steady_clock::now();
    const auto n = static_cast<int64_t>(rollout.size());
    if (n == 0) throw std::logic_error("ppo: update() with an empty rollout");
    float lastValue = 0.0f;
    {
        torch::NoGradGuard guard;
        lastValue = forwardOne(nextObservation).value.item<float>();
    }
    rollout.finish(lastValue, options.gamma, options.gaeLambda);

    PpoUpdateStats stats;
    {
        // Explained variance of the value predictions made during the rollout.
        double meanR = 0.0;
        for (int64_t i = 0; i < n; ++i) meanR += rollout.returns[i];
        meanR /= static_cast<double>(n);
        double varR = 0.0, meanD = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            varR += (rollout.returns[i] - meanR) * (rollout.returns[i] - meanR);
            meanD += rollout.returns[i] - rollout.values[i];
        }
        meanD /= static_cast<double>(n);
        double varD = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const double dd = rollout.returns[i] - rollout.values[i] - meanD;
            varD += dd * dd;
        }
        stats.explainedVariance = varR > 0.0 ? 1.0 - varD / varR : 0.0;
    }

    // Views of the host rollout on the CPU; one copy of each per update on another device.
    const torch::Tensor obsAll = torch::from_blob(rollout.observations.data(), {n, obsSize}).to(device);
    const torch::Tensor actAll = torch::from_blob(rollout.actions.data(), {n}, torch::kInt64).to(device);
    const torch::Tensor logpAll = torch::from_blob(rollout.logProbs.data(), {n}).to(device);
    const torch::Tensor advAll = torch::from_blob(rollout.advantages.data(), {n}).to(device);
    const torch::Tensor retAll = torch::from_blob(rollout.returns.data(), {n}).to(device);
    const torch::Tensor valAll = torch::from_blob(rollout.values.data(), {n}).to(device);

    double sumPolicy = 0.0, sumValue = 0.0, sumEntropy = 0.0, sumKl = 0.0, sumClip = 0.0;
    int minibatches = 0;
    bool keepGoing = true;
    // One minibatch per update is measured, once its gradients exist (they persist: zeroed in
    // place, so the measured backward allocates no gradient storage of its own).
    bool measureActivations = models::activation_peaks_measurable(device);
    order.resize(static_cast<std::size_t>(n));
    for (int epoch = 0; epoch < options.nEpochs && keepGoing; ++epoch) {
        std::iota(order.begin(), order.end(), 0);
        for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[uniformIndex(rng, i + 1)]);
        for (int64_t begin = 0; begin < n; begin += options.batchSize) {
            const int64_t size = std::min<int64_t>(options.batchSize, n - begin);
            const torch::Tensor idx = torch::from_blob(order.data() + begin, {size}, torch::kInt64).to(device);
            const torch::Tensor obs = obsAll.index_select(0, idx);
            const torch::Tensor act = actAll.index_select(0, idx).unsqueeze(1);
            const torch::Tensor oldLogp = logpAll.index_select(0, idx);
            torch::Tensor adv = advAll.index_select(0, idx);
            const torch::Tensor ret = retAll.index_select(0, idx);
            const torch::Tensor oldValue = valAll.index_select(0, idx);
            if (communicator && options.normalizeAdvantage) {
                // Standardise over the global minibatch (every rank's slice), as one process would.
                torch::Tensor moments = torch::stack({torch::tensor(static_cast<double>(size), torch::kFloat64),
                                                      adv.to(torch::kFloat64).sum().cpu(),
                                                      adv.to(torch::kFloat64).square().sum().cpu()});
                communicator->all_reduce_sum_(moments);
                const double count = moments[0].item<double>(), mean = moments[1].item<double>() / count;
                const double var = count > 1
                                       ? std::max(0.0, (moments[2].item<double>() - count * mean * mean) / (count - 1))
                                       : 0.0;
                if (count > 1) adv = (adv - mean) / (std::sqrt(var) + 1e-8);
            } else if (options.normalizeAdvantage && size > 1) adv = (adv - adv.mean()) / (adv.std() + 1e-8);

            std::optional<models::PeakMemoryScope> activations;
            if (measureActivations && models::all_grads_defined(*optimizer)) {
                activations.emplace(models::memory_device(device));
                measureActivations = false;
            }
            models::PolicyOutput out;
            {
                mp::AutocastGuard autocast(options.mixedPrecision, device.type());
                out = net->forward(obs);
            }
            if (amp) {
                // Losses and their reductions in float64 whatever type autocast produced.
                out.logits = out.logits.to(torch::kFloat64);
                out.value = out.value.to(torch::kFloat64);
                adv = adv.to(torch::kFloat64);
            }
            const torch::Tensor logp = torch::log_softmax(out.logits, /*dim=*/1);
            const torch::Tensor newLogp = logp.gather(1, act).squeeze(1);
            const torch::Tensor entropy = -(logp.exp() * logp).sum(1).mean();
            const torch::Tensor logRatio = newLogp - oldLogp.to(newLogp.scalar_type());
            const torch::Tensor ratio = logRatio.exp();
            const torch::Tensor policyLoss =
                -torch::min(adv * ratio, adv * ratio.clamp(1.0 - options.clipRange, 1.0 + options.clipRange)).mean();
            torch::Tensor valuePred = out.value;
            if (options.clipRangeVf > 0.0)
                valuePred =
                    oldValue.to(out.value.scalar_type()) +
                    (out.value - oldValue.to(out.value.scalar_type())).clamp(-options.clipRangeVf, options.clipRangeVf);
            const torch::Tensor valueLoss = torch::mse_loss(valuePred, ret.to(valuePred.scalar_type()));
            const torch::Tensor loss = policyLoss - options.entCoef * entropy + options.vfCoef * valueLoss;

            double approxKl = 0.0;
            {
                torch::NoGradGuard guard;
                torch::Tensor kl = ((ratio - 1.0) - logRatio).mean().to(torch::kCPU, torch::kFloat64).reshape({1});
                if (communicator) communicator->all_reduce_mean_(kl); // every rank stops early together
                approxKl = kl.item<double>();
                sumClip += ((ratio - 1.0).abs() > options.clipRange).to(torch::kFloat64).mean().item<double>();
            }
            sumKl += approxKl;
            sumPolicy += policyLoss.detach().item<double>();
            sumValue += valueLoss.detach().item<double>();
            sumEntropy += entropy.detach().item<double>();
            ++minibatches;
            if (options.targetKl > 0.0 && approxKl > 1.5 * options.targetKl) {
                keepGoing = false;
                stats.earlyStopped = true;
                break;
            }
            models::zero_grad_in_place(*optimizer);
            stats.gradNorm = mp::scaled_step(
                                 scaler, *optimizer, loss,
                                 [this, &activations] {
                                     if (activations) activationBytes = activations->peakAboveStart();
                                     return models::clip_grad_norm_f64(optimizer->param_groups()[0].params(),
                                                                       options.maxGradNorm);
                                 },
                                 [this, &stats] {
                                     if (reducer) stats.allreduceMs += 1e3 * reducer->synchronize().wait_seconds;
                                 })
                                 .grad_norm;
        }
        if (keepGoing) ++stats.epochs;
    }
    if (communicator) {
        // Loss parts and clip fraction as means over ranks (each rank ran the same minibatch count).
        torch::Tensor sums = torch::tensor({sumPolicy, sumValue, sumEntropy, sumClip, stats.explainedVariance},
                                           torch::kFloat64);
        communicator->all_reduce_mean_(sums);
        const double* v = sums.data_ptr<double>();
        sumPolicy = v[0], sumValue = v[1], sumEntropy = v[2], sumClip = v[3], stats.explainedVariance = v[4];
    }
    const double m = std::max(minibatches, 1);
    stats.policyLoss = sumPolicy / m;
    stats.valueLoss = sumValue / m;
    stats.entropy = sumEntropy / m;
    stats.approxKl = sumKl / m;
    stats.clipFraction = sumClip / m;
    stats.learningRate = options.learningRate;
    stats.envSteps = envSteps;
    stats.lossScale = scaler.current_scale();
    stats.skippedSteps = scaler.skipped_steps();
    lastRolloutSize = rollout.size();
    rollout.clear();
    ++updates;
    stats.stepTimeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return stats;
}

Ppo::Ppo(int observationSize, int actionCount, PpoOptions options)
    : m_impl(std::make_unique<Impl>(observationSize, actionCount, std::move(options)))
{
}

Ppo::~Ppo() = default;
Ppo::Ppo(Ppo&&) noexcept = default;
Ppo& Ppo::operator=(Ppo&&) noexcept = default;

PpoAction Ppo::act(std::span<const float> observation)
{
    Impl& d = *m_impl;
    torch::NoGradGuard guard;
    const models::PolicyOutput out = d.forwardOne(observation);
    const torch::Tensor logp = torch::log_softmax(out.logits, 1).to(torch::kCPU).contiguous();
    const float* lp = logp.data_ptr<float>();
    // Inverse-CDF sampling with our own generator keeps runs reproducible.
    const double u = uniform01(d.rng);
    double cumulative = 0.0;
    int chosen = d.actions - 1;
    for (int a = 0; a < d.actions; ++a) {
        cumulative += std::exp(static_cast<double>(lp[a]));
        if (u < cumulative) {
            chosen = a;
            break;
        }
    }
    return {chosen, out.value.item<float>(), lp[chosen]};
}

int Ppo::greedyAction(std::span<const float> observation) const
{
    torch::NoGradGuard guard;
    return static_cast<int>(m_impl->forwardOne(observation).logits.argmax(1).item<int64_t>());
}

float Ppo::value(std::span<const float> observation) const
{
    torch::NoGradGuard guard;
    return m_impl->forwardOne(observation).value.item<float>();
}

std::vector<float> Ppo::probabilities(std::span<const float> observation) const
{
    torch::NoGradGuard guard;
    const torch::Tensor p = torch::softmax(m_impl->forwardOne(observation).logits, 1).to(torch::kCPU).contiguous();
    return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
}

bool Ppo::store(std::span<const float> observation, const PpoAction& action, double reward, bool terminated,
                bool truncated, std::span<const float> nextObservation)
{
    Impl& d = *m_impl;
    if (action.action < 0 || action.action >= d.actions)
        throw std::out_of_range("ppo: action " + std::to_string(action.action) + " out of range");
    const float bootstrap = (truncated && !terminated) ? value(nextObservation) : 0.0f;
    ++d.envSteps;
    return d.rollout.add(observation, action.action, static_cast<float>(reward), action.value, action.logProb,
                         terminated, truncated && !terminated, bootstrap);
}

void Ppo::setCommunicator(std::shared_ptr<models::dist::Communicator> communicator)
{
    Impl& d = *m_impl;
    d.reducer.reset();
    d.communicator.reset();
    if (!communicator || communicator->world_size() == 1) return;
    std::vector<torch::Tensor> state = d.net->parameters();
    for (const auto& b : d.net->buffers()) state.push_back(b);
    models::dist::broadcast_tensors(*communicator, state);
    d.reducer = std::make_unique<models::dist::GradientReducer>(d.net->parameters(), communicator);
    d.communicator = std::move(communicator);
}

PpoUpdateStats Ppo::update(std::span<const float> nextObservation)
{
    m_impl->last = m_impl->update(nextObservation);
    return *m_impl->last;
}

AgentStep Ppo::step(TradingEnv& env)
{
    Impl& d = *m_impl;
    const std::span<const float> current = env.observation();
    d.stepObservation.assign(current.begin(), current.end());
    AgentStep out;
    const PpoAction action = act(d.stepObservation);
    out.result = env.step(action.action);
    if (!store(d.stepObservation, action, out.result.reward, out.result.terminated, false, env.observation()))
        return out;
    const PpoUpdateStats u = update(env.observation());
    // The objective PPO minimises, with its own coefficients.
    const double loss = u.policyLoss - d.options.entCoef * u.entropy + d.options.vfCoef * u.valueLoss;
    out.update = detail::agentUpdate(u, loss,
                                     {{metrics::kPolicyLoss, u.policyLoss},
                                      {metrics::kValueLoss, u.valueLoss},
                                      {metrics::kEntropy, u.entropy},
                                      {metrics::kApproxKl, u.approxKl},
                                      {metrics::kClipFraction, u.clipFraction},
                                      {metrics::kExplainedVariance, u.explainedVariance}});
    return out;
}

const std::optional<PpoUpdateStats>& Ppo::lastUpdate() const
{
    return m_impl->last;
}

Int8Evaluation Ppo::evaluateInt8(const AgentInt8Options& options)
{
    return evaluateInt8(std::span<const float>(), options);
}

long long Ppo::envSteps() const
{
    return m_impl->envSteps;
}
long long Ppo::updates() const
{
    return m_impl->updates;
}
const PpoOptions& Ppo::options() const
{
    return m_impl->options;
}
double Ppo::lossScale() const
{
    return m_impl->scaler.current_scale();
}

std::size_t Ppo::servingBytes(int batch) const
{
    // A holder copy shares the module (forward() is not const).
    return servingBytesOf(m_impl->net, m_impl->obsSize, batch, m_impl->device);
}

ModelMemory Ppo::memoryBytes() const
{
    const Impl& d = *m_impl;
    ModelMemory m = detail::agentMemory(d.activationBytes, d.device, d.cuda);
    for (const auto& p : d.net->parameters()) {
        m.parameterBytes += static_cast<std::size_t>(p.nbytes());
        if (p.grad().defined()) m.gradientBytes += static_cast<std::size_t>(p.grad().nbytes());
    }
    detail::addAdamStateBytes(*d.optimizer, m);
    return m;
}

Int8Evaluation Ppo::evaluateInt8(std::span<const float> observations, const AgentInt8Options& options)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda()); // the kept INT8 copy is this agent's
    const auto o = static_cast<std::size_t>(d.obsSize);
    std::span<const float> rows = observations;
    if (rows.empty() && options.heldOut && options.heldOut->size() > 0) rows = options.heldOut->observations;
    if (rows.empty()) {
        // After an update the rollout is cleared but its storage keeps the rows it learned from; a
        // partial rollout since then has overwritten only the first of them.
        const std::size_t stored = std::max(d.rollout.size(), d.lastRolloutSize);
        rows =
            std::span<const float>(d.rollout.observations).first(std::min(stored * o, d.rollout.observations.size()));
    }
    if (rows.empty() || rows.size() % o != 0)
        throw std::logic_error("ppo: evaluateInt8 needs observations (a multiple of " + std::to_string(o) +
                               " values) or a stored rollout");
    torch::NoGradGuard guard;
    const auto total = static_cast<int64_t>(rows.size() / o);
    const int64_t n = options.samples == 0 ? total : std::min<int64_t>(total, static_cast<int64_t>(options.samples));
    const torch::Tensor obs = torch::from_blob(const_cast<float*>(rows.data()), {n, d.obsSize}).clone().to(d.device);

    mp::QuantizeOptions qopts;
    Int8Evaluation e;
    const std::size_t storedCalibration = options.calibrationObservations.size() / o;
    if (options.calibrationSamples > 0) {
        const float* source = storedCalibration > 0 ? options.calibrationObservations.data() : rows.data();
        const int64_t c = std::min<int64_t>(storedCalibration > 0 ? static_cast<int64_t>(storedCalibration) : total,
                                            static_cast<int64_t>(options.calibrationSamples));
        const torch::Tensor calib = torch::from_blob(const_cast<float*>(source), {c, d.obsSize}).clone().to(d.device);
        qopts.calibrate = [calib](torch::nn::Module& m) { m.as<models::ActorCriticImpl>()->forward(calib); };
        e.staticActivations = true;
        e.calibrationSamples = static_cast<std::size_t>(c);
    }
    e.evaluatedSamples = static_cast<std::size_t>(n);

    const models::PolicyOutput ref = d.net->forward(obs);
    const torch::Tensor refLogp = torch::log_softmax(ref.logits.to(torch::kFloat64), 1);
    const torch::Tensor refValue = ref.value.to(torch::kFloat64);
    const auto loss = [&](const models::PolicyOutput& out) {
        const torch::Tensor logp = torch::log_softmax(out.logits.to(torch::kFloat64), 1);
        const torch::Tensor crossEntropy = -(refLogp.exp() * logp).sum(1).mean();
        const torch::Tensor valueError = (out.value.to(torch::kFloat64) - refValue).pow(2).mean();
        return (crossEntropy + d.options.vfCoef * valueError).item<double>();
    };
    const auto score = [&](models::ActorCritic& copy) {
        const models::PolicyOutput q = copy->forward(obs);
        e.setLosses(loss(ref), loss(q));
        e.actionAgreement = ref.logits.argmax(1).eq(q.logits.argmax(1)).to(torch::kFloat64).mean().item<double>();
    };
    const auto logits = [](models::ActorCritic net, const torch::Tensor& x) { return net->forward(x).logits; };
    d.int8Net = checkAgentInt8(e, d.net, qopts, obs, options, score, logits, d.device);
    d.int8Refused = !d.int8Net;
    return e;
}

int Ppo::int8GreedyAction(std::span<const float> observation)
{
    Impl& d = *m_impl;
    return detail::int8GreedyOf(
        d.int8Net, d.int8Refused, d.net, observation, d.single, d.device, d.cuda,
        [](models::ActorCritic& net, const torch::Tensor& x) { return net->forward(x).logits; },
        [&] { return greedyAction(observation); }, "ppo");
}

std::vector<float> Ppo::parameters() const
{
    return flatParameters(*m_impl->net);
}

void Ppo::save(const std::string& path, const std::string& userData, const std::string& identity) const
{
    const Impl& d = *m_impl;
    torch::serialize::OutputArchive archive, netArchive, optimArchive;
    d.net->save(netArchive);
    d.optimizer->save(optimArchive);
    archive.write("net", netArchive);
    archive.write("optimizer", optimArchive);
    archive.write("loss_scaler", d.scaler.state());
    archive.write("env_steps", c10::IValue(static_cast<int64_t>(d.envSteps)));
    archive.write("updates", c10::IValue(static_cast<int64_t>(d.updates)));
    archive.write("rng", c10::IValue(rngState(d.rng)));
    archive.write("user_data", c10::IValue(userData));
    writeIdentity(archive, identity);
    const RolloutBuffer& r = d.rollout;
    archive.write("rollout_size", c10::IValue(static_cast<int64_t>(r.size())));
    archive.write("rollout_obs", toTensor(r.observations, torch::kFloat32));
    archive.write("rollout_actions", toTensor(r.actions, torch::kInt64));
    archive.write("rollout_rewards", toTensor(r.rewards, torch::kFloat32));
    archive.write("rollout_values", toTensor(r.values, torch::kFloat32));
    archive.write("rollout_logp", toTensor(r.logProbs, torch::kFloat32));
    archive.write("rollout_terminated", toTensor(r.terminated, torch::kUInt8));
    archive.write("rollout_truncated", toTensor(r.truncated, torch::kUInt8));
    archive.write("rollout_bootstrap", toTensor(r.bootstrapValues, torch::kFloat32));
    saveArchive(archive, path, "PPO checkpoint");
}

std::string Ppo::load(const std::string& path, const CheckpointCheck& checkIdentity)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda());
    torch::serialize::InputArchive archive, netArchive, optimArchive;
    try {
        archive.load_from(path, d.device); // a checkpoint of any device loads onto this one
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": cannot read PPO checkpoint: " + e.what());
    }
    if (checkIdentity) checkIdentity(readIdentity(archive));
    archive.read("net", netArchive);
    archive.read("optimizer", optimArchive);
    d.net->load(netArchive);
    d.optimizer->load(optimArchive);
    torch::Tensor scalerState;
    if (archive.try_read("loss_scaler", scalerState)) d.scaler.load_state(scalerState);
    d.int8Net = nullptr;
    d.int8Refused = false;
    d.envSteps = readInt(archive, "env_steps");
    d.updates = readInt(archive, "updates");
    setRngState(d.rng, readString(archive, "rng"));
    RolloutBuffer& r = d.rollout;
    const auto size = static_cast<std::size_t>(readInt(archive, "rollout_size"));
    const auto check = [&](std::size_t got, std::size_t want) {
        if (got != want)
            throw std::runtime_error(path + ": PPO checkpoint rollout does not match nSteps / observation size");
    };
    r.observations = fromTensor<float>(readTensor(archive, "rollout_obs"));
    check(r.observations.size(), r.capacity() * r.observationSize());
    r.actions = fromTensor<int64_t>(readTensor(archive, "rollout_actions"));
    r.rewards = fromTensor<float>(readTensor(archive, "rollout_rewards"));
    r.values = fromTensor<float>(readTensor(archive, "rollout_values"));
    r.logProbs = fromTensor<float>(readTensor(archive, "rollout_logp"));
    r.terminated = fromTensor<std::uint8_t>(readTensor(archive, "rollout_terminated"));
    r.truncated = fromTensor<std::uint8_t>(readTensor(archive, "rollout_truncated"));
    r.bootstrapValues = fromTensor<float>(readTensor(archive, "rollout_bootstrap"));
    check(r.actions.size(), r.capacity());
    r.clear();
    // Re-adding keeps the buffer's own size bookkeeping authoritative.
    std::vector<float> obs(r.observations);
    for (std::size_t i = 0; i < size; ++i) {
        r.add(std::span<const float>(obs).subspan(i * r.observationSize(), r.observationSize()),
              static_cast<int>(r.actions[i]), r.rewards[i], r.values[i], r.logProbs[i], r.terminated[i] != 0,
              r.truncated[i] != 0, r.bootstrapValues[i]);
    }
    return readString(archive, "user_data");
}

} // namespace foxhunt
