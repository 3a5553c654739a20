// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Uniform experience replay for DQN, with n-step return accumulation.
// Std-only: DQN samples into preallocated host arrays and wraps them as tensors.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <vector>

namespace foxhunt {

/// Flat storage of a ring buffer of transitions (public so checkpoints can save it).
struct ReplayStorage {
    std::size_t capacity = 0;
    std::size_t observationSize = 0;
    std::size_t next = 0;            ///< slot written next
    std::size_t size = 0;            ///< valid transitions
    std::vector<float> observations; ///< [capacity, O]
    std::vector<float> nextObservations;
    std::vector<std::int64_t> actions;
    std::vector<float> rewards;    ///< n-step discounted reward sums
    std::vector<float> terminated; ///< 1 when the episode ended inside the n steps
    std::vector<float> discounts;  ///< gamma^m for the bootstrap term, m = steps summed
};

/// A sampled batch in host memory, reused between samples.
struct ReplayBatch {
    std::vector<float> observations;
    std::vector<float> nextObservations;
    std::vector<std::int64_t> actions;
    std::vector<float> rewards;
    std::vector<float> terminated;
    std::vector<float> discounts;
    std::vector<float> weights;       ///< importance weights (1 for uniform replay)
    std::vector<std::size_t> indices; ///< sampled slots

    /// Sizes every array for `batch` rows of `observationSize` values.
    void resize(std::size_t batch, std::size_t observationSize);
};

/// Uniform ring-buffer replay; sampling is with replacement.
class ReplayBuffer {
public:
    /// Throws std::invalid_argument when capacity or observationSize is 0.
    ReplayBuffer(std::size_t capacity, std::size_t observationSize);
    /// Virtual: DQN owns either kind through a ReplayBuffer pointer.
    virtual ~ReplayBuffer() = default;
    ReplayBuffer(const ReplayBuffer&) = default;
    ReplayBuffer& operator=(const ReplayBuffer&) = default;
    ReplayBuffer(ReplayBuffer&&) noexcept = default;
    ReplayBuffer& operator=(ReplayBuffer&&) noexcept = default;

    /// Stores one (possibly n-step) transition, overwriting the oldest when full.
    void add(std::span<const float> observation, int action, float reward, std::span<const float> nextObservation,
             bool terminated, float discount);
    /// Number of stored transitions.
    std::size_t size() const { return m_storage.size; }
    /// Maximum number of transitions.
    std::size_t capacity() const { return m_storage.capacity; }
    /// Samples `batch.indices.size()` transitions uniformly into `batch` (weights = 1).
    void sample(std::mt19937_64& rng, ReplayBatch& batch) const;
    /// Copies the given slots into `batch` (weights untouched).
    void gather(ReplayBatch& batch) const;
    /// Raw storage, for checkpoints.
    const ReplayStorage& storage() const { return m_storage; }
    /// Replaces the storage; throws std::invalid_argument on inconsistent sizes.
    void restore(ReplayStorage storage);

protected:
    /// Slot written by the last add().
    std::size_t lastSlot() const { return (m_storage.next + m_storage.capacity - 1) % m_storage.capacity; }

private:
    ReplayStorage m_storage;
};

/// One environment step waiting to be folded into an n-step transition.
struct PendingStep {
    std::vector<float> observation;
    int action = 0;
    float reward = 0.0f;
};

/// Folds single steps into n-step transitions:
/// R = sum_{k<m} gamma^k r_k, bootstrap discount gamma^m, next observation
/// after the m-th step, m = n, or fewer at the end of an episode (all pending
/// steps are flushed when the episode terminates or is truncated).
class NStepAccumulator {
public:
    /// Throws std::invalid_argument when n < 1.
    NStepAccumulator(int n, double gamma);

    /// Adds a step; calls emit(obs, action, R, nextObs, terminated, discount) for every completed transition.
    template <typename Emit>
    void push(std::span<const float> observation, int action, float reward, std::span<const float> nextObservation,
              bool terminated, bool truncated, Emit&& emit);
    /// Steps not yet emitted, oldest first (for checkpoints).
    const std::deque<PendingStep>& pending() const { return m_pending; }
    /// Restores pending steps.
    void restore(std::deque<PendingStep> pending) { m_pending = std::move(pending); }

private:
    int m_n;
    double m_gamma;
    std::deque<PendingStep> m_pending;
};

template <typename Emit>
void NStepAccumulator::push(std::span<const float> observation, int action, float reward,
                            std::span<const float> nextObservation, bool terminated, bool truncated, Emit&& emit)
{
    m_pending.push_back({std::vector<float>(observation.begin(), observation.end()), action, reward});
    const auto emitFront = [&]() {
        double sum = 0.0;
        double discount = 1.0;
        for (const PendingStep& s : m_pending) {
            sum += discount * s.reward;
            discount *= m_gamma;
        }
        const PendingStep& first = m_pending.front();
        emit(std::span<const float>(first.observation), first.action, static_cast<float>(sum), nextObservation,
             terminated, static_cast<float>(discount));
        m_pending.pop_front();
    };
    if (terminated || truncated) {
        while (!m_pending.empty()) emitFront();
    } else if (static_cast<int>(m_pending.size()) == m_n) {
        emitFront();
    }
}

} // namespace foxhunt
