// SPDX-License-Identifier: GPL-3.0-or-later
// SessionConfig <-> JSON. Each options struct lists its fields once; the same
// list serves writing and reading, so the two can never disagree.

#include "engine/session/training_session.h"
#include "models/precision/int8_backend.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace foxhunt {

namespace {

template <class F>
void visit(TradingEnvOptions& o, F&& f)
{
    f("max_contracts", o.maxContracts);
    f("commission_per_contract", o.commissionPerContract);
    f("slippage_ticks", o.slippageTicks);
    f("dsr_eta", o.dsrEta);
    f("position_change_penalty_ticks", o.positionChangePenaltyTicks);
    f("window", o.window);
    f("pnl_scale_ticks", o.pnlScaleTicks);
}

template <class F>
void visit(DqnOptions& o, F&& f)
{
    f("learning_rate", o.learningRate);
    f("adam_epsilon", o.adamEpsilon);
    f("buffer_size", o.bufferSize);
    f("learning_starts", o.learningStarts);
    f("batch_size", o.batchSize);
    f("tau", o.tau);
    f("gamma", o.gamma);
    f("train_freq", o.trainFreq);
    f("gradient_steps", o.gradientSteps);
    f("target_update_interval", o.targetUpdateInterval);
    f("total_timesteps", o.totalTimesteps);
    f("exploration_fraction", o.explorationFraction);
    f("exploration_initial_eps", o.explorationInitialEps);
    f("exploration_final_eps", o.explorationFinalEps);
    f("max_grad_norm", o.maxGradNorm);
    f("huber_delta", o.huberDelta);
    f("hidden", o.hidden);
    f("dueling", o.dueling);
    f("double_q", o.doubleQ);
    f("n_steps", o.nSteps);
    f("prioritized", o.prioritized);
    f("priority_alpha", o.priorityAlpha);
    f("priority_beta0", o.priorityBeta0);
    f("priority_epsilon", o.priorityEpsilon);
    f("seed", o.seed);
}

template <class F>
void visit(PpoOptions& o, F&& f)
{
    f("learning_rate", o.learningRate);
    f("adam_epsilon", o.adamEpsilon);
    f("n_steps", o.nSteps);
    f("batch_size", o.batchSize);
    f("n_epochs", o.nEpochs);
    f("gamma", o.gamma);
    f("gae_lambda", o.gaeLambda);
    f("clip_range", o.clipRange);
    f("clip_range_vf", o.clipRangeVf);
    f("normalize_advantage", o.normalizeAdvantage);
    f("ent_coef", o.entCoef);
    f("vf_coef", o.vfCoef);
    f("max_grad_norm", o.maxGradNorm);
    f("target_kl", o.targetKl);
    f("hidden", o.hidden);
    f("shared_network", o.sharedNetwork);
    f("seed", o.seed);
}

template <class F>
void visit(ForecasterConfig& o, F&& f)
{
    f("past_length", o.windowing.pastLength);
    f("horizon", o.windowing.horizon);
    f("quantiles", o.quantiles);
    f("batch_size", o.batchSize);
    f("learning_rate", o.learningRate);
    f("weight_decay", o.weightDecay);
    f("warmup_steps", o.warmupSteps);
    f("total_steps", o.totalSteps);
    f("min_learning_rate_ratio", o.minLearningRateRatio);
    f("max_grad_norm", o.maxGradNorm);
    f("seed", o.seed);
    f("eval_batch_size", o.evalBatchSize);
    if (o.kind == ForecasterKind::Mamba2) {
        f("d_model", o.dModel);
        f("layers", o.layers);
        f("d_state", o.dState);
        f("head_dim", o.headDim);
        f("expand", o.expand);
        f("ngroups", o.ngroups);
        f("chunk_size", o.chunkSize);
    } else {
        f("hidden_size", o.hiddenSize);
        f("embedding_size", o.embeddingSize);
        f("heads", o.heads);
        f("lstm_layers", o.lstmLayers);
        f("dropout", o.dropout);
    }
}

template <class F>
void visit(PrecisionSettings& o, F&& f)
{
    f("amp", o.amp.enabled);
    f("loss_scale", o.amp.loss_scale);
    f("dynamic_loss_scale", o.amp.dynamic_loss_scale);
    f("growth_factor", o.amp.growth_factor);
    f("backoff_factor", o.amp.backoff_factor);
    f("growth_interval", o.amp.growth_interval);
    f("int8", o.int8);
    f("int8_backend", o.int8Backend);
    f("int8_max_degradation", o.int8MaxDegradation);
    f("int8_static_activations", o.int8StaticActivations);
    f("calibration_bars", o.calibrationBars);
    f("int8_refresh_every", o.int8RefreshEvery);
    f("memory_budget_mb", o.memoryBudgetMb);
}

template <class T>
nlohmann::json write(T options)
{
    nlohmann::json j = nlohmann::json::object();
    visit(options, [&](const char* key, const auto& value) { j[key] = value; });
    return j;
}

/// `value` as T, refusing what would be silently converted: a fraction or an out-of-range number
/// for an integer, a negative one for an unsigned field, a non-number for a number.
template <class T>
T checkedGet(const nlohmann::json& value, const std::string& what)
{
    if constexpr (std::is_same_v<T, bool>) {
        if (!value.is_boolean())
            throw std::invalid_argument("config: " + what + " must be true or false, not " + value.dump());
        return value.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        const auto lo = static_cast<long double>(std::numeric_limits<T>::lowest());
        const auto hi = static_cast<long double>(std::numeric_limits<T>::max());
        const auto bad = [&] {
            return std::invalid_argument("config: " + what + " must be a whole number from " +
                                         std::to_string(std::numeric_limits<T>::lowest()) + " to " +
                                         std::to_string(std::numeric_limits<T>::max()) + ", not " + value.dump());
        };
        if (value.is_number_unsigned()) {
            if (static_cast<long double>(value.get<std::uint64_t>()) > hi) throw bad();
            return static_cast<T>(value.get<std::uint64_t>());
        }
        if (value.is_number_integer()) {
            const std::int64_t v = value.get<std::int64_t>();
            if (static_cast<long double>(v) < lo || static_cast<long double>(v) > hi) throw bad();
            return static_cast<T>(v);
        }
        if (value.is_number_float()) {
            const double v = value.get<double>();
            if (!std::isfinite(v) || v != std::trunc(v) || static_cast<long double>(v) < lo ||
                static_cast<long double>(v) > hi)
                throw bad();
            return static_cast<T>(v);
        }
        throw bad();
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!value.is_number())
            throw std::invalid_argument("config: " + what + " must be a number, not " + value.dump());
        return value.get<T>();
    } else {
        try {
            return value.get<T>();
        } catch (const nlohmann::json::exception&) {
            throw std::invalid_argument("config: " + what + " has the wrong type");
        }
    }
}

