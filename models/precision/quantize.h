// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Post-training int8 quantisation of a whole model into a separate inference copy.

#include "models/precision/int8_linear.h"
#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace foxhunt::models::precision {

/// How quantize_for_inference() quantizes.
struct QuantizeOptions {
    /// Backend of every int8 layer.
    Int8Backend backend = Int8Backend::Auto;
    /// When set, called once on the float copy with observers on: it should run the calibration
    /// samples (N held-out windows) through the model. Each layer then uses the largest input it
    /// saw as a static activation range instead of a per-batch one.
    std::function<void(torch::nn::Module&)> calibrate;
};

/// What was quantized.
struct QuantizeReport {
    /// Linear layers turned into Int8Linear (LSTM projections not included).
    int64_t linear_layers = 0;
    /// LSTMs given int8 projections.
    int64_t lstm_layers = 0;
    /// Other modules whose own tensors went int8 (Int8Convertible: embedding tables, depthwise convolutions).
    int64_t converted_modules = 0;
    /// Paths of the quantized modules.
    std::vector<std::string> quantized;
    /// module_bytes() before: every parameter and buffer of the float model.
    int64_t float_bytes = 0;
    /// module_bytes() after: every parameter and buffer of the inference copy (int8 weights, their
    /// scales, int8 biases and the float rest: norms and the SSM's per-head parameters).
    int64_t int8_bytes = 0;
    /// int8_bytes / float_bytes, the one footprint ratio the engine reports (goal <= 0.30).
    double bytes_ratio() const
    {
        return float_bytes > 0 ? static_cast<double>(int8_bytes) / static_cast<double>(float_bytes) : 0.0;
    }
};

/// Thrown when a model holds layers quantize_for_inference() cannot swap; what() names them.
class NotQuantizable : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// Bytes of all parameters and buffers of `module` and its children.
int64_t module_bytes(const torch::nn::Module& module);

/// Bytes of each parameter and buffer of `module` by its dotted name, largest first (for finding
/// what an inference copy still keeps in float).
std::vector<std::pair<std::string, int64_t>> named_tensor_bytes(const torch::nn::Module& module);

/// Throws NotQuantizable naming every torch::nn::Linear/LSTM/GRU/RNN/MultiheadAttention in
/// `module` (they cannot be swapped in place; use QuantizableLinear / QuantizableLstm), or when
/// it has no quantizable layer at all.
void check_quantizable(const torch::nn::Module& module);

/// Quantizes every QuantizableLinear and QuantizableLstm of `module` in place (eval mode) and converts
/// every Int8Convertible module's own tensors.
QuantizeReport quantize_module(torch::nn::Module& module, const QuantizeOptions& options = {});

/// Copies every parameter and buffer of `from` into `to` (same structure), under no_grad.
void copy_state(const torch::nn::Module& from, torch::nn::Module& to);

/// Deep-copies `model` (a ModuleHolder whose Impl is built from `model->options`), moves the copy
/// to the model's device and quantizes it. The float model is untouched: call again to refresh
/// the int8 copy after more training. Throws NotQuantizable with the reason when it cannot.
template <class Holder>
Holder quantize_for_inference(const Holder& model, const QuantizeOptions& options = {},
                              QuantizeReport* report = nullptr)
{
    check_quantizable(*model);
    // Building the copy draws initial weights from the default generator; keep the caller's
    // random stream where it was.
    auto generator = at::detail::getDefaultCPUGenerator();
    torch::Tensor rng_state;
    {
        std::lock_guard<std::mutex> lock(generator.mutex());
        rng_state = generator.get_state();
    }
    Holder copy(model->options);
    {
        std::lock_guard<std::mutex> lock(generator.mutex());
        generator.set_state(rng_state);
    }
    const auto params = model->parameters();
    if (!params.empty()) copy->to(params.front().device());
    copy_state(*model, *copy);
    const QuantizeReport r = quantize_module(*copy, options);
    if (report) *report = r;
    return copy;
}

} // namespace foxhunt::models::precision
