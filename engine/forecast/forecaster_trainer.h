// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Trains and evaluates one quantile forecaster (Mamba-2 or TFT) on ForecastData.
// std-only header: the LibTorch state lives behind a pimpl.

#include "engine/forecast/forecast_data.h"
#include "engine/forecast/forecast_insight.h"
#include "engine/forecast/forecast_metrics.h"
#include "engine/precision/int8_evaluation.h"
#include "engine/store/checkpoint_identity.h"
#include "engine/telemetry/model_memory.h"
#include "models/precision/mixed_precision.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace foxhunt::models::dist {
class Communicator;
}

namespace foxhunt {

/// Which network the trainer drives.
enum class ForecasterKind { Mamba2, Tft };

/// Everything that defines a forecaster run. Defaults are small, for a CPU.
struct ForecasterConfig {
    ForecasterKind kind = ForecasterKind::Mamba2;           ///< network
    ForecastWindowing windowing;                            ///< past length and horizon
    std::vector<double> quantiles{0.1, 0.5, 0.9};           ///< ascending levels in (0, 1)
    std::size_t batchSize = 32;                             ///< windows per step
    double learningRate = 1e-3;                             ///< peak learning rate
    double weightDecay = 1e-4;                              ///< AdamW decoupled weight decay
    std::int64_t warmupSteps = 50;                          ///< linear warmup from 0 to the peak
    std::int64_t totalSteps = 1000;                         ///< cosine decay reaches its floor here
    double minLearningRateRatio = 0.1;                      ///< floor of the cosine, as a share of the peak
    double maxGradNorm = 1.0;                               ///< global-norm clipping threshold (<= 0: no clipping)
    std::uint64_t seed = 1;                                 ///< initialisation, batch order and dropout
    std::size_t evalBatchSize = 256;                        ///< windows per forward pass in evaluate()
    models::precision::MixedPrecisionConfig mixedPrecision; ///< AMP (default: FP32); validated for `device`
    std::string device = "cpu";                             ///< "cpu" or "cuda:N": model, optimizer and data live there

    // Mamba-2 sizes.
    int dModel = 32;    ///< residual width
    int layers = 2;     ///< blocks
    int dState = 16;    ///< SSM state per head
    int headDim = 16;   ///< channels per head
    int expand = 2;     ///< d_inner / d_model
    int ngroups = 1;    ///< groups sharing B, C
    int chunkSize = 32; ///< SSD chunk length

    // TFT sizes.
    int hiddenSize = 16;   ///< model width
    int embeddingSize = 8; ///< per-variable embedding width
    int heads = 4;         ///< attention heads
    int lstmLayers = 1;    ///< LSTM depth
    double dropout = 0.1;  ///< dropout in GRNs and attention
};

/// What one optimisation step did.
struct ForecastStepStats {
    std::int64_t step = 0;         ///< 1-based index of the step just taken
    double loss = 0.0;             ///< training quantile loss (in standardised target units)
    double gradNorm = 0.0;         ///< global gradient L2 norm before clipping, reduced in float64
    bool clipped = false;          ///< whether the gradients were scaled down
    double learningRate = 0.0;     ///< learning rate used by this step
    double stepSeconds = 0.0;      ///< wall time of the step
    double lossScale = 1.0;        ///< loss scale after this step's update (1 without FP16 scaling)
    bool skipped = false;          ///< the optimizer step was skipped: inf/NaN gradients
    std::int64_t skippedSteps = 0; ///< steps skipped so far
    double allreduceSeconds = 0.0; ///< data parallel: time waiting for the gradient all-reduce after backward
};

/// Linear warmup to `peak` over `warmup` steps, then cosine to peak * minRatio at `total`.
/// `step` is 0-based (the step about to be taken).
double warmupCosineLearningRate(std::int64_t step, double peak, std::int64_t warmup, std::int64_t total,
                                double minRatio);

/// Owns a forecaster, its optimizer and the data windows.
class ForecasterTrainer {
public:
    /// Validates data and ranges (anchors, see forecast_data.h) and builds the model under config.seed.
    /// Throws std::invalid_argument on inconsistent input.
    ForecasterTrainer(const ForecasterConfig& config, ForecastData data, IndexRange train, IndexRange validation);
    /// Frees the model.
    ~ForecasterTrainer();
    ForecasterTrainer(const ForecasterTrainer&) = delete;
    ForecasterTrainer& operator=(const ForecasterTrainer&) = delete;
    /// Moves the trainer.
    ForecasterTrainer(ForecasterTrainer&&) noexcept;
    /// Moves the trainer.
    ForecasterTrainer& operator=(ForecasterTrainer&&) noexcept;

