// SPDX-License-Identifier: GPL-3.0-or-later
// The forecasters' learner (Mamba-2, TFT): a trainer on the run's windows, live forecasts at the
// replayed bar (served by the INT8 copy when INT8 is on), and the evaluation against the baselines.

#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/amp_auto.h"
#include "engine/session/learner.h"
#include "engine/session/session_json.h"
#include "engine/telemetry/metric_registry.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace foxhunt::session {

namespace {

using Clock = std::chrono::steady_clock;

/// A live forecast (charted, and timed as the inference latency) every this many steps.
constexpr long long kLiveEvery = 10;

class ForecasterLearner final : public Learner {
public:
    ForecasterLearner(ModelKind kind, const RunInputs& run, MetricBatch& out, const AmpResolver& resolveAmp)
        : Learner(kind, run, out)
    {
        ForecasterConfig fc = kind == ModelKind::Mamba2 ? run.effective->mamba2 : run.effective->tft;
        fc.device = m_config.device;
        const ForecastData& data = *run.forecastData;
        const IndexRange valid = validAnchors(data, fc.windowing);
        const std::size_t h = fc.windowing.horizon;
        auto anchors = [&](const IndexRange& bars) {
            const std::size_t end = bars.end > h ? bars.end - h : 0;
            return IndexRange{std::max(valid.begin, bars.begin), std::min(valid.end, end)};
        };
        const IndexRange trainA = anchors(run.split->trainIndex), validA = anchors(run.split->validationIndex);
        if (trainA.size() == 0 || validA.size() == 0)
            throw std::invalid_argument("too few bars for " + name() + "'s windows of " +
                                        std::to_string(fc.windowing.pastLength) + " bars");
        resolveAmp(*this, detail::forecasterSteps(fc, data, trainA, validA));
        fc.mixedPrecision = amp;
        m_trainer = std::make_unique<ForecasterTrainer>(fc, data, trainA, validA);
        if (run.comm) m_trainer->setCommunicator(run.comm);
        m_paramBytes = static_cast<double>(m_trainer->parameterBytes());
    }

    std::size_t servingBytes(int batch) override { return m_trainer->servingBytes(static_cast<std::size_t>(batch)); }
    void save(const std::string& path, const std::string& identity) const override
    {
        m_trainer->saveCheckpoint(path, identity);
    }
    void load(const std::string& path, bool, const CheckpointCheck& check) override
    {
        m_trainer->loadCheckpoint(path, check);
    }
    ForecasterTrainer* forecaster() override { return m_trainer.get(); }

protected:
    void trainStep(long long tick, std::size_t index) override
    {
        const ForecastStepStats st = m_trainer->trainStep();
        m_steps = st.step;
        blockSamples += static_cast<double>(m_trainer->config().batchSize);
        blockUpdates += 1;
        blockAllreduceMs += st.allreduceSeconds * 1e3;
        emit(metrics::kLoss, st.loss);
        emit(metrics::kGradNorm, st.gradNorm);
        emit(metrics::kLearningRate, st.learningRate);
        emit(metrics::kStepMs, st.stepSeconds * 1e3);
        sawLossScale(st.lossScale);
        emit(metrics::kSkippedSteps, static_cast<double>(st.skippedSteps));
        if (!m_run.owner || m_steps % kLiveEvery != 0) return;
        // The forecast made at the replayed bar, timed as the inference latency.
        const ForecastData& data = *m_run.forecastData;
        const std::size_t replayed = m_run.split->trainIndex.begin + index;
        const IndexRange valid = validAnchors(data, m_trainer->config().windowing);
        const std::size_t anchor = std::clamp(replayed, valid.begin, valid.end - 1);
        const auto l0 = Clock::now();
        const std::vector<double> forecast = m_trainer->predict(anchor);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - l0).count();
        ++(m_trainer->lastInferenceWeights() == InferenceWeights::Int8 ? m_forecastsInt8 : m_forecastsFp32);
        sawLatency(ms);
        if (anchor == replayed) {
            emitAt(metrics::kForecastQ10, tick, forecast[m_trainer->quantileIndex(0.1)]);
            emitAt(metrics::kForecastQ50, tick, forecast[m_trainer->quantileIndex(0.5)]);
            emitAt(metrics::kForecastQ90, tick, forecast[m_trainer->quantileIndex(0.9)]);
            emitAt(metrics::kRealised, tick, data.logReturns[anchor + 1]);
        }
    }

    ModelMemory memory() const override { return m_trainer->memory(); }

    std::optional<Int8Check> checkInt8(const Int8Settings& settings) override
    {
        const Int8Refresh r = m_trainer->refreshInt8(settings.forecasterRefresh);
        return Int8Check{r.degradation, r.served};
    }

    void evaluateInto(nlohmann::json& m, const Int8Settings& settings) override
    {
        m["training"]["forecasts_served"] = {{"fp32", m_forecastsFp32}, {"int8", m_forecastsInt8}};
        const WalkForwardSplit& split = *m_run.split;
        const std::size_t h = m_trainer->config().windowing.horizon;
        const IndexRange valid = validAnchors(*m_run.forecastData, m_trainer->config().windowing);
        const IndexRange testA{std::max(valid.begin, split.testIndex.begin),
                               std::min(valid.end, split.testIndex.end > h ? split.testIndex.end - h : 0)};
        m["validation"] = toJson(m_trainer->evaluate());
        if (testA.size() > 0) m["test"] = toJson(m_trainer->evaluate(testA));
        const ForecastAmpStatus ampStatus = m_trainer->ampStatus();
        m["validation"]["amp"] = ampDocument(ampStatus.lossScale, ampStatus.skippedSteps);
        if (m_config.precision.int8) {
            Int8EvaluationOptions o;
            o.calibrationSamples = settings.forecasterRefresh.calibrationSamples;
            o.serving = settings.serving;
            m["validation"]["int8"] = int8Document([&] { return m_trainer->evaluateInt8(o); }, o.latencyRepeats);
        }
        if (m_trainer->interprets()) m["validation"]["interpretation"] = toJson(m_trainer->interpret());
    }

private:
    std::unique_ptr<ForecasterTrainer> m_trainer;
    long long m_forecastsFp32 = 0; ///< live forecasts the FP32 model answered
    long long m_forecastsInt8 = 0; ///< live forecasts the kept INT8 copy answered
};

} // namespace

std::unique_ptr<Learner> makeForecasterLearner(ModelKind kind, const RunInputs& run, MetricBatch& out,
                                               const AmpResolver& resolveAmp)
{
    return std::make_unique<ForecasterLearner>(kind, run, out, resolveAmp);
}

} // namespace foxhunt::session
