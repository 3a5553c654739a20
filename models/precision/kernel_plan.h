// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which int8 kernel each layer of an inference copy uses, chosen by timing the layer's own shapes
// on this machine (as cuDNN's benchmark mode chooses convolution algorithms), once per machine
// and shape, with the timings kept in a cache the caller provides.

#include "models/precision/int8_linear.h"

#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace foxhunt::models::precision {

/// One product an Int8Linear computes: [rows, in] x [in, out].
struct KernelShape {
    /// Input features.
    int64_t in_features = 0;
    /// Output features.
    int64_t out_features = 0;
    /// Rows of the input (leading dimensions flattened).
    int64_t rows = 0;
    /// The layer has a calibrated activation range (the Static backend is a candidate).
    bool static_range = false;

    /// "in x out @ rows" (with " static" when static_range), the cache's key.
    std::string key() const;
    /// Field-wise comparison (a map key).
    auto operator<=>(const KernelShape&) const = default;
};

/// One backend measured at one shape.
struct KernelTiming {
    /// The backend.
    Int8Backend backend = Int8Backend::Dequantize;
    /// Median microseconds per call.
    double micros = 0.0;
    /// ||y - y_fp32|| / ||y_fp32|| on the timing input (the float weight's own output).
    double relative_error = 0.0;
};

/// Timings of this machine's kernels by shape, kept across runs (the engine keeps them in the
/// store). Implementations need not be thread-safe: a plan is made on one thread.
class KernelTimingCache {
public:
    virtual ~KernelTimingCache() = default;
    /// The timings stored for `shape` on `device` ("cpu", "cuda:0") of `machine` (a fingerprint).
    virtual std::optional<std::vector<KernelTiming>> find(const std::string& machine, const std::string& device,
                                                          const KernelShape& shape) = 0;
    /// Stores them.
    virtual void store(const std::string& machine, const std::string& device, const KernelShape& shape,
                       const std::vector<KernelTiming>& timings) = 0;
};

/// Times `candidates` at `shape` on `device`. Tests inject their own to decide without a clock.
using KernelTimer = std::function<std::vector<KernelTiming>(const KernelShape& shape, const torch::Device& device,
                                                            const std::vector<Int8Backend>& candidates)>;

/// The backends worth timing at `shape` on `device`: Float and Dequantize everywhere, OneDnn on a
/// CPU whose LibTorch has it, CudaIntMm on CUDA where the build has _int_mm, Static for a layer
/// with a calibrated range.
std::vector<Int8Backend> candidate_backends(const KernelShape& shape, const torch::Device& device);

/// The real timer: a random weight of the shape (N(0, 1/in)) and input (N(0, 1)), each candidate
/// called until ~2 ms or 50 calls have been timed after two warm-up calls; the median, and the
/// output's error against the float product.
std::vector<KernelTiming> time_kernels(const KernelShape& shape, const torch::Device& device,
                                       const std::vector<Int8Backend>& candidates);

/// The fastest of `timings` whose relative error is at most `max_error` and which is not in
/// `exclude`; Float when none qualifies (it has only the weight's rounding).
Int8Backend choose_backend(const std::vector<KernelTiming>& timings, double max_error,
                           const std::vector<Int8Backend>& exclude = {});

/// How plan_int8_kernels() chooses.
struct KernelPlanOptions {
    /// Auto: measure and choose per layer. Any other: a choice by hand, used by every layer
    /// (Static only where a layer has a calibrated range), nothing measured.
    Int8Backend backend = Int8Backend::Auto;
    /// The timer (empty: time_kernels()).
    KernelTimer timer;
    /// Where timings are kept between runs (null: measured every time, kept in this process only).
    KernelTimingCache* cache = nullptr;
    /// The machine's fingerprint for the cache ("": hardware::this_machine().fingerprint()).
    std::string machine;
    /// A backend whose output error at a layer exceeds this is not used there.
    double max_layer_error = 0.05;
    /// Backends not to use (a fallback after a failed accuracy check excludes the least accurate).
    std::vector<Int8Backend> exclude;
};

/// The kernel one layer uses at one of its serving shapes.
struct LayerKernel {
    /// The Int8Linear's path in the model.
    std::string layer;
    /// The shape it serves.
    KernelShape shape;
    /// The backend chosen for it.
    Int8Backend backend = Int8Backend::Dequantize;
    /// Every candidate's measurement (empty for a choice by hand).
    std::vector<KernelTiming> timings;
    /// The timings came from the cache.
    bool cached = false;
};

