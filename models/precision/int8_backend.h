// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The int8 kernels an Int8Linear can compute with, by name. std-only, so engine headers the ui sees
// (and config parsing) can name them.

#include <optional>
#include <string>

namespace foxhunt::models::precision {

/// How an Int8Linear computes its product.
enum class Int8Backend {
    /// Without a kernel plan: Static for a layer with a calibrated range, else CudaIntMm on CUDA
    /// where the build has it, else Dequantize. With a plan (set_plan()), the plan's choice.
    Auto,
    /// LibTorch's quantized CPU engine (oneDNN): quantized::linear_dynamic, int8 x uint8 GEMM with
    /// per-batch activation ranges; 7-bit activations on CPUs without int8 dot products (VNNI/AMX),
    /// where 8-bit ones could saturate.
    OneDnn,
    /// at::_int_mm (CUDA, LibTorch >= 2.1): int8 x int8 -> int32 GEMM with per-row activation scales.
    CudaIntMm,
    /// Any device: weights dequantized on every call to the activation type, float GEMM. Saves
    /// weight memory, not time.
    Dequantize,
    /// Any device: the dequantized weight kept in float beside the int8 one, float GEMM. FP32's
    /// speed with INT8's rounding; costs the float weight's memory (see cache_bytes()).
    Float,
    /// Calibrated static activation range (the layer must have one): int8 activations against the
    /// int8 weight, through _int_mm on CUDA, emulated exactly in a float GEMM elsewhere.
    Static,
};

/// "auto", "onednn", "cuda-int-mm", "dequantize", "fp32", "static".
std::string to_string(Int8Backend backend);
/// Parses the names to_string() gives; nullopt otherwise.
std::optional<Int8Backend> int8_backend_from_string(const std::string& name);

} // namespace foxhunt::models::precision
