// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain reports a ForecasterTrainer gives beside its training steps: the AMP
// state, an INT8 refresh check and the TFT's interpretation. No torch.

#include "engine/precision/int8_evaluation.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace foxhunt {

/// Mixed-precision state of a forecaster's training.
struct ForecastAmpStatus {
    bool enabled = false;          ///< forward passes run under autocast
    std::string dtype = "fp32";    ///< "bf16", "f16", or "fp32" when disabled
    double lossScale = 1.0;        ///< current loss scale (1 without FP16 scaling)
    std::int64_t skippedSteps = 0; ///< optimizer steps skipped for inf/NaN gradients since construction
};

/// How refreshInt8() quantizes and where it measures.
struct Int8RefreshOptions {
    std::size_t windows = 64;           ///< validation windows, spread evenly over the range (the same ones each call)
    std::size_t calibrationSamples = 0; ///< training windows for static activation ranges (0: dynamic ranges)
    Int8Serving serving;                ///< kernel choice and the accuracy gate
};

/// One refresh of the INT8 copy against the FP32 weights it was made from.
struct Int8Refresh {
    double fp32Loss = 0.0;    ///< mean quantile loss of the FP32 model on the windows (standardised units)
    double int8Loss = 0.0;    ///< same for the fresh INT8 copy
    double degradation = 0.0; ///< (int8Loss - fp32Loss) / fp32Loss
    std::size_t windows = 0;  ///< windows measured
    bool served = true;       ///< the gate kept the copy (false: FP32 answers until a refresh passes)
    std::string verdict;      ///< the gate's reason, with the figures
    std::string backend;      ///< the kernels chosen, e.g. "onednn 4, fp32 2"
};

/// What a Temporal Fusion Transformer attends to, averaged over a set of windows.
struct TftInterpretation {
    std::vector<std::string> encoderVariables;  ///< past inputs: observed features, then known covariates
    std::vector<double> encoderImportance;      ///< encoder variable-selection weights, mean over time and windows
    std::vector<std::string> decoderVariables;  ///< known-future inputs
    std::vector<double> decoderImportance;      ///< decoder variable-selection weights, mean over time and windows
    std::vector<std::string> staticVariables;   ///< static covariates (may be empty)
    std::vector<double> staticImportance;       ///< static variable-selection weights, mean over windows
    std::vector<std::vector<double>> attention; ///< [horizon][past + horizon], mean over heads and windows
    std::size_t windows = 0;                    ///< windows averaged
};

} // namespace foxhunt
