// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How a stored series is named wherever the user picks or reads one: the symbol
// alone does not tell a 1-minute ES from a 5-minute one, so the interval and the
// trading days it covers follow it ("ES.FUT · 1 min · 2024-01-02 – 2024-03-29").

#include "engine/store/bar_store.h"

#include <QDate>
#include <QString>

#include <cstdint>
#include <utility>

namespace foxhunt {

/// "1 min", "5 min", "1 h", "1 d", "30 s"; "?" when unknown.
QString intervalText(std::int64_t intervalNs);
/// The ES trading days of the series' first and last bars (invalid dates when it has no bars).
std::pair<QDate, QDate> seriesTradingDays(const SeriesInfo& series);
/// Symbol, interval and trading-day range, with " (synthetic)" for the generated series.
QString seriesLabel(const SeriesInfo& series);

} // namespace foxhunt
