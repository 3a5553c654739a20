// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli import FILE... : read, validate and store bar files.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"

#include "engine/data/import_error.h"
#include "engine/data/market_time.h"
#include "engine/store/bar_importer.h"
#include "engine/store/bar_store.h"
#include "engine/store/store_json.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

namespace foxhunt::cli {

namespace {

struct ImportArgs {
    std::vector<std::string> files;
    std::string db;
    std::string tz = "America/New_York";
    std::string format = "auto";
    std::string symbol = "ES";
    bool backAdjust = false;
    bool replace = false;
    bool json = false;
    ProgressMode progress = ProgressMode::Auto;
    std::uint64_t maxDecompressedMib = 0;
    std::string timestampColumn, dateColumn, timeColumn, openColumn, highColumn, lowColumn, closeColumn, volumeColumn,
        symbolColumn, timestampFormat, delimiter;
};

void setIfGiven(std::optional<std::string>& target, const std::string& value)
{
    if (!value.empty()) target = value;
}

void printText(const ImportResult& r)
{
    if (r.alreadyImported) {
        std::cout << r.path << ": already imported (sha256 " << r.sha256.substr(0, 12) << "...), nothing written\n";
        return;
    }
    const ValidationReport& v = r.validation;
    std::cout << r.path << ": " << toString(r.format) << ", " << r.imported << " bars imported into " << r.instrument
              << " (" << v.intervalNs / kNsPerSecond << " s bars)";
    if (r.alreadyStored) std::cout << ", " << r.alreadyStored << " already stored";
    if (r.replaced) std::cout << ", " << r.replaced << " replaced";
    if (r.removed) std::cout << ", " << r.removed << " removed";
    std::cout << ", " << r.duplicatesDropped << " duplicates dropped\n";
    if (r.imported + r.alreadyStored > 0)
        std::cout << "  range " << formatUtc(r.firstTs) << " .. " << formatUtc(r.lastTs) << '\n';
    std::cout << "  gaps: " << v.dailyBreaks << " daily breaks, " << v.weekends << " weekends, " << v.holidays
              << " holidays, " << v.otherGaps << " other\n";
    for (const Roll& roll : r.rolls)
        std::cout << "  roll " << formatDate(roll.tradingDay) << ' ' << roll.fromSymbol << " -> " << roll.toSymbol
                  << " gap " << toPoints(roll.priceGap) << '\n';
    for (const std::string& w : r.warnings) std::cout << "  warning: " << w << '\n';
}

int run(const ImportArgs& a)
{
    ImportOptions options;
    try {
        options.read.format = fileFormatFromString(a.format);
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
    options.read.timeZone = a.tz;
    options.read.symbol = a.symbol;
    options.continuous.backAdjust = a.backAdjust;
    options.conflicts = a.replace ? StoredConflicts::Replace : StoredConflicts::Reject;
    if (a.maxDecompressedMib > 0) {
        // An explicit limit replaces the ratio rule: exactly this much, whatever the file's size.
        options.read.limits.minDecompressedBytes = options.read.limits.maxDecompressedBytes = a.maxDecompressedMib
                                                                                              << 20;
    }
    CsvOverrides& csv = options.read.csv;
    setIfGiven(csv.timestampColumn, a.timestampColumn);
    setIfGiven(csv.dateColumn, a.dateColumn);
    setIfGiven(csv.timeColumn, a.timeColumn);
    setIfGiven(csv.openColumn, a.openColumn);
    setIfGiven(csv.highColumn, a.highColumn);
    setIfGiven(csv.lowColumn, a.lowColumn);
    setIfGiven(csv.closeColumn, a.closeColumn);
    setIfGiven(csv.volumeColumn, a.volumeColumn);
    setIfGiven(csv.symbolColumn, a.symbolColumn);
    setIfGiven(csv.timestampFormat, a.timestampFormat);
    if (!a.delimiter.empty()) csv.delimiter = a.delimiter == "\\t" ? '\t' : a.delimiter[0];

    try {
        ZoneConverter check(a.tz);
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }

    std::unique_ptr<BarStore> store;
    try {
        store = std::make_unique<BarStore>(resolveDbPath(a.db));
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }

    int exitCode = kExitOk;
    nlohmann::json files = nlohmann::json::array();
    for (const std::string& path : a.files) {
        // The file's bytes stand for the work: the bar count is known only once it is read. A pipe
        // has no size, so its line shows the fraction alone.
        std::error_code sizeError;
        const std::uintmax_t size = std::filesystem::is_regular_file(path, sizeError)
                                        ? std::filesystem::file_size(path, sizeError)
                                        : 0;
        const bool sized = !sizeError && size > 0;
        const std::uint64_t total = sized ? size : 1000;
        ProgressLine line(a.progress, "import " + std::filesystem::path(path).filename().string(),
                          sized ? "bytes" : "");
        double overall = 0.0;
        const ProgressFn onProgress = [&](double fraction, std::string_view stage) {
            overall = std::max(overall, overallImportFraction(fraction, stage));
            line.update(static_cast<std::uint64_t>(overall * static_cast<double>(total)), total);
        };
        try {
            const ImportResult result = BarImporter(*store).importFile(path, options,
                                                                       line.enabled() ? onProgress : ProgressFn{});
            line.update(total, total);
            line.finish();
            if (a.json) files.push_back(toJson(result));
            else printText(result);
        } catch (const ImportError& e) {
            line.finish();
            std::cerr << e.what() << '\n';
            const auto* conflict = dynamic_cast<const StoredBarConflict*>(&e);
            if (conflict)
                std::cerr << "  to replace the stored " << conflict->series() << " bars from "
                          << formatUtc(conflict->fromTs()) << " to " << formatUtc(conflict->toTs())
                          << " with this file's, import it again with --replace\n";
            if (a.json) {
                nlohmann::json rejected = {{"path", path},     {"status", "rejected"}, {"error", e.what()},
                                           {"line", e.line()}, {"reason", e.reason()}, {"imported", 0}};
                if (conflict) rejected["conflicts"] = conflict->conflicts();
                files.push_back(std::move(rejected));
            }
            exitCode = kExitRejected;
        } catch (const std::exception& e) {
            line.finish();
            std::cerr << path << ": " << e.what() << '\n';
            if (a.json) files.push_back({{"path", path}, {"status", "failed"}, {"error", e.what()}, {"imported", 0}});
            if (exitCode == kExitOk) exitCode = kExitError;
        }
    }
    if (a.json) printJson({{"db", store->path()}, {"files", files}});
    return exitCode;
}

} // namespace

Runner addImportCommand(CLI::App& app)
{
    auto args = std::make_shared<ImportArgs>();
    CLI::App* cmd = app.add_subcommand("import",
                                       "Import bar files (Databento DBN/.zst, Databento CSV, vendor OHLCV CSV)");
    cmd->add_option("files", args->files, "Files to import")->required()->check(CLI::ExistingFile);
    addDbOption(*cmd, args->db);
    cmd->add_option("--tz", args->tz, "Time zone of naive timestamps")->capture_default_str();
    cmd->add_option("--format", args->format, "auto|dbn|databento-csv|csv")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "dbn", "databento-csv", "csv"}));
    cmd->add_option("--symbol", args->symbol, "Symbol for files that name none")->capture_default_str();
    cmd->add_flag("--back-adjust", args->backAdjust, "Back-adjust the continuous series at rolls (difference method)");
    cmd->add_flag("--replace", args->replace,
                  "Replace stored bars that the file gives other values: each series' stored bars between the "
                  "file's first and last time are rewritten (without it such a file is rejected)");
    cmd->add_flag("--json", args->json, "Print a JSON summary");
    addProgressOptions(*cmd, args->progress);
    cmd->add_option("--max-decompressed", args->maxDecompressedMib,
                    "Largest size a .zst file may decompress to, in MiB (default: 200x the file, at least 64 MiB, "
                    "at most 4 GiB)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
    auto* g = cmd->add_option_group("CSV overrides", "When auto-detection guesses wrong");
    g->add_option("--timestamp-column", args->timestampColumn, "Column holding date and time");
    g->add_option("--date-column", args->dateColumn, "Column holding the date");
    g->add_option("--time-column", args->timeColumn, "Column holding the time");
    g->add_option("--open-column", args->openColumn);
    g->add_option("--high-column", args->highColumn);
    g->add_option("--low-column", args->lowColumn);
    g->add_option("--close-column", args->closeColumn);
    g->add_option("--volume-column", args->volumeColumn);
    g->add_option("--symbol-column", args->symbolColumn);
    g->add_option("--timestamp-format", args->timestampFormat, "e.g. \"%Y%m%d  %H:%M:%S\"");
    g->add_option("--delimiter", args->delimiter, "Field delimiter (, ; or \\t)");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
