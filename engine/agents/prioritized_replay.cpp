// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/prioritized_replay.h"

#include "engine/agents/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace foxhunt {

SumTree::SumTree(std::size_t capacity) : m_capacity(capacity), m_leaves(1)
{
    if (capacity == 0) throw std::invalid_argument("sum_tree: capacity must be positive");
    while (m_leaves < capacity) m_leaves *= 2;
    m_sum.assign(2 * m_leaves, 0.0);
    m_min.assign(2 * m_leaves, std::numeric_limits<double>::infinity());
}

void SumTree::set(std::size_t i, double value)
{
    if (i >= m_capacity || !(value >= 0.0)) throw std::invalid_argument("sum_tree: bad leaf or negative value");
    std::size_t node = m_leaves + i;
    m_sum[node] = value;
    m_min[node] = value;
    for (node /= 2; node >= 1; node /= 2) {
        m_sum[node] = m_sum[2 * node] + m_sum[2 * node + 1];
        m_min[node] = std::min(m_min[2 * node], m_min[2 * node + 1]);
    }
}

std::size_t SumTree::find(double mass) const
{
    std::size_t node = 1;
    while (node < m_leaves) {
        const double left = m_sum[2 * node];
        if (mass < left || m_sum[2 * node + 1] <= 0.0) {
            node = 2 * node;
        } else {
            mass -= left;
            node = 2 * node + 1;
        }
    }
    // Rounding can walk past the last non-empty leaf; clamp into range.
    return std::min(node - m_leaves, m_capacity - 1);
}

std::vector<double> SumTree::leaves() const
{
    return {m_sum.begin() + static_cast<std::ptrdiff_t>(m_leaves),
            m_sum.begin() + static_cast<std::ptrdiff_t>(m_leaves + m_capacity)};
}

PrioritizedReplayBuffer::PrioritizedReplayBuffer(std::size_t capacity, std::size_t observationSize,
                                                 PrioritizedReplayOptions options)
    : ReplayBuffer(capacity, observationSize), m_options(options), m_tree(capacity)
{
    if (options.alpha < 0.0 || options.epsilon <= 0.0)
        throw std::invalid_argument("prioritized_replay: alpha must be >= 0 and epsilon > 0");
}

void PrioritizedReplayBuffer::add(std::span<const float> observation, int action, float reward,
                                  std::span<const float> nextObservation, bool terminated, float discount)
{
    ReplayBuffer::add(observation, action, reward, nextObservation, terminated, discount);
    m_tree.set(lastSlot(), std::pow(m_maxPriority, m_options.alpha));
}

void PrioritizedReplayBuffer::sample(std::mt19937_64& rng, double beta, ReplayBatch& batch) const
{
    if (size() == 0) throw std::logic_error("prioritized_replay: sample() on an empty buffer");
    const std::size_t n = batch.indices.size();
    const double total = m_tree.total();
    const double segment = total / static_cast<double>(n);
    const double count = static_cast<double>(size());
    const double maxWeight = std::pow(count * m_tree.minimum() / total, -beta);
    for (std::size_t b = 0; b < n; ++b) {
        const double mass = std::min((static_cast<double>(b) + uniform01(rng)) * segment, std::nextafter(total, 0.0));
        std::size_t i = m_tree.find(mass);
        if (i >= size()) i = size() - 1;
        batch.indices[b] = i;
        const double p = m_tree.get(i) / total;
        batch.weights[b] = static_cast<float>(std::pow(count * p, -beta) / maxWeight);
    }
    gather(batch);
}

void PrioritizedReplayBuffer::updatePriorities(std::span<const std::size_t> indices, std::span<const float> tdErrors)
{
    if (indices.size() != tdErrors.size())
        throw std::invalid_argument("prioritized_replay: indices and TD errors differ in length");
    for (std::size_t k = 0; k < indices.size(); ++k) {
        const double priority = std::abs(static_cast<double>(tdErrors[k])) + m_options.epsilon;
        m_maxPriority = std::max(m_maxPriority, priority);
        m_tree.set(indices[k], std::pow(priority, m_options.alpha));
    }
}

void PrioritizedReplayBuffer::restorePriorities(const std::vector<double>& leaves, double maxPriority)
{
    if (leaves.size() != m_tree.capacity())
        throw std::invalid_argument("prioritized_replay: restored priorities do not match the capacity");
    for (std::size_t i = 0; i < leaves.size(); ++i) {
        // Empty slots stay out of the minimum (a real priority is never 0).
        if (leaves[i] > 0.0) m_tree.set(i, leaves[i]);
    }
    m_maxPriority = maxPriority;
}

} // namespace foxhunt