template <class T>
void read(const nlohmann::json& j, const char* section, T& options)
{
    if (!j.contains(section)) return;
    const nlohmann::json& s = j.at(section);
    if (!s.is_object()) throw std::invalid_argument(std::string("config: '") + section + "' must be an object");
    for (const auto& [key, value] : s.items()) {
        bool known = false;
        visit(options, [&](const char* name, auto& field) {
            if (key != name) return;
            known = true;
            field = checkedGet<std::decay_t<decltype(field)>>(value, std::string(section) + "." + key);
        });
        if (!known) throw std::invalid_argument(std::string("config: unknown key ") + section + "." + key);
    }
}

nlohmann::json precisionJson(const PrecisionSettings& p)
{
    nlohmann::json j = write(p);
    j["amp_dtype"] = models::precision::to_string(p.amp.dtype);
    if (p.ampAuto) j["amp"] = "auto";
    j["memory_budget_action"] = p.memoryBudgetAction == MemoryBudgetAction::Warn ? "warn" : "refuse";
    return j;
}

void readPrecision(const nlohmann::json& j, PrecisionSettings& p)
{
    if (!j.is_object()) throw std::invalid_argument("config: 'precision' must be an object");
    nlohmann::json rest = j;
    if (rest.contains("amp") && rest.at("amp").is_string()) {
        if (rest.at("amp").get<std::string>() != "auto")
            throw std::invalid_argument("config: precision.amp must be true, false or \"auto\"");
        p.ampAuto = true;
        p.amp.enabled = false;
        rest.erase("amp");
    } else if (rest.contains("amp")) {
        p.ampAuto = false;
    }
    if (rest.contains("memory_budget_action")) {
        const auto& a = rest.at("memory_budget_action");
        if (!a.is_string() || (a.get<std::string>() != "refuse" && a.get<std::string>() != "warn"))
            throw std::invalid_argument("config: precision.memory_budget_action must be \"refuse\" or \"warn\"");
        p.memoryBudgetAction = a.get<std::string>() == "warn" ? MemoryBudgetAction::Warn : MemoryBudgetAction::Refuse;
        rest.erase("memory_budget_action");
    }
    // BF16 chosen by hand gets the seed's BF16 scaler (scale 1, static: BF16 has FP32's exponent
    // range) unless the config sets the scaling itself.
    const bool setsScaling = rest.contains("loss_scale") || rest.contains("dynamic_loss_scale");
    if (rest.contains("amp_dtype")) {
        try {
            p.amp.dtype = models::precision::half_type_from_string(rest.at("amp_dtype").get<std::string>());
        } catch (const std::exception& e) {
            throw std::invalid_argument(std::string("config: precision.amp_dtype: ") + e.what());
        }
        rest.erase("amp_dtype");
    }
    read(nlohmann::json{{"precision", rest}}, "precision", p);
    if (p.amp.enabled && p.amp.dtype == models::precision::HalfType::BF16 && !setsScaling) {
        p.amp.loss_scale = 1.0;
        p.amp.dynamic_loss_scale = false;
    }
    if (!models::precision::int8_backend_from_string(p.int8Backend))
        throw std::invalid_argument("config: precision.int8_backend '" + p.int8Backend +
                                    "' is not one of auto, fp32, dequantize, onednn, static, cuda-int-mm");
    if (!(p.int8MaxDegradation >= 0.0) || !std::isfinite(p.int8MaxDegradation))
        throw std::invalid_argument("config: precision.int8_max_degradation must be a non-negative number");
    if (!(p.memoryBudgetMb >= 0.0) || !std::isfinite(p.memoryBudgetMb))
        throw std::invalid_argument(
            "config: precision.memory_budget_mb must be a non-negative number of MiB (0: none)");
}

} // namespace

