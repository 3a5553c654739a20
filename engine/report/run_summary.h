// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run in a line: its settings (precision, device, processes) and each model's
// headline results, read from what the run stored (config, versions and
// evaluations), for the runs table and the compare view. The figures are the
// report's: the same evaluation documents, not a second computation.

#include "engine/store/run_store.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace foxhunt {

/// One model's headline results; NaN where the run has no such figure.
struct ModelResults {
    std::string model;
    double
        validationSharpe; ///< agents: Sharpe of the policy's daily P&L on the validation split, annualised with sqrt(252)
    double testSharpe;    ///< agents: on the test split
    double testPnlUsd;    ///< agents: net P&L on the test split
    double buyHoldPnlUsd;         ///< agents: buy-and-hold's on the same bars
    double quantileLoss;          ///< forecasters: test quantile loss
    double persistenceLoss;       ///< forecasters: the persistence baseline's
    double int8Degradation;       ///< relative validation loss change of the INT8 copy
    double p95LatencyMs;          ///< inference P95 during training (batch 1)
    double peakMemoryBytes;       ///< the sum of the model's memory components at their peaks
    double testMaxDrawdownUsd;    ///< agents: the policy's largest peak-to-trough loss on the test split
    double flatSharpe;            ///< agents: the flat baseline's test Sharpe (NaN: it never varies)
    double flatPnlUsd;            ///< agents: the flat baseline's test P&L
    double flatMaxDrawdownUsd;    ///< agents: the flat baseline's test drawdown
    double buyHoldSharpe;         ///< agents: buy-and-hold's test Sharpe
    double buyHoldMaxDrawdownUsd; ///< agents: buy-and-hold's test drawdown
    double zeroReturnLoss;        ///< forecasters: the zero-return baseline's test quantile loss
    double testSteps;             ///< agents: test bars the policy traded (the Sharpe's observations)
    double testBarsPerYear;       ///< agents, runs stored before daily Sharpe: the bars per year it was annualised with
    std::vector<double> testDailyPnlUsd; ///< agents: the policy's test P&L per trading day (its Sharpe's observations)
    std::vector<double> testEquityUsd;   ///< agents: the policy's test equity curve as stored (thinned)
    // Forecasters, on the test split (NaN where the run did not record them):
    double climatologyLoss = std::numeric_limits<double>::quiet_NaN(); ///< the climatological baseline's quantile loss
    double skillQuantileLoss = std::numeric_limits<double>::quiet_NaN(); ///< 1 - loss / climatology's
    double skillCrps = std::numeric_limits<double>::quiet_NaN();         ///< 1 - CRPS / climatology's
    double coverageObserved = std::numeric_limits<double>::quiet_NaN();  ///< outcomes inside the outer band
    double coverageNominal = std::numeric_limits<double>::quiet_NaN();   ///< what the band should cover
    /// Diebold-Mariano against the best baseline: p-value and mean loss differential (< 0: the model's
    /// loss is lower); NaN where the test was not valid.
    double dmPValue = std::numeric_limits<double>::quiet_NaN();
    double dmMeanDifferential = std::numeric_limits<double>::quiet_NaN();
};

struct RunSummary {
    std::int64_t id = 0;
    std::string precision; ///< "FP32", "BF16", "FP16", "auto: BF16 mamba2, FP32 dqn", each "+ INT8" when served
    std::string device;    ///< "cpu", "cuda:0"
    int processes = 1;
    std::vector<ModelResults> models;
    /// The model's results, or nullptr.
    const ModelResults* find(const std::string& model) const;
};

/// How a measure's figure reads.
enum class MeasureKind { Number, Usd, Fraction, Milliseconds, Bytes };

/// One headline result of a model, as a column of the runs table and a row of the compare view.
struct Measure {
    std::string_view key;   ///< "test_sharpe"
    std::string_view label; ///< "test Sharpe (daily, annualised)"
    bool agents;            ///< DQN and PPO have it
    bool forecasters;       ///< Mamba-2 and the TFT have it
    MeasureKind kind;
    double ModelResults::*field;
    bool higherIsBetter;
    bool shownByDefault; ///< a column of the runs table until the user hides it
};

/// Every measure, in table order.
const std::vector<Measure>& measures();
/// A figure as the tables show it ("-22,937.50 USD", "0.108 ms", "40.0 KiB", "4.1 %"); "" for NaN.
std::string formatMeasure(MeasureKind kind, double value);

/// Reads a run's summary; peak memory comes from its stored memory samples.
RunSummary summarizeRun(const RunStore& runs, const RunInfo& run);
/// The same summary from one run of a report document (runReportJson()'s "runs" entries: config,
/// versions, evaluations and metrics), for the report's summary section.
RunSummary summarizeReportRun(const nlohmann::json& run);

/// A setting whose value differs between runs: its dotted key ("precision.amp",
/// "dqn.hidden") and each run's value as compact JSON ("" where a run lacks it).
struct ConfigDifference {
    std::string key;
    std::vector<std::string> values;
};

/// The settings that differ between the configs (JSON documents), in key order.
/// Arrays are compared whole. Throws std::invalid_argument for a config that is not JSON.
std::vector<ConfigDifference> configDifferences(const std::vector<std::string>& configJsons);

} // namespace foxhunt
