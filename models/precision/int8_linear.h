#pragma once
// Int8 inference linear layer: symmetric per-output-channel int8 weights, float activations in and out.

#include <torch/torch.h>

#include <optional>
#include <string>

namespace foxhunt::models::precision {

/// How an Int8Linear computes its product.
enum class Int8Backend {
    /// CudaIntMm on CUDA where the build has it, else Dequantize (also on the CPU: see OneDnn).
    Auto,
    /// LibTorch's quantized CPU engine (oneDNN): quantized::linear_dynamic, int8 x uint8 GEMM
    /// (7-bit activations). Opt-in: not accurate enough on every CPU (see tst_int8).
    OneDnn,
    /// at::_int_mm (CUDA, LibTorch >= 2.1): int8 x int8 -> int32 GEMM with per-row activation scales.
    CudaIntMm,
    /// Fallback on any device: weights dequantized on the fly to the activation type, float GEMM.
    /// Saves weight memory, not time.
    Dequantize,
};

/// "auto", "onednn", "cuda-int-mm", "dequantize".
std::string to_string(Int8Backend backend);

/// Symmetric per-row int8 weights: w ~= q * scale[row], zero point 0.
struct PerRowInt8 {
    /// [out, in] int8.
    torch::Tensor q;
    /// [out] float32, absmax(row) / 127 (rows of zeros get 1).
    torch::Tensor scale;
};

// w: [out, in] float -> q [out, in] int8, scale [out]
/// Quantizes each output row to int8 with its own scale. |w - q*scale| <= scale/2 per element.
PerRowInt8 quantize_per_row(const torch::Tensor& w);
// -> [out, in] float32
/// q * scale per row.
torch::Tensor dequantize_per_row(const PerRowInt8& w);

/// Options of an Int8Linear.
struct Int8LinearOptions {
    /// Backend choice; Auto resolves on first use for the input's device.
    TORCH_ARG(Int8Backend, backend) = Int8Backend::Auto;
    /// Calibrated activation absmax for a static input range (nullopt: dynamic, per batch).
    TORCH_ARG(std::optional<double>, activation_absmax) = std::nullopt;
};

/// A Linear layer for inference only: int8 weight + per-row float scales + float bias (buffers,
/// no parameters, no gradients). Built from a float weight with quantize_per_row().
class Int8LinearImpl : public torch::nn::Module {
public:
    /// Quantizes `weight` [out, in] and keeps `bias` [out] (may be undefined) in float32.
    Int8LinearImpl(const torch::Tensor& weight, const torch::Tensor& bias, const Int8LinearOptions& options = {});

    // x: [..., in] -> [..., out], in x's floating type
    /// The product through the chosen backend.
    torch::Tensor forward(const torch::Tensor& x);

    /// Input features.
    int64_t in_features() const { return weight_int8.size(1); }
    /// Output features.
    int64_t out_features() const { return weight_int8.size(0); }
    /// The backend forward() uses for tensors on `device` (Auto resolved).
    Int8Backend resolved_backend(c10::DeviceType device) const;
    /// Bytes of the int8 weight, scales and bias.
    int64_t weight_bytes() const;
    /// The float weight these int8 values stand for, [out, in] float32.
    torch::Tensor dequantized_weight() const;

    /// The options it was built with.
    Int8LinearOptions options;
    /// [out, in] int8.
    torch::Tensor weight_int8;
    /// [out] float32.
    torch::Tensor weight_scale;
    /// [out] float32, or undefined.
    torch::Tensor bias;

private:
    torch::Tensor forward_onednn(const torch::Tensor& x2d);
    torch::Tensor forward_int_mm(const torch::Tensor& x2d);
    torch::Tensor forward_static(const torch::Tensor& x2d);
    torch::Tensor forward_dequantize(const torch::Tensor& x2d);

    c10::IValue m_packed;            // oneDNN prepacked weight, built on first CPU use
    c10::Device m_packed_device = c10::Device(c10::DeviceType::CPU);
};
TORCH_MODULE(Int8Linear);

/// True when this LibTorch has the oneDNN quantized engine (Debian's 1.13 does; it lacks FBGEMM).
bool onednn_quantized_available();

} // namespace foxhunt::models::precision
