// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/continuous.h"

#include "engine/data/market_time.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <unordered_map>

namespace foxhunt {

namespace {

constexpr std::string_view kMonthCodes = "FGHJKMNQUVXZ";

int monthIndex(char month)
{
    const auto pos = kMonthCodes.find(month);
    return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

// The full year ending in `digits` (one or two of them) nearest to `reference`;
// a tie goes to the later year, since listed contracts expire in the future.
int resolveYear(int digits, int modulus, int reference)
{
    const int base = reference - ((reference % modulus) + modulus) % modulus;
    int best = 0;
    int bestDistance = INT_MAX;
    for (int candidate : {base - modulus + digits, base + digits, base + modulus + digits}) {
        const int distance = std::abs(candidate - reference);
        if (distance < bestDistance || (distance == bestDistance && candidate > best)) {
            best = candidate;
            bestDistance = distance;
        }
    }
    return best;
}

int yearOf(std::int64_t utcNs)
{
    const std::int64_t days = utcNs >= 0 ? utcNs / kNsPerDay : (utcNs - kNsPerDay + 1) / kNsPerDay;
    int year = 0;
    unsigned month = 0, day = 0;
    civilFromDays(days, year, month, day);
    return year;
}

struct Contract {
    std::string symbol;
    int key = 0;                     // expiry key; 0 when the symbol is not a contract code
    std::vector<std::int64_t> ts;    // bar times, increasing
    std::vector<std::int64_t> close; // close at each of them
};

// Close of `contract` at exactly `ts`, if it has a bar there.
std::optional<std::int64_t> closeAt(const Contract& contract, std::int64_t ts)
{
    const auto it = std::lower_bound(contract.ts.begin(), contract.ts.end(), ts);
    if (it == contract.ts.end() || *it != ts) return std::nullopt;
    return contract.close[static_cast<std::size_t>(it - contract.ts.begin())];
}

// New close - old close at the last timestamp before `rollTs` where both traded.
std::int64_t priceGap(const Contract& from, const Contract& to, std::int64_t rollTs)
{
    auto it = std::lower_bound(from.ts.begin(), from.ts.end(), rollTs);
    while (it != from.ts.begin()) {
        --it;
        if (const auto toClose = closeAt(to, *it))
            return *toClose - from.close[static_cast<std::size_t>(it - from.ts.begin())];
    }
    return 0;
}

} // namespace

int ContractCode::expiryKey() const
{
    return year * 12 + monthIndex(month);
}

bool isSpreadSymbol(std::string_view symbol)
{
    // Calendar spreads ("ESM5-ESU5"), butterflies and user-defined strategies
    // ("UD:1V: ...") all join their legs with one of these.
    for (std::size_t i = 0; i < symbol.size(); ++i) {
        const char c = symbol[i];
        if (c == '-' || c == ':' || c == '+' || c == ' ' || c == '_' || (c == '/' && i > 0)) return true;
    }
    return false;
}

std::optional<ContractCode> parseContractCode(std::string_view symbol, int referenceYear)
{
    if (isSpreadSymbol(symbol)) return std::nullopt;
    std::size_t digits = 0;
    while (digits < symbol.size() && symbol[symbol.size() - 1 - digits] >= '0' &&
           symbol[symbol.size() - 1 - digits] <= '9')
        ++digits;
    if (digits != 1 && digits != 2 && digits != 4) return std::nullopt;
    if (symbol.size() < digits + 2) return std::nullopt; // root of at least one character + month
    const std::size_t monthPos = symbol.size() - digits - 1;
    const char month = symbol[monthPos];
    if (monthIndex(month) < 0) return std::nullopt;
    const std::string_view root = symbol.substr(0, monthPos);
    for (char c : root)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return std::nullopt;
    if (!((root.front() >= 'A' && root.front() <= 'Z') || (root.back() >= 'A' && root.back() <= 'Z')))
        return std::nullopt;

    int value = 0;
    for (char c : symbol.substr(monthPos + 1)) value = value * 10 + (c - '0');
    ContractCode code;
    code.root = std::string(root);
    code.month = month;
    code.year = digits == 4 ? value : resolveYear(value, digits == 1 ? 10 : 100, referenceYear);
    return code;
}

ContinuousSeries buildContinuous(const std::vector<Bar>& input, const std::map<std::uint32_t, std::string>& symbols,
                                 const ContinuousOptions& options)
{
    ContinuousSeries out;

    // Time order is what the day grouping relies on; readers deliver it, but a
    // stable sort keeps each instrument's own order if a file interleaves them.
    const std::vector<Bar>* barsPtr = &input;
    std::vector<Bar> sorted;
    if (!std::is_sorted(input.begin(), input.end(), [](const Bar& a, const Bar& b) { return a.tsEvent < b.tsEvent; })) {
        sorted = input;
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const Bar& a, const Bar& b) { return a.tsEvent < b.tsEvent; });
        barsPtr = &sorted;
    }
    const std::vector<Bar>& bars = *barsPtr;

