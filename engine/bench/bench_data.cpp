// SPDX-License-Identifier: GPL-3.0-or-later
// Throughput of the bar readers and validation on in-memory data, and the stages of a whole import.

#include "engine/data/dbn_reader.h"
#include "engine/data/market_time.h"
#include "engine/data/reader.h"
#include "engine/data/validation.h"
#include "engine/bench/bench_suite.h"
#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <cstring>
#include <string>

namespace {

using namespace foxhunt;

constexpr std::int64_t kCsvRows = 1'000'000;
constexpr std::int64_t kDbnRecords = 2'000'000;
// 2021-01-04 00:00 UTC, a Monday.
constexpr std::int64_t kStartUtc = 1'609'718'400'000'000'000;

// Price path on the tick grid, deterministic and cheap.
std::int64_t pricePath(std::int64_t i)
{
    return 4000 * kPriceScale + ((i * 7919) % 801 - 400) * kEsTick;
}

// 1-minute bars over ~2 years of New York wall time, DST changes included.
const std::string& csvText()
{
    static const std::string text = [] {
        std::string out = "timestamp,open,high,low,close,volume\n";
        out.reserve(std::size_t(kCsvRows) * 56);
        ZoneConverter ny("America/New_York");
        char line[128];
        for (std::int64_t i = 0; i < kCsvRows; ++i) {
            const std::int64_t local = ny.utcToLocal(kStartUtc + i * kNsPerMinute);
            const std::int64_t days = local / kNsPerDay;
            const std::int64_t sec = (local % kNsPerDay) / kNsPerSecond;
            int y = 0;
            unsigned m = 0, d = 0;
            civilFromDays(days, y, m, d);
            const std::int64_t o = pricePath(i), c = pricePath(i + 1);
            const std::int64_t h = std::max(o, c) + kEsTick, l = std::min(o, c) - 2 * kEsTick;
            auto pts = [](std::int64_t fixed, char* buf) {
                const std::int64_t cents = fixed / (kPriceScale / 100);
                std::snprintf(buf, 24, "%lld.%02lld", static_cast<long long>(cents / 100),
                              static_cast<long long>(cents % 100));
            };
            char po[24], ph[24], pl[24], pc[24];
            pts(o, po);
            pts(h, ph);
            pts(l, pl);
            pts(c, pc);
            const int n = std::snprintf(line, sizeof line, "%04d-%02u-%02u %02lld:%02lld:%02lld,%s,%s,%s,%s,%lld\n", y,
                                        m, d, static_cast<long long>(sec / 3600), static_cast<long long>(sec / 60 % 60),
                                        static_cast<long long>(sec % 60), po, ph, pl, pc,
                                        static_cast<long long>(100 + i % 977));
            out.append(line, std::size_t(n));
        }
        return out;
    }();
    return text;
}

template <typename T>
void put(std::string& out, T value)
{
    char buf[sizeof(T)];
    std::memcpy(buf, &value, sizeof(T));
    out.append(buf, sizeof(T));
}

// An uncompressed DBN v3 ohlcv-1m file with one symbol mapping.
const std::string& dbnBytes()
{
    static const std::string bytes = [] {
        std::string meta;
        std::string dataset = "GLBX.MDP3";
        dataset.resize(16, '\0');
        meta += dataset;
        put<std::uint16_t>(meta, 6);
        put<std::uint64_t>(meta, std::uint64_t(kStartUtc));
        put<std::uint64_t>(meta, std::uint64_t(kStartUtc + kDbnRecords * kNsPerMinute));
        put<std::uint64_t>(meta, 0);
        put<std::uint8_t>(meta, 1);
        put<std::uint8_t>(meta, 0);
        put<std::uint8_t>(meta, 0);
        put<std::uint16_t>(meta, 71);
        meta.resize(100, '\0');
        put<std::uint32_t>(meta, 0);
        auto sym = [&](const std::string& s) {
            std::string f = s;
            f.resize(71, '\0');
            meta += f;
        };
        put<std::uint32_t>(meta, 1);
        sym("ESH1");
        put<std::uint32_t>(meta, 0);
        put<std::uint32_t>(meta, 0);
        put<std::uint32_t>(meta, 1);
        sym("ESH1");
        put<std::uint32_t>(meta, 1);
        put<std::uint32_t>(meta, 20210104);
        put<std::uint32_t>(meta, 20230101);
        sym("5482");
        meta.resize((meta.size() + 7) / 8 * 8, '\0');

        std::string out = "DBN";
        put<std::uint8_t>(out, 3);
        put<std::uint32_t>(out, std::uint32_t(meta.size()));
        out += meta;
        out.reserve(out.size() + std::size_t(kDbnRecords) * kDbnOhlcvSize);
        for (std::int64_t i = 0; i < kDbnRecords; ++i) {
            const std::int64_t o = pricePath(i), c = pricePath(i + 1);
            put<std::uint8_t>(out, kDbnOhlcvSize / 4);
            put<std::uint8_t>(out, kRtypeOhlcv1m);
            put<std::uint16_t>(out, 1);
            put<std::uint32_t>(out, 5482);
            put<std::uint64_t>(out, std::uint64_t(kStartUtc + i * kNsPerMinute));
            put<std::int64_t>(out, o);
            put<std::int64_t>(out, std::max(o, c) + kEsTick);
            put<std::int64_t>(out, std::min(o, c) - kEsTick);
            put<std::int64_t>(out, c);
            put<std::uint64_t>(out, std::uint64_t(100 + i % 977));
        }
        return out;
    }();
    return bytes;
}

void BM_CsvParse(benchmark::State& state)
{
    const std::string& text = csvText();
    std::size_t bars = 0;
    for (auto _ : state) {
        ParsedFile f = readBarBuffer("bench.csv", text);
        bars = f.bars.size();
        benchmark::DoNotOptimize(f.bars.data());
    }
    if (bars != std::size_t(kCsvRows)) state.SkipWithError("CSV benchmark parsed the wrong number of rows");
    state.SetItemsProcessed(state.iterations() * kCsvRows);
    state.SetBytesProcessed(state.iterations() * std::int64_t(text.size()));
}
BENCHMARK(BM_CsvParse)->Unit(benchmark::kMillisecond);

// A whole import of the million-row CSV from a file into an empty store, timed per stage as the
// progress callback sees them begin: each stage's share of the time is what the import progress
// bar weights it by (overallImportFraction).
void BM_ImportStages(benchmark::State& state)
{
    const auto file = std::filesystem::temp_directory_path() / ("foxhunt-bench-" + std::to_string(::getpid()) + ".csv");
    {
        std::ofstream out(file, std::ios::binary);
        out << csvText();
    }
    constexpr std::array<std::string_view, 4> kStages = {"read", "parse", "validate", "store"};
    using Clock = std::chrono::steady_clock;
    std::array<double, 4> shares{};
    std::size_t rows = 0;
    for (auto _ : state) {
        state.PauseTiming();
        bench::ScratchDb db;
        BarStore store(db.path());
        std::array<Clock::time_point, 5> begun{};
        state.ResumeTiming();
        const ImportResult r = BarImporter(store).importFile(file.string(), {}, [&](double, std::string_view stage) {
            for (std::size_t i = 0; i < kStages.size(); ++i)
                if (stage == kStages[i] && begun[i] == Clock::time_point{}) begun[i] = Clock::now();
        });
        begun[4] = Clock::now();
        state.PauseTiming();
        rows = r.rowsRead;
        const double total = std::chrono::duration<double>(begun[4] - begun[0]).count();
        for (std::size_t i = 0; i < kStages.size(); ++i)
            shares[i] = std::chrono::duration<double>(begun[i + 1] - begun[i]).count() / total;
        state.ResumeTiming();
    }
    std::filesystem::remove(file);
    if (rows != std::size_t(kCsvRows)) state.SkipWithError("the import read the wrong number of rows");
    for (std::size_t i = 0; i < kStages.size(); ++i) state.counters[std::string(kStages[i]) + "_share"] = shares[i];
    state.SetItemsProcessed(state.iterations() * kCsvRows);
}
BENCHMARK(BM_ImportStages)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_DbnDecode(benchmark::State& state)
{
    const std::string& bytes = dbnBytes();
    std::size_t bars = 0;
    for (auto _ : state) {
        ParsedFile f = readBarBuffer("bench.dbn", bytes);
        bars = f.bars.size();
        benchmark::DoNotOptimize(f.bars.data());
    }
    if (bars != std::size_t(kDbnRecords)) state.SkipWithError("DBN benchmark decoded the wrong number of records");
    state.SetItemsProcessed(state.iterations() * kDbnRecords);
    state.SetBytesProcessed(state.iterations() * std::int64_t(bytes.size()));
}
BENCHMARK(BM_DbnDecode)->Unit(benchmark::kMillisecond);

void BM_ValidateBars(benchmark::State& state)
{
    const ParsedFile parsed = readBarBuffer("bench.dbn", dbnBytes());
    for (auto _ : state) {
        state.PauseTiming();
        ParsedFile f = parsed;
        state.ResumeTiming();
        const ValidationReport r = validateBars(f);
        benchmark::DoNotOptimize(r.rowsKept);
    }
    state.SetItemsProcessed(state.iterations() * std::int64_t(parsed.bars.size()));
}
BENCHMARK(BM_ValidateBars)->Unit(benchmark::kMillisecond);

} // namespace
