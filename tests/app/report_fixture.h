// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Hand-built report documents (the shape runReportJson() returns) carrying every
// key the report renders, including the ones no stored run has yet (AMP, INT8,
// TFT interpretation, memory metrics), for the report tests.

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace foxhunt::testing {

/// A series of `n` samples, value f(step).
template <class F>
nlohmann::json reportSeries(int n, F&& f)
{
    nlohmann::json s;
    s["step"] = nlohmann::json::array();
    s["value"] = nlohmann::json::array();
    for (int i = 1; i <= n; ++i) {
        s["step"].push_back(i);
        s["value"].push_back(f(i));
    }
    return s;
}

/// One run; `troubled` adds every problem the warnings section must flag.
inline nlohmann::json handBuiltRun(int id, bool troubled)
{
    using nlohmann::json;
    const int n = 400;
    json r;
    r["id"] = id;
    r["name"] = "hand-built <" + std::to_string(id) + "> & co";
    r["status"] = troubled ? "failed" : "finished";
    r["error"] = troubled ? "tft: loss became NaN at step 200" : "";
    r["created"] = "2026-11-30T01:00:00Z";
    r["finished"] = "2026-11-30T01:10:00Z";
    r["duration_s"] = 600.0;
    r["series"] = "ES.c.0";
    r["series_info"] = {{"id", 3}, {"dataset", "GLBX.MDP3"}, {"interval_s", 60}, {"bars", 20000}};
    r["data_from"] = "2021-01-04T00:00:00Z";
    r["data_to"] = "2021-06-30T21:00:00Z";
    r["synthetic"] = troubled;
    r["contracts"] = {"ESH1", "ESM1", "ESU1"};
    r["rolls"] = {{{"time", "2021-03-12T00:00:00Z"}, {"from", "ESH1"}, {"to", "ESM1"}, {"price_gap", -7.25}},
                  {{"time", "2021-06-11T00:00:00Z"}, {"from", "ESM1"}, {"to", "ESU1"}, {"price_gap", -4.5}}};
    r["split"] = {{"train", {{"from", "2021-01-04T00:00:00Z"}, {"to", "2021-05-01T00:00:00Z"}, {"bars", 14000}}},
                  {"validation", {{"from", "2021-05-01T00:00:00Z"}, {"to", "2021-06-01T00:00:00Z"}, {"bars", 3000}}},
                  {"test", {{"from", "2021-06-01T00:00:00Z"}, {"to", "2021-06-30T22:00:00Z"}, {"bars", 3000}}}};
    r["config"] = {{"models", {"dqn", "tft"}},
                   {"steps", n},
                   {"seed", 7},
                   {"device", "cpu"},
                   {"threads", 1},
                   {"speed", 0.0},
                   {"ensemble", false},
                   {"train_fraction", 0.7},
                   {"validation_fraction", 0.15},
                   {"precision",
                    {{"amp", true},
                     {"amp_dtype", "bf16"},
                     {"loss_scale", 1.0},
                     {"dynamic_loss_scale", false},
                     {"growth_factor", 2.0},
                     {"backoff_factor", 0.5},
                     {"growth_interval", 2000},
                     {"int8", true},
                     {"int8_static_activations", true},
                     {"calibration_bars", 1000},
                     {"int8_refresh_every", 5000}}},
                   {"env", {{"commission_usd", 2.5}, {"slippage_ticks", 1.0}}},
                   {"dqn", {{"learning_rate", 0.001}, {"batch_size", 64}, {"gamma", 0.9}}},
                   {"tft", {{"hidden_size", 32}, {"n_heads", 4}, {"learning_rate", 0.001}}}};
    r["versions"] = {{"foxhunt", "0.1.0"}, {"torch", "1.13.1"}, {"cuda", false}, {"ranks", 2}, {"collectives", "nccl"}};

    json& m = r["metrics"];
    for (const char* model : {"dqn", "tft"}) {
        m[model]["loss"] = reportSeries(n, [&](int i) {
            if (troubled && std::string(model) == "tft" && i == 200) return std::nan("");
            return 1.0 / (1.0 + 0.01 * i);
        });
        m[model]["loss_scale"] = reportSeries(n, [](int i) { return i < 200 ? 1024.0 : 512.0; });
        m[model]["grad_norm"] = reportSeries(n, [](int i) { return 2.0 / std::sqrt(i); });
        m[model]["latency_ms"] = reportSeries(n, [](int i) { return 0.2 + 0.001 * (i % 50); });
        m[model]["param_bytes"] = reportSeries(n, [](int) { return 120000.0; });
        m[model]["grad_bytes"] = reportSeries(n, [](int) { return 120000.0; });
        m[model]["optimizer_bytes"] = reportSeries(n, [](int) { return 240000.0; });
        m[model]["activation_bytes"] = reportSeries(n, [](int i) { return 50000.0 + 10.0 * (i % 7); });
        m[model]["skipped_steps"] = reportSeries(n, [&](int i) { return troubled ? i / 3 : i / 200; });
        m[model]["int8_degradation"] = reportSeries(n, [&](int) { return troubled ? 0.09 : 0.01; });
    }
    m["dqn"]["equity_ticks"] = reportSeries(n, [](int i) { return 0.5 * i; });
    m["dqn"]["buy_hold_equity_ticks"] = reportSeries(n, [](int i) { return 0.3 * i; });
    m["dqn"]["position"] = reportSeries(n, [](int i) { return i % 3 - 1; });
    m["tft"]["forecast_q10"] = reportSeries(n, [](int i) { return -0.001 + 1e-6 * i; });
    m["tft"]["forecast_q50"] = reportSeries(n, [](int) { return 0.0; });
    m["tft"]["forecast_q90"] = reportSeries(n, [](int i) { return 0.001 - 1e-6 * i; });
    m["tft"]["realised"] = reportSeries(n, [](int i) { return 0.0005 * std::sin(i); });
    m["session"]["rss_bytes"] = reportSeries(n, [](int i) { return 2.0e8 + 1000.0 * i; });

    const json perf = {{"pnl_usd", 125.0},
                       {"pnl_ticks", 10.0},
                       {"sharpe", 0.8},
                       {"sortino", 1.1},
                       {"max_drawdown_usd", -50.0},
                       {"calmar", 2.5},
                       {"win_rate", 0.55},
                       {"profit_factor", 1.3},
                       {"trades", 12},
                       {"turnover", 24},
                       {"steps", 3000},
                       {"sharpe_per_bar", 0.0123},
                       {"days", 3},
                       {"daily_pnl_usd", {50.0, -25.0, 100.0}}};
    json flat = perf;
    for (const char* k : {"pnl_usd", "pnl_ticks", "sharpe", "sortino", "max_drawdown_usd", "calmar", "win_rate"})
        flat[k] = 0.0;
    const json latency = {{"p50_ms", 0.21}, {"p95_ms", 0.25}, {"p99_ms", 0.3}, {"count", 400}};
    const json int8 = {
        {"fp32_loss", 0.50},
        {"int8_loss", troubled ? 0.545 : 0.505},
        {"degradation", troubled ? 0.09 : 0.01},
        {"fp32_bytes", 480000},
        {"int8_bytes", 130000},
        {"bytes_ratio", 0.27},
        {"quantized_layers", 6},
        {"backend", "reference"},
        {"static_activations", true},
        {"calibration_bars", 1000},
        {"action_agreement", 0.97},
        {"latency", {{"fp32_b1", latency}, {"int8_b1", latency}, {"fp32_b32", latency}, {"int8_b32", latency}}}};
    const json amp = {{"enabled", true},
                      {"dtype", "bf16"},
                      {"final_scale", 512.0},
                      {"skipped_steps", troubled ? 133 : 2},
                      {"scale_changes", 3}};
    json equity = json::array();
    for (int i = 0; i < 100; ++i) equity.push_back(1.25 * i);
    json& e = r["evaluations"];
    e["dqn"]["validation"] = {{"policy", perf},       {"flat", flat}, {"buy_and_hold", perf},
                              {"equity_usd", equity}, {"int8", int8}, {"amp", amp}};
    e["dqn"]["test"] = {{"policy", perf}, {"flat", flat}, {"buy_and_hold", perf}, {"equity_usd", equity}};
    e["dqn"]["training"] = {{"steps", n}, {"param_bytes", 120000}, {"latency", latency}};
    const json fm = {{"quantile_loss", 0.0012},
                     {"median_mae", 0.0009},
                     {"directional_accuracy", 0.52},
                     {"interval_coverage", 0.79},
                     {"count", 900}};
    json attention = json::array();
    for (int h = 0; h < 5; ++h) {
        json row = json::array();
        for (int c = 0; c < 65; ++c) row.push_back(std::exp(-0.1 * std::abs(c - 60 - h)));
        attention.push_back(row);
    }
    e["tft"]["validation"] = {{"model", fm},
                              {"zero_return", fm},
                              {"persistence", fm},
                              {"int8", int8},
                              {"amp", amp},
                              {"interpretation",
                               {{"encoder_variables", {"log_return", "range", "volume_z", "minute_of_day"}},
                                {"encoder_importance", {0.4, 0.3, 0.2, 0.1}},
                                {"decoder_variables", {"minute_of_day", "day_of_week"}},
                                {"decoder_importance", {0.7, 0.3}},
                                {"static_variables", {"contract"}},
                                {"static_importance", {1.0}},
                                {"attention", attention}}}};
    e["tft"]["test"] = {{"model", fm},
                        {"zero_return", fm},
                        {"persistence", fm},
                        {"climatology", fm},
                        {"skill", {{"quantile_loss_vs_climatology", 0.031}, {"crps_vs_climatology", 0.027}}},
                        {"calibration",
                         {{"observed", 0.83},
                          {"nominal", 0.8},
                          {"gap", 0.03},
                          {"count", 900},
                          {"pit",
                           {{"edges", {0.0, 0.1, 0.5, 0.9, 1.0}},
                            {"counts", {80, 370, 370, 80}},
                            {"fractions", {0.0889, 0.4111, 0.4111, 0.0889}},
                            {"expected", {0.1, 0.4, 0.4, 0.1}}}}}},
                        {"diebold_mariano",
                         {{"baseline", "climatology"},
                          {"mean_differential", -1e-6},
                          {"statistic", -0.82},
                          {"p_value", 0.41},
                          {"n", 180},
                          {"horizon", 5},
                          {"valid", true}}}};
    e["tft"]["training"] = {{"steps", n}, {"param_bytes", 360000}, {"latency", latency}};
    return r;
}

/// A report of `runs` hand-built runs; the first is troubled when `troubled`.
inline nlohmann::json handBuiltReport(int runs, bool troubled)
{
    nlohmann::json report = {{"foxhunt_version", "0.1.0"},
                             {"generated", "2026-11-30T02:00:00Z"},
                             {"machine", {{"cpu", "Test CPU @ 1 GHz"}, {"hardware_threads", 2}, {"gpu", nullptr}}},
                             {"runs", nlohmann::json::array()}};
    for (int i = 0; i < runs; ++i) report["runs"].push_back(handBuiltRun(i + 1, troubled && i == 0));
    return report;
}

} // namespace foxhunt::testing
