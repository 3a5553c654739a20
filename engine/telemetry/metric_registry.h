// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Every metric a run records, defined once: the name it is stored under, what
// people call it, its unit, who records it and the chart it is drawn in. The
// session emits these names; the dashboard builds its charts from the groups;
// the run history, the report and the CLI label and format by the same table.
// A new metric is one line in metric_registry.cpp.

#include <string>
#include <string_view>
#include <vector>

namespace foxhunt::metrics {

/// Names the engine emits (the compiler checks the spelling at every use).
inline constexpr std::string_view kLoss = "loss";
inline constexpr std::string_view kLossScale = "loss_scale";
inline constexpr std::string_view kGradNorm = "grad_norm";
inline constexpr std::string_view kLatencyMs = "latency_ms";
inline constexpr std::string_view kParamBytes = "param_bytes";
inline constexpr std::string_view kGradBytes = "grad_bytes";
inline constexpr std::string_view kOptimizerBytes = "optimizer_bytes";
inline constexpr std::string_view kActivationBytes = "activation_bytes";
inline constexpr std::string_view kRssBytes = "rss_bytes";
inline constexpr std::string_view kCudaAllocatedBytes = "cuda_allocated_bytes";
inline constexpr std::string_view kCudaPeakBytes = "cuda_peak_bytes";
inline constexpr std::string_view kEquityTicks = "equity_ticks";
inline constexpr std::string_view kBuyHoldEquityTicks = "buy_hold_equity_ticks";
inline constexpr std::string_view kPosition = "position";
inline constexpr std::string_view kEpisodePnlTicks = "episode_pnl_ticks";
inline constexpr std::string_view kForecastQ10 = "forecast_q10";
inline constexpr std::string_view kForecastQ50 = "forecast_q50";
inline constexpr std::string_view kForecastQ90 = "forecast_q90";
inline constexpr std::string_view kRealised = "realised";
inline constexpr std::string_view kThroughputRank = "throughput_rank";
inline constexpr std::string_view kAllreduceMs = "allreduce_ms";
inline constexpr std::string_view kQMean = "q_mean";
inline constexpr std::string_view kEpsilon = "epsilon";
inline constexpr std::string_view kLearningRate = "learning_rate";
inline constexpr std::string_view kTdError = "td_error";
inline constexpr std::string_view kUpdateMs = "update_ms";
inline constexpr std::string_view kStepMs = "step_ms";
inline constexpr std::string_view kPolicyLoss = "policy_loss";
inline constexpr std::string_view kValueLoss = "value_loss";
inline constexpr std::string_view kEntropy = "entropy";
inline constexpr std::string_view kApproxKl = "approx_kl";
inline constexpr std::string_view kClipFraction = "clip_fraction";
inline constexpr std::string_view kExplainedVariance = "explained_variance";
inline constexpr std::string_view kSkippedSteps = "skipped_steps";
inline constexpr std::string_view kInt8Degradation = "int8_degradation";
inline constexpr std::string_view kInt8Rejected = "int8_rejected";

/// The pseudo-model under which process-wide samples (rss_bytes) are stored.
inline constexpr std::string_view kSessionModel = "session";

enum class Unit { None, Milliseconds, Bytes, Ticks, LogReturn, SamplesPerSecond, Count, Fraction };

/// Who records a metric, and which models' sections show a chart.
enum class Family { Any, Agent, Forecaster, Session };

/// How a line's points are thinned for drawing: a band's lower edge keeps minima, its upper maxima.
enum class Edge { None, Lower, Upper };

struct Metric {
    std::string_view name;  ///< stored name; for a per-rank metric the prefix of "<name><rank>"
    std::string_view label; ///< for people: a chart's legend and read-out, a table's row
    Unit unit = Unit::None;
    Family family = Family::Any;
    std::string_view chart = {};  ///< key of the chart it is drawn in; "" = tables and CSV only
    std::string_view legend = {}; ///< a shorter name for a crowded legend ("" = the label)
    bool rightAxis = false;       ///< drawn against the chart's right-hand axis (a much larger scale)
    Edge edge = Edge::None;
    bool perRank = false; ///< one series per rank: "<name>0", "<name>1", …
};

struct Chart {
    std::string_view key;
    std::string_view title;
    Unit unit = Unit::None;
    Family family = Family::Any; ///< Any: every model's section; Agent / Forecaster: those only
    bool smoothable = false;     ///< noisy enough that a moving average helps
    bool zeroLine = false;       ///< a flat reference at 0 across the x range
    bool band = false;           ///< the chart's first two metrics are the lower and upper edge of an area
    bool onDemand = false;       ///< made when a model first records one of its metrics (multi-process runs only)
};

/// Every metric, in the order tables list them.
const std::vector<Metric>& all();
/// Every chart, in the order a model's section shows them.
const std::vector<Chart>& charts();
/// The metrics drawn in a chart, in drawing order.
std::vector<const Metric*> inChart(std::string_view chart);
/// The chart with this key, or nullptr.
const Chart* chart(std::string_view key);

/// The metric a stored name belongs to (a per-rank name such as "throughput_rank3" finds
/// "throughput_rank"), or nullptr for a name no registry line describes.
const Metric* find(std::string_view storedName);
/// The rank a per-rank stored name carries ("throughput_rank3" -> 3), or -1 (also for
/// spellings such as "rank01" that would make a second series for one rank).
int rankOf(std::string_view storedName, const Metric& metric);

/// A unit's short symbol for axes and headers ("ms", "bytes", "ticks"; "" for none).
std::string_view symbol(Unit unit);
/// A stored name for people: its label, with the rank for a per-rank one; unknown names as stored.
std::string label(std::string_view storedName);

} // namespace foxhunt::metrics
