#pragma once
// JSON forms of evaluation results, shared by the session, the CLI and reports.

#include "engine/env/evaluation.h"
#include "engine/forecast/forecast_metrics.h"

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

} // namespace foxhunt