    std::unordered_map<std::uint32_t, Contract> contracts;
    std::vector<const Bar*> outrights;
    outrights.reserve(bars.size());
    for (const Bar& bar : bars) {
        const auto named = symbols.find(bar.instrumentId);
        const std::string symbol = named != symbols.end() ? named->second : std::to_string(bar.instrumentId);
        if (isSpreadSymbol(symbol)) {
            ++out.spreadBarsDropped;
            continue;
        }
        auto [it, inserted] = contracts.try_emplace(bar.instrumentId);
        Contract& contract = it->second;
        if (inserted) {
            contract.symbol = symbol;
            const auto code = parseContractCode(symbol, yearOf(bar.tsEvent));
            contract.key = code ? code->expiryKey() : 0;
        }
        contract.ts.push_back(bar.tsEvent);
        contract.close.push_back(bar.close);
        outrights.push_back(&bar);
    }

    std::vector<const Contract*> byExpiry;
    for (const auto& [id, contract] : contracts) byExpiry.push_back(&contract);
    std::sort(byExpiry.begin(), byExpiry.end(), [](const Contract* a, const Contract* b) {
        return a->key != b->key ? a->key < b->key : a->symbol < b->symbol;
    });
    for (const Contract* contract : byExpiry) out.contracts.push_back(contract->symbol);

    EsCalendar calendar;
    std::optional<std::uint32_t> front;
    std::size_t begin = 0;
    while (begin < outrights.size()) {
        const std::int64_t day = calendar.tradingDay(outrights[begin]->tsEvent);
        std::size_t end = begin;
        std::map<std::uint32_t, std::uint64_t> volume;
        while (end < outrights.size() && calendar.tradingDay(outrights[end]->tsEvent) == day) {
            volume[outrights[end]->instrumentId] += outrights[end]->volume;
            ++end;
        }

        // Highest volume among contracts not earlier than the current front;
        // ties go to the earlier expiry, so a quiet day never rolls.
        const int floorKey = front ? contracts.at(*front).key : INT_MIN;
        auto better = [&](std::uint32_t a, std::uint32_t b) {
            const std::uint64_t va = volume.at(a), vb = volume.at(b);
            if (va != vb) return va > vb;
            const bool aFront = front && a == *front, bFront = front && b == *front;
            if (aFront != bFront) return aFront;
            return contracts.at(a).key < contracts.at(b).key;
        };
        std::optional<std::uint32_t> pick;
        for (const auto& [id, v] : volume) {
            if (contracts.at(id).key < floorKey) continue;
            if (!pick || better(id, *pick)) pick = id;
        }

        if (pick) {
            if (front && *pick != *front) {
                std::int64_t firstTs = 0;
                for (std::size_t i = begin; i < end; ++i)
                    if (outrights[i]->instrumentId == *pick) {
                        firstTs = outrights[i]->tsEvent;
                        break;
                    }
                Roll roll;
                roll.ts = firstTs;
                roll.tradingDay = day;
                roll.fromSymbol = contracts.at(*front).symbol;
                roll.toSymbol = contracts.at(*pick).symbol;
                roll.priceGap = priceGap(contracts.at(*front), contracts.at(*pick), firstTs);
                out.rolls.push_back(std::move(roll));
            }
            front = pick;
            for (std::size_t i = begin; i < end; ++i)
                if (outrights[i]->instrumentId == *front) out.bars.push_back(*outrights[i]);
        }
        begin = end;
    }

    if (options.backAdjust && !out.rolls.empty()) {
        // Walk backwards so each bar carries the sum of the gaps of every later roll.
        std::int64_t shift = 0;
        std::size_t roll = out.rolls.size();
        for (std::size_t i = out.bars.size(); i-- > 0;) {
            Bar& bar = out.bars[i];
            while (roll > 0 && bar.tsEvent < out.rolls[roll - 1].ts) shift += out.rolls[--roll].priceGap;
            bar.open += shift;
            bar.high += shift;
            bar.low += shift;
            bar.close += shift;
        }
    }
    return out;
}

} // namespace foxhunt
