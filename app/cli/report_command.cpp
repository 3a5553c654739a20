// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli report RUN_ID... --out FILE : export runs as HTML, PDF, JSON or CSV;
// foxhunt-cli report --group G [--group G2 ...] --out FILE : the same for run groups.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"
#include "app/cli/progress_line.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct ReportArgs {
    std::string db;
    std::vector<std::int64_t> runs;
    std::vector<std::int64_t> groups;
    std::string out;
    std::string paper = "a4";
    bool json = false;
    ProgressMode progress = ProgressMode::Auto;
};

int run(const ReportArgs& a)
{
    try {
        // An export knows only its fraction: the line shows percent and ETA, in thousandths.
        ProgressLine line(a.progress, "report " + std::filesystem::path(a.out).filename().string(), "");
        constexpr std::uint64_t kParts = 1000;
        const auto onProgress = [&line](double fraction) {
            line.update(static_cast<std::uint64_t>(std::clamp(fraction, 0.0, 1.0) * kParts), kParts);
            return true;
        };
        if (!a.groups.empty())
            exportGroupReportTo(resolveDbPath(a.db), a.groups, a.out, a.paper == "letter", onProgress);
        else exportReport(resolveDbPath(a.db), a.runs, a.out, a.paper == "letter", onProgress);
        line.update(kParts, kParts);
        line.finish();
        if (a.json) {
            const std::filesystem::path out(a.out);
            printJson({{"out", std::filesystem::absolute(out).string()},
                       {"format", out.extension().string().substr(out.has_extension() ? 1 : 0)},
                       {"bytes", std::filesystem::file_size(out)},
                       {a.groups.empty() ? "runs" : "groups", a.groups.empty() ? a.runs : a.groups}});
        } else {
            std::cout << a.out << '\n';
        }
        return kExitOk;
    } catch (const std::exception& e) {
        if (a.json)
            printJson({{"error", e.what()},
                       {"out", a.out},
                       {a.groups.empty() ? "runs" : "groups", a.groups.empty() ? a.runs : a.groups}});
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addReportCommand(CLI::App& app)
{
    auto args = std::make_shared<ReportArgs>();
    CLI::App* cmd = app.add_subcommand(
        "report", "Export one run or run group, or a comparison of several, as .html, .pdf, .json or .csv");
    CLI::Option* runs = cmd->add_option("runs", args->runs, "Run ids");
    CLI::Option* groups = cmd->add_option("--group", args->groups,
                                          "A run group (train --seeds, --folds, --sweep) instead of runs; repeat it to "
                                          "compare groups");
    runs->excludes(groups);
    cmd->callback([runs, groups] {
        if (runs->count() == 0 && groups->count() == 0) throw CLI::RequiredError("the run ids to report, or --group");
    });
    addDbOption(*cmd, args->db);
    cmd->add_option("--out", args->out, "Output file; the extension picks the format")->required();
    cmd->add_option("--paper", args->paper, "PDF paper size: a4 or letter")
        ->check(CLI::IsMember({"a4", "letter"}))
        ->capture_default_str();
    cmd->add_flag("--json", args->json, "Print what was written (path, format, bytes, runs) as JSON");
    addProgressOptions(*cmd, args->progress);
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
