// SPDX-License-Identifier: GPL-3.0-or-later
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
        dqn.observe(o, static_cast<int>(rng() % static_cast<unsigned>(actionCount)),
                    static_cast<double>(rng() % 3) - 1.0, n, rng() % 50 == 0, false);
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

namespace {

// Minibatches in each timed PPO update.
constexpr int kMinibatches = 4;

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v)
{
    if (v.empty()) return 0.0;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

} // namespace

PairedTiming timeInTurns(const TimedStep& fp32, const TimedStep& candidate, int warmup, int rounds)
{
    for (int i = 0; i < warmup; ++i) {
        fp32();
        candidate();
    }
    PairedTiming t;
    t.rounds = std::max(1, rounds);
    std::vector<double> a, b, ratios;
    for (int i = 0; i < t.rounds; ++i) {
        double fa = 0.0, fb = 0.0;
        if (i % 2 == 0) {
            fa = fp32();
            fb = candidate();
        } else {
            fb = candidate();
            fa = fp32();
        }
        a.push_back(fa);
        b.push_back(fb);
        if (fa > 0.0) ratios.push_back(fb / fa);
    }
    t.fp32_ms = median(a);
    t.candidate_ms = median(b);
    t.ratio = median(ratios);
    return t;
}

mp::AmpChoice chooseAmp(const mp::DeviceCapabilities& caps, const StepFactory& steps)
{
    const mp::AmpCandidate candidate = mp::auto_amp_candidate(caps);
    if (!candidate.config.enabled) return mp::no_amp(candidate);
    const TimedStep fp32 = steps.make(mp::MixedPrecisionConfig::disabled());
    const TimedStep amp = steps.make(candidate.config);
    const PairedTiming t = timeInTurns(fp32, amp, steps.warmup, steps.rounds);
    return mp::decide_amp(candidate, t.fp32_ms, t.ratio * t.fp32_ms);
}

StepFactory dqnUpdateSteps(int observationSize, int actionCount, DqnOptions options)
{
    StepFactory f;
    f.warmup = 5;
    f.rounds = 21;
    f.make = [=](const mp::MixedPrecisionConfig& amp) -> TimedStep {
        DqnOptions o = options;
        o.mixedPrecision = amp;
        o.bufferSize = 4096;
        o.learningStarts = 1'000'000'000; // observe() only stores; the updates are timed
        auto dqn = std::make_shared<Dqn>(observationSize, actionCount, o);
        std::mt19937_64 rng(o.seed + 17);
        fillReplay(*dqn, rng, observationSize, actionCount, 2 * o.batchSize + 64);
        return [dqn] {
            const auto t0 = std::chrono::steady_clock::now();
            dqn->update();
            return msSince(t0);
        };
    };
    return f;
}

StepFactory ppoUpdateSteps(int observationSize, int actionCount, PpoOptions options)
{
    StepFactory f;
    f.warmup = 1;
    f.rounds = 5;
    f.make = [=](const mp::MixedPrecisionConfig& amp) -> TimedStep {
        PpoOptions o = options;
        o.mixedPrecision = amp;
        o.nSteps = kMinibatches * o.batchSize;
        o.nEpochs = 1;
        o.targetKl = 0.0; // every minibatch runs, so each timing covers the same work
        struct State {
            std::unique_ptr<Ppo> ppo;
            std::mt19937_64 rng;
            std::vector<float> obs;
        };
        auto s = std::make_shared<State>();
        s->ppo = std::make_unique<Ppo>(observationSize, actionCount, o);
        s->rng.seed(o.seed + 17);
        s->obs = randomObservation(s->rng, observationSize);
        return [s] {
            fillRollout(*s->ppo, s->rng, s->obs);
            const auto t0 = std::chrono::steady_clock::now();
            s->ppo->update(s->obs);
            return msSince(t0) / kMinibatches;
        };
    };
    return f;
}

StepFactory forecasterSteps(ForecasterConfig config, const ForecastData& data, IndexRange train, IndexRange validation)
{
    StepFactory f;
    f.warmup = 2;
    f.rounds = 5;
    f.make = [config, &data, train, validation](const mp::MixedPrecisionConfig& amp) -> TimedStep {
        ForecasterConfig c = config;
        c.mixedPrecision = amp;
        auto scratch = std::make_shared<ForecasterTrainer>(c, data, train, validation);
        return [scratch] {
            const auto t0 = std::chrono::steady_clock::now();
            scratch->trainStep();
            return msSince(t0);
        };
    };
    return f;
}

} // namespace foxhunt::detail
