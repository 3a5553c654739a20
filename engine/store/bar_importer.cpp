// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/bar_importer.h"

#include "engine/data/input_file.h"
#include "engine/data/market_time.h"
#include "engine/store/sha256.h"
#include "engine/store/sqlite_util.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <tuple>

namespace foxhunt {

namespace {

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string contentDigest(const ParsedFile& file)
{
    Sha256 hasher;
    hasher.update("foxhunt-parsed-v1:");
    hasher.update(toString(file.format));
    hasher.update(file.dataset);
    hasher.update(file.defaultSymbol);
    for (const auto& [id, symbol] : file.symbols) {
        hasher.update(std::string_view(reinterpret_cast<const char*>(&id), sizeof id));
        hasher.update(symbol);
        hasher.update(std::string_view("\0", 1));
    }
    for (const Bar& bar : file.bars) {
        const std::int64_t fields[] = {bar.tsEvent,     bar.open,  bar.high,
                                       bar.low,         bar.close, static_cast<std::int64_t>(bar.volume),
                                       bar.instrumentId};
        hasher.update(std::string_view(reinterpret_cast<const char*>(fields), sizeof fields));
    }
    return hasher.hex();
}

} // namespace

BarImporter::BarImporter(BarStore& store) : m_store(store), m_db(store.database().handle()) { }

/// How a series' planned bars meet the bars already stored in their range.
struct BarImporter::StoredOverlap {
    std::int64_t fromTs = 0, toTs = 0; ///< the planned bars' first and last timestamp
    std::uint64_t storedInRange = 0;   ///< stored bars with fromTs <= ts <= toTs
    std::uint64_t identical = 0;       ///< planned bars stored with the same values
    std::uint64_t conflicting = 0;     ///< planned bars stored with other values
    std::size_t firstConflict = 0;     ///< index of the earliest conflicting planned bar
    Bar storedAtFirstConflict;         ///< what is stored at that bar's time
};

BarImporter::StoredOverlap BarImporter::compareStored(std::int64_t seriesId, const std::vector<Bar>& bars) const
{
    StoredOverlap overlap;
    if (bars.empty()) return overlap;
    // Planned bars are in time order except in the rare file whose instruments share one
    // series; an index sorted by time serves both.
    std::vector<std::uint32_t> order;
    const auto before = [](const Bar& a, const Bar& b) { return a.tsEvent < b.tsEvent; };
    const bool sorted = std::is_sorted(bars.begin(), bars.end(), before);
    if (!sorted) {
        order.resize(bars.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return bars[a].tsEvent < bars[b].tsEvent; });
    }
    const auto at = [&](std::size_t i) -> std::size_t { return sorted ? i : order[i]; };
    overlap.fromTs = bars[at(0)].tsEvent;
    overlap.toTs = bars[at(bars.size() - 1)].tsEvent;

    sql::Statement query(m_db, "SELECT ts, open, high, low, close, volume FROM bars "
                               "WHERE instrument_id = ?1 AND ts >= ?2 AND ts <= ?3 ORDER BY ts");
    query.bind(1, seriesId).bind(2, overlap.fromTs).bind(3, overlap.toTs);
    sqlite3_stmt* st = query.get();
    bool anyConflict = false;
    std::size_t i = 0;
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ++overlap.storedInRange;
        Bar stored;
        stored.tsEvent = sqlite3_column_int64(st, 0);
        while (i < bars.size() && bars[at(i)].tsEvent < stored.tsEvent) ++i;
        if (i == bars.size() || bars[at(i)].tsEvent != stored.tsEvent) continue;
        stored.open = sqlite3_column_int64(st, 1);
        stored.high = sqlite3_column_int64(st, 2);
        stored.low = sqlite3_column_int64(st, 3);
        stored.close = sqlite3_column_int64(st, 4);
        stored.volume = static_cast<std::uint64_t>(sqlite3_column_int64(st, 5));
        const Bar& mine = bars[at(i)];
        if (mine.open == stored.open && mine.high == stored.high && mine.low == stored.low &&
            mine.close == stored.close && mine.volume == stored.volume) {
            ++overlap.identical;
            continue;
        }
        ++overlap.conflicting;
        if (!anyConflict || at(i) < overlap.firstConflict) {
            overlap.firstConflict = at(i);
            stored.instrumentId = mine.instrumentId;
            overlap.storedAtFirstConflict = stored;
            anyConflict = true;
        }
    }
    if (rc != SQLITE_DONE) sql::fail(m_db, "comparing with stored bars");
    return overlap;
}

