// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/learner.h"

#include "engine/session/error_text.h"
#include "engine/session/session_json.h"
#include "engine/telemetry/metric_registry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace foxhunt::session {

namespace {

/// P50/P95/P99 of a latency sample (ms).
nlohmann::json percentiles(std::vector<double> v)
{
    if (v.empty()) return {{"p50_ms", nullptr}, {"p95_ms", nullptr}, {"p99_ms", nullptr}, {"count", 0}};
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
        return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
    };
    return {{"p50_ms", at(0.50)}, {"p95_ms", at(0.95)}, {"p99_ms", at(0.99)}, {"count", v.size()}};
}

using Factory = std::unique_ptr<Learner> (*)(ModelKind, const RunInputs&, MetricBatch&, const AmpResolver&);

/// The registry: one line per model.
struct Registration {
    ModelKind kind;
    Factory make;
};
constexpr Registration kLearners[] = {
    {ModelKind::Dqn, &makeAgentLearner},
    {ModelKind::Ppo, &makeAgentLearner},
    {ModelKind::Mamba2, &makeForecasterLearner},
    {ModelKind::Tft, &makeForecasterLearner},
};

} // namespace

Learner::Learner(ModelKind kind, const RunInputs& run, MetricBatch& out)
    : m_run(run), m_config(*run.config), m_kind(kind), m_name(toString(kind)), m_out(out),
      m_lastLossScale(std::numeric_limits<double>::quiet_NaN())
{
}

Learner::~Learner() = default;

bool Learner::finished() const
{
    return m_steps >= m_config.steps;
}

void Learner::emitAt(std::string_view metric, long long step, double value)
{
    m_out.push_back({m_name, std::string(metric), step, 0, value});
    m_last[std::string(metric)] = value;
}

void Learner::advance(long long tick, std::size_t index)
{
    trainStep(tick, index);
    // First step, every 500th and the last: a short run's memory chart still ends where the model ended.
    if (m_steps % 500 == 0 || m_steps == 1 || m_steps == m_config.steps) {
        emit(metrics::kParamBytes, m_paramBytes);
        const ModelMemory mem = memory();
        emit(metrics::kGradBytes, static_cast<double>(mem.gradientBytes));
        emit(metrics::kOptimizerBytes, static_cast<double>(mem.optimizerBytes));
        emit(metrics::kActivationBytes, static_cast<double>(mem.activationPeakBytes));
        if (mem.onCuda) {
            emit(metrics::kCudaAllocatedBytes, static_cast<double>(mem.cudaAllocatedBytes));
            emit(metrics::kCudaPeakBytes, static_cast<double>(mem.cudaPeakBytes));
        }
    }
}

void Learner::refreshInt8(const Int8Settings& settings)
{
    if (finished() || !int8Error.empty()) return; // a finished model gets the full check at the end
    try {
        if (const std::optional<Int8Check> c = checkInt8(settings)) {
            emit(metrics::kInt8Degradation, c->degradation);
            emit(metrics::kInt8Rejected, c->served ? 0.0 : 1.0);
        }
    } catch (const std::exception& e) {
        int8Error = errorText(e);
    }
}

nlohmann::json Learner::evaluate(const Int8Settings& settings)
{
    nlohmann::json doc;
    doc["training"] = {
        {"steps", m_steps}, {"final", m_last}, {"param_bytes", m_paramBytes}, {"latency", percentiles(m_latenciesMs)}};
    evaluateInto(doc, settings);
    return doc;
}

void Learner::resumeAt(long long step)
{
    m_steps = step;
    checkpointedStep = step;
}

nlohmann::json Learner::ampDocument(double finalScale, long long skippedSteps) const
{
    nlohmann::json j{{"enabled", amp.enabled},
                     {"dtype", amp.enabled ? models::precision::to_string(amp.dtype) : "fp32"},
                     {"final_scale", finalScale},
                     {"skipped_steps", skippedSteps},
                     {"scale_changes", m_scaleChanges}};
    if (!ampChoice.is_null()) j["choice"] = ampChoice;
    return j;
}

nlohmann::json Learner::int8Document(const std::function<Int8Evaluation()>& evaluate, int latencyRepeats)
{
    try {
        if (!int8Error.empty()) throw std::invalid_argument(int8Error);
        const Int8Evaluation e = evaluate();
        emit(metrics::kInt8Degradation, e.degradation);
        emit(metrics::kInt8Rejected, e.served ? 0.0 : 1.0);
        return toJson(e, latencyRepeats);
    } catch (const std::exception& e) {
        return nlohmann::json{{"error", errorText(e)}};
    }
}

void Learner::sawLossScale(double scale)
{
    if (!std::isnan(m_lastLossScale) && scale != m_lastLossScale) ++m_scaleChanges;
    m_lastLossScale = scale;
    emit(metrics::kLossScale, scale);
}

void Learner::sawLatency(double ms)
{
    m_latenciesMs.push_back(ms);
    emit(metrics::kLatencyMs, ms);
}

std::unique_ptr<Learner> makeLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                     const AmpResolver& resolveAmp)
{
    for (const Registration& r : kLearners)
        if (r.kind == kind) return r.make(kind, run, out, resolveAmp);
    throw std::invalid_argument("no learner is registered for " + toString(kind));
}

} // namespace foxhunt::session