    /// Data parallel over `communicator`'s ranks (nullptr or one rank: this process alone): copies
    /// rank 0's weights here, then each trainStep() trains on this rank's slice of a global batch
    /// of batchSize x ranks windows and averages the gradients over ranks after backward (bucketed,
    /// overlapped with it). Every rank must call trainStep() the same number of times.
    void setCommunicator(std::shared_ptr<models::dist::Communicator> communicator);
    /// One optimisation step on a batch drawn from the training range (loss: mean over ranks).
    ForecastStepStats trainStep();
    /// Scores the model and the baselines on the validation range.
    ForecastEvaluation evaluate();
    /// Scores the model and the baselines on any range of anchors.
    ForecastEvaluation evaluate(IndexRange anchors);
    /// Quantizes a fresh INT8 copy of the current model and compares it with FP32 on the
    /// validation range (loss: mean quantile loss in standardised units; weight bytes; latency at
    /// batch 1 and 32). Training is unaffected; the copy is kept for serving (setInferenceWeights()).
    Int8Evaluation evaluateInt8(const Int8EvaluationOptions& options = {});
    /// Forecast for one anchor: [horizon * quantiles] log returns, row-major.
    std::vector<double> predict(std::size_t anchor);

    /// Writes model, optimizer, loss-scaler state, step count and the run identity text
    /// (CheckpointIdentity) to `path`.
    void saveCheckpoint(const std::string& path, const std::string& identity = {}) const;
    /// Restores a checkpoint written by a trainer with the same config and data; training then
    /// continues exactly as it would have. `checkIdentity` sees the file's identity text before anything
    /// is restored and throws to refuse the file.
    void loadCheckpoint(const std::string& path, const CheckpointCheck& checkIdentity = {});

    /// Steps taken so far.
    std::int64_t step() const;
    /// Trainable parameters.
    std::size_t parameterCount() const;
    /// Bytes of trainable parameters.
    std::size_t parameterBytes() const;
    /// Bytes the FP32 model needs to serve `batch` windows: its weights plus the peak activation
    /// bytes of one inference forward over the first validation windows (exact with the counting
    /// CPU allocator; the CUDA allocator's peak on a GPU; activations 0 without either).
    std::size_t servingBytes(std::size_t batch);
    /// The configuration in use.
    const ForecasterConfig& config() const;
    /// Parameter, gradient and optimizer-state bytes now; activation peak of the most recent
    /// trainStep() (forward and backward), when the counting CPU allocator is installed or, on
    /// CUDA, from the caching allocator (with its allocated bytes after and peak during the step).
    ModelMemory memory() const;

    /// Autocast type, current loss scale and skipped steps.
    ForecastAmpStatus ampStatus() const;
    /// Quantizes a fresh INT8 copy from the current FP32 weights and compares the two on a small fixed
    /// subset of the validation windows (cheap enough to call during training). Training is unaffected;
    /// the copy replaces the kept one, so predictions served from INT8 follow the refresh schedule.
    /// Throws models::precision::NotQuantizable (a std::invalid_argument) naming what cannot be quantized.
    Int8Refresh refreshInt8(const Int8RefreshOptions& options = {});
    /// Whether the network explains itself (interpret(): the TFT does, Mamba-2 does not).
    bool interprets() const;
    /// The TFT's variable importances and attention averaged over the validation windows.
    /// Throws std::logic_error for a network that does not interpret (Mamba-2).
    TftInterpretation interpret();
    /// Same over any range of anchors.
    TftInterpretation interpret(IndexRange anchors);
    /// Median forecasts for each anchor in `anchors`, [anchors.size() * horizon] log returns, row-major;
    /// one batched forward per evalBatchSize anchors.
    std::vector<double> predictMedians(IndexRange anchors);
    /// Which weights predict() and predictMedians() use (default Fp32). With Int8 they use the kept
    /// INT8 copy, and FP32 until refreshInt8() or evaluateInt8() has made one.
    void setInferenceWeights(InferenceWeights weights);
    /// The weights that answered the most recent predict() or predictMedians() (Fp32 before any).
    InferenceWeights lastInferenceWeights() const;
    /// Whether an INT8 copy is kept (dropped again by loadCheckpoint()).
    bool hasInt8Copy() const;
    /// The quantile index nearest to level `level` (e.g. 0.5 for the median).
    std::size_t quantileIndex(double level) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace foxhunt
