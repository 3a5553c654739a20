// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Engine-internal: one model a session trains, as the session's loop sees it. The loop steps every
// learner once per replayed bar, refreshes its INT8 copy, checkpoints and evaluates it, without
// asking which model it is. A family of models (the agents, the forecasters) is one class; a new
// model is one class and one line in the registry (learner.cpp).

#include "engine/agents/agent_precision.h"
#include "engine/env/trading_env.h"
#include "engine/forecast/forecast_data.h"
#include "engine/forecast/forecast_insight.h"
#include "engine/precision/int8_evaluation.h"
#include "engine/replay/split.h"
#include "engine/session/training_session.h"
#include "engine/store/checkpoint_identity.h"
#include "engine/telemetry/model_memory.h"
#include "models/precision/mixed_precision.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace foxhunt {

class ForecasterTrainer;
struct Bar;
struct FeatureMatrix;

namespace models::dist {
class Communicator;
}

namespace detail {
struct StepFactory;
}

namespace session {

/// What the learners of one run read: its settings and data, made by the run's set-up and alive
/// until the run ends.
struct RunInputs {
    const SessionConfig* config = nullptr;    ///< as the run trains
    const SessionConfig* effective = nullptr; ///< effectiveConfig(*config): the models' own options
    const std::vector<Bar>* bars = nullptr;
    const FeatureMatrix* features = nullptr;
    const std::vector<EpisodeRange>* episodes = nullptr; ///< one per trading day
    const WalkForwardSplit* split = nullptr;
    const ForecastData* forecastData = nullptr;
    const std::vector<int>* trainEpisodes = nullptr; ///< this rank's share of the training days
    const std::vector<int>* validationEpisodes = nullptr;
    const std::vector<int>* testEpisodes = nullptr;
    TradingEnvOptions agentEnv;                       ///< the agents' environment (ensemble inputs included)
    std::shared_ptr<models::dist::Communicator> comm; ///< multi-process runs
    bool owner = true;                                ///< rank 0: latencies, live forecasts, evaluation
};

/// The run's INT8 settings, as refreshes and the final check use them.
struct Int8Settings {
    Int8Serving serving;
    Int8RefreshOptions forecasterRefresh; ///< the forecasters' refreshes during training
    AgentInt8Options agentRefresh;        ///< the agents' refreshes: a small sample, few timed passes
};

/// What one INT8 refresh found.
struct Int8Check {
    double degradation = 0.0;
    bool served = true;
};

class Learner;

/// Chooses a learner's precision before its model is built: with "amp": "auto" it times the
/// model's own step through the factory; it sets the learner's amp and ampChoice.
using AmpResolver = std::function<void(Learner&, const detail::StepFactory&)>;

/// One model being trained in the session.
class Learner {
public:
    Learner(ModelKind kind, const RunInputs& run, MetricBatch& out);
    virtual ~Learner();
    Learner(const Learner&) = delete;
    Learner& operator=(const Learner&) = delete;

    ModelKind kind() const { return m_kind; }
    const std::string& name() const { return m_name; }
    /// Steps taken (agents: environment steps; forecasters: optimizer steps).
    long long steps() const { return m_steps; }
    /// The run's step budget is spent.
    bool finished() const;

    /// One training step at replay tick `tick` (train bar `index`); its metrics go to the tick's
    /// batch, with the memory figures on the first step, every 500th and the last.
    void advance(long long tick, std::size_t index);
    /// Refreshes the INT8 copy from the FP32 weights and checks it (int8_degradation and
    /// int8_rejected are emitted); nothing when there is nothing to check yet.
    void refreshInt8(const Int8Settings& settings);
    /// The evaluation document: "training", "validation" and (when there are test bars) "test".
    nlohmann::json evaluate(const Int8Settings& settings);

    /// Bytes the FP32 model needs to serve `batch` inputs.
    virtual std::size_t servingBytes(int batch) = 0;
    /// Writes a checkpoint (atomically) stamped with `identity`.
    virtual void save(const std::string& path, const std::string& identity) const = 0;
    /// Loads a checkpoint; without `restoreEnvironment` only the model's state (a rank resuming from
    /// rank 0's file keeps its own days and position).
    virtual void load(const std::string& path, bool restoreEnvironment, const CheckpointCheck& check = {}) = 0;
    /// Continues from a checkpoint of step `step`.
    virtual void resumeAt(long long step);
    /// The forecaster whose medians feed the agents (SessionConfig::ensemble); nullptr for agents.
    virtual ForecasterTrainer* forecaster() { return nullptr; }
    /// The environment that takes the forecasters' medians as extra inputs; nullptr for forecasters.
    virtual TradingEnv* environment() { return nullptr; }

    /// One metric at the learner's current step (or at `step`), into the tick's batch.
    void emit(std::string_view metric, double value) { emitAt(metric, m_steps, value); }
    void emitAt(std::string_view metric, long long step, double value);

    models::precision::MixedPrecisionConfig amp; ///< the precision this model trains with
    nlohmann::json ampChoice;                    ///< with "amp": "auto", what was measured and why this precision
    long long checkpointedStep = 0;              ///< step of the newest checkpoint written or loaded (0 = none)
    std::string int8Error;                       ///< why the INT8 copy cannot be made (refreshes stop)
    double blockSamples = 0;                     ///< multi-process: samples (env steps / windows) in this control block
    double blockAllreduceMs = 0;                 ///< multi-process: gradient all-reduce wait in this block
    double blockUpdates = 0;                     ///< multi-process: optimizer steps in this block

protected:
    virtual void trainStep(long long tick, std::size_t index) = 0;
    virtual ModelMemory memory() const = 0;
    /// The INT8 refresh itself; nullopt when there is nothing to check yet.
    virtual std::optional<Int8Check> checkInt8(const Int8Settings& settings) = 0;
    /// Adds the family's parts to the evaluation document (`doc["training"]` is filled already).
    virtual void evaluateInto(nlohmann::json& doc, const Int8Settings& settings) = 0;

    /// The training precision as the report shows it.
    nlohmann::json ampDocument(double finalScale, long long skippedSteps) const;
    /// The final INT8 check, or why there is none (its result is also emitted as the last int8_degradation).
    nlohmann::json int8Document(const std::function<Int8Evaluation()>& evaluate, int latencyRepeats);
    /// Notes a loss scale seen after an update (counts its changes).
    void sawLossScale(double scale);
    /// Records a timed inference for the latency percentiles and the live chart.
    void sawLatency(double ms);

    const RunInputs& m_run;
    const SessionConfig& m_config;
    long long m_steps = 0;
    double m_paramBytes = 0;
    long long m_scaleChanges = 0;

private:
    ModelKind m_kind;
    std::string m_name;
    MetricBatch& m_out;
    double m_lastLossScale;
    std::vector<double> m_latenciesMs;
    std::map<std::string, double> m_last; ///< last value of each metric
};

/// Makes the learner for `kind` (one registration per model in learner.cpp).
std::unique_ptr<Learner> makeLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                     const AmpResolver& resolveAmp);

/// The registered families.
std::unique_ptr<Learner> makeAgentLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                          const AmpResolver& resolveAmp);
std::unique_ptr<Learner> makeForecasterLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                               const AmpResolver& resolveAmp);

} // namespace session
} // namespace foxhunt
