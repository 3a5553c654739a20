#pragma once
// What an INT8 inference copy costs and saves against its FP32 model: one struct for the
// forecasters and the agents. Std-only.

#include <cstddef>
#include <optional>
#include <vector>
#include <string>

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

/// The INT8 inference copy against the FP32 model on a fixed set of inputs.
struct Int8Evaluation {
    double fp32Loss = 0.0;          ///< loss of the FP32 model (see the evaluating class for which loss), float64
    double int8Loss = 0.0;          ///< same for the INT8 copy
    double degradation = 0.0;       ///< (int8Loss - fp32Loss) / fp32Loss
    bool meetsGoal = false;         ///< degradation <= 2%
    bool flagged = false;           ///< degradation > 5%
    std::size_t fp32Bytes = 0;      ///< parameter and buffer bytes of the FP32 model
    std::size_t int8Bytes = 0;      ///< same for the INT8 copy
    double bytesRatio = 0.0;        ///< int8Bytes / fp32Bytes (goal <= 0.30)
    int quantizedLayers = 0;        ///< Linear and LSTM layers swapped for int8
    std::string backend;            ///< int8 backend in use ("onednn", "dequantize", ...)
    bool staticActivations = false; ///< activation ranges calibrated once (false: per batch)
    std::size_t calibrationSamples = 0; ///< inputs used for calibration (0 with dynamic ranges)
    std::size_t evaluatedSamples = 0;   ///< inputs behind the losses
    std::optional<double> actionAgreement; ///< agents: share of inputs whose deterministic action is identical
    LatencyPercentiles fp32Batch1;  ///< FP32 forward, batch 1
    LatencyPercentiles int8Batch1;  ///< INT8 forward, batch 1
    LatencyPercentiles fp32Batch32; ///< FP32 forward, batch 32
    LatencyPercentiles int8Batch32; ///< INT8 forward, batch 32

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

} // namespace foxhunt
