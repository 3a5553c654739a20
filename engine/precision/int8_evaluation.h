// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What an INT8 inference copy costs and saves against its FP32 model: one struct for the
// forecasters and the agents. Std-only.

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>
#include <string>

namespace foxhunt::models::precision {
class KernelTimingCache;
}

namespace foxhunt {

/// Which weights answer a model's inference: the FP32 model being trained, or its INT8 inference
/// copy (refreshed from it on a schedule).
enum class InferenceWeights {
    Fp32, ///< the model being trained
    Int8, ///< the kept INT8 inference copy
};

/// Latency percentiles of repeated forward passes, in microseconds.
struct LatencyPercentiles {
    double p50 = 0.0;      ///< median
    double p95 = 0.0;      ///< 95th percentile
    double p99 = 0.0;      ///< 99th percentile
    std::size_t count = 0; ///< timed passes behind the percentiles
};

/// One int8 kernel measured at one layer shape.
struct Int8KernelTime {
    std::string backend;        ///< "fp32", "dequantize", "onednn", "static", "cuda-int-mm"
    double micros = 0.0;        ///< median microseconds per call
    double relativeError = 0.0; ///< ||y - y_fp32|| / ||y_fp32|| on the timing input
};

/// The kernel one int8 layer serves one of its input shapes with, and what it was chosen from.
struct Int8LayerKernel {
    std::string layer;                   ///< the layer's path in the model ("blocks.0.in_proj")
    std::string shape;                   ///< "in x out @ rows" (" static" with a calibrated range)
    std::string backend;                 ///< the backend served
    bool cached = false;                 ///< the timings came from the store (measured in an earlier run)
    std::vector<Int8KernelTime> timings; ///< every candidate's measurement (empty for a choice by hand)
};

/// Serving an INT8 copy needs it to stay within this relative loss degradation of FP32 (seed 003: < 5 %).
inline constexpr double kDefaultInt8MaxDegradation = 0.05;
/// In `auto`, an INT8 copy slower than this multiple of FP32 at the serving batch is not served.
inline constexpr double kInt8MaxSlowdown = 1.05;

/// How an INT8 copy picks its kernels and when it may answer inference: shared by the forecasters'
/// and the agents' INT8 options.
struct Int8Serving {
    /// "auto": time each layer shape's candidate kernels on this machine and serve the fastest
    /// accurate one; or one backend by hand for every layer ("fp32", "dequantize", "onednn",
    /// "static", "cuda-int-mm").
    std::string backend = "auto";
    /// A copy whose loss degrades by more than this share against FP32 is not served.
    double maxDegradation = kDefaultInt8MaxDegradation;
    /// Where kernel timings persist between runs (null: kept for this process only).
    models::precision::KernelTimingCache* cache = nullptr;
};

/// How a model's evaluateInt8() builds its INT8 copy and times it: what the forecasters and the
/// agents share (AgentInt8Options adds where an agent measures).
struct Int8EvaluationOptions {
    std::size_t calibrationSamples =
        0; ///< training inputs (windows, observations) for static activation ranges (0: dynamic, per batch)
    int latencyRepeats = 50; ///< timed forward passes per batch size and model
    Int8Serving serving;     ///< kernel choice and the gate (a refused copy is not served)
};

/// The INT8 inference copy against the FP32 model on a fixed set of inputs.
struct Int8Evaluation {
    double fp32Loss = 0.0;              ///< loss of the FP32 model (see the evaluating class for which loss), float64
    double int8Loss = 0.0;              ///< same for the INT8 copy
    double degradation = 0.0;           ///< (int8Loss - fp32Loss) / fp32Loss
    bool meetsGoal = false;             ///< degradation <= 2%
    bool flagged = false;               ///< degradation > 5%
    std::size_t fp32Bytes = 0;          ///< parameter and buffer bytes of the FP32 model
    std::size_t int8Bytes = 0;          ///< same for the INT8 copy
    double bytesRatio = 0.0;            ///< int8Bytes / fp32Bytes (goal <= 0.30)
    int quantizedLayers = 0;            ///< Linear and LSTM layers swapped for int8
    std::string backend;                ///< int8 backend in use ("onednn", "dequantize", ...)
    bool staticActivations = false;     ///< activation ranges calibrated once (false: per batch)
    std::size_t calibrationSamples = 0; ///< inputs used for calibration (0 with dynamic ranges)
    std::size_t evaluatedSamples = 0;   ///< inputs behind the losses
    std::optional<double> actionAgreement; ///< agents: share of inputs whose deterministic action is identical
    LatencyPercentiles fp32Batch1;         ///< FP32 forward, batch 1
    LatencyPercentiles int8Batch1;         ///< INT8 forward, batch 1
    LatencyPercentiles fp32Batch32;        ///< FP32 forward, batch 32
    LatencyPercentiles int8Batch32;        ///< INT8 forward, batch 32
    std::size_t servingBatch = 32;         ///< the larger serving batch the figures above were taken at
    std::size_t fp32ServingBytes = 0; ///< FP32 weights plus the peak activation bytes of one forward at servingBatch
    std::size_t int8ServingBytes = 0; ///< same for the INT8 copy (0 without the counting allocator)
    std::string kernelMode = "auto";  ///< "auto" (measured per layer) or the backend chosen by hand
    std::vector<Int8LayerKernel> kernels;               ///< per layer and serving shape, in module order
    int measuredShapes = 0;                             ///< distinct layer shapes timed for this copy
    int cachedShapes = 0;                               ///< distinct layer shapes whose timings came from the store
    double maxDegradation = kDefaultInt8MaxDegradation; ///< the gate (int8_max_degradation)
    bool served = true;                                 ///< the gate let the copy answer inference
    std::string verdict;                                ///< why it is or is not served, with the figures

    /// Inferences per second at servingBatch from a P50 latency in microseconds (0 without one).
    static double throughput(const LatencyPercentiles& l, std::size_t batch)
    {
        return l.p50 > 0.0 ? static_cast<double>(batch) * 1e6 / l.p50 : 0.0;
    }

    /// Records both losses and derives degradation (0 when the FP32 loss is 0), meetsGoal and flagged.
    void setLosses(double fp32, double int8)
    {
        fp32Loss = fp32;
        int8Loss = int8;
        degradation = fp32 != 0.0 ? (int8 - fp32) / fp32 : 0.0;
        meetsGoal = degradation <= 0.02;
        flagged = degradation > 0.05;
    }
};

/// Nearest-rank percentiles of `micros` (empty input gives zeros).
LatencyPercentiles latencyPercentiles(std::vector<double> micros);

/// FP32's and INT8's latencies at one batch size, measured together.
struct PairedLatencies {
    LatencyPercentiles fp32; ///< the FP32 model's passes
    LatencyPercentiles int8; ///< the INT8 copy's passes
};

/// A monotonic clock in microseconds; tests inject one.
using MicrosClock = std::function<double()>;

/// Times `repeats` passes of `fp32` and of `int8` in turns, after one untimed warm-up pass of
/// each (first-use packing, allocations): round i runs fp32 then int8 when i is even, int8 then
/// fp32 when it is odd. A change in the machine's load during the measurement (another build, a
/// throttled core) then falls on both models alike instead of on whichever was timed second, so
/// the ratios the INT8 gate compares stay what the machine gives. An empty `clock` is
/// std::chrono::steady_clock.
PairedLatencies timeLatenciesInTurns(const std::function<void()>& fp32, const std::function<void()>& int8, int repeats,
                                     const MicrosClock& clock = {});

} // namespace foxhunt
