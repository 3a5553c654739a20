// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A quantile forecaster's network as ForecasterTrainer drives it (Mamba-2, TFT): its module for
// the optimizer and checkpoints, one forward to quantiles, an INT8 copy of itself and, where the
// network has them, variable importances and attention. The trainer has no branch on which
// network it holds: a new forecaster is one ForecastNet and one case in makeForecastNet().
// LibTorch header, for the forecast sources only.

#include "engine/forecast/forecaster_trainer.h"
#include "models/mamba2/mamba2_forecaster.h"
#include "models/precision/quantize.h"
#include "models/tft/tft.h"

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace foxhunt::detail {

/// The sizes a forecaster's network is built for.
struct ForecastNetShape {
    std::int64_t inputs = 0;    ///< past features per step (observed and known)
    std::int64_t known = 0;     ///< known-future features per step
    std::int64_t statics = 0;   ///< static covariates
    std::int64_t horizon = 0;   ///< steps forecast
    std::int64_t quantiles = 0; ///< quantile levels per step
};

/// Sums over windows of what an interpreting network explains, in float64.
struct InterpretationSums {
    torch::Tensor encoder;   ///< encoder variable importances [F+K]
    torch::Tensor decoder;   ///< decoder variable importances [K]
    torch::Tensor statics;   ///< static variable importances [S]
    torch::Tensor attention; ///< attention over the past, averaged over heads [H, L+H]
};

/// What a forecaster's network offers the trainer.
class ForecastNet {
public:
    /// Runs calibration windows through a network (the float copy being quantized).
    using Calibration = std::function<void(ForecastNet&)>;

    virtual ~ForecastNet() = default;

    /// The module: parameters for the optimizer, state for checkpoints, train/eval mode.
    virtual torch::nn::Module& module() = 0;
    /// Quantile forecasts [B, H, Q] for past [B, L, F+K], known future [B, H, K] and statics
    /// [B, S] (undefined without static covariates; a network without them ignores it).
    virtual torch::Tensor forecast(const torch::Tensor& past, const torch::Tensor& known,
                                   const torch::Tensor& statics) = 0;
    /// An INT8 copy of the current weights, with static activation ranges from `calibrate` when it
    /// is set (the network itself is untouched). Throws models::precision::NotQuantizable.
    virtual std::shared_ptr<ForecastNet> quantized(const Calibration& calibrate,
                                                   models::precision::QuantizeReport* report) const = 0;
    /// Whether addInterpretation() explains anything.
    virtual bool interprets() const { return false; }
    /// Adds the importances and attention of one batch (summed over its windows) to `sums`.
    virtual void addInterpretation(const torch::Tensor& past, const torch::Tensor& known, const torch::Tensor& statics,
                                   InterpretationSums& sums);
};

/// The Mamba-2 options of `config`'s sizes at `shape`.
models::mamba2::Mamba2ForecasterOptions mamba2Options(const ForecasterConfig& config, const ForecastNetShape& shape);
/// The TFT options of `config`'s sizes at `shape`.
models::tft::TftOptions tftOptions(const ForecasterConfig& config, const ForecastNetShape& shape);

/// The network `config.kind` names at `shape`, initialised from the default generator.
std::shared_ptr<ForecastNet> makeForecastNet(const ForecasterConfig& config, const ForecastNetShape& shape);

} // namespace foxhunt::detail
