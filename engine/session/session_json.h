// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// JSON forms of evaluation results, shared by the session, the CLI and reports.

#include "engine/env/evaluation.h"
#include "engine/forecast/forecast_metrics.h"
#include "engine/forecast/forecaster_trainer.h"
#include "models/hardware/machine_probe.h"

#include <nlohmann/json_fwd.hpp>

namespace foxhunt {

/// {"pnl_usd","pnl_ticks","sharpe","sortino","sharpe_per_bar","max_drawdown_usd","calmar","win_rate","profit_factor",
/// "trades","turnover","steps","days","daily_pnl_usd"}; sharpe and sortino are of daily PnL, annualised with
/// sqrt(252); daily_pnl_usd follows the report's "trading_days".
nlohmann::json toJson(const PerformanceMetrics& metrics);
/// {"policy","flat","buy_and_hold","episodes","trading_days" ("YYYY-MM-DD", ascending),"equity_usd" (decimated
/// to <= 400 points),"buy_and_hold_equity_usd"}
nlohmann::json toJson(const EvaluationReport& report);
/// {"quantile_loss","crps","median_mae","directional_accuracy","interval_coverage","interval_nominal","count"}
nlohmann::json toJson(const ForecastMetrics& metrics);
/// {"model","zero_return","persistence","climatology","skill" {"quantile_loss_vs_climatology","crps_vs_climatology"},
/// "calibration" {"observed","nominal","gap","count","pit" {"edges","counts","fractions","expected"}},
/// "diebold_mariano" {"baseline","mean_differential","statistic","p_value","n","horizon","valid"},"windows"}
nlohmann::json toJson(const ForecastEvaluation& evaluation);
/// The validation document's "int8" object: the shared Int8Evaluation document (int8_evaluation_json.h) with
/// every latency's "count" set to `latencyRepeats` passes.
nlohmann::json toJson(const Int8Evaluation& evaluation, int latencyRepeats);
/// The machine a run trained on: {"summary","cpu","logical_cpus","physical_cores","cpu_features","gpus",
/// "fingerprint"}; gpus holds {"index","name","capability","memory_bytes"}.
nlohmann::json machineJson(const models::hardware::MachineInfo& machine);
/// The TFT validation document's "interpretation" object: {"encoder_variables","encoder_importance",
/// "decoder_variables","decoder_importance","static_variables","static_importance","attention","windows"}.
nlohmann::json toJson(const TftInterpretation& interpretation);

} // namespace foxhunt
