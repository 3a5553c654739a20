// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Int8 inference linear layer: symmetric per-output-channel int8 weights, float activations in and out.

#include "models/precision/int8_backend.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt::models::precision {

/// One entry of a layer's kernel plan: inputs of about `rows` rows go through `backend`.
struct RowsBackend {
    /// Rows (flattened leading dimensions) of the inputs this entry was measured at.
    int64_t rows = 0;
    /// The backend to use for them.
    Int8Backend backend = Int8Backend::Dequantize;
    /// Field-wise equality.
    bool operator==(const RowsBackend&) const = default;
};

/// The entry of `plan` (not empty) measured at the rows nearest to `rows` by ratio, rows_of(entry)
/// giving an entry's rows: 40 rows are served like 32, not like 60.
template <class Entry, class RowsOf>
const Entry& nearest_by_rows(const std::vector<Entry>& plan, int64_t rows, RowsOf&& rows_of)
{
    const auto distance = [rows](int64_t r) {
        return std::abs(std::log(static_cast<double>(std::max<int64_t>(r, 1))) -
                        std::log(static_cast<double>(std::max<int64_t>(rows, 1))));
    };
    const Entry* best = &plan.front();
    for (const Entry& e : plan)
        if (distance(rows_of(e)) < distance(rows_of(*best))) best = &e;
    return *best;
}

/// Symmetric per-row int8 weights: w ~= q * scale()[row], zero point 0. The row scales are stored in
/// one byte each, logarithmically below the largest one (double quantization of the scales, as in
/// QLoRA): scale[row] = scale_max * 2^(-scale_code[row] / 16). Codes are rounded so that a row's
/// scale is never below absmax(row) / 127: nothing clips, and a row uses at least 127 / 2^(1/16),
/// i.e. 121 of its 127 levels.
struct PerRowInt8 {
    /// [out, in] int8.
    torch::Tensor q;
    /// [out] uint8 scale codes.
    torch::Tensor scale_code;
    /// [1] float32, the largest row scale (1 for an all-zero tensor).
    torch::Tensor scale_max;
    // -> [out] float32
    /// The decoded row scales.
    torch::Tensor scale() const;
};

/// Symmetric int8 vector with one float scale (biases): v ~= q * scale.
struct PerTensorInt8 {
    /// [n] int8.
    torch::Tensor q;
    /// [1] float32, absmax / 127 (1 for a zero vector).
    torch::Tensor scale;
};

// w: [out, in] float -> q [out, in] int8, scale codes [out], scale_max [1]
/// Quantizes each output row to int8 with its own scale. |w - q*scale| <= scale/2 per element.
PerRowInt8 quantize_per_row(const torch::Tensor& w);
// -> [out, in] float32
/// q * scale per row.
torch::Tensor dequantize_per_row(const PerRowInt8& w);
// q: [out, in] int8, scale: [out] float32 (w.scale()) -> [out, in] float32
/// dequantize_per_row() with the row scales already decoded: the same values, bit for bit.
torch::Tensor dequantize_per_row(const torch::Tensor& q, const torch::Tensor& scale);
// v: [n] float -> q [n] int8, scale [1]
/// Quantizes a vector with one scale. |v - q*scale| <= scale/2 per element.
PerTensorInt8 quantize_per_tensor(const torch::Tensor& v);
// -> [n] float32
/// q * scale.
torch::Tensor dequantize_per_tensor(const PerTensorInt8& v);

/// Remembers which tensors, with which contents, a derived value was computed from: `matches()`
/// turns false once any of them was replaced, given new storage (Module::to(), set_data(), a load
/// across devices) or written in place (copy_(), a load, any in-place op bumps its version).
/// It holds the tensors and their storages, so an address it compares cannot be reused meanwhile.
class SourceStamp {
public:
    /// Whether `sources` are, in order, the tensors last remembered, unchanged since.
    bool matches(c10::ArrayRef<torch::Tensor> sources) const;
    /// Remembers `sources` as they are now (an undefined one as absent). Returns false (and
    /// remembers nothing) when one cannot be tracked: an inference tensor (no version counter) or
    /// one without storage.
    bool remember(c10::ArrayRef<torch::Tensor> sources);
    /// Forgets them: matches() is false until the next remember().
    void clear() { m_sources.clear(); }

private:
    struct Source {
        torch::Tensor tensor;
        c10::Storage storage;
        const void* data = nullptr;
        int64_t version = 0;
    };
    std::vector<Source> m_sources;
};

