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

/// Median milliseconds of `step` over `repeats` calls after `warmup` untimed ones.
double medianStepMs(const std::function<void()>& step, int warmup, int repeats);

/// The choice for one model: no candidate on this device means FP32 without a measurement;
/// otherwise `timeStep(config)` gives the median step time under each precision.
models::precision::AmpChoice chooseAmp(const models::precision::DeviceCapabilities& caps,
                                       const std::function<double(const models::precision::MixedPrecisionConfig&)>& timeStep);

/// Median DQN update time under `amp` for a scratch agent with `options` (random observations).
double timeDqnUpdate(int observationSize, int actionCount, DqnOptions options,
                     const models::precision::MixedPrecisionConfig& amp);
/// Median PPO minibatch update time under `amp` for a scratch agent with `options` (one epoch over
/// a rollout of a few minibatches of random observations), per minibatch.
double timePpoUpdate(int observationSize, int actionCount, PpoOptions options,
                     const models::precision::MixedPrecisionConfig& amp);
/// Median forecaster train step time under `amp` for a scratch trainer on the run's own windows.
double timeForecasterStep(ForecasterConfig config, const ForecastData& data, IndexRange train, IndexRange validation,
                          const models::precision::MixedPrecisionConfig& amp);

} // namespace foxhunt::detail
