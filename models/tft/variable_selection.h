// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Variable selection network: embeds each continuous variable, transforms it with
// its own GRN and mixes them with softmax weights that are the model's importances.

#include "models/tft/gated_residual.h"

#include "models/precision/int8_linear.h"
#include "models/precision/kernel_plan.h"
#include "models/tft/inference_kernels.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace foxhunt::models::tft {

/// Options for VariableSelectionNetwork.
struct VariableSelectionNetworkOptions {
    VariableSelectionNetworkOptions(int64_t n_variables, int64_t hidden_size)
        : n_variables_(n_variables), hidden_size_(hidden_size)
    {
    }
    /// Number of continuous input variables (0 allowed: the output is zero).
    TORCH_ARG(int64_t, n_variables);
    /// Output width.
    TORCH_ARG(int64_t, hidden_size);
    /// Width of each variable's linear embedding.
    TORCH_ARG(int64_t, embedding_size) = 8;
    /// Width of the static context (0: none).
    TORCH_ARG(int64_t, context_size) = 0;
    /// Dropout inside the GRNs.
    TORCH_ARG(double, dropout) = 0.0;
};

/// Selected representation and the weights that selected it.
struct VariableSelectionOutput {
    /// [..., hidden]
    torch::Tensor output;
    /// [..., n_variables], non-negative, summing to 1.
    torch::Tensor weights;
};