double overallImportFraction(double fraction, std::string_view stage)
{
    // Each stage's share of a whole import's time, from BM_ImportStages (a million one-minute bars
    // as CSV, 56 MB, imported from a file into an empty store; medians of 5 on an AMD EPYC,
    // 2026-12-02: read and hash 0.097, parse 0.114, validate 0.015, store 0.767), so that the bar
    // moves at about one speed from start to end. A DBN file parses faster than a CSV: its bar
    // moves faster through "parse" only.
    struct Span {
        std::string_view stage;
        double share;
    };
    static constexpr Span kSpans[] = {{"read", 0.10}, {"parse", 0.11}, {"validate", 0.02}, {"store", 0.77}};
    const double f = std::clamp(fraction, 0.0, 1.0);
    double begin = 0.0;
    for (const Span& span : kSpans) {
        if (span.stage == stage) return std::min(1.0, begin + f * span.share);
        begin += span.share;
    }
    return 1.0;
}

ImportResult BarImporter::importFile(const std::string& path, const ImportOptions& options, const ProgressFn& progress)
{
    // One read, hashed on the way: a pipe (/dev/stdin, <(...)) has no second reading to parse.
    if (progress) progress(0.0, "read");
    Sha256 hash;
    // A pipe has no size: its read counts as one step.
    std::error_code sizeError;
    const std::uintmax_t size = std::filesystem::file_size(path, sizeError);
    const double total = !sizeError && size > 0 ? static_cast<double>(size) : 0.0;
    std::uintmax_t got = 0;
    double shown = 0.0;
    const std::string bytes = readInputFile(path, options.read.limits, [&](std::string_view chunk) {
        hash.update(chunk);
        got += chunk.size();
        // Told at each percent, not each 64 KiB chunk.
        if (progress && total > 0 && static_cast<double>(got) / total >= shown + 0.01) {
            shown = static_cast<double>(got) / total;
            progress(shown, "read");
        }
    });
    if (progress) progress(1.0, "read");
    const std::string digest = hash.hex();
    if (options.conflicts == StoredConflicts::Reject && m_store.findImport(digest)) {
        ParsedFile none;
        none.path = path;
        return importParsed(std::move(none), options, progress, digest);
    }
    ReadOptions read = options.read;
    if (progress) {
        progress(0.0, "parse");
        read.progress = [&](double fraction) { progress(fraction, "parse"); };
    }
    ParsedFile file = readBarBuffer(path, bytes, read);
    if (progress) progress(1.0, "parse");
    return importParsed(std::move(file), options, progress, digest);
}

