// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// JSON views of store results, shared by the CLI (--json) and reports.

#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"

#include <nlohmann/json_fwd.hpp>

namespace foxhunt {

/// {"path","format","status","imported","duplicates_dropped","warnings",[...],"first_ts","last_ts","instrument",...}
nlohmann::json toJson(const ImportResult& result);
/// {"id","symbol","dataset","kind","synthetic","interval_s","bars","first_ts","last_ts",...}
nlohmann::json toJson(const SeriesInfo& series);
/// {"ts","time","trading_day","from","to","price_gap"}
nlohmann::json toJson(const Roll& roll);
/// {"kind","from_ts","to_ts","from","to","minutes"}
nlohmann::json toJson(const Gap& gap);

} // namespace foxhunt