/// An inference-time cache of one float tensor derived from int8 buffers only (decoded row scales,
/// a dequantized bias), so that forward() does not derive it again on every call. It derives again
/// whenever a source changed (see SourceStamp), so its value is always what deriving afresh gives.
/// Not a buffer: module_bytes() and weight_bytes() do not count it (they report what is stored).
class DerivedTensorCache {
public:
    /// derive() of `sources`, from the cache while they are unchanged. derive() runs without
    /// autograd and outside inference mode, so the cached tensor is an ordinary one.
    template <class Derive>
    torch::Tensor get(std::initializer_list<torch::Tensor> sources, Derive&& derive)
    {
        if (m_value.defined() && m_stamp.matches(sources)) return m_value;
        torch::Tensor value;
        {
            c10::InferenceMode not_inference(/*enabled=*/false);
            torch::NoGradGuard no_grad;
            value = derive();
        }
        // Untrackable sources: hand out the fresh value and keep nothing.
        m_value = m_stamp.remember(sources) ? value : torch::Tensor();
        return value;
    }
    /// Bytes the cached tensor holds (0 when empty).
    int64_t bytes() const { return m_value.defined() ? static_cast<int64_t>(m_value.nbytes()) : 0; }

private:
    SourceStamp m_stamp;
    torch::Tensor m_value;
};

// -> [out] float32
/// w.scale(), decoded through `cache`: once per change of w's scale buffers.
torch::Tensor cached_scale(const PerRowInt8& w, DerivedTensorCache& cache);
// -> [n] float32
/// dequantize_per_tensor(v) through `cache`: once per change of v's buffers.
torch::Tensor cached_dequantized(const PerTensorInt8& v, DerivedTensorCache& cache);

/// Registers the three tensors of `w` as buffers of `module`: <name>_int8, <name>_scale_code,
/// <name>_scale_max. Returns them as registered.
PerRowInt8 register_per_row(torch::nn::Module& module, const std::string& name, const PerRowInt8& w);
/// Registers <name>_int8 and <name>_scale of `v` as buffers of `module`. Returns them as registered.
PerTensorInt8 register_per_tensor(torch::nn::Module& module, const std::string& name, const PerTensorInt8& v);

/// A module that holds float tensors of its own (not QuantizableLinear/QuantizableLstm children)
/// which quantize_module() should turn into int8 too: embedding tables, depthwise convolutions.
class Int8Convertible {
public:
    virtual ~Int8Convertible() = default;
    /// Replaces the float tensors by int8 buffers and frees them; forward() keeps working.
    virtual void convert_to_int8() = 0;
    /// Whether convert_to_int8() ran.
    virtual bool converted_to_int8() const = 0;
};

/// Options of an Int8Linear.
struct Int8LinearOptions {
    /// Backend choice; Auto resolves on first use for the input's device.
    TORCH_ARG(Int8Backend, backend) = Int8Backend::Auto;
    /// Calibrated activation absmax for a static input range (nullopt: dynamic, per batch).
    TORCH_ARG(std::optional<double>, activation_absmax) = std::nullopt;
    /// oneDNN: 7-bit activations. nullopt: only where this machine's CPU lacks int8 dot products
    /// (VNNI or AMX-INT8), whose 16-bit intermediate sums 8-bit activations could saturate.
    TORCH_ARG(std::optional<bool>, reduce_range) = std::nullopt;
};

/// A Linear layer for inference only: per-row int8 weight (see PerRowInt8) and an int8 bias with one
/// scale (buffers, no parameters, no gradients). Built from a float weight with quantize_per_row().
class Int8LinearImpl : public torch::nn::Module {
public:
    /// Quantizes `weight` [out, in] and `bias` [out] (may be undefined).
    Int8LinearImpl(const torch::Tensor& weight, const torch::Tensor& bias, const Int8LinearOptions& options = {});

    // x: [..., in] -> [..., out], in x's floating type
    /// The product through the chosen backend.
    torch::Tensor forward(const torch::Tensor& x);

