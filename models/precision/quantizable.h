// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Linear and LSTM layers that train in float and can be swapped, in an inference copy, for int8.
// They keep torch::nn::Linear's and torch::nn::LSTM's parameter names, initialisation and kernels.

#include "models/precision/int8_linear.h"

#include <torch/torch.h>

#include <array>
#include <optional>
#include <tuple>
#include <vector>

namespace foxhunt::models::precision {

/// A drop-in torch::nn::Linear (same options, parameter names "weight"/"bias", same initialisation)
/// that quantize() turns into an Int8Linear for inference.
class QuantizableLinearImpl : public torch::nn::Module {
public:
    /// in -> out with bias.
    QuantizableLinearImpl(int64_t in_features, int64_t out_features);
    /// Built from torch::nn::LinearOptions.
    explicit QuantizableLinearImpl(const torch::nn::LinearOptions& options);

    // x: [..., in] -> [..., out]
    /// Float linear (autocast applies), or the int8 product once quantized.
    torch::Tensor forward(const torch::Tensor& x);

    /// Replaces the float weight by an Int8Linear (registered as "int8") and frees the float
    /// weight and bias; uses the calibrated input range when one was observed and static is set.
    void quantize(Int8Backend backend, bool static_range);
    /// Whether quantize() ran.
    bool quantized() const { return !int8.is_empty(); }
    /// Starts or stops recording the input absmax (calibration).
    void set_observing(bool on) { m_observing = on; }
    /// Whether forward() records the input absmax.
    bool observing() const { return m_observing; }
    /// Largest |input| seen while observing (0 when none).
    double observed_absmax() const { return m_absmax; }

    /// The options it was built with.
    torch::nn::LinearOptions options;
    /// [out, in], float (empty once quantized).
    torch::Tensor weight;
    /// [out] or undefined.
    torch::Tensor bias;
    /// The int8 layer after quantize(), else empty.
    Int8Linear int8{nullptr};

private:
    bool m_observing = false;
    double m_absmax = 0.0;
};
TORCH_MODULE(QuantizableLinear);

/// The (h, c) state of an LSTM, each [layers, B, hidden].
using LstmState = std::tuple<torch::Tensor, torch::Tensor>;

/// A drop-in torch::nn::LSTM (unidirectional, no projection) whose float path is the same
/// at::lstm kernel; quantize() swaps in per-gate-row int8 input and hidden projections, and the
/// recurrence then runs with int8 matmuls.
class QuantizableLstmImpl : public torch::nn::Module {
public:
    /// Built from torch::nn::LSTMOptions (bidirectional and proj_size are not supported).
    explicit QuantizableLstmImpl(const torch::nn::LSTMOptions& options);

    // input: [B, T, in] if batch_first else [T, B, in]; hx: ([L, B, H], [L, B, H]) ->
    // (output [B, T, H] / [T, B, H], (h_n, c_n))
    /// Same contract as torch::nn::LSTM::forward.
    std::tuple<torch::Tensor, LstmState> forward(const torch::Tensor& input,
                                                 std::optional<LstmState> hx = std::nullopt);

    /// Quantizes every layer's W_ih (with b_ih + b_hh) and W_hh per gate row; frees the float weights.
    void quantize(Int8Backend backend, bool static_range);
    /// For a quantized layer `layer` whose two projections both run in float for an input of
    /// `batch` x `steps` rows on `device` (their kernel plan, or the default, says Float or
    /// Dequantize): the weights to run a float LSTM kernel with, {W_ih, W_hh, b_ih + b_hh (or
    /// undefined)} dequantized, the rows noted for the plan. nullopt otherwise.
    std::optional<std::array<torch::Tensor, 3>> float_projections(int64_t layer, int64_t batch, int64_t steps,
                                                                  c10::DeviceType device);
    /// For a quantized layer `layer` whose hidden projection runs in float for `x`'s batch (its plan
    /// says Float or Dequantize): {the input projections of every step through W_ih's own kernel,
    /// [B, T, 4H] with b_ih + b_hh, and W_hh dequantized, [4H, H]}, for a float recurrence kernel
    /// (`x` is [B, T, in], batch first). nullopt otherwise.
    std::optional<std::array<torch::Tensor, 2>> projected_input(int64_t layer, const torch::Tensor& x);
    /// Whether quantize() ran.
    bool quantized() const { return !m_int8_ih.empty(); }
    /// Starts or stops recording the input absmax (calibration of the first layer's input).
    void set_observing(bool on) { m_observing = on; }
    /// Whether forward() records the input absmax.
    bool observing() const { return m_observing; }
    /// Largest |input| seen while observing (0 when none).
    double observed_absmax() const { return m_absmax; }

    /// The options it was built with.
    torch::nn::LSTMOptions options;

private:
    std::vector<torch::Tensor> m_flat_weights;
    std::vector<Int8Linear> m_int8_ih;
    std::vector<Int8Linear> m_int8_hh;
    bool m_observing = false;
    double m_absmax = 0.0;
};
TORCH_MODULE(QuantizableLstm);

} // namespace foxhunt::models::precision
