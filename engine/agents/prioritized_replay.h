// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Proportional prioritized replay (Schaul et al. 2016) on a sum-tree:
// P(i) = p_i^alpha / sum_k p_k^alpha with p_i = |td_i| + epsilon; new
// transitions get the largest priority seen so far. Importance weights
// w_i = (N P(i))^-beta are divided by the largest possible weight,
// (N min_k P(k))^-beta, so they lie in (0, 1]. Sampling is stratified: the
// total mass is cut into `batch` equal segments and one draw falls in each.

#include "engine/agents/replay_buffer.h"

#include <cstddef>
#include <random>
#include <span>
#include <vector>

namespace foxhunt {

/// A binary tree over `capacity` leaves keeping sums and minima of leaf values.
class SumTree {
public:
    /// Throws std::invalid_argument when capacity is 0.
    explicit SumTree(std::size_t capacity);
    /// Sets leaf i to value (>= 0).
    void set(std::size_t i, double value);
    /// Leaf value.
    double get(std::size_t i) const { return m_sum[m_leaves + i]; }
    /// Sum of all leaves.
    double total() const { return m_sum[1]; }
    /// Smallest leaf among those set (infinity when none).
    double minimum() const { return m_min[1]; }
    /// The leaf i with prefix(i) <= mass < prefix(i) + value(i); mass in [0, total()).
    std::size_t find(double mass) const;
    /// Number of leaves.
    std::size_t capacity() const { return m_capacity; }
    /// Leaf values, for checkpoints.
    std::vector<double> leaves() const;

private:
    std::size_t m_capacity;
    std::size_t m_leaves; ///< power of two >= capacity
    std::vector<double> m_sum;
    std::vector<double> m_min;
};

/// Options of the prioritized buffer.
struct PrioritizedReplayOptions {
    double alpha = 0.6;    ///< priority exponent (0 = uniform)
    double epsilon = 1e-6; ///< added to |td| so no transition starves
};

/// Replay with proportional priorities.
class PrioritizedReplayBuffer : public ReplayBuffer {
public:
    /// Throws std::invalid_argument on a zero size or alpha < 0.
    PrioritizedReplayBuffer(std::size_t capacity, std::size_t observationSize, PrioritizedReplayOptions options = {});

    /// Stores a transition with the maximum priority seen so far.
    void add(std::span<const float> observation, int action, float reward, std::span<const float> nextObservation,
             bool terminated, float discount);
    /// Samples `batch.indices.size()` transitions by priority and fills importance weights for `beta`.
    void sample(std::mt19937_64& rng, double beta, ReplayBatch& batch) const;
    /// Sets priorities of sampled slots from their TD errors.
    void updatePriorities(std::span<const std::size_t> indices, std::span<const float> tdErrors);
    /// Probability of sampling slot i.
    double probability(std::size_t i) const { return m_tree.get(i) / m_tree.total(); }
    /// Largest raw priority (|td| + epsilon) seen.
    double maxPriority() const { return m_maxPriority; }
    /// Priority tree, for checkpoints.
    const SumTree& tree() const { return m_tree; }
    /// Restores leaves (p^alpha values) and the max priority.
    void restorePriorities(const std::vector<double>& leaves, double maxPriority);

private:
    PrioritizedReplayOptions m_options;
    SumTree m_tree;
    double m_maxPriority = 1.0;
};

} // namespace foxhunt
