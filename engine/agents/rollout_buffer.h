// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PPO's on-policy rollout storage and generalised advantage estimation.
// Std-only.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace foxhunt {

/// Advantages and returns (advantage + value) of a rollout.
struct GaeResult {
    std::vector<float> advantages;
    std::vector<float> returns;
};

/// GAE(gamma, lambda) over one environment's rollout, newest step last.
/// For step t the next value is 0 when the episode terminated at t,
/// bootstrapValues[t] (V of the final observation) when it was truncated at t,
/// values[t + 1] otherwise, and lastValue (V of the observation after the
/// rollout) for the last step. The lambda chain restarts after every episode end.
GaeResult computeGae(std::span<const float> rewards, std::span<const float> values,
                     std::span<const std::uint8_t> terminated, std::span<const std::uint8_t> truncated,
                     std::span<const float> bootstrapValues, float lastValue, double gamma, double lambda);

/// n_steps of one environment's experience.
class RolloutBuffer {
public:
    /// Throws std::invalid_argument when a size is 0.
    RolloutBuffer(std::size_t steps, std::size_t observationSize);

    /// Appends a step; returns true when the buffer is full.
    bool add(std::span<const float> observation, int action, float reward, float value, float logProb, bool terminated,
             bool truncated, float bootstrapValue);
    /// Forgets the stored steps.
    void clear() { m_size = 0; }
    /// Steps stored.
    std::size_t size() const { return m_size; }
    /// Capacity (n_steps).
    std::size_t capacity() const { return m_steps; }
    /// Observation length.
    std::size_t observationSize() const { return m_observationSize; }
    /// Computes advantages and returns into the buffer.
    void finish(float lastValue, double gamma, double lambda);

    std::vector<float> observations; ///< [n, O]
    std::vector<std::int64_t> actions;
    std::vector<float> rewards;
    std::vector<float> values;
    std::vector<float> logProbs;
    std::vector<std::uint8_t> terminated;
    std::vector<std::uint8_t> truncated;
    std::vector<float> bootstrapValues;
    std::vector<float> advantages; ///< filled by finish()
    std::vector<float> returns;    ///< filled by finish()

private:
    std::size_t m_steps;
    std::size_t m_observationSize;
    std::size_t m_size = 0;
};

} // namespace foxhunt