ImportResult BarImporter::importParsed(ParsedFile&& file, const ImportOptions& options, const ProgressFn& progress,
                                       const std::string& sha256)
{
    auto report = [&](double fraction, std::string_view stage) {
        if (progress) progress(fraction, stage);
    };

    ImportResult result;
    result.path = file.path;
    result.format = file.format;
    result.sha256 = sha256.empty() ? contentDigest(file) : sha256;

    const auto prior = m_store.findImport(result.sha256);
    if (prior && options.conflicts == StoredConflicts::Reject) {
        result.alreadyImported = true;
        result.format = fileFormatFromString(prior->format);
        result.rowsRead = prior->rows;
        const auto summary = nlohmann::json::parse(prior->summary, nullptr, /*allow_exceptions=*/false);
        if (summary.is_object()) {
            result.instrument = summary.value("instrument", std::string());
            result.firstTs = summary.value("firstTs", std::int64_t{0});
            result.lastTs = summary.value("lastTs", std::int64_t{0});
            if (summary.contains("seriesIds") && summary["seriesIds"].is_array())
                for (const auto& id : summary["seriesIds"])
                    if (id.is_number_integer()) result.seriesIds.push_back(id.get<std::int64_t>());
        }
        result.warnings.push_back("already imported on " + formatUtc(prior->importedAt) + " from " + prior->path +
                                  " (same SHA-256); nothing was written");
        return result;
    }

    report(0.0, "validate");
    result.rowsRead = file.bars.size();
    result.validation = validateBars(file);
    result.duplicatesDropped = result.validation.duplicatesDropped;
    report(1.0, "validate");
    if (file.bars.empty()) throw ImportError(file.path, 0, "the file holds no bars");

    result.warnings = file.warnings;
    result.warnings.insert(result.warnings.end(), result.validation.warnings.begin(), result.validation.warnings.end());
    const std::int64_t intervalNs = result.validation.intervalNs != 0 ? result.validation.intervalNs : file.intervalNs;
    const std::string dataset = file.dataset.empty() ? std::string("csv") : file.dataset;

    // The series this file becomes, main series first.
    struct Planned {
        std::string symbol;
        SeriesKind kind = SeriesKind::Series;
        std::vector<Bar> bars;
        bool continuous = false;
        std::vector<std::uint64_t> lines; ///< per bar: the file line it came from (0 = unknown)
    };
    std::vector<Planned> planned;

    if (file.symbols.empty()) {
        Planned one;
        one.symbol = !file.defaultSymbol.empty() ? file.defaultSymbol : options.read.symbol;
        one.kind = SeriesKind::Series;
        one.bars = std::move(file.bars);
        one.lines = std::move(file.lines);
        planned.push_back(std::move(one));
    } else {
        std::map<std::uint32_t, std::vector<Bar>> byInstrument;
        std::map<std::uint32_t, std::vector<std::uint64_t>> linesByInstrument;
        for (std::size_t i = 0; i < file.bars.size(); ++i) {
            byInstrument[file.bars[i].instrumentId].push_back(file.bars[i]);
            linesByInstrument[file.bars[i].instrumentId].push_back(i < file.lines.size() ? file.lines[i] : 0);
        }
        auto symbolOf = [&](std::uint32_t id) {
            const auto it = file.symbols.find(id);
            if (it != file.symbols.end()) return it->second;
            return !file.defaultSymbol.empty() ? file.defaultSymbol : std::to_string(id);
        };
        struct Group {
            std::string symbol;
            int key = 0;
            std::uint32_t id = 0;
        };
        std::vector<Group> outrights, spreads;
        for (const auto& [id, bars] : byInstrument) {
            const std::string symbol = symbolOf(id);
            const int year = 1970 + static_cast<int>(bars.front().tsEvent / (kNsPerDay * 36525 / 100));
            const auto code = parseContractCode(symbol, year);
            (isSpreadSymbol(symbol) ? spreads : outrights).push_back({symbol, code ? code->expiryKey() : 0, id});
        }
        std::sort(outrights.begin(), outrights.end(),
                  [](const Group& a, const Group& b) { return a.key != b.key ? a.key < b.key : a.symbol < b.symbol; });

        if (!outrights.empty() && (outrights.size() > 1 || !spreads.empty())) {
            ContinuousSeries continuous = buildContinuous(file.bars, file.symbols, options.continuous);
            if (!continuous.bars.empty()) {
                std::string root = "ES";
                for (const auto& symbol : continuous.contracts)
                    if (const auto code = parseContractCode(symbol, 2000)) {
                        root = code->root;
                        break;
                    }
                Planned main;
                main.symbol = root + (options.continuous.backAdjust ? ".c.0.adj" : ".c.0");
                main.kind = SeriesKind::Continuous;
                main.bars = std::move(continuous.bars);
                main.continuous = true;
                // Each continuous bar is its contract's bar at that time (validation made those
                // increasing per instrument): its line is a binary search away.
                main.lines.reserve(main.bars.size());
                for (const Bar& bar : main.bars) {
                    const auto source = byInstrument.find(bar.instrumentId);
                    std::uint64_t line = 0;
                    if (source != byInstrument.end()) {
                        const auto& bars = source->second;
                        const auto it = std::lower_bound(bars.begin(), bars.end(), bar.tsEvent,
                                                         [](const Bar& b, std::int64_t ts) { return b.tsEvent < ts; });
                        if (it != bars.end() && it->tsEvent == bar.tsEvent)
                            line = linesByInstrument[bar.instrumentId][static_cast<std::size_t>(it - bars.begin())];
                    }
                    main.lines.push_back(line);
                }
                planned.push_back(std::move(main));
                result.rolls = std::move(continuous.rolls);
            }
        }
        for (const Group& g : outrights)
            planned.push_back({g.symbol, SeriesKind::Contract, std::move(byInstrument[g.id]), false,
                               std::move(linesByInstrument[g.id])});
        if (outrights.empty()) {
            for (const Group& g : spreads)
                planned.push_back({g.symbol, SeriesKind::Contract, std::move(byInstrument[g.id]), false,
                                   std::move(linesByInstrument[g.id])});
        } else if (!spreads.empty()) {
            std::uint64_t spreadBars = 0;
            for (const Group& g : spreads) spreadBars += byInstrument[g.id].size();
            result.warnings.push_back(
                std::to_string(spreadBars) + " bars of " + std::to_string(spreads.size()) +
                " spread symbols were not stored: the continuous series uses outright contracts only");
        }
    }
    file.bars.clear();
    file.bars.shrink_to_fit();

    result.instrument = planned.front().symbol;
    result.firstTs = planned.front().bars.empty() ? 0 : planned.front().bars.front().tsEvent;
    result.lastTs = planned.front().bars.empty() ? 0 : planned.front().bars.back().tsEvent;

    std::uint64_t total = 0;
    for (const Planned& p : planned) total += p.bars.size();
    std::uint64_t done = 0;
    report(0.0, "store");
    const auto advance = [&](std::uint64_t rows) {
        done += rows;
        report(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0, "store");
    };

    const bool replace = options.conflicts == StoredConflicts::Replace;
    sql::Transaction tx(m_db);
    // Every series is compared with what is stored before anything is written, so that a
    // rejection names the file's first conflicting line whichever series it falls in.
    std::vector<std::int64_t> ids;
    std::vector<StoredOverlap> overlaps;
    for (const Planned& p : planned) {
        ids.push_back(m_store.upsertInstrument(p.symbol, dataset, p.kind, intervalNs));
        overlaps.push_back(compareStored(ids.back(), p.bars));
    }
    if (!replace) {
        std::size_t worst = planned.size();
        std::uint64_t worstLine = 0;
        for (std::size_t k = 0; k < planned.size(); ++k) {
            if (overlaps[k].conflicting == 0) continue;
            const std::uint64_t line = planned[k].lines.empty() ? 0 : planned[k].lines[overlaps[k].firstConflict];
            if (worst == planned.size() || (line != 0 && (worstLine == 0 || line < worstLine))) {
                worst = k;
                worstLine = line;
            }
        }
        if (worst < planned.size()) {
            const Planned& p = planned[worst];
            const StoredOverlap& o = overlaps[worst];
            const Bar& mine = p.bars[o.firstConflict];
            const Bar& theirs = o.storedAtFirstConflict;
            std::string differences;
            const std::tuple<const char*, std::int64_t, std::int64_t> prices[] = {{"open", theirs.open, mine.open},
                                                                                  {"high", theirs.high, mine.high},
                                                                                  {"low", theirs.low, mine.low},
                                                                                  {"close", theirs.close, mine.close}};
            for (const auto& [name, old, now] : prices)
                if (old != now)
                    differences += std::string(differences.empty() ? "" : ", ") + name + " " + formatPrice(old) +
                                   " stored, " + formatPrice(now) + " in the file";
            if (theirs.volume != mine.volume)
                differences += std::string(differences.empty() ? "" : ", ") + "volume " +
                               std::to_string(theirs.volume) + " stored, " + std::to_string(mine.volume) +
                               " in the file";
            std::string reason = "the " + p.symbol + " bar at " + formatUtc(mine.tsEvent) +
                                 " is already stored with other values (" + differences + ")";
            if (o.conflicting > 1)
                reason += "; " + std::to_string(o.conflicting) + " of the file's " + std::to_string(p.bars.size()) +
                          " " + p.symbol + " bars differ from stored ones";
            reason += "; nothing was stored";
            throw StoredBarConflict(result.path, worstLine, reason, p.symbol, o.conflicting, o.fromTs, o.toTs);
        }
    }

    for (std::size_t k = 0; k < planned.size(); ++k) {
        const Planned& p = planned[k];
        const std::int64_t id = ids[k];
        const StoredOverlap& o = overlaps[k];
        if (replace && o.storedInRange > 0) {
            // The file's range of this series is rewritten whole: what it holds replaces what was stored.
            sql::Statement erase(m_db, "DELETE FROM bars WHERE instrument_id = ?1 AND ts >= ?2 AND ts <= ?3");
            erase.bind(1, id).bind(2, o.fromTs).bind(3, o.toTs);
            erase.run();
            const auto erased = static_cast<std::int64_t>(sqlite3_changes(m_db));
            sql::Statement count(m_db, "UPDATE instruments SET bar_count = bar_count - ?2 WHERE id = ?1");
            count.bind(1, id).bind(2, erased);
            count.run();
        }
        const BarStore::StoredBars stored = m_store.insertBars(id, p.bars, advance);
        if (replace && o.storedInRange > 0) {
            result.imported += stored.inserted - std::min(stored.inserted, o.identical);
            result.alreadyStored += stored.alreadyStored + o.identical;
            result.replaced += o.conflicting;
            result.removed += o.storedInRange - o.identical - o.conflicting;
        } else {
            result.imported += stored.inserted;
            result.alreadyStored += stored.alreadyStored;
        }
        result.seriesIds.push_back(id);
        if (p.continuous) {
            if (replace && !p.bars.empty()) {
                sql::Statement erase(m_db, "DELETE FROM rolls WHERE instrument_id = ?1 AND ts >= ?2 AND ts <= ?3");
                erase.bind(1, id).bind(2, o.fromTs).bind(3, o.toTs);
                erase.run();
            }
            sql::Statement roll(m_db,
                                "INSERT INTO rolls(instrument_id, ts, trading_day, from_symbol, to_symbol, price_gap) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING");
            for (const Roll& r : result.rolls) {
                roll.bind(1, id)
                    .bind(2, r.ts)
                    .bind(3, r.tradingDay)
                    .bind(4, r.fromSymbol)
                    .bind(5, r.toSymbol)
                    .bind(6, r.priceGap);
                roll.run();
            }
        }
    }
    if (result.alreadyStored > 0)
        result.warnings.push_back(std::to_string(result.alreadyStored) +
                                  " bars were already stored for their series with the same values and were skipped");
    if (result.replaced > 0)
        result.warnings.push_back(std::to_string(result.replaced) +
                                  " stored bars were replaced by the file's other values");
    if (result.removed > 0)
        result.warnings.push_back(std::to_string(result.removed) +
                                  " stored bars in the replaced range are not in the file and were removed");
    if (prior) {
        // Replacing with a file imported before: its record is superseded, not duplicated.
        sql::Statement forget(m_db, "DELETE FROM imports WHERE id = ?1");
        forget.bind(1, prior->id);
        forget.run();
    }

    nlohmann::json summary = {
        {"instrument", result.instrument},
        {"seriesIds", result.seriesIds},
        {"rowsRead", result.rowsRead},
        {"imported", result.imported},
        {"alreadyStored", result.alreadyStored},
        {"replaced", result.replaced},
        {"removed", result.removed},
        {"duplicatesDropped", result.duplicatesDropped},
        {"firstTs", result.firstTs},
        {"lastTs", result.lastTs},
        {"intervalNs", intervalNs},
        {"rolls", result.rolls.size()},
        {"dataset", dataset},
    };
    sql::Statement record(m_db, "INSERT INTO imports(path, sha256, format, rows, imported_at, warnings, summary) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    record.bind(1, result.path)
        .bind(2, result.sha256)
        .bind(3, toString(result.format))
        .bind(4, static_cast<std::int64_t>(result.rowsRead))
        .bind(5, nowNs())
        .bind(6, nlohmann::json(result.warnings).dump())
        .bind(7, summary.dump());
    record.run();
    tx.commit();
    report(1.0, "store");
    return result;
}

} // namespace foxhunt