    /// Input features.
    int64_t in_features() const { return weight.q.size(1); }
    /// Output features.
    int64_t out_features() const { return weight.q.size(0); }
    /// The backend forward() uses for tensors on `device` without a plan (Auto resolved).
    Int8Backend resolved_backend(c10::DeviceType device) const;
    /// The backend forward() uses for an input of `rows` rows on `device`: the plan entry nearest
    /// to `rows` (by ratio), or resolved_backend() without a plan.
    Int8Backend backend_for(int64_t rows, c10::DeviceType device) const;
    /// Replaces the kernel plan (see plan_int8_kernels()); an empty plan restores the default.
    /// Static entries need a calibrated range.
    void set_plan(std::vector<RowsBackend> plan);
    /// The kernel plan (empty: none).
    const std::vector<RowsBackend>& plan() const { return m_plan; }
    /// Starts (clearing what was seen) or stops recording the row counts forward() sees.
    void set_recording(bool on);
    /// Records `rows` while recording, as if forward() had seen such an input (for callers that
    /// compute with the layer's weights themselves, like a fused LSTM).
    void note_rows(int64_t rows);
    /// Distinct row counts forward() saw while recording, in the order first seen.
    const std::vector<int64_t>& recorded_rows() const { return m_recorded_rows; }
    /// Whether the oneDNN backend uses 7-bit activations here (options.reduce_range(), or this machine's CPU).
    bool onednn_reduce_range() const;
    /// Bytes of its buffers: int8 weight, scale codes, int8 bias and their scales. The stored
    /// footprint: the decoded scales and bias forward() caches are not counted (see cache_bytes()).
    int64_t weight_bytes() const;
    /// Bytes of the inference-time cache beside the buffers: the decoded row scales and the
    /// dequantized bias, float32 each, [out] (8 bytes per output row; 0 before the first forward()),
    /// and, once the Float backend ran, the float weight [out, in].
    int64_t cache_bytes() const { return m_scale_cache.bytes() + m_bias_cache.bytes() + m_float_cache.bytes(); }
    /// The float weight these int8 values stand for, [out, in] float32.
    torch::Tensor dequantized_weight() const;
    /// The decoded row scales, [out] float32, decoded afresh (forward() uses a cached copy).
    torch::Tensor weight_scale() const { return weight.scale(); }
    /// The float bias these int8 values stand for, [out] float32, or undefined.
    torch::Tensor dequantized_bias() const;
    /// Whether it has a bias.
    bool has_bias() const { return bias.q.defined(); }
    /// dequantized_weight(), kept (the Float backend's weight; counted in cache_bytes()).
    torch::Tensor float_weight();
    /// dequantized_bias(), kept; undefined without a bias.
    torch::Tensor float_bias() { return cached_bias(); }
    /// forward() for many calls in a row on inputs of `rows` rows of type `dtype` (a recurrence's
    /// steps): where forward() would dequantize the weight on every call, the returned function
    /// holds one dequantized temporary for as long as it lives. Same results as forward().
    std::function<torch::Tensor(const torch::Tensor&)> repeated_forward(c10::ScalarType dtype, c10::DeviceType device,
                                                                        int64_t rows = 1);

    /// The options it was built with.
    Int8LinearOptions options;
    /// The int8 weight (buffers weight_int8, weight_scale_code, weight_scale_max).
    PerRowInt8 weight;
    /// The int8 bias (buffers bias_int8, bias_scale), undefined without one.
    PerTensorInt8 bias;

private:
    torch::Tensor forward_onednn(const torch::Tensor& x2d);
    torch::Tensor forward_int_mm(const torch::Tensor& x2d);
    torch::Tensor forward_static(const torch::Tensor& x2d);
    torch::Tensor forward_dequantize(const torch::Tensor& x2d);
    torch::Tensor forward_float(const torch::Tensor& x2d);
    // The decoded row scales and the float bias, each derived once per change of the buffers.
    torch::Tensor cached_scale();
    torch::Tensor cached_bias();

    DerivedTensorCache m_scale_cache;
    DerivedTensorCache m_bias_cache;
    DerivedTensorCache m_float_cache; // the Float backend's weight
    std::vector<RowsBackend> m_plan;
    bool m_recording = false;
    std::vector<int64_t> m_recorded_rows;
    c10::IValue m_packed;       // oneDNN prepacked weight, built on first CPU use
    SourceStamp m_packed_stamp; // the buffers m_packed was built from
};
TORCH_MODULE(Int8Linear);

/// True when this LibTorch has the oneDNN quantized engine (Debian's 1.13 does; it lacks FBGEMM).
bool onednn_quantized_available();

} // namespace foxhunt::models::precision