/// Variable selection network of the TFT paper (Lim et al. 2021, eq. 6-8).
///
/// For inference (eval mode, no autograd, float32 on the CPU, hidden 16, 32 or 64) the variable
/// GRNs run fused (see inference_kernels.h): "fused-fp32" in a float model. An int8 copy serves
/// "layers" (each int8 layer through its own kernel) until plan_int8_kernels() times its kernels,
/// "layers", "fused-fp32" (its int8 weights dequantized), where the CPU has AVX512-VNNI
/// "fused-int8", and where calibration gave each variable its input range "table" (each variable's
/// GRN tabulated over that range, interpolated: see convert_to_int8()), and picks the fastest
/// within the error bound. A copy whose plan serves the table at every row count drops its
/// variable GRNs (release_unplanned()).
class VariableSelectionNetworkImpl : public torch::nn::Module,
                                     public precision::Int8Convertible,
                                     public precision::FusedInt8Block {
public:
    /// Builds embeddings, per-variable GRNs and the weight GRN.
    explicit VariableSelectionNetworkImpl(const VariableSelectionNetworkOptions& options);
    // x: [B, V] or [B, T, V], context: undefined or [B, C] -> output [..., hidden], weights [..., V]
    /// Selects among the variables.
    VariableSelectionOutput forward(const torch::Tensor& x, const torch::Tensor& context = {});

    /// Stores both embedding tables per variable row as PerRowInt8 (the GRNs are quantized on their
    /// own). Where calibration ran (QuantizeOptions::calibrate) and saw finite inputs, also keeps
    /// each variable's observed input range ("selection_range"), over which the "table" kernel
    /// tabulates the GRNs when a plan first times it or a plan by hand first serves it: as few
    /// knots (9 to 257) as keep the linear interpolation within kTableTolerance of the GRN
    /// (its dequantized weights) at the midpoints, and not at all (the range dropped) where that
    /// table would weigh more than the variable GRNs' int8 weights it stands in for.
    void convert_to_int8() override;
    bool converted_to_int8() const override { return embedding_weight_q.q.defined(); }

    void set_block_recording(bool on) override;
    std::vector<int64_t> block_recorded_rows() const override { return m_block_rows; }
    std::vector<precision::BlockTiming> time_block_kernels(int64_t rows) override;
    void set_block_plan(std::vector<std::pair<int64_t, std::string>> plan) override;
    /// One set of tensors for every row count: the table everywhere it is within the error bound
    /// when it is the fastest kernel at the most rows served, else the fastest other kernel at each.
    std::vector<std::string> choose_block_kernels(const std::vector<int64_t>& rows,
                                                  const std::vector<std::vector<precision::BlockTiming>>& timings,
                                                  double max_error) const override;
    int64_t release_unplanned() override;
    /// The kernel forward() would use for an input of `rows` rows right now: "layers",
    /// "fused-fp32", "fused-int8" or "table" (before any eligibility check of the input itself).
    std::string block_kernel_for(int64_t rows) const;
    /// Whether the copy has a calibrated input range to tabulate over (and kept it).
    bool can_tabulate() const { return selection_range.defined() && selection_range.numel() > 0; }
    /// Whether the variable GRNs are tabulated now.
    bool has_table() const { return selection_table.defined() && selection_table.numel() > 0; }
    /// Knots per variable of the table (0 without one).
    int64_t table_knots() const { return has_table() ? selection_table.size(1) : 0; }

    /// RMS interpolation error at the knots' midpoints, relative to the GRN outputs' RMS there,
    /// that a table may have.
    static constexpr double kTableTolerance = 3e-3;

    /// The options it was built with.
    VariableSelectionNetworkOptions options;
    /// Per-variable linear embedding weights, [V, E].
    torch::Tensor embedding_weight;
    /// Per-variable linear embedding biases, [V, E].
    torch::Tensor embedding_bias;
    /// embedding_weight after convert_to_int8() (buffers embedding_weight_int8, _scale_code, _scale_max).
    precision::PerRowInt8 embedding_weight_q;
    /// embedding_bias after convert_to_int8().
    precision::PerRowInt8 embedding_bias_q;
    /// One GRN per variable, E -> hidden (null once a table-only copy released them).
    torch::nn::ModuleList variable_grns{nullptr};
    /// Once tabulated: [V, K, hidden] half floats, GRN_v at K evenly spaced knots of
    /// [low_v, high_v] (buffer "selection_table"); undefined before.
    torch::Tensor selection_table;
    /// After convert_to_int8() with calibration: [2, V], low and high of each variable's input
    /// range (buffer "selection_range"); undefined otherwise.
    torch::Tensor selection_range;
    /// GRN over all embeddings giving the selection logits (absent for V <= 1).
    GatedResidualNetwork flattened_grn{nullptr};

private:
    // The tables forward() embeds with: the float parameters, or the int8 ones decoded.
    std::pair<torch::Tensor, torch::Tensor> tables(c10::ScalarType dtype);
    struct PackCache {
        FusedGrnPack pack;
        // flattened_grn's first layer and skip folded over the embedding (x [rows, V] @ a + c):
        // [V, out] and [out] each.
        torch::Tensor first_a, first_c, skip_a, skip_c;
        // The weights GRN with those folds, for fused_grn() (in = 0 where it does not fit).
        FusedDenseGrn weights_grn;
        // The tensors it was packed from (every parameter and buffer) and their state then.
        std::vector<torch::Tensor> sources;
        precision::SourceStamp stamp;
        bool made = false;
    };
    enum class PackKind { Float, Int8, FoldOnly };
    // The variable GRNs' parameters packed for fused_selection() (FoldOnly: only the weights
    // GRN's folded layers), from the cache while unchanged.
    const PackCache& pack(PackKind kind);
    // Whether calibration is running (the variable GRNs' layers observe their inputs).
    bool calibrating() const;
    // Tabulates the variable GRNs over selection_range, unless they are already.
    void tabulate();
    // softmax(flattened_grn(embedded, context)) on x [rows, V] through the folded first layer and
    // skip: fused_grn() where the widths fit, else layer by layer.
    torch::Tensor selection_weights(const PackCache& folded, const torch::Tensor& x2, const torch::Tensor& context,
                                    std::vector<int64_t> sizes);

    // forward()'s decoded row scales of the int8 tables, derived once per change of their buffers.
    precision::DerivedTensorCache m_weight_scale_cache;
    precision::DerivedTensorCache m_bias_scale_cache;
    // The table kernel's 1 / knot spacing per variable, derived once per table.
    precision::DerivedTensorCache m_inv_step_cache;
    bool m_block_recording = false;
    std::vector<int64_t> m_block_rows;
    std::vector<std::pair<int64_t, std::string>> m_block_plan;
    std::optional<std::string> m_forced_kernel; // time_block_kernels()'s choice while it times
    PackCache m_float_pack, m_int8_pack, m_fold_pack;
    // Each variable's smallest and largest input seen while calibrating ([V] each, CPU).
    torch::Tensor m_observed_low, m_observed_high;
};
TORCH_MODULE(VariableSelectionNetwork);

} // namespace foxhunt::models::tft
