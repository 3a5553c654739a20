// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// ES.FUT is a parent symbol: many outright contracts and calendar spreads.
// This builds the continuous front-month series and records each roll.

#include "engine/data/bar.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace foxhunt {

/// One roll of the continuous series from one contract to the next.
struct Roll {
    std::int64_t ts = 0;         ///< first bar (UTC ns) taken from the new contract
    std::int64_t tradingDay = 0; ///< days since epoch (ET session date) of that bar
    std::string fromSymbol;      ///< e.g. "ESH1"
    std::string toSymbol;        ///< e.g. "ESM1"
    std::int64_t priceGap = 0;   ///< new close - old close at the last common bar, fixed point
};

/// An outright futures contract code such as ESH1 / ESH21 / ESH2021.
struct ContractCode {
    std::string root; ///< "ES"
    char month = 0;   ///< F G H J K M N Q U V X Z
    int year = 0;     ///< full year, e.g. 2021
    /// Ordering key: year * 12 + month index.
    int expiryKey() const;
};

/// True for calendar spreads (e.g. "ESM5-ESU5") and other multi-leg symbols.
bool isSpreadSymbol(std::string_view symbol);

/// Parses an outright contract symbol; a one- or two-digit year resolves to the
/// decade nearest to `referenceYear`. nullopt for anything else.
std::optional<ContractCode> parseContractCode(std::string_view symbol, int referenceYear);

/// How to build the continuous series.
struct ContinuousOptions {
    /// Difference back-adjustment: earlier bars are shifted by the sum of later roll gaps.
    bool backAdjust = false;
};

/// The continuous front-month series.
struct ContinuousSeries {
    std::vector<Bar> bars; ///< one bar per timestamp, from the front contract
    std::vector<Roll> rolls;
    std::uint64_t spreadBarsDropped = 0;
    std::vector<std::string> contracts; ///< outright contracts seen, by expiry
};

/// Drops spreads, picks the front contract per trading day by that day's volume
/// (never rolling back to an earlier expiry) and records the rolls.
/// `symbols` maps instrument ids to symbols; bars are in time order.
ContinuousSeries buildContinuous(const std::vector<Bar>& bars, const std::map<std::uint32_t, std::string>& symbols,
                                 const ContinuousOptions& options = {});

} // namespace foxhunt