/// One kernel of a fused block (see FusedInt8Block) measured at one row count.
struct BlockTiming {
    /// The kernel's name: "layers" (each int8 layer through its own plan) or a fused kernel's.
    std::string kernel;
    /// Median microseconds per call.
    double micros = 0.0;
    /// ||y - y_layers|| / ||y_layers|| on the timing input (0 for "layers" itself).
    double relative_error = 0.0;
};

/// A module that can serve a group of its int8 layers with one fused kernel as well as layer by
/// layer (the TFT's variable selection). plan_int8_kernels() records the rows it serves, times its
/// kernels at each of them once the layers' own plan is in place, and gives it the fastest within
/// the error bound.
class FusedInt8Block {
public:
    virtual ~FusedInt8Block() = default;
    /// Starts (clearing what was seen) or stops recording the row counts forward() serves.
    virtual void set_block_recording(bool on) = 0;
    /// Distinct row counts served while recording, in the order first seen.
    virtual std::vector<int64_t> block_recorded_rows() const = 0;
    /// Times each of its kernels on a random input of `rows` rows ("layers" first).
    virtual std::vector<BlockTiming> time_block_kernels(int64_t rows) = 0;
    /// Which kernel serves inputs of about which rows (nearest by ratio); empty: its default.
    virtual void set_block_plan(std::vector<std::pair<int64_t, std::string>> plan) = 0;
    /// The kernel for each of `rows` given its timings there (same order): by default the fastest
    /// within `max_error` at each (choose_block_kernel()). A block whose kernels keep different
    /// tensors may prefer one set for all row counts.
    virtual std::vector<std::string> choose_block_kernels(const std::vector<int64_t>& rows,
                                                          const std::vector<std::vector<BlockTiming>>& timings,
                                                          double max_error) const;
    /// Drops the tensors its plan serves no row count with (a block served by a table everywhere
    /// keeps no layer weights, one that never uses its table drops it), so that the served copy
    /// holds what it uses; returns the bytes freed. plan_int8_kernels() calls it after the plan.
    virtual int64_t release_unplanned() { return 0; }
};

/// Times each of `kernels` through `run(kernel)` (the block's forward with that kernel forced):
/// the median of 5 to 50 calls (about 4 ms) after a warm-up call, each output's error against the
/// first kernel's.
std::vector<BlockTiming> time_block_candidates(const std::vector<std::string>& kernels,
                                               const std::function<torch::Tensor(const std::string&)>& run);

/// The fastest of `timings` whose relative error is at most `max_error`; "layers" when none
/// qualifies or there are none.
std::string choose_block_kernel(const std::vector<BlockTiming>& timings, double max_error);

/// The kernel a fused block uses at one of its serving row counts.
struct BlockKernel {
    /// The block's path in the model.
    std::string block;
    /// The rows it serves.
    int64_t rows = 0;
    /// The kernel chosen.
    std::string kernel;
    /// Every kernel's measurement (empty for a plan by hand: "layers").
    std::vector<BlockTiming> timings;
};

/// What plan_int8_kernels() decided.
struct KernelPlan {
    /// One entry per layer and serving shape, in the model's module order.
    std::vector<LayerKernel> layers;
    /// One entry per fused block and serving row count (a plan by hand uses none).
    std::vector<BlockKernel> blocks;
    /// Distinct shapes timed now.
    int measured_shapes = 0;
    /// Distinct shapes whose timings came from the cache.
    int cached_shapes = 0;
    /// Seconds spent timing.
    double measure_seconds = 0.0;
    /// Bytes the blocks dropped after the plan (FusedInt8Block::release_unplanned()).
    int64_t released_bytes = 0;
    /// Whether the plan was made by hand (KernelPlanOptions::backend not Auto).
    bool by_hand = false;

    /// "onednn 6, fp32 3" style count of the backends chosen (the blocks' fused kernels counted
    /// beside them, "fused-int8 2").
    std::string summary() const;
};

/// Makes the kernel plan of an int8 inference copy: runs `serve` (which should call the model at
/// each serving batch size, e.g. 1 and 32) while every Int8Linear records the rows it sees, times
/// each distinct shape (or takes it from the cache), and gives each layer the fastest backend per
/// shape within options.max_layer_error; then (Auto only) times every FusedInt8Block's kernels at
/// the rows it served and gives it the fastest within the same bound.
KernelPlan plan_int8_kernels(torch::nn::Module& int8_model, const std::function<void()>& serve,
                             const KernelPlanOptions& options = {});

} // namespace foxhunt::models::precision
