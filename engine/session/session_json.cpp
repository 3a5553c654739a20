// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/session_json.h"

#include "engine/data/market_time.h"
#include "engine/precision/int8_evaluation_json.h"
#include "models/process.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace foxhunt {

namespace {

/// JSON has no infinity: a profit factor with no losing trade is reported as null.
nlohmann::json finite(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

} // namespace

nlohmann::json toJson(const PerformanceMetrics& m)
{
    return {{"pnl_usd", finite(m.pnlUsd)},
            {"pnl_ticks", finite(m.pnlTicks)},
            {"sharpe", finite(m.sharpe)},
            {"sortino", finite(m.sortino)},
            {"sharpe_per_bar", finite(m.sharpePerBar)},
            {"max_drawdown_usd", finite(m.maxDrawdownUsd)},
            {"calmar", finite(m.calmar)},
            {"win_rate", finite(m.winRate)},
            {"profit_factor", finite(m.profitFactor)},
            {"trades", m.trades},
            {"turnover", m.turnover},
            {"steps", m.steps},
            {"days", m.dailyPnlUsd.size()},
            {"daily_pnl_usd", m.dailyPnlUsd}};
}

nlohmann::json toJson(const EvaluationReport& r)
{
    // At most ~400 points per curve, the last step always kept; both curves share the steps.
    auto thinned = [](const std::vector<double>& curve) {
        nlohmann::json out = nlohmann::json::array();
        const std::size_t n = curve.size();
        const std::size_t stride = n > 400 ? (n + 399) / 400 : 1;
        for (std::size_t i = 0; i < n; i += stride) out.push_back(curve[i]);
        if (n > 0 && (n - 1) % stride != 0) out.push_back(curve.back());
        return out;
    };
    nlohmann::json days = nlohmann::json::array();
    for (std::int64_t d : r.tradingDays) days.push_back(formatDate(d));
    return {{"policy", toJson(r.policy)},
            {"flat", toJson(r.flat)},
            {"buy_and_hold", toJson(r.buyAndHold)},
            {"episodes", r.episodes},
            {"trading_days", days},
            {"equity_usd", thinned(r.policyEquityUsd)},
            {"buy_and_hold_equity_usd", thinned(r.buyAndHoldEquityUsd)}};
}

nlohmann::json toJson(const ForecastMetrics& m)
{
    return {{"quantile_loss", finite(m.quantileLoss)},
            {"crps", finite(m.crps)},
            {"median_mae", finite(m.medianMae)},
            {"directional_accuracy", finite(m.directionalAccuracy)},
            {"interval_coverage", finite(m.intervalCoverage)},
            {"interval_nominal", finite(m.intervalNominal)},
            {"count", m.count}};
}

nlohmann::json toJson(const ForecastEvaluation& e)
{
    nlohmann::json fractions = nlohmann::json::array();
    for (std::size_t j = 0; j < e.pit.counts.size(); ++j) fractions.push_back(finite(e.pit.fraction(j)));
    const stats::DieboldMarianoResult& dm = e.comparison.test;
    return {
        {"model", toJson(e.model)},
        {"zero_return", toJson(e.zeroReturn)},
        {"persistence", toJson(e.persistence)},
        {"climatology", toJson(e.climatology)},
        {"skill",
         {{"quantile_loss_vs_climatology", finite(e.skillQuantileLoss)}, {"crps_vs_climatology", finite(e.skillCrps)}}},
        {"calibration",
         {{"observed", finite(e.coverage.observed)},
          {"nominal", finite(e.coverage.nominal)},
          {"gap", finite(e.coverage.gap)},
          {"count", e.coverage.n},
          {"pit",
           {{"edges", e.pit.edges},
            {"counts", e.pit.counts},
            {"fractions", fractions},
            {"expected", e.pit.expected}}}}},
        {"diebold_mariano",
         {{"baseline", e.comparison.baseline},
          {"mean_differential", finite(dm.meanDifferential)},
          {"statistic", finite(dm.statistic)},
          {"p_value", finite(dm.pValue)},
          {"n", dm.n},
          {"horizon", dm.horizon},
          {"valid", dm.valid}}},
        {"windows", e.windows}};
}

nlohmann::json toJson(const Int8Evaluation& e, int latencyRepeats)
{
    nlohmann::json j = toJson(e);
    for (auto& [name, latency] : j["latency"].items()) latency["count"] = latencyRepeats;
    return j;
}

namespace {

nlohmann::json blasJson()
{
    const models::BlasInfo blas = models::blasInfo();
    return {{"library", blas.library},
            {"kernels", blas.kernels},
            {"forced_by", blas.forcedBy},
            {"summary", blas.summary()}};
}

} // namespace

nlohmann::json machineJson(const models::hardware::MachineInfo& machine)
{
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : machine.gpus)
        gpus.push_back(
            {{"index", g.index}, {"name", g.name}, {"capability", g.capability()}, {"memory_bytes", g.memory_bytes}});
    return {{"summary", machine.summary()},
            {"cpu", machine.cpu_model},
            {"logical_cpus", machine.logical_cpus},
            {"physical_cores", machine.physical_cores},
            {"cpu_features", machine.cpu.names()},
            {"gpus", gpus},
            {"torch", machine.torch_version},
            {"fingerprint", machine.fingerprint()},
            {"blas", blasJson()},
            {"malloc_keep_bytes", models::processSetup().mallocKeepBytes}};
}

nlohmann::json toJson(const TftInterpretation& i)
{
    return {{"encoder_variables", i.encoderVariables},
            {"encoder_importance", i.encoderImportance},
            {"decoder_variables", i.decoderVariables},
            {"decoder_importance", i.decoderImportance},
            {"static_variables", i.staticVariables},
            {"static_importance", i.staticImportance},
            {"attention", i.attention},
            {"windows", i.windows}};
}

} // namespace foxhunt