std::string toString(ModelKind kind)
{
    switch (kind) {
    case ModelKind::Dqn: return "dqn";
    case ModelKind::Ppo: return "ppo";
    case ModelKind::Mamba2: return "mamba2";
    case ModelKind::Tft: return "tft";
    }
    return "dqn";
}

bool isForecaster(ModelKind kind)
{
    return kind == ModelKind::Mamba2 || kind == ModelKind::Tft;
}

bool isAgent(ModelKind kind)
{
    return !isForecaster(kind);
}

std::optional<ModelKind> modelKindFromString(std::string name)
{
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == "mamba-2") name = "mamba2";
    for (ModelKind k : {ModelKind::Dqn, ModelKind::Ppo, ModelKind::Mamba2, ModelKind::Tft})
        if (toString(k) == name) return k;
    return std::nullopt;
}

SessionConfig SessionConfig::defaults()
{
    SessionConfig c;
    // Agents: SB3's defaults scaled to intraday bars (episodes of ~1,380 steps,
    // runs of tens of thousands of steps), as in the planted-edge tests.
    c.dqn.learningRate = 1e-3;
    c.dqn.bufferSize = 50'000;
    c.dqn.learningStarts = 1'000;
    c.dqn.batchSize = 64;
    c.dqn.targetUpdateInterval = 1'000;
    c.dqn.explorationFraction = 0.3;
    c.dqn.gamma = 0.9;
    c.ppo.nSteps = 512;
    c.ppo.batchSize = 64;
    c.ppo.learningRate = 1e-3;
    c.ppo.gamma = 0.9;
    c.ppo.entCoef = 0.01;
    c.mamba2.kind = ForecasterKind::Mamba2;
    c.tft.kind = ForecasterKind::Tft;
    return c;
}

