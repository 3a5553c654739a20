#include "engine/session/session_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace foxhunt {

namespace {

/// JSON has no infinity: a profit factor with no losing trade is reported as null.
nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

} // namespace

nlohmann::json toJson(const PerformanceMetrics& m)
{
    return {{"pnl_usd", finite(m.pnlUsd)},     {"pnl_ticks", finite(m.pnlTicks)},
            {"sharpe", finite(m.sharpe)},      {"sortino", finite(m.sortino)},
            {"max_drawdown_usd", finite(m.maxDrawdownUsd)}, {"calmar", finite(m.calmar)},
            {"win_rate", finite(m.winRate)},   {"profit_factor", finite(m.profitFactor)},
            {"trades", m.trades},              {"turnover", m.turnover},
            {"steps", m.steps}};
}

nlohmann::json toJson(const EvaluationReport& r)
{
    nlohmann::json equity = nlohmann::json::array();
    const std::size_t n = r.policyEquityUsd.size();
    const std::size_t stride = n > 400 ? (n + 399) / 400 : 1;
    for (std::size_t i = 0; i < n; i += stride) equity.push_back(r.policyEquityUsd[i]);
    if (n > 0 && (n - 1) % stride != 0) equity.push_back(r.policyEquityUsd.back());
    return {{"policy", toJson(r.policy)},
            {"flat", toJson(r.flat)},
            {"buy_and_hold", toJson(r.buyAndHold)},
            {"episodes", r.episodes},
            {"bars_per_year", r.barsPerYear},
            {"equity_usd", equity}};
}

nlohmann::json toJson(const ForecastMetrics& m)
{
    return {{"quantile_loss", finite(m.quantileLoss)},
            {"median_mae", finite(m.medianMae)},
            {"directional_accuracy", finite(m.directionalAccuracy)},
            {"interval_coverage", finite(m.intervalCoverage)},
            {"count", m.count}};
}

nlohmann::json toJson(const ForecastEvaluation& e)
{
    return {{"model", toJson(e.model)},
            {"zero_return", toJson(e.zeroReturn)},
            {"persistence", toJson(e.persistence)},
            {"windows", e.windows}};
}

nlohmann::json toJson(const Int8Evaluation& e, bool staticActivations, int calibrationBars, int latencyRepeats)
{
    auto latency = [latencyRepeats](const LatencyPercentiles& p) {
        return nlohmann::json{{"p50_ms", p.p50 / 1e3}, {"p95_ms", p.p95 / 1e3}, {"p99_ms", p.p99 / 1e3},
                              {"count", latencyRepeats}};
    };
    return {{"fp32_loss", finite(e.fp32Loss)},
            {"int8_loss", finite(e.int8Loss)},
            {"degradation", finite(e.degradation)},
            {"fp32_bytes", e.fp32Bytes},
            {"int8_bytes", e.int8Bytes},
            {"bytes_ratio", finite(e.bytesRatio)},
            {"quantized_layers", e.quantizedLayers},
            {"backend", e.backend},
            {"static_activations", staticActivations},
            {"calibration_bars", staticActivations ? calibrationBars : 0},
            {"latency",
             {{"fp32_b1", latency(e.fp32Batch1)},
              {"int8_b1", latency(e.int8Batch1)},
              {"fp32_b32", latency(e.fp32Batch32)},
              {"int8_b32", latency(e.int8Batch32)}}}};
}

nlohmann::json toJson(const TftInterpretation& i)
{
    return {{"encoder_variables", i.encoderVariables}, {"encoder_importance", i.encoderImportance},
            {"decoder_variables", i.decoderVariables}, {"decoder_importance", i.decoderImportance},
            {"static_variables", i.staticVariables},   {"static_importance", i.staticImportance},
            {"attention", i.attention},                {"windows", i.windows}};
}

} // namespace foxhunt
