// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli replay : replay a stored series through the bar clock and the
// online feature pipeline; optionally write the data report.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"

#include "engine/data/market_time.h"
#include "engine/replay/bar_clock.h"
#include "engine/replay/features.h"
#include "engine/replay/split.h"
#include "engine/report/data_report.h"
#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"

#include "models/runtime.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <limits>
#include <memory>

namespace foxhunt::cli {

namespace {

struct ReplayArgs {
    std::string db;
    std::string series;
    std::string from, to;
    std::string speed = "max";
    std::string report;
    bool json = false;
    ProgressMode progress = ProgressMode::Auto;
};

/// Running mean/variance/min/max of one feature (Welford).
struct Accumulator {
    double mean = 0, m2 = 0, min = std::numeric_limits<double>::infinity(), max = -min;
    std::uint64_t n = 0;
    void add(double x)
    {
        ++n;
        const double d = x - mean;
        mean += d / static_cast<double>(n);
        m2 += d * (x - mean);
        min = std::min(min, x);
        max = std::max(max, x);
    }
};

int run(const ReplayArgs& a)
{
    double speed = 0;
    if (a.speed != "max") {
        try {
            speed = std::stod(a.speed);
        } catch (const std::exception&) {
            speed = -1;
        }
        if (!(speed > 0)) {
            printError("--speed must be 'max' or a positive multiple of real time, not '" + a.speed + "'");
            return kExitError;
        }
    }
    std::optional<std::int64_t> fromDay, toDay;
    for (auto [text, out] : {std::pair{&a.from, &fromDay}, std::pair{&a.to, &toDay}}) {
        if (text->empty()) continue;
        *out = parseDate(*text);
        if (!*out) {
            printError("dates are YYYY-MM-DD ES trading days, not '" + *text + "'");
            return kExitError;
        }
    }
    try {
        BarStore store(resolveDbPath(a.db));
        const std::optional<SeriesInfo> series = chooseSeries(store, a.series);
        if (!series) {
            printError(a.series.empty() ? "the store holds no series"
                                        : "no series '" + a.series + "' in " + store.path());
            return kExitError;
        }
        // --from/--to name ES trading days (inclusive); a session opens at 18:00 ET the evening before.
        const std::int64_t fromTs = fromDay ? sessionOpenUtc(*fromDay) : std::numeric_limits<std::int64_t>::min();
        const std::int64_t toTs = toDay ? sessionOpenUtc(*toDay + 1) : std::numeric_limits<std::int64_t>::max();
        const std::vector<Bar> bars = store.loadBars(series->id, fromTs, toTs);
        if (bars.empty()) {
            printError("no bars of " + series->symbol + " in that range");
            return kExitError;
        }

        BarClock clock(bars, BarClockOptions{.speed = speed});
        FeaturePipeline pipeline;
        std::array<Accumulator, kFeatureCount> stats;
        ProgressLine line(a.progress, "replay " + series->symbol, "bars");
        const std::uint64_t total = bars.size();
        const ReplayStats replay = clock.run([&](const Bar& bar, std::size_t index) {
            const FeatureVector& f = pipeline.push(bar);
            for (std::size_t k = 0; k < kFeatureCount; ++k) stats[k].add(f[k]);
            // Every 256th bar: the line reads the clock, which a bar at max speed should not pay for.
            if (index % 256 == 0) line.update(index + 1, total);
        });
        line.update(replay.barsReplayed, total);
        line.finish();

        DataReport report;
        report.series = *series;
        report.barsReplayed = replay.barsReplayed;
        report.wallSeconds = replay.wallSeconds;
        report.barsPerSecond = replay.wallSeconds > 0 ? static_cast<double>(replay.barsReplayed) / replay.wallSeconds
                                                      : 0;
        report.torchVersion = models::torchVersion();
        for (std::size_t k = 0; k < kFeatureCount; ++k) {
            const Accumulator& s = stats[k];
            report.features.push_back({std::string(FeaturePipeline::featureNames()[k]), s.mean,
                                       s.n > 1 ? std::sqrt(s.m2 / static_cast<double>(s.n - 1)) : 0.0, s.min, s.max});
        }
        try {
            const WalkForwardSplit split = splitByFraction(bars);
            report.split = {{"train", split.train.fromTs, split.train.toTs, split.trainBars},
                            {"validation", split.validation.fromTs, split.validation.toTs, split.validationBars},
                            {"test", split.test.fromTs, split.test.toTs, split.testBars}};
        } catch (const std::invalid_argument& e) {
            std::cerr << "note: no walk-forward split: " << e.what() << '\n';
        }
        report.gaps = findGaps(bars, series->intervalNs);
        report.rolls = store.rolls(series->id);
        report.bars = bars;

        if (!a.report.empty()) {
            const bool html = !(a.report.size() >= 5 && a.report.substr(a.report.size() - 5) == ".json");
            // Throws with the reason (a full disk included) and leaves no partial file.
            writeTextFile(a.report, html ? renderDataReportHtml(report) : dataReportJson(report).dump(2) + "\n");
        }
        if (a.json) {
            nlohmann::json j = dataReportJson(report);
            j["stopped_early"] = replay.stoppedEarly;
            printJson(j);
        } else {
            std::cout << "replayed " << replay.barsReplayed << " bars of " << series->symbol
                      << (series->synthetic() ? " (synthetic)" : "") << " in " << replay.wallSeconds << " s ("
                      << report.barsPerSecond / 1e6 << " M bars/s), " << kFeatureCount << " features per bar\n";
            if (!a.report.empty()) std::cout << "report: " << a.report << '\n';
        }
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addReplayCommand(CLI::App& app)
{
    auto args = std::make_shared<ReplayArgs>();
    CLI::App* cmd = app.add_subcommand("replay", "Replay a stored series through the online feature pipeline");
    addDbOption(*cmd, args->db);
    cmd->add_option("--series", args->series,
                    "Series id or symbol (default: the first real series, else the synthetic default)");
    cmd->add_option("--from", args->from, "First ES trading day, YYYY-MM-DD");
    cmd->add_option("--to", args->to, "Last ES trading day (inclusive), YYYY-MM-DD");
    cmd->add_option("--speed", args->speed, "max, or N for N x real time")->capture_default_str();
    cmd->add_option("--report", args->report, "Write the data report (.html, or .json)");
    cmd->add_flag("--json", args->json, "Print JSON");
    addProgressOptions(*cmd, args->progress);
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