std::string toString(ModelPreset preset)
{
    switch (preset) {
    case ModelPreset::Small: return "small";
    case ModelPreset::Seed: return "seed";
    case ModelPreset::Default: break;
    }
    return "default";
}

std::optional<ModelPreset> modelPresetFromString(const std::string& name)
{
    for (ModelPreset p : {ModelPreset::Default, ModelPreset::Small, ModelPreset::Seed})
        if (toString(p) == name) return p;
    return std::nullopt;
}

void applyModelPreset(SessionConfig& c, ModelPreset preset)
{
    const SessionConfig d = SessionConfig::defaults();
    c.dqn.hidden = d.dqn.hidden;
    c.dqn.batchSize = d.dqn.batchSize;
    c.dqn.learningStarts = d.dqn.learningStarts;
    c.ppo.hidden = d.ppo.hidden;
    c.ppo.nSteps = d.ppo.nSteps;
    for (auto [f, base] : {std::pair{&c.mamba2, &d.mamba2}, std::pair{&c.tft, &d.tft}}) {
        f->dModel = base->dModel;
        f->headDim = base->headDim;
        f->layers = base->layers;
        f->dState = base->dState;
        f->expand = base->expand;
        f->hiddenSize = base->hiddenSize;
        f->heads = base->heads;
        f->batchSize = base->batchSize;
        f->windowing.pastLength = base->windowing.pastLength;
    }
    switch (preset) {
    case ModelPreset::Default: break;
    case ModelPreset::Small:
        c.dqn.hidden = {32, 32};
        c.dqn.batchSize = 32;
        c.dqn.learningStarts = 200; // a quick look should show the agent learning
        c.ppo.hidden = {32, 32};
        c.ppo.nSteps = 256;
        c.mamba2.dModel = 16;
        c.mamba2.layers = 1;
        c.tft.hiddenSize = 8;
        for (ForecasterConfig* f : {&c.mamba2, &c.tft}) f->windowing.pastLength = 32;
        break;
    case ModelPreset::Seed:
        c.dqn.hidden = {256, 256};
        c.dqn.batchSize = 256;
        c.ppo.hidden = {256, 256};
        c.mamba2.dModel = 512;
        c.mamba2.headDim = 64;
        c.mamba2.layers = 2;
        c.mamba2.dState = 16;
        c.mamba2.expand = 2;
        c.mamba2.batchSize = 8;
        c.mamba2.windowing.pastLength = 60;
        c.tft.hiddenSize = 32;
        c.tft.heads = 4;
        c.tft.batchSize = 32;
        c.tft.windowing.pastLength = 100;
        break;
    }
}

SessionConfig effectiveConfig(SessionConfig c)
{
    c.dqn.totalTimesteps = c.steps;
    c.dqn.seed = c.seed;
    c.ppo.seed = c.seed;
    for (ForecasterConfig* f : {&c.mamba2, &c.tft}) {
        f->seed = c.seed;
        f->totalSteps = c.steps;
        f->warmupSteps = std::min<std::int64_t>(f->warmupSteps, std::max<std::int64_t>(1, c.steps / 10));
    }
    c.mamba2.kind = ForecasterKind::Mamba2;
    c.tft.kind = ForecasterKind::Tft;
    return c;
}

