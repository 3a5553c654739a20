#pragma once
// Post-training int8 quantisation of a whole model into a separate inference copy.

#include "models/precision/int8_linear.h"
#include "models/precision/quantizable.h"

#include <torch/torch.h>

#include <functional>
#include <stdexcept>
#include <string>
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
    /// Paths of the quantized modules.
    std::vector<std::string> quantized;
    /// Bytes of parameters and buffers before.
    int64_t float_bytes = 0;
    /// Bytes of parameters and buffers after (int8 weights, scales, biases and the float rest).
    int64_t int8_bytes = 0;
};

/// Thrown when a model holds layers quantize_for_inference() cannot swap; what() names them.
class NotQuantizable : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// Bytes of all parameters and buffers of `module` and its children.
int64_t module_bytes(const torch::nn::Module& module);

/// Throws NotQuantizable naming every torch::nn::Linear/LSTM/GRU/RNN/MultiheadAttention in
/// `module` (they cannot be swapped in place; use QuantizableLinear / QuantizableLstm), or when
/// it has no quantizable layer at all.
void check_quantizable(const torch::nn::Module& module);

/// Quantizes every QuantizableLinear and QuantizableLstm of `module` in place (eval mode).
QuantizeReport quantize_module(torch::nn::Module& module, const QuantizeOptions& options = {});

/// Copies every parameter and buffer of `from` into `to` (same structure), under no_grad.
void copy_state(const torch::nn::Module& from, torch::nn::Module& to);

/// Deep-copies `model` (a ModuleHolder whose Impl is built from `model->options`), moves the copy
/// to the model's device and quantizes it. The float model is untouched: call again to refresh
/// the int8 copy after more training. Throws NotQuantizable with the reason when it cannot.
template <class Holder>
Holder quantize_for_inference(const Holder& model, const QuantizeOptions& options = {}, QuantizeReport* report = nullptr)
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
