// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/replay_buffer.h"

#include "engine/agents/random.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace foxhunt {

void ReplayBatch::resize(std::size_t batch, std::size_t observationSize)
{
    observations.resize(batch * observationSize);
    nextObservations.resize(batch * observationSize);
    actions.resize(batch);
    rewards.resize(batch);
    terminated.resize(batch);
    discounts.resize(batch);
    weights.assign(batch, 1.0f);
    indices.resize(batch);
}

ReplayBuffer::ReplayBuffer(std::size_t capacity, std::size_t observationSize)
{
    if (capacity == 0 || observationSize == 0)
        throw std::invalid_argument("replay_buffer: capacity and observation size must be positive");
    m_storage.capacity = capacity;
    m_storage.observationSize = observationSize;
    m_storage.observations.resize(capacity * observationSize);
    m_storage.nextObservations.resize(capacity * observationSize);
    m_storage.actions.resize(capacity);
    m_storage.rewards.resize(capacity);
    m_storage.terminated.resize(capacity);
    m_storage.discounts.resize(capacity);
}

void ReplayBuffer::add(std::span<const float> observation, int action, float reward,
                       std::span<const float> nextObservation, bool terminated, float discount)
{
    const std::size_t o = m_storage.observationSize;
    if (observation.size() != o || nextObservation.size() != o)
        throw std::invalid_argument("replay_buffer: observation has " + std::to_string(observation.size()) +
                                    " values, expected " + std::to_string(o));
    const std::size_t slot = m_storage.next;
    std::copy(observation.begin(), observation.end(),
              m_storage.observations.begin() + static_cast<std::ptrdiff_t>(slot * o));
    std::copy(nextObservation.begin(), nextObservation.end(),
              m_storage.nextObservations.begin() + static_cast<std::ptrdiff_t>(slot * o));
    m_storage.actions[slot] = action;
    m_storage.rewards[slot] = reward;
    m_storage.terminated[slot] = terminated ? 1.0f : 0.0f;
    m_storage.discounts[slot] = discount;
    m_storage.next = (slot + 1) % m_storage.capacity;
    m_storage.size = std::min(m_storage.size + 1, m_storage.capacity);
}

void ReplayBuffer::sample(std::mt19937_64& rng, ReplayBatch& batch) const
{
    if (m_storage.size == 0) throw std::logic_error("replay_buffer: sample() on an empty buffer");
    for (std::size_t& i : batch.indices) i = static_cast<std::size_t>(uniformIndex(rng, m_storage.size));
    gather(batch);
}

void ReplayBuffer::gather(ReplayBatch& batch) const
{
    const std::size_t o = m_storage.observationSize;
    for (std::size_t b = 0; b < batch.indices.size(); ++b) {
        const std::size_t i = batch.indices[b];
        std::copy_n(m_storage.observations.data() + i * o, o, batch.observations.data() + b * o);
        std::copy_n(m_storage.nextObservations.data() + i * o, o, batch.nextObservations.data() + b * o);
        batch.actions[b] = m_storage.actions[i];
        batch.rewards[b] = m_storage.rewards[i];
        batch.terminated[b] = m_storage.terminated[i];
        batch.discounts[b] = m_storage.discounts[i];
    }
}

void ReplayBuffer::restore(ReplayStorage storage)
{
    const std::size_t c = storage.capacity;
    const std::size_t o = storage.observationSize;
    if (c != m_storage.capacity || o != m_storage.observationSize || storage.observations.size() != c * o ||
        storage.nextObservations.size() != c * o || storage.actions.size() != c || storage.rewards.size() != c ||
        storage.terminated.size() != c || storage.discounts.size() != c || storage.size > c || storage.next >= c)
        throw std::invalid_argument("replay_buffer: restored storage does not match capacity " +
                                    std::to_string(m_storage.capacity) + " x " +
                                    std::to_string(m_storage.observationSize));
    m_storage = std::move(storage);
}

NStepAccumulator::NStepAccumulator(int n, double gamma) : m_n(n), m_gamma(gamma)
{
    if (n < 1) throw std::invalid_argument("replay_buffer: n-step must be at least 1");
}

} // namespace foxhunt