nlohmann::json toJson(const SessionConfig& c)
{
    nlohmann::json models = nlohmann::json::array();
    for (ModelKind m : c.models) models.push_back(toString(m));
    nlohmann::json env = write(c.env);
    env["fill_timing"] = c.env.fillTiming == FillTiming::NextOpen ? "next_open" : "same_close";
    env["reward"] = c.env.reward == RewardKind::PnlTicks ? "pnl_ticks" : "differential_sharpe";
    nlohmann::json j{{"name", c.name},
                     {"models", models},
                     {"series", c.series},
                     {"from_day", c.fromDay ? nlohmann::json(*c.fromDay) : nlohmann::json(nullptr)},
                     {"to_day", c.toDay ? nlohmann::json(*c.toDay) : nlohmann::json(nullptr)},
                     {"steps", c.steps},
                     {"seed", c.seed},
                     {"speed", c.speed},
                     {"threads", c.threads},
                     {"device", c.device},
                     {"workers", c.workers},
                     {"distributed_timeout_s", c.distributedTimeoutSeconds},
                     {"ensemble", c.ensemble},
                     {"precision", precisionJson(c.precision)},
                     {"train_fraction", c.trainFraction},
                     {"validation_fraction", c.validationFraction},
                     {"checkpoint_every", c.checkpointEvery},
                     {"checkpoint_seconds", c.checkpointSeconds},
                     {"env", env},
                     {"dqn", write(c.dqn)},
                     {"ppo", write(c.ppo)},
                     {"mamba2", write(c.mamba2)},
                     {"tft", write(c.tft)}};
    // Only a fold member's config has them (configs without stay as they were).
    if (c.validationFromDay) j["validation_from_day"] = *c.validationFromDay;
    if (c.testFromDay) j["test_from_day"] = *c.testFromDay;
    return j;
}

SessionConfig sessionConfigFromJson(const nlohmann::json& j, SessionConfig c)
{
    if (!j.is_object()) throw std::invalid_argument("config: the top level must be a JSON object");
    static const char* const kTopLevel[] = {"name",
                                            "models",
                                            "series",
                                            "from_day",
                                            "to_day",
                                            "validation_from_day",
                                            "test_from_day",
                                            "steps",
                                            "seed",
                                            "speed",
                                            "threads",
                                            "device",
                                            "workers",
                                            "distributed_timeout_s",
                                            "ensemble",
                                            "precision",
                                            "train_fraction",
                                            "validation_fraction",
                                            "checkpoint_every",
                                            "checkpoint_seconds",
                                            "env",
                                            "dqn",
                                            "ppo",
                                            "mamba2",
                                            "tft"};
    for (const auto& [key, _] : j.items())
        if (std::find_if(std::begin(kTopLevel), std::end(kTopLevel), [&](const char* k) { return key == k; }) ==
            std::end(kTopLevel))
            throw std::invalid_argument("config: unknown key " + key);
    const auto top = [&]<class T>(const char* key, T& field) {
        if (j.contains(key)) field = checkedGet<T>(j.at(key), key);
    };
    top("name", c.name);
    if (j.contains("models")) {
        if (!j.at("models").is_array()) throw std::invalid_argument("config: models must be a list of names");
        c.models.clear();
        for (const auto& m : j.at("models")) {
            const std::string name = checkedGet<std::string>(m, "models[]");
            const auto kind = modelKindFromString(name);
            if (!kind) throw std::invalid_argument("config: unknown model '" + name + "' (dqn, ppo, mamba2, tft)");
            c.models.push_back(*kind);
        }
    }
    top("series", c.series);
    for (auto [key, day] :
         {std::pair{"from_day", &c.fromDay}, std::pair{"to_day", &c.toDay},
          std::pair{"validation_from_day", &c.validationFromDay}, std::pair{"test_from_day", &c.testFromDay}})
        if (j.contains(key) && !j.at(key).is_null()) *day = checkedGet<std::int64_t>(j.at(key), key);
    top("steps", c.steps);
    top("seed", c.seed);
    top("speed", c.speed);
    top("threads", c.threads);
    top("device", c.device);
    top("workers", c.workers);
    top("distributed_timeout_s", c.distributedTimeoutSeconds);
    top("ensemble", c.ensemble);
    top("train_fraction", c.trainFraction);
    top("validation_fraction", c.validationFraction);
    top("checkpoint_every", c.checkpointEvery);
    top("checkpoint_seconds", c.checkpointSeconds);
    if (j.contains("env")) {
        nlohmann::json env = j.at("env");
        if (env.contains("fill_timing")) {
            const std::string v = env.at("fill_timing").get<std::string>();
            if (v != "next_open" && v != "same_close")
                throw std::invalid_argument("config: env.fill_timing is next_open or same_close");
            c.env.fillTiming = v == "next_open" ? FillTiming::NextOpen : FillTiming::SameClose;
            env.erase("fill_timing");
        }
        if (env.contains("reward")) {
            const std::string v = env.at("reward").get<std::string>();
            if (v != "pnl_ticks" && v != "differential_sharpe")
                throw std::invalid_argument("config: env.reward is pnl_ticks or differential_sharpe");
            c.env.reward = v == "pnl_ticks" ? RewardKind::PnlTicks : RewardKind::DifferentialSharpe;
            env.erase("reward");
        }
        read(nlohmann::json{{"env", env}}, "env", c.env);
    }
    if (j.contains("precision")) readPrecision(j.at("precision"), c.precision);
    read(j, "dqn", c.dqn);
    read(j, "ppo", c.ppo);
    read(j, "mamba2", c.mamba2);
    read(j, "tft", c.tft);
    validate(c);
    return c;
}

