// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/agents/rollout_buffer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace foxhunt {

GaeResult computeGae(std::span<const float> rewards, std::span<const float> values,
                     std::span<const std::uint8_t> terminated, std::span<const std::uint8_t> truncated,
                     std::span<const float> bootstrapValues, float lastValue, double gamma, double lambda)
{
    const std::size_t n = rewards.size();
    if (values.size() != n || terminated.size() != n || truncated.size() != n || bootstrapValues.size() != n)
        throw std::invalid_argument("rollout_buffer: GAE inputs differ in length");
    GaeResult out;
    out.advantages.resize(n);
    out.returns.resize(n);
    double gae = 0.0;
    for (std::size_t k = n; k-- > 0;) {
        double next = 0.0;
        double carry = 0.0;
        if (terminated[k]) {
            next = 0.0;
        } else if (truncated[k]) {
            next = bootstrapValues[k];
        } else {
            next = k + 1 < n ? values[k + 1] : lastValue;
            carry = 1.0;
        }
        const double delta = rewards[k] + gamma * next - values[k];
        gae = delta + gamma * lambda * carry * gae;
        out.advantages[k] = static_cast<float>(gae);
        out.returns[k] = static_cast<float>(gae + values[k]);
    }
    return out;
}

RolloutBuffer::RolloutBuffer(std::size_t steps, std::size_t observationSize)
    : m_steps(steps), m_observationSize(observationSize)
{
    if (steps == 0 || observationSize == 0)
        throw std::invalid_argument("rollout_buffer: steps and observation size must be positive");
    observations.resize(steps * observationSize);
    actions.resize(steps);
    rewards.resize(steps);
    values.resize(steps);
    logProbs.resize(steps);
    terminated.resize(steps);
    truncated.resize(steps);
    bootstrapValues.resize(steps);
    advantages.resize(steps);
    returns.resize(steps);
}

bool RolloutBuffer::add(std::span<const float> observation, int action, float reward, float value, float logProb,
                        bool isTerminated, bool isTruncated, float bootstrapValue)
{
    if (m_size >= m_steps) throw std::logic_error("rollout_buffer: add() on a full buffer");
    if (observation.size() != m_observationSize)
        throw std::invalid_argument("rollout_buffer: observation has " + std::to_string(observation.size()) +
                                    " values, expected " + std::to_string(m_observationSize));
    std::copy(observation.begin(), observation.end(),
              observations.begin() + static_cast<std::ptrdiff_t>(m_size * m_observationSize));
    actions[m_size] = action;
    rewards[m_size] = reward;
    values[m_size] = value;
    logProbs[m_size] = logProb;
    terminated[m_size] = isTerminated ? 1 : 0;
    truncated[m_size] = isTruncated ? 1 : 0;
    bootstrapValues[m_size] = bootstrapValue;
    ++m_size;
    return m_size == m_steps;
}

void RolloutBuffer::finish(float lastValue, double gamma, double lambda)
{
    const std::size_t n = m_size;
    GaeResult r = computeGae(std::span(rewards).first(n), std::span(values).first(n), std::span(terminated).first(n),
                             std::span(truncated).first(n), std::span(bootstrapValues).first(n), lastValue, gamma,
                             lambda);
    std::copy(r.advantages.begin(), r.advantages.end(), advantages.begin());
    std::copy(r.returns.begin(), r.returns.end(), returns.begin());
}

} // namespace foxhunt
