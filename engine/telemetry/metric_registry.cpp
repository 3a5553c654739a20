// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/telemetry/metric_registry.h"

#include <algorithm>
#include <charconv>

namespace foxhunt::metrics {

namespace {

/// The most ranks a per-rank name may carry (the engine runs at most 256 processes).
constexpr int kMaxRanks = 256;

} // namespace

const std::vector<Chart>& charts()
{
    static const std::vector<Chart> table = {
        {.key = "loss", .title = "loss", .smoothable = true},
        {.key = "loss_scale", .title = "loss scale"},
        {.key = "grad_norm", .title = "gradient norm", .smoothable = true},
        {.key = "latency", .title = "inference latency", .unit = Unit::Milliseconds, .smoothable = true},
        {.key = "memory", .title = "memory", .unit = Unit::Bytes},
        {.key = "equity",
         .title = "equity vs flat and buy-and-hold",
         .unit = Unit::Ticks,
         .family = Family::Agent,
         .zeroLine = true},
        {.key = "forecast",
         .title = "forecast q10..q90, q50 vs realised",
         .unit = Unit::LogReturn,
         .family = Family::Forecaster,
         .band = true},
        {.key = "throughput", .title = "throughput per rank", .unit = Unit::SamplesPerSecond, .onDemand = true},
        {.key = "allreduce",
         .title = "gradient all-reduce",
         .unit = Unit::Milliseconds,
         .smoothable = true,
         .onDemand = true},
        // Runs on a CUDA device only: the caching allocator's bytes attributed to this model's step.
        {.key = "cuda_memory", .title = "CUDA memory (caching allocator)", .unit = Unit::Bytes, .onDemand = true},
    };
    return table;
}

const std::vector<Metric>& all()
{
    using enum Unit;
    static const std::vector<Metric> table = {
        {.name = kLoss, .label = "loss", .chart = "loss"},
        {.name = kLossScale, .label = "loss scale", .chart = "loss_scale"},
        {.name = kGradNorm, .label = "grad norm", .chart = "grad_norm"},
        {.name = kLatencyMs, .label = "latency ms", .unit = Milliseconds, .chart = "latency"},
        // The process RSS is hundreds of MiB and a model's own tensors may be a few KiB: the RSS
        // gets the right-hand axis so both stay readable.
        {.name = kParamBytes, .label = "params", .unit = Bytes, .chart = "memory", .legend = "param"},
        {.name = kGradBytes, .label = "grads", .unit = Bytes, .chart = "memory", .legend = "grad"},
        {.name = kOptimizerBytes, .label = "optimizer", .unit = Bytes, .chart = "memory", .legend = "optim"},
        {.name = kActivationBytes, .label = "activations", .unit = Bytes, .chart = "memory", .legend = "activ"},
        {.name = kRssBytes,
         .label = "process RSS",
         .unit = Bytes,
         .family = Family::Session,
         .chart = "memory",
         .legend = "RSS →",
         .rightAxis = true},
        {.name = kEquityTicks, .label = "equity", .unit = Ticks, .family = Family::Agent, .chart = "equity"},
        {.name = kBuyHoldEquityTicks,
         .label = "buy and hold",
         .unit = Ticks,
         .family = Family::Agent,
         .chart = "equity"},
        {.name = kForecastQ10,
         .label = "q10",
         .unit = LogReturn,
         .family = Family::Forecaster,
         .chart = "forecast",
         .edge = Edge::Lower},
        {.name = kForecastQ90,
         .label = "q90",
         .unit = LogReturn,
         .family = Family::Forecaster,
         .chart = "forecast",
         .edge = Edge::Upper},
        {.name = kForecastQ50, .label = "q50", .unit = LogReturn, .family = Family::Forecaster, .chart = "forecast"},
        {.name = kRealised, .label = "realised", .unit = LogReturn, .family = Family::Forecaster, .chart = "forecast"},
        {.name = kThroughputRank, .label = "rank", .unit = SamplesPerSecond, .chart = "throughput", .perRank = true},
        {.name = kAllreduceMs, .label = "slowest rank ms", .unit = Milliseconds, .chart = "allreduce"},
        {.name = kCudaAllocatedBytes, .label = "allocated after step", .unit = Bytes, .chart = "cuda_memory"},
        {.name = kCudaPeakBytes, .label = "peak during step", .unit = Bytes, .chart = "cuda_memory"},
        // Recorded, listed in tables and CSV, not charted.
        {.name = kPosition, .label = "position", .unit = Count, .family = Family::Agent},
        {.name = kEpisodePnlTicks, .label = "episode P&L", .unit = Ticks, .family = Family::Agent},
        {.name = kQMean, .label = "mean Q", .family = Family::Agent},
        {.name = kEpsilon, .label = "exploration epsilon", .unit = Fraction, .family = Family::Agent},
        {.name = kTdError, .label = "TD error", .family = Family::Agent},
        {.name = kUpdateMs, .label = "update ms", .unit = Milliseconds, .family = Family::Agent},
        {.name = kPolicyLoss, .label = "policy loss", .family = Family::Agent},
        {.name = kValueLoss, .label = "value loss", .family = Family::Agent},
        {.name = kEntropy, .label = "entropy", .family = Family::Agent},
        {.name = kApproxKl, .label = "approx KL", .family = Family::Agent},
        {.name = kClipFraction, .label = "clip fraction", .unit = Fraction, .family = Family::Agent},
        {.name = kExplainedVariance, .label = "explained variance", .unit = Fraction, .family = Family::Agent},
        {.name = kLearningRate, .label = "learning rate"},
        {.name = kStepMs, .label = "step ms", .unit = Milliseconds},
        {.name = kSkippedSteps, .label = "skipped steps", .unit = Count},
        {.name = kInt8Degradation, .label = "INT8 degradation", .unit = Fraction},
        {.name = kInt8Rejected, .label = "INT8 copy rejected", .unit = Count},
    };
    return table;
}

std::vector<const Metric*> inChart(std::string_view key)
{
    // In table order, which puts a band's lower and upper edge first.
    std::vector<const Metric*> out;
    for (const Metric& m : all())
        if (m.chart == key) out.push_back(&m);
    return out;
}

const Chart* chart(std::string_view key)
{
    const auto& table = charts();
    const auto it = std::find_if(table.begin(), table.end(), [&](const Chart& c) { return c.key == key; });
    return it == table.end() ? nullptr : &*it;
}

int rankOf(std::string_view storedName, const Metric& metric)
{
    if (!metric.perRank || storedName.size() <= metric.name.size() || !storedName.starts_with(metric.name)) return -1;
    const std::string_view suffix = storedName.substr(metric.name.size());
    // Only the canonical spelling, so "rank01" or "rank+1" cannot make a second line for rank 1.
    if (suffix.size() > 1 && suffix.front() == '0') return -1;
    int rank = -1;
    const auto [end, error] = std::from_chars(suffix.data(), suffix.data() + suffix.size(), rank);
    if (error != std::errc() || end != suffix.data() + suffix.size() || rank < 0 || rank >= kMaxRanks) return -1;
    return rank;
}

const Metric* find(std::string_view storedName)
{
    for (const Metric& m : all())
        if (m.perRank ? rankOf(storedName, m) >= 0 : m.name == storedName) return &m;
    return nullptr;
}

std::string_view symbol(Unit unit)
{
    switch (unit) {
    case Unit::None: return "";
    case Unit::Milliseconds: return "ms";
    case Unit::Bytes: return "bytes";
    case Unit::Ticks: return "ticks";
    case Unit::LogReturn: return "log return";
    case Unit::SamplesPerSecond: return "samples/s";
    case Unit::Count: return "";
    case Unit::Fraction: return "";
    }
    return "";
}

std::string label(std::string_view storedName)
{
    const Metric* m = find(storedName);
    if (!m) return std::string(storedName);
    if (!m->perRank) return std::string(m->label);
    return std::string(m->label) + ' ' + std::to_string(rankOf(storedName, *m));
}

} // namespace foxhunt::metrics