std::vector<std::string> configProblems(const SessionConfig& c)
{
    std::vector<std::string> p;
    const auto need = [&](bool ok, const std::string& what) {
        if (!ok) p.push_back(what);
    };
    need(c.steps >= 1 && c.steps <= kMaxSteps,
         "steps must be from 1 to " + std::to_string(kMaxSteps) + ", not " + std::to_string(c.steps));
    need(c.seed <= kMaxSeed, "seed must be from 0 to 2^63 - 1");
    need(c.device == "cpu" || c.device.rfind("cuda", 0) == 0,
         "device is \"cpu\" or \"cuda:N\", not \"" + c.device + "\"");
    need(!c.models.empty(), "no models to train");
    need(c.threads >= 1, "threads must be at least 1, not " + std::to_string(c.threads));
    need(c.workers >= 1 && c.workers <= 256, "workers must be from 1 to 256, not " + std::to_string(c.workers));
    need(c.distributedTimeoutSeconds > 0.0 && std::isfinite(c.distributedTimeoutSeconds),
         "distributed_timeout_s must be a positive number of seconds");
    need(c.speed >= 0.0 && std::isfinite(c.speed),
         "speed must be 0 (as fast as possible) or a positive multiple of real time");
    need(c.trainFraction > 0.0 && c.validationFraction > 0.0 && c.trainFraction + c.validationFraction < 1.0,
         "train_fraction and validation_fraction must be positive and leave a test part (sum below 1)");
    need(c.validationFromDay.has_value() == c.testFromDay.has_value(),
         "validation_from_day and test_from_day go together (an explicit split), or neither");
    if (c.validationFromDay && c.testFromDay) {
        need(*c.validationFromDay < *c.testFromDay, "validation_from_day must come before test_from_day");
        need(!c.fromDay || *c.fromDay < *c.validationFromDay,
             "validation_from_day must come after from_day (the training days come first)");
        need(!c.toDay || *c.testFromDay <= *c.toDay, "test_from_day must not come after to_day");
    }
    need(c.checkpointEvery >= 0, "checkpoint_every must not be negative");
    need(c.checkpointSeconds >= 0.0 && std::isfinite(c.checkpointSeconds),
         "checkpoint_seconds must be 0 (off) or a positive number of seconds");
    need(c.precision.calibrationBars >= 0 && c.precision.int8RefreshEvery >= 0,
         "precision.calibration_bars and precision.int8_refresh_every must not be negative");
    need(c.env.maxContracts >= 1, "env.max_contracts must be at least 1");
    need(c.env.window >= 1, "env.window must be at least 1");
    const auto widths = [&](const std::vector<int>& hidden, const std::string& what) {
        need(!hidden.empty() && std::all_of(hidden.begin(), hidden.end(), [](int w) { return w >= 1; }),
             what + " must list one or more positive layer widths");
    };
    widths(c.dqn.hidden, "dqn.hidden");
    need(c.dqn.batchSize >= 1, "dqn.batch_size must be at least 1");
    need(c.dqn.bufferSize >= static_cast<std::size_t>(std::max(1, c.dqn.batchSize)),
         "dqn.buffer_size must hold at least one batch");
    need(c.dqn.trainFreq >= 1 && c.dqn.gradientSteps >= 1 && c.dqn.nSteps >= 1,
         "dqn.train_freq, dqn.gradient_steps and dqn.n_steps must be at least 1");
    need(c.dqn.gamma >= 0.0 && c.dqn.gamma <= 1.0, "dqn.gamma must be in [0, 1]");
    need(c.dqn.learningRate >= 0.0, "dqn.learning_rate must not be negative");
    widths(c.ppo.hidden, "ppo.hidden");
    need(c.ppo.nSteps >= 1 && c.ppo.batchSize >= 1 && c.ppo.nEpochs >= 1,
         "ppo.n_steps, ppo.batch_size and ppo.n_epochs must be at least 1");
    need(c.ppo.gamma >= 0.0 && c.ppo.gamma <= 1.0, "ppo.gamma must be in [0, 1]");
    need(c.ppo.learningRate >= 0.0, "ppo.learning_rate must not be negative");
    for (const auto& [f, name] : {std::pair{&c.mamba2, std::string("mamba2")}, std::pair{&c.tft, std::string("tft")}}) {
        need(f->windowing.pastLength >= 1 && f->windowing.horizon >= 1,
             name + ".past_length and .horizon must be at least 1");
        need(f->batchSize >= 1 && f->evalBatchSize >= 1, name + ".batch_size and .eval_batch_size must be at least 1");
        need(f->learningRate >= 0.0, name + ".learning_rate must not be negative");
        need(!f->quantiles.empty() && std::is_sorted(f->quantiles.begin(), f->quantiles.end()) &&
                 std::all_of(f->quantiles.begin(), f->quantiles.end(), [](double q) { return q > 0.0 && q < 1.0; }),
             name + ".quantiles must be ascending levels in (0, 1)");
    }
    const ForecasterConfig& m = c.mamba2;
    need(m.dModel >= 1 && m.layers >= 1 && m.dState >= 1 && m.expand >= 1 && m.chunkSize >= 1 && m.ngroups >= 1,
         "mamba2.d_model, layers, d_state, expand, chunk_size and ngroups must be at least 1");
    if (m.headDim < 1) p.push_back("mamba2.head_dim must be at least 1, not " + std::to_string(m.headDim));
    else if (m.dModel >= 1 && m.expand >= 1 && (m.dModel * m.expand) % m.headDim != 0)
        p.push_back("mamba2.head_dim (" + std::to_string(m.headDim) + ") must divide d_model x expand (" +
                    std::to_string(m.dModel * m.expand) + ")");
    else if (m.dModel >= 1 && m.expand >= 1 && m.ngroups >= 1 && (m.dModel * m.expand / m.headDim) % m.ngroups != 0)
        p.push_back("mamba2.ngroups (" + std::to_string(m.ngroups) + ") must divide the number of heads (" +
                    std::to_string(m.dModel * m.expand / m.headDim) + ")");
    const ForecasterConfig& t = c.tft;
    need(t.hiddenSize >= 1 && t.embeddingSize >= 1 && t.lstmLayers >= 1,
         "tft.hidden_size, embedding_size and lstm_layers must be at least 1");
    if (t.heads < 1) p.push_back("tft.heads must be at least 1, not " + std::to_string(t.heads));
    else if (t.hiddenSize >= 1 && t.hiddenSize % t.heads != 0)
        p.push_back("tft.heads (" + std::to_string(t.heads) + ") must divide hidden_size (" +
                    std::to_string(t.hiddenSize) + ")");
    need(t.dropout >= 0.0 && t.dropout < 1.0, "tft.dropout must be in [0, 1)");
    return p;
}

void validate(const SessionConfig& c)
{
    const std::vector<std::string> problems = configProblems(c);
    if (problems.empty()) return;
    std::string text = "config: " + problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
    throw std::invalid_argument(text);
}

} // namespace foxhunt
