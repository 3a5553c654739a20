#include "engine/session/amp_auto.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

namespace foxhunt::detail {

namespace mp = models::precision;

std::vector<float> randomObservation(std::mt19937_64& rng, int size)
{
    std::vector<float> o(static_cast<std::size_t>(size));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : o) x = u(rng);
    return o;
}

void fillReplay(Dqn& dqn, std::mt19937_64& rng, int observationSize, int actionCount, int count)
{
    for (int i = 0; i < count; ++i) {
        const auto o = randomObservation(rng, observationSize);
        const auto n = randomObservation(rng, observationSize);
        dqn.observe(o, static_cast<int>(rng() % static_cast<unsigned>(actionCount)), static_cast<double>(rng() % 3) - 1.0,
                    n, rng() % 50 == 0, false);
    }
}

void fillRollout(Ppo& ppo, std::mt19937_64& rng, std::vector<float>& obs)
{
    const int size = static_cast<int>(obs.size());
    for (int i = 0; i < ppo.options().nSteps; ++i) {
        const PpoAction a = ppo.act(obs);
        std::vector<float> next = randomObservation(rng, size);
        ppo.store(obs, a, static_cast<double>(rng() % 3) - 1.0, rng() % 100 == 0, false, next);
        obs = std::move(next);
    }
}

double medianStepMs(const std::function<void()>& step, int warmup, int repeats)
{
    for (int i = 0; i < warmup; ++i) step();
    std::vector<double> ms;
    for (int i = 0; i < std::max(1, repeats); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        step();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
    return ms[ms.size() / 2];
}

mp::AmpChoice chooseAmp(const mp::DeviceCapabilities& caps,
                        const std::function<double(const mp::MixedPrecisionConfig&)>& timeStep)
{
    const mp::AmpCandidate candidate = mp::auto_amp_candidate(caps);
    if (!candidate.config.enabled) return mp::no_amp(candidate);
    const double fp32 = timeStep(mp::MixedPrecisionConfig::disabled());
    const double amp = timeStep(candidate.config);
    return mp::decide_amp(candidate, fp32, amp);
}

double timeDqnUpdate(int observationSize, int actionCount, DqnOptions options, const mp::MixedPrecisionConfig& amp)
{
    options.mixedPrecision = amp;
    options.bufferSize = 4096;
    options.learningStarts = 1'000'000'000; // observe() only stores; the updates below are timed
    Dqn dqn(observationSize, actionCount, options);
    std::mt19937_64 rng(options.seed + 17);
    fillReplay(dqn, rng, observationSize, actionCount, 2 * options.batchSize + 64);
    return medianStepMs([&] { dqn.update(); }, /*warmup=*/5, /*repeats=*/21);
}

double timePpoUpdate(int observationSize, int actionCount, PpoOptions options, const mp::MixedPrecisionConfig& amp)
{
    options.mixedPrecision = amp;
    constexpr int kMinibatches = 4;
    options.nSteps = kMinibatches * options.batchSize;
    options.nEpochs = 1;
    options.targetKl = 0.0; // every minibatch runs, so each timing covers the same work
    Ppo ppo(observationSize, actionCount, options);
    std::mt19937_64 rng(options.seed + 17);
    std::vector<float> obs = randomObservation(rng, observationSize);
    const auto oneUpdate = [&] {
        fillRollout(ppo, rng, obs);
        const auto t0 = std::chrono::steady_clock::now();
        ppo.update(obs);
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / kMinibatches;
    };
    oneUpdate();
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) ms.push_back(oneUpdate());
    std::nth_element(ms.begin(), ms.begin() + 2, ms.end());
    return ms[2];
}

double timeForecasterStep(ForecasterConfig config, const ForecastData& data, IndexRange train, IndexRange validation,
                          const mp::MixedPrecisionConfig& amp)
{
    config.mixedPrecision = amp;
    ForecasterTrainer scratch(config, data, train, validation);
    return medianStepMs([&] { scratch.trainStep(); }, /*warmup=*/2, /*repeats=*/5);
}

} // namespace foxhunt::detail
