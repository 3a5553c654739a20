// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal: `auto` mixed precision for one model of a run. The device's preset is tried
// only where a short measurement of the model's own train step, at its own shapes, shows it faster
// than FP32 on this machine; otherwise the model trains in FP32. Scratch copies are timed, so the
// run's own models and random streams are untouched.

#include "engine/agents/dqn.h"
#include "engine/agents/ppo.h"
#include "engine/forecast/forecaster_trainer.h"
#include "models/precision/mixed_precision.h"

#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace foxhunt::detail {

/// `size` values drawn uniformly from [-1, 1]: observations for timing scratch agents.
std::vector<float> randomObservation(std::mt19937_64& rng, int size);
/// Stores `count` random transitions in `dqn`'s replay (1 in 50 terminal).
void fillReplay(Dqn& dqn, std::mt19937_64& rng, int observationSize, int actionCount, int count);
/// Acts and stores one rollout of `ppo.options().nSteps` random steps, starting from `obs`
/// (which ends as the rollout's last observation).
void fillRollout(Ppo& ppo, std::mt19937_64& rng, std::vector<float>& obs);

/// One step of a scratch model; returns the milliseconds of its timed part (preparation such as
/// filling a new rollout is left out).
using TimedStep = std::function<double()>;
/// Builds a scratch model under the given precision and returns its step. A step factory also
/// says how many untimed steps warm it up and how many timed rounds the choice takes.
struct StepFactory {
    std::function<TimedStep(const models::precision::MixedPrecisionConfig&)> make;
    int warmup = 2;
    int rounds = 5;
};

/// FP32 against the candidate, timed in turns. Both scratch models live side by side and every
/// round times one step of each, in the order a b, then b a, and so on, so that a change in the
/// machine's load during the measurement falls on both. `ratio` is the median of the per-round
/// ratios candidate / FP32, which a load change shared by both steps of a round does not move.
struct PairedTiming {
    double fp32_ms = 0.0;      ///< median FP32 step
    double candidate_ms = 0.0; ///< median candidate step
    double ratio = 0.0;        ///< median of the rounds' candidate / FP32
    int rounds = 0;
};
PairedTiming timeInTurns(const TimedStep& fp32, const TimedStep& candidate, int warmup, int rounds);

/// The choice for one model: no candidate on this device means FP32 without a measurement;
/// otherwise scratch models under FP32 and under the candidate are timed in turns
/// (timeInTurns) and the candidate is taken where its median ratio wins. The recorded AMP time
/// is FP32's median times that ratio, so the two figures say what the choice went by.
models::precision::AmpChoice chooseAmp(const models::precision::DeviceCapabilities& caps, const StepFactory& steps);

/// Scratch DQN updates under a precision, for a scratch agent with `options` (random observations).
StepFactory dqnUpdateSteps(int observationSize, int actionCount, DqnOptions options);
/// Scratch PPO minibatch updates (one epoch over a rollout of a few minibatches of random
/// observations, timed per minibatch; the rollout itself is not timed).
StepFactory ppoUpdateSteps(int observationSize, int actionCount, PpoOptions options);
/// Scratch forecaster train steps on the run's own windows.
StepFactory forecasterSteps(ForecasterConfig config, const ForecastData& data, IndexRange train, IndexRange validation);

} // namespace foxhunt::detail
