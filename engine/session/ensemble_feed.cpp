// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/ensemble_feed.h"

#include "engine/forecast/forecaster_trainer.h"

#include <algorithm>

namespace foxhunt {

void EnsembleFeed::fill(std::size_t at, long long now, std::span<float> out)
{
    if (at >= tableFrom && at < tableTo) {
        const float* row = table.data() + (at - tableFrom) * size;
        std::copy(row, row + size, out.begin());
        return;
    }
    if (at != bar || now != tick) {
        values.assign(size, 0.0f);
        std::size_t offset = 0;
        for (ForecasterTrainer* f : forecasters) {
            const std::size_t h = f->config().windowing.horizon;
            const IndexRange valid = validAnchors(*data, f->config().windowing);
            // Bars without a full window (the first L-1, the last H) keep zeros.
            if (at >= valid.begin && at < valid.end) {
                const std::vector<double> m = f->predictMedians({at, at + 1});
                std::transform(m.begin(), m.end(), values.begin() + static_cast<std::ptrdiff_t>(offset),
                               [](double v) { return static_cast<float>(v); });
            }
            offset += h;
        }
        bar = at;
        tick = now;
    }
    std::copy(values.begin(), values.end(), out.begin());
}

void EnsembleFeed::buildTable(std::size_t from, std::size_t to)
{
    tableFrom = tableTo = 0;
    std::vector<float> t((to - from) * size, 0.0f);
    std::size_t offset = 0;
    for (ForecasterTrainer* f : forecasters) {
        const std::size_t h = f->config().windowing.horizon;
        const IndexRange valid = validAnchors(*data, f->config().windowing);
        const IndexRange range{std::max(from, valid.begin), std::min(to, valid.end)};
        if (range.size() > 0) {
            const std::vector<double> m = f->predictMedians(range);
            for (std::size_t i = 0; i < range.size(); ++i)
                for (std::size_t k = 0; k < h; ++k)
                    t[(range.begin - from + i) * size + offset + k] = static_cast<float>(m[i * h + k]);
        }
        offset += h;
    }
    table = std::move(t);
    tableFrom = from;
    tableTo = to;
}

} // namespace foxhunt
