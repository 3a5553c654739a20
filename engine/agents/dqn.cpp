#include "engine/agents/dqn.h"

#include "engine/agents/checkpoint_io.h"
#include "engine/agents/prioritized_replay.h"
#include "engine/agents/random.h"
#include "engine/agents/replay_buffer.h"
#include "engine/agents/schedules.h"
#include "models/agents/grad_utils.h"
#include "models/agents/q_network.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace foxhunt {

using namespace foxhunt::detail;

struct Dqn::Impl {
    Impl(int observationSize, int actionCount, DqnOptions opts)
        : options(std::move(opts))
        , obsSize(observationSize)
        , actions(actionCount)
        , online(nullptr)
        , target(nullptr)
        , nstep(options.nSteps, options.gamma)
        , rng(options.seed)
    {
        if (observationSize <= 0 || actionCount <= 0)
            throw std::invalid_argument("dqn: observation size and action count must be positive");
        if (options.batchSize <= 0 || options.trainFreq <= 0 || options.gradientSteps < 0 || options.bufferSize == 0
            || options.targetUpdateInterval <= 0 || options.totalTimesteps <= 0)
            throw std::invalid_argument("dqn: batchSize, trainFreq, bufferSize, targetUpdateInterval and "
                                        "totalTimesteps must be positive");
        torch::manual_seed(options.seed);
        std::vector<int64_t> hidden(options.hidden.begin(), options.hidden.end());
        online = models::QNetwork(models::QNetworkOptions(observationSize, actionCount).hidden(hidden).dueling(options.dueling));
        target = std::dynamic_pointer_cast<models::QNetworkImpl>(online->clone());
        for (auto& p : target->parameters())
            p.set_requires_grad(false);
        optimizer = std::make_unique<torch::optim::Adam>(
            online->parameters(), torch::optim::AdamOptions(options.learningRate).eps(options.adamEpsilon));
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
        schedule = LinearSchedule{options.explorationInitialEps, options.explorationFinalEps, options.explorationFraction};
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
        return static_cast<int>(online->forward(single).argmax(1).item<int64_t>());
    }

    DqnUpdateStats update()
    {
        const auto start = std::chrono::steady_clock::now();
        if (prioritized) {
            const double beta = options.priorityBeta0 + (1.0 - options.priorityBeta0) * std::min(1.0, progress());
            prioritized->sample(rng, beta, batch);
        } else {
            buffer->sample(rng, batch);
        }
        torch::Tensor targetQ;
        {
            torch::NoGradGuard guard;
            const torch::Tensor nextTarget = target->forward(nextObsT);
            torch::Tensor nextValue;
            if (options.doubleQ)
                nextValue = nextTarget.gather(1, online->forward(nextObsT).argmax(1, /*keepdim=*/true)).squeeze(1);
            else
                nextValue = std::get<0>(nextTarget.max(1));
            for (std::size_t b = 0; b < bootstrapHost.size(); ++b)
                bootstrapHost[b] = batch.discounts[b] * (1.0f - batch.terminated[b]);
            targetQ = torch::addcmul(rewardsT, bootstrapT, nextValue);
        }
        const torch::Tensor q = online->forward(obsT).gather(1, actionsT).squeeze(1);
        torch::Tensor loss;
        if (prioritized)
            loss = (weightsT * torch::huber_loss(q, targetQ, torch::Reduction::None, options.huberDelta)).mean();
        else
            loss = torch::huber_loss(q, targetQ, torch::Reduction::Mean, options.huberDelta);
        models::zero_grad_set_to_none(*optimizer);
        loss.backward();
        DqnUpdateStats stats;
        stats.gradNorm = models::clip_grad_norm_f64(optimizer->param_groups()[0].params(), options.maxGradNorm);
        optimizer->step();
        ++updates;
        {
            // TD errors and the Q mean on the host: both tensors are small and
            // contiguous, and this saves several tensor ops per update.
            const torch::Tensor qc = q.detach().contiguous();
            const float* qv = qc.data_ptr<float>();
            const float* yv = targetQ.data_ptr<float>();
            double tdSum = 0.0;
            double qSum = 0.0;
            for (std::size_t b = 0; b < tdHost.size(); ++b) {
                tdHost[b] = std::abs(qv[b] - yv[b]);
                tdSum += tdHost[b];
                qSum += qv[b];
            }
            if (prioritized)
                prioritized->updatePriorities(batch.indices, tdHost);
            stats.tdErrorMean = tdSum / static_cast<double>(tdHost.size());
            stats.qMean = qSum / static_cast<double>(tdHost.size());
        }
        stats.loss = loss.detach().item<double>();
        stats.epsilon = epsilon();
        stats.learningRate = options.learningRate;
        stats.envSteps = envSteps;
        stats.updates = updates;
        stats.stepTimeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return stats;
    }

    DqnOptions options;
    int64_t obsSize;
    int actions;
    models::QNetwork online;
    models::QNetwork target;
    std::unique_ptr<torch::optim::Adam> optimizer;
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
    const torch::Tensor q = d.online->forward(d.single).contiguous();
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
                     if (d.prioritized)
                         d.prioritized->add(o, a, r, n, t, disc);
                     else
                         d.buffer->add(o, a, r, n, t, disc);
                 });
    ++d.envSteps;
    if (d.envSteps % d.options.targetUpdateInterval == 0)
        updateTarget();
    std::optional<DqnUpdateStats> last;
    if (d.envSteps > d.options.learningStarts && d.envSteps % d.options.trainFreq == 0 && d.buffer->size() > 0) {
        for (int i = 0; i < d.options.gradientSteps; ++i)
            last = d.update();
    }
    return last;
}

DqnUpdateStats Dqn::update()
{
    return m_impl->update();
}

void Dqn::updateTarget()
{
    models::polyak_update(*m_impl->target, *m_impl->online, m_impl->options.tau);
}

double Dqn::epsilon() const { return m_impl->epsilon(); }
long long Dqn::envSteps() const { return m_impl->envSteps; }
long long Dqn::updates() const { return m_impl->updates; }
std::size_t Dqn::bufferSize() const { return m_impl->buffer->size(); }
const DqnOptions& Dqn::options() const { return m_impl->options; }
std::vector<float> Dqn::onlineParameters() const { return flatParameters(*m_impl->online); }
std::vector<float> Dqn::targetParameters() const { return flatParameters(*m_impl->target); }

void Dqn::save(const std::string& path, const std::string& userData) const
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
    archive.write("env_steps", c10::IValue(static_cast<int64_t>(d.envSteps)));
    archive.write("updates", c10::IValue(static_cast<int64_t>(d.updates)));
    archive.write("rng", c10::IValue(rngState(d.rng)));
    archive.write("user_data", c10::IValue(userData));
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
    try {
        archive.save_to(path);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": cannot write DQN checkpoint: " + e.what());
    }
}

std::string Dqn::load(const std::string& path)
{
    Impl& d = *m_impl;
    torch::serialize::InputArchive archive;
    try {
        archive.load_from(path);
    } catch (const std::exception& e) {
        throw std::runtime_error(path + ": cannot read DQN checkpoint: " + e.what());
    }
    torch::serialize::InputArchive onlineArchive, targetArchive, optimArchive;
    archive.read("online", onlineArchive);
    archive.read("target", targetArchive);
    archive.read("optimizer", optimArchive);
    d.online->load(onlineArchive);
    d.target->load(targetArchive);
    d.optimizer->load(optimArchive);
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
