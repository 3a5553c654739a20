#pragma once
// JSON forms of evaluation results, shared by the session, the CLI and reports.

#include "engine/env/evaluation.h"
#include "engine/forecast/forecast_metrics.h"
#include "engine/forecast/forecaster_trainer.h"

#include <nlohmann/json_fwd.hpp>

namespace foxhunt {

/// {"pnl_usd","pnl_ticks","sharpe","sortino","max_drawdown_usd","calmar","win_rate","profit_factor","trades","turnover","steps"}
nlohmann::json toJson(const PerformanceMetrics& metrics);
/// {"policy","flat","buy_and_hold","episodes","bars_per_year","equity_usd" (decimated to <= 400 points)}
nlohmann::json toJson(const EvaluationReport& report);
/// {"quantile_loss","median_mae","directional_accuracy","interval_coverage","count"}
nlohmann::json toJson(const ForecastMetrics& metrics);
/// {"model","zero_return","persistence","windows"}
nlohmann::json toJson(const ForecastEvaluation& evaluation);
/// The validation document's "int8" object: {"fp32_loss","int8_loss","degradation","fp32_bytes","int8_bytes",
/// "bytes_ratio","quantized_layers","backend","static_activations","calibration_bars","latency"}; latency holds
/// "fp32_b1","int8_b1","fp32_b32","int8_b32", each {"p50_ms","p95_ms","p99_ms","count"} over `latencyRepeats` passes.
nlohmann::json toJson(const Int8Evaluation& evaluation, bool staticActivations, int calibrationBars, int latencyRepeats);
/// The TFT validation document's "interpretation" object: {"encoder_variables","encoder_importance",
/// "decoder_variables","decoder_importance","static_variables","static_importance","attention","windows"}.
nlohmann::json toJson(const TftInterpretation& interpretation);

} // namespace foxhunt
