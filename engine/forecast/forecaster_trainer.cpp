// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/forecast/forecaster_trainer.h"

#include "engine/agents/checkpoint_io.h"
#include "engine/forecast/forecast_net.h"
#include "models/agents/grad_utils.h"
#include "models/device.h"
#include "models/distributed/gradient_reducer.h"
#include "models/memory/memory_tracker.h"
#include "models/memory/tensor_bytes.h"
#include "models/precision/amp_step.h"
#include "models/precision/autocast.h"
#include "models/precision/loss_scaler.h"
#include "models/precision/quantize.h"
#include "engine/precision/int8_serving.h"
#include "models/quantile_loss.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <chrono>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

namespace foxhunt {

namespace dist = foxhunt::models::dist;
namespace mp = foxhunt::models::precision;

double warmupCosineLearningRate(std::int64_t step, double peak, std::int64_t warmup, std::int64_t total,
                                double minRatio)
{
    if (warmup > 0 && step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
    const double span = static_cast<double>(std::max<std::int64_t>(1, total - warmup));
    const double progress = std::clamp(static_cast<double>(step - warmup) / span, 0.0, 1.0);
    const double floor = peak * minRatio;
    return floor + (peak - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

namespace {

[[noreturn]] void invalid(const std::string& what)
{
    throw std::invalid_argument(std::string(__FILE__) + ": ForecasterTrainer: " + what);
}

// A deterministic per-step seed, so that a resumed run draws the same batches and dropout masks.
std::uint64_t stepSeed(std::uint64_t seed, std::int64_t step)
{
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) + 0x632BE59BD9B4E019ull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

} // namespace

struct ForecasterTrainer::Impl {
    ForecasterConfig config;
    ForecastData data;
    IndexRange train;
    IndexRange validation;

    torch::Tensor past;    // [T, F + K], standardised with training statistics
    torch::Tensor known;   // [T, K]
    torch::Tensor targets; // [T], log returns / targetScale
    torch::Tensor statics; // [S]
    double targetScale = 1.0;

    std::shared_ptr<detail::ForecastNet> net; // the network config.kind names
    torch::nn::Module* module = nullptr;      // net's module
    std::unique_ptr<torch::optim::AdamW> optimizer;
    mp::LossScaler scaler;
    std::int64_t steps = 0;
    std::size_t activationPeakBytes = 0;              // of the last trainStep(), counting allocator or CUDA
    models::CudaAttribution cuda;                     // what this model holds in the CUDA caching allocator
    torch::Device device{torch::kCPU};                // where the model, its optimizer and the data tensors live
    std::shared_ptr<dist::Communicator> communicator; // data parallelism (none: one process)
    std::unique_ptr<dist::GradientReducer> reducer;
    // The kept INT8 copy (none: null), which answers predictions when serve says Int8 and the gate let it.
    std::shared_ptr<detail::ForecastNet> int8;
    InferenceWeights serve = InferenceWeights::Fp32;
    InferenceWeights lastServed = InferenceWeights::Fp32;

    void prepareTensors()
    {
        const auto T = static_cast<int64_t>(data.rows);
        const auto F = static_cast<int64_t>(data.cols);
        const auto K = static_cast<int64_t>(data.knownCols);
        auto features = torch::from_blob(data.features.data(), {T, F}, torch::kFloat).clone();
        known = torch::from_blob(data.knownFuture.data(), {T, K}, torch::kFloat).clone();
        // Statistics over the bars the training windows can see, so no validation bar leaks in.
        const int64_t lo = static_cast<int64_t>(train.begin + 1 - config.windowing.pastLength);
        const int64_t hi = static_cast<int64_t>(train.end);
        auto seen = features.slice(0, lo, hi).to(torch::kDouble);
        auto mean = seen.mean(0);
        auto stddev = seen.std(0, /*unbiased=*/false).clamp_min(1e-12);
        features = ((features.to(torch::kDouble) - mean) / stddev).to(torch::kFloat);
        past = torch::cat({features, known}, /*dim=*/1);

        auto returns = torch::from_blob(data.logReturns.data(), {T}, torch::kDouble).clone();
        const double s = returns.slice(0, lo, hi + static_cast<int64_t>(config.windowing.horizon)).std().item<double>();
        targetScale = (std::isfinite(s) && s > 0.0) ? s : 1.0;
        // Scaled but not centred, so a zero forecast still means "no move".
        targets = (returns / targetScale).to(torch::kFloat);
        statics = torch::tensor(std::vector<float>(data.staticFeatures.begin(), data.staticFeatures.end()),
                                torch::kFloat);
        // Standardised on the CPU in float64 alike on every device, then moved once.
        past = past.to(device);
        known = known.to(device);
        targets = targets.to(device);
        statics = statics.to(device);
    }

    void buildModel()
    {
        torch::manual_seed(config.seed);
        const auto H = static_cast<int64_t>(config.windowing.horizon);
        const auto Q = static_cast<int64_t>(config.quantiles.size());
        const auto F = static_cast<int64_t>(data.cols + data.knownCols);
        const auto K = static_cast<int64_t>(data.knownCols);
        net = detail::makeForecastNet(config, {.inputs = F,
                                               .known = K,
                                               .statics = static_cast<int64_t>(data.staticFeatures.size()),
                                               .horizon = H,
                                               .quantiles = Q});
        module = &net->module();
        // Initialised on the CPU under the seed, so every device starts from the same weights.
        module->to(device);
        optimizer = std::make_unique<torch::optim::AdamW>(
            module->parameters(), torch::optim::AdamWOptions(config.learningRate).weight_decay(config.weightDecay));
    }

    // anchors: [B] -> past [B, L, F+K], known [B, H, K], targets [B, H]
    std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> batch(const torch::Tensor& anchors) const
    {
        const auto L = static_cast<int64_t>(config.windowing.pastLength);
        const auto H = static_cast<int64_t>(config.windowing.horizon);
        const auto onDevice = torch::TensorOptions(torch::kLong).device(device);
        const torch::Tensor a = anchors.to(device);
        auto pastIdx = a.unsqueeze(1) + torch::arange(-L + 1, 1, onDevice).unsqueeze(0);  // [B, L]
        auto futureIdx = a.unsqueeze(1) + torch::arange(1, H + 1, onDevice).unsqueeze(0); // [B, H]
        return {past.index({pastIdx}), known.index({futureIdx}), targets.index({futureIdx})};
    }

    torch::Tensor forward(const torch::Tensor& pastBatch, const torch::Tensor& knownBatch)
    {
        return forwardWith(*net, pastBatch, knownBatch);
    }

    // The forward of whichever weights serve predictions now, noting which one answered.
    torch::Tensor serving(const torch::Tensor& pastBatch, const torch::Tensor& knownBatch)
    {
        const bool useInt8 = serve == InferenceWeights::Int8 && int8;
        lastServed = useInt8 ? InferenceWeights::Int8 : InferenceWeights::Fp32;
        return forwardWith(useInt8 ? *int8 : *net, pastBatch, knownBatch);
    }

    // The static covariates repeated for a batch (undefined when the data has none).
    torch::Tensor staticsFor(int64_t rows) const
    {
        return statics.numel() > 0 ? statics.unsqueeze(0).expand({rows, statics.size(0)}) : torch::Tensor();
    }

    // Static-range calibration for an INT8 copy: `windows` training windows spread evenly over the
    // train range, so the windows the copy is measured on stay unseen.
    detail::ForecastNet::Calibration calibrationOnTrain(std::size_t windows) const
    {
        const std::size_t n = std::max<std::size_t>(1, std::min(windows, train.size()));
        const torch::Tensor idx = torch::linspace(static_cast<double>(train.begin), static_cast<double>(train.end - 1),
                                                  static_cast<int64_t>(n), torch::kDouble)
                                      .round()
                                      .to(torch::kLong);
        return [this, idx](detail::ForecastNet& copy) {
            auto [pastBatch, knownBatch, targetBatch] = batch(idx);
            (void)targetBatch;
            forwardWith(copy, pastBatch, knownBatch);
        };
    }

    // The same forward for the model or its INT8 copy.
    torch::Tensor forwardWith(detail::ForecastNet& with, const torch::Tensor& pastBatch,
                              const torch::Tensor& knownBatch) const
    {
        return with.forecast(pastBatch, knownBatch, staticsFor(pastBatch.size(0)));
    }

    // A fresh INT8 copy of the current weights (calibrated on `calibrationSamples` training windows
    // when > 0) with its kernels planned as `serving` says at the serving batches (1 and 32
    // validation windows); the plan is recorded in `e`.
    std::shared_ptr<detail::ForecastNet> quantizeCopy(std::size_t calibrationSamples, const Int8Serving& serving,
                                                      Int8Evaluation& e, mp::QuantizeReport* report,
                                                      mp::KernelPlan* plan,
                                                      const std::vector<mp::Int8Backend>& exclude = {})
    {
        const std::shared_ptr<detail::ForecastNet> copy = net->quantized(
            calibrationSamples > 0 ? calibrationOnTrain(calibrationSamples) : nullptr, report);
        torch::nn::Module& q = copy->module();
        const auto serve = [&] {
            for (const std::size_t rows : {std::size_t{1}, std::size_t{32}}) {
                const std::size_t b = std::min(rows, validation.size());
                auto idx = torch::arange(static_cast<int64_t>(validation.begin),
                                         static_cast<int64_t>(validation.begin + b), torch::kLong);
                auto [pastBatch, knownBatch, targetBatch] = batch(idx);
                (void)targetBatch;
                forwardWith(*copy, pastBatch, knownBatch);
            }
        };
        const mp::KernelPlan made = detail::planInt8Kernels(q, serve, serving, e, exclude);
        if (plan) *plan = made;
        return copy;
    }

    void setLearningRate(double lr)
    {
        for (auto& group : optimizer->param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }

    // Returns the norm before clipping, summed in float64 so many small squares do not lose bits.
    double clipGradients(bool& clipped)
    {
        // A non-finite norm means the scaler will skip this step; the clip then leaves the grads.
        return models::clip_grad_norm_f64(module->parameters(), config.maxGradNorm, &clipped);
    }
};

ForecasterTrainer::ForecasterTrainer(const ForecasterConfig& config, ForecastData data, IndexRange train,
                                     IndexRange validation)
    : m_impl(std::make_unique<Impl>())
{
    validateForecastData(data);
    if (config.quantiles.empty()) invalid("no quantile levels");
    for (std::size_t i = 0; i < config.quantiles.size(); ++i) {
        if (!(config.quantiles[i] > 0.0 && config.quantiles[i] < 1.0)) invalid("quantile levels must lie in (0, 1)");
        if (i > 0 && !(config.quantiles[i] > config.quantiles[i - 1])) invalid("quantile levels must be ascending");
    }
    if (config.batchSize == 0 || config.evalBatchSize == 0) invalid("batch sizes must be positive");
    torch::Device device{torch::kCPU};
    try {
        device = models::training_device(config.device, config.mixedPrecision, "");
    } catch (const std::invalid_argument& e) {
        invalid(e.what());
    }
    const IndexRange valid = validAnchors(data, config.windowing);
    auto inside = [&](IndexRange r) { return r.size() > 0 && r.begin >= valid.begin && r.end <= valid.end; };
    if (!inside(train))
        invalid("training anchors [" + std::to_string(train.begin) + ", " + std::to_string(train.end) +
                ") must be non-empty and inside [" + std::to_string(valid.begin) + ", " + std::to_string(valid.end) +
                ")");
    if (validation.size() > 0 && !inside(validation))
        invalid("validation anchors [" + std::to_string(validation.begin) + ", " + std::to_string(validation.end) +
                ") must lie inside [" + std::to_string(valid.begin) + ", " + std::to_string(valid.end) + ")");
    m_impl->config = config;
    m_impl->device = device;
    m_impl->data = std::move(data);
    m_impl->train = train;
    m_impl->validation = validation;
    m_impl->scaler = mp::LossScaler(config.mixedPrecision);
    models::CudaWorkScope onDevice(m_impl->cuda, device.is_cuda());
    m_impl->prepareTensors();
    m_impl->buildModel();
}

ForecasterTrainer::~ForecasterTrainer() = default;
ForecasterTrainer::ForecasterTrainer(ForecasterTrainer&&) noexcept = default;
ForecasterTrainer& ForecasterTrainer::operator=(ForecasterTrainer&&) noexcept = default;

void ForecasterTrainer::setCommunicator(std::shared_ptr<dist::Communicator> communicator)
{
    Impl& d = *m_impl;
    d.reducer.reset();
    d.communicator.reset();
    if (!communicator || communicator->world_size() == 1) return;
    std::vector<torch::Tensor> state = d.module->parameters();
    for (const auto& b : d.module->buffers()) state.push_back(b);
    dist::broadcast_tensors(*communicator, state);
    d.reducer = std::make_unique<dist::GradientReducer>(d.module->parameters(), communicator);
    d.communicator = std::move(communicator);
}

ForecastStepStats ForecasterTrainer::trainStep()
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda()); // first: it measures after the temporaries are gone
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t seed = stepSeed(d.config.seed, d.steps);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(d.train.begin, d.train.end - 1);
    // Data parallel: every rank draws the same global batch of batchSize x ranks windows and
    // trains on its own slice, so N ranks x B see exactly what one process x N*B would.
    const int rank = d.communicator ? d.communicator->rank() : 0;
    const int ranks = d.communicator ? d.communicator->world_size() : 1;
    std::vector<int64_t> global(d.config.batchSize * static_cast<std::size_t>(ranks));
    for (auto& a : global) a = static_cast<int64_t>(pick(rng));
    const std::vector<int64_t> anchors(global.begin() + static_cast<std::ptrdiff_t>(d.config.batchSize) * rank,
                                       global.begin() + static_cast<std::ptrdiff_t>(d.config.batchSize) * (rank + 1));
    torch::manual_seed(seed + static_cast<std::uint64_t>(rank)); // dropout differs per rank

    ForecastStepStats stats;
    stats.learningRate = warmupCosineLearningRate(d.steps, d.config.learningRate, d.config.warmupSteps,
                                                  d.config.totalSteps, d.config.minLearningRateRatio);
    d.setLearningRate(stats.learningRate);
    d.module->train();
    auto [pastBatch, knownBatch, targetBatch] = d.batch(torch::tensor(anchors, torch::kLong));
    d.optimizer->zero_grad();
    torch::Tensor pred;
    models::PeakMemoryScope activations(models::memory_device(d.device));
    {
        mp::AutocastGuard autocast(d.config.mixedPrecision, d.device.type());
        pred = d.forward(pastBatch, knownBatch);
    }
    // The loss outside autocast and in float64, whatever type the forward produced.
    auto loss = models::quantile_loss(pred.to(torch::kDouble), targetBatch.to(torch::kDouble), d.config.quantiles);
    // The activation peak is read in the clip callback: after backward (and the in-place unscale),
    // before the optimizer allocates its own temporaries.
    const auto stepped = mp::scaled_step(
        d.scaler, *d.optimizer, loss,
        [&d, &stats, &activations] {
            d.activationPeakBytes = models::activation_peaks_measurable(d.device) ? activations.peakAboveStart() : 0;
            return d.clipGradients(stats.clipped);
        },
        [&d, &stats] {
            if (d.reducer) stats.allreduceSeconds = d.reducer->synchronize().wait_seconds;
        });
    stats.gradNorm = stepped.grad_norm;
    stats.skipped = stepped.skipped;
    ++d.steps;
    stats.step = d.steps;
    stats.loss = loss.item<double>();
    if (d.communicator) {
        // The mean over ranks of each rank's batch mean = the global batch's mean.
        torch::Tensor l = torch::tensor({stats.loss}, torch::kFloat64);
        d.communicator->all_reduce_mean_(l);
        stats.loss = l.item<double>();
    }
    stats.lossScale = d.scaler.current_scale();
    stats.skippedSteps = d.scaler.skipped_steps();
    stats.stepSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
}

ForecastEvaluation ForecasterTrainer::evaluate()
{
    return evaluate(m_impl->validation);
}

ForecastEvaluation ForecasterTrainer::evaluate(IndexRange anchors)
{
    Impl& d = *m_impl;
    const IndexRange valid = validAnchors(d.data, d.config.windowing);
    if (anchors.size() == 0 || anchors.begin < valid.begin || anchors.end > valid.end)
        invalid("evaluation anchors must be non-empty and inside the valid range");
    const std::size_t H = d.config.windowing.horizon;
    const std::size_t Q = d.config.quantiles.size();
    std::vector<double> model;
    model.reserve(anchors.size() * H * Q);

    torch::NoGradGuard ng;
    d.module->eval();
    for (std::size_t begin = anchors.begin; begin < anchors.end; begin += d.config.evalBatchSize) {
        const std::size_t end = std::min(anchors.end, begin + d.config.evalBatchSize);
        auto idx = torch::arange(static_cast<int64_t>(begin), static_cast<int64_t>(end), torch::kLong);
        auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
        (void)targetBatch;
        auto pred = (d.forward(pastBatch, knownBatch).to(torch::kCPU, torch::kDouble) * d.targetScale).contiguous();
        const double* p = pred.data_ptr<double>();
        model.insert(model.end(), p, p + pred.numel());
    }
    d.module->train();
    return evaluateQuantileForecasts(model, d.data, d.train, anchors, H, d.config.quantiles);
}

Int8Evaluation ForecasterTrainer::evaluateInt8(const Int8EvaluationOptions& options)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda()); // the kept INT8 copy is this model's
    if (d.validation.size() == 0) invalid("evaluateInt8 needs a validation range");
    torch::NoGradGuard ng;
    d.module->eval();

    Int8Evaluation e;
    e.maxDegradation = options.serving.maxDegradation;
    e.staticActivations = options.calibrationSamples > 0;
    e.calibrationSamples = e.staticActivations ? std::min(options.calibrationSamples, d.train.size()) : 0;
    e.evaluatedSamples = d.validation.size();
    e.servingBatch = std::min<std::size_t>(32, d.validation.size());

    // Losses over every validation window, summed in float64.
    const auto validationLoss = [&](detail::ForecastNet& with) {
        double sum = 0.0;
        for (std::size_t begin = d.validation.begin; begin < d.validation.end; begin += d.config.evalBatchSize) {
            const std::size_t end = std::min(d.validation.end, begin + d.config.evalBatchSize);
            auto idx = torch::arange(static_cast<int64_t>(begin), static_cast<int64_t>(end), torch::kLong);
            auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
            const torch::Tensor out = d.forwardWith(with, pastBatch, knownBatch);
            sum += static_cast<double>(end - begin) *
                   models::quantile_loss(out.to(torch::kDouble), targetBatch.to(torch::kDouble), d.config.quantiles)
                       .item<double>();
        }
        return sum / static_cast<double>(d.validation.size());
    };
    const double fp32Loss = validationLoss(*d.net);
    mp::QuantizeReport report;
    mp::KernelPlan plan;
    std::shared_ptr<detail::ForecastNet> copy = d.quantizeCopy(options.calibrationSamples, options.serving, e, &report,
                                                               &plan);
    e.setLosses(fp32Loss, validationLoss(*copy));
    if (e.degradation > e.maxDegradation && options.serving.backend == "auto" &&
        detail::planUses(plan, mp::Int8Backend::OneDnn)) {
        // oneDNN's per-batch activation ranges are the least accurate kernels: try once without them.
        copy = d.quantizeCopy(options.calibrationSamples, options.serving, e, &report, &plan,
                              {mp::Int8Backend::OneDnn});
        e.setLosses(fp32Loss, validationLoss(*copy));
    }
    e.quantizedLayers = static_cast<int>(report.linear_layers + report.lstm_layers);
    e.fp32Bytes = static_cast<std::size_t>(mp::module_bytes(*d.module));
    // What the served copy holds once planned: a selection network served by its table keeps
    // the table and no variable GRNs, one that never uses it keeps no table.
    e.int8Bytes = static_cast<std::size_t>(mp::module_bytes(copy->module()));
    e.bytesRatio = static_cast<double>(e.int8Bytes) / static_cast<double>(std::max<std::size_t>(1, e.fp32Bytes));

    // FP32 and the copy at batch 1 and at the serving batch, each pair timed in turns so that a
    // change in the machine's load falls on both; then the activation peak of one pass of each.
    std::size_t fp32Activations = 0, int8Activations = 0;
    for (const std::size_t batch : {std::size_t{1}, std::size_t{32}}) {
        const std::size_t b = std::min(batch, d.validation.size());
        auto idx = torch::arange(static_cast<int64_t>(d.validation.begin), static_cast<int64_t>(d.validation.begin + b),
                                 torch::kLong);
        auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
        (void)targetBatch;
        const auto pass = [&](const std::shared_ptr<detail::ForecastNet>& with) {
            return [&, with] {
                d.forwardWith(*with, pastBatch, knownBatch);
                models::synchronize(d.device);
            };
        };
        const std::function<void()> fp32 = pass(d.net);
        const std::function<void()> int8 = pass(copy);
        const PairedLatencies t = timeLatenciesInTurns(fp32, int8, options.latencyRepeats);
        (batch == 1 ? e.fp32Batch1 : e.fp32Batch32) = t.fp32;
        (batch == 1 ? e.int8Batch1 : e.int8Batch32) = t.int8;
        if (batch == 32) {
            fp32Activations = detail::peakBytesOf(fp32, d.device.is_cuda());
            int8Activations = detail::peakBytesOf(int8, d.device.is_cuda());
        }
    }
    e.fp32ServingBytes = e.fp32Bytes + fp32Activations;
    e.int8ServingBytes = e.int8Bytes + int8Activations;
    detail::gate(e);
    // A copy the gate refused is not kept: forecasts, ensemble inputs and latencies come from FP32.
    d.int8 = e.served ? copy : nullptr;
    d.module->train();
    return e;
}

std::vector<double> ForecasterTrainer::predict(std::size_t anchor)
{
    Impl& d = *m_impl;
    const IndexRange valid = validAnchors(d.data, d.config.windowing);
    if (anchor < valid.begin || anchor >= valid.end)
        invalid("anchor " + std::to_string(anchor) + " has no full window");
    torch::NoGradGuard ng;
    d.module->eval();
    auto [pastBatch, knownBatch, targetBatch] = d.batch(torch::tensor({static_cast<int64_t>(anchor)}, torch::kLong));
    (void)targetBatch;
    auto pred = (d.serving(pastBatch, knownBatch).to(torch::kCPU, torch::kDouble) * d.targetScale).contiguous();
    d.module->train();
    return std::vector<double>(pred.data_ptr<double>(), pred.data_ptr<double>() + pred.numel());
}

void ForecasterTrainer::saveCheckpoint(const std::string& path, const std::string& identity) const
{
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive modelArchive;
    m_impl->module->save(modelArchive);
    torch::serialize::OutputArchive optimizerArchive;
    m_impl->optimizer->save(optimizerArchive);
    archive.write("model", modelArchive);
    archive.write("optimizer", optimizerArchive);
    archive.write("step", torch::tensor(m_impl->steps, torch::kLong));
    archive.write("loss_scaler", m_impl->scaler.state());
    archive.write("kind", torch::tensor(static_cast<int64_t>(m_impl->config.kind), torch::kLong));
    if (!identity.empty()) archive.write("identity", c10::IValue(identity));
    detail::saveArchive(archive, path, "checkpoint");
}

void ForecasterTrainer::loadCheckpoint(const std::string& path, const CheckpointCheck& checkIdentity)
{
    models::CudaWorkScope onDevice(m_impl->cuda, m_impl->device.is_cuda());
    torch::serialize::InputArchive archive;
    try {
        archive.load_from(path, m_impl->device); // a checkpoint of any device loads onto this one
        if (checkIdentity) {
            c10::IValue identity;
            checkIdentity(archive.try_read("identity", identity) && identity.isString() ? identity.toStringRef()
                                                                                        : std::string());
        }
        torch::Tensor kind;
        archive.read("kind", kind);
        if (kind.item<int64_t>() != static_cast<int64_t>(m_impl->config.kind))
            throw std::runtime_error(path + ": checkpoint holds a different forecaster kind");
        torch::serialize::InputArchive modelArchive, optimizerArchive;
        archive.read("model", modelArchive);
        archive.read("optimizer", optimizerArchive);
        m_impl->module->load(modelArchive);
        m_impl->optimizer->load(optimizerArchive);
        torch::Tensor step;
        archive.read("step", step);
        m_impl->steps = step.item<int64_t>();
        torch::Tensor scalerState;
        if (archive.try_read("loss_scaler", scalerState)) m_impl->scaler.load_state(scalerState);
    } catch (const c10::Error& e) {
        throw std::runtime_error(path + ": cannot read checkpoint: " + e.what_without_backtrace());
    }
    // A copy of the weights before the load would serve stale forecasts.
    m_impl->int8.reset();
}

std::int64_t ForecasterTrainer::step() const
{
    return m_impl->steps;
}

std::size_t ForecasterTrainer::parameterCount() const
{
    std::size_t n = 0;
    for (const auto& p : m_impl->module->parameters()) n += static_cast<std::size_t>(p.numel());
    return n;
}

std::size_t ForecasterTrainer::parameterBytes() const
{
    std::size_t n = 0;
    for (const auto& p : m_impl->module->parameters()) n += static_cast<std::size_t>(p.numel() * p.element_size());
    return n;
}

std::size_t ForecasterTrainer::servingBytes(std::size_t batch)
{
    Impl& d = *m_impl;
    const std::size_t b = std::max<std::size_t>(1, std::min(batch, d.validation.size()));
    auto idx = torch::arange(static_cast<int64_t>(d.validation.begin), static_cast<int64_t>(d.validation.begin + b),
                             torch::kLong);
    auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
    (void)targetBatch;
    torch::NoGradGuard guard;
    d.module->eval();
    const auto run = [&] {
        d.forward(pastBatch, knownBatch);
        models::synchronize(d.device);
    };
    run(); // first-use packing and allocations are not the steady state
    const std::size_t activations = detail::peakBytesOf(run, d.device.is_cuda());
    d.module->train();
    return static_cast<std::size_t>(mp::module_bytes(*d.module)) + activations;
}

const ForecasterConfig& ForecasterTrainer::config() const
{
    return m_impl->config;
}

ModelMemory ForecasterTrainer::memory() const
{
    const Impl& d = *m_impl;
    ModelMemory m{models::parameter_bytes(*d.module), models::gradient_bytes(*d.module),
                  models::optimizer_state_bytes(*d.optimizer), d.activationPeakBytes};
    m.onCuda = d.device.is_cuda();
    m.cudaAllocatedBytes = d.cuda.residentBytes();
    m.cudaPeakBytes = d.cuda.peak;
    return m;
}

ForecastAmpStatus ForecasterTrainer::ampStatus() const
{
    const Impl& d = *m_impl;
    ForecastAmpStatus s;
    s.enabled = d.config.mixedPrecision.enabled;
    s.dtype = s.enabled ? mp::to_string(d.config.mixedPrecision.dtype) : "fp32";
    s.lossScale = d.scaler.current_scale();
    s.skippedSteps = d.scaler.skipped_steps();
    return s;
}

std::size_t ForecasterTrainer::quantileIndex(double level) const
{
    const auto& q = m_impl->config.quantiles;
    std::size_t best = 0;
    for (std::size_t i = 1; i < q.size(); ++i)
        if (std::abs(q[i] - level) < std::abs(q[best] - level)) best = i;
    return best;
}

Int8Refresh ForecasterTrainer::refreshInt8(const Int8RefreshOptions& options)
{
    Impl& d = *m_impl;
    models::CudaWorkScope onDevice(d.cuda, d.device.is_cuda()); // the kept INT8 copy is this model's
    if (d.validation.size() == 0) invalid("refreshInt8 needs a validation range");
    torch::NoGradGuard ng;
    d.module->eval();
    auto spread = [](IndexRange r, std::size_t n) {
        n = std::max<std::size_t>(1, std::min(n, r.size()));
        return torch::linspace(static_cast<double>(r.begin), static_cast<double>(r.end - 1), static_cast<int64_t>(n),
                               torch::kDouble)
            .round()
            .to(torch::kLong);
    };
    Int8Evaluation e;
    e.maxDegradation = options.serving.maxDegradation;
    mp::KernelPlan plan;
    const std::shared_ptr<detail::ForecastNet> copy = d.quantizeCopy(options.calibrationSamples, options.serving, e,
                                                                     nullptr, &plan);

    auto idx = spread(d.validation, options.windows);
    auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
    auto target = targetBatch.to(torch::kDouble);
    Int8Refresh r;
    r.windows = static_cast<std::size_t>(idx.size(0));
    r.fp32Loss = models::quantile_loss(d.forward(pastBatch, knownBatch).to(torch::kDouble), target, d.config.quantiles)
                     .item<double>();
    r.int8Loss = models::quantile_loss(d.forwardWith(*copy, pastBatch, knownBatch).to(torch::kDouble), target,
                                       d.config.quantiles)
                     .item<double>();
    e.setLosses(r.fp32Loss, r.int8Loss);
    r.degradation = e.degradation;
    detail::gateOnAccuracy(e);
    r.served = e.served;
    r.verdict = e.verdict;
    r.backend = e.backend;
    d.int8 = e.served ? copy : nullptr;
    d.module->train();
    return r;
}

void ForecasterTrainer::setInferenceWeights(InferenceWeights weights)
{
    m_impl->serve = weights;
}

InferenceWeights ForecasterTrainer::lastInferenceWeights() const
{
    return m_impl->lastServed;
}

bool ForecasterTrainer::hasInt8Copy() const
{
    return m_impl->int8 != nullptr;
}

bool ForecasterTrainer::interprets() const
{
    return m_impl->net->interprets();
}

TftInterpretation ForecasterTrainer::interpret()
{
    return interpret(m_impl->validation);
}

TftInterpretation ForecasterTrainer::interpret(IndexRange anchors)
{
    Impl& d = *m_impl;
    if (!d.net->interprets())
        throw std::logic_error(std::string(__FILE__) + ": interpret(): only a TFT forecaster has an interpretation");
    const IndexRange valid = validAnchors(d.data, d.config.windowing);
    if (anchors.size() == 0 || anchors.begin < valid.begin || anchors.end > valid.end)
        invalid("interpretation anchors must be non-empty and inside the valid range");
    torch::NoGradGuard ng;
    d.module->eval();
    detail::InterpretationSums sums;
    for (std::size_t begin = anchors.begin; begin < anchors.end; begin += d.config.evalBatchSize) {
        const std::size_t end = std::min(anchors.end, begin + d.config.evalBatchSize);
        auto idx = torch::arange(static_cast<int64_t>(begin), static_cast<int64_t>(end), torch::kLong);
        auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
        (void)targetBatch;
        d.net->addInterpretation(pastBatch, knownBatch, d.staticsFor(pastBatch.size(0)), sums);
    }
    d.module->train();

    const double n = static_cast<double>(anchors.size());
    auto values = [n](const torch::Tensor& sum) {
        std::vector<double> v;
        if (!sum.defined()) return v;
        auto mean = (sum / n).to(torch::kCPU).contiguous();
        v.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
        return v;
    };
    auto names = [](const std::vector<std::string>& given, std::size_t count, const char* prefix) {
        if (!given.empty()) return given;
        std::vector<std::string> v;
        for (std::size_t i = 0; i < count; ++i) v.push_back(prefix + std::to_string(i));
        return v;
    };
    TftInterpretation r;
    r.windows = anchors.size();
    r.encoderVariables = names(d.data.featureNames, d.data.cols, "observed_");
    const auto known = names(d.data.knownNames, d.data.knownCols, "known_");
    r.encoderVariables.insert(r.encoderVariables.end(), known.begin(), known.end());
    r.decoderVariables = known;
    r.staticVariables = names(d.data.staticNames, d.data.staticFeatures.size(), "static_");
    r.encoderImportance = values(sums.encoder);
    r.decoderImportance = values(sums.decoder);
    r.staticImportance = values(sums.statics);
    if (sums.attention.defined()) {
        auto mean = (sums.attention / n).to(torch::kCPU).contiguous();
        for (int64_t h = 0; h < mean.size(0); ++h) {
            auto row = mean[h].contiguous();
            r.attention.emplace_back(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
        }
    }
    return r;
}

std::vector<double> ForecasterTrainer::predictMedians(IndexRange anchors)
{
    Impl& d = *m_impl;
    const IndexRange valid = validAnchors(d.data, d.config.windowing);
    if (anchors.size() == 0 || anchors.begin < valid.begin || anchors.end > valid.end)
        invalid("median anchors must be non-empty and inside [" + std::to_string(valid.begin) + ", " +
                std::to_string(valid.end) + ")");
    const auto median = static_cast<int64_t>(quantileIndex(0.5));
    std::vector<double> out;
    out.reserve(anchors.size() * d.config.windowing.horizon);
    torch::NoGradGuard ng;
    d.module->eval();
    for (std::size_t begin = anchors.begin; begin < anchors.end; begin += d.config.evalBatchSize) {
        const std::size_t end = std::min(anchors.end, begin + d.config.evalBatchSize);
        auto idx = torch::arange(static_cast<int64_t>(begin), static_cast<int64_t>(end), torch::kLong);
        auto [pastBatch, knownBatch, targetBatch] = d.batch(idx);
        (void)targetBatch;
        auto pred = (d.serving(pastBatch, knownBatch).select(2, median).to(torch::kCPU, torch::kDouble) * d.targetScale)
                        .contiguous();
        out.insert(out.end(), pred.data_ptr<double>(), pred.data_ptr<double>() + pred.numel());
    }
    d.module->train();
    return out;
}

} // namespace foxhunt
