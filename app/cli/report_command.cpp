// foxhunt-cli report RUN_ID... --out FILE : export runs as HTML, JSON or CSV.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/report/run_report.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct ReportArgs {
    std::string db;
    std::vector<std::int64_t> runs;
    std::string out;
};

int run(const ReportArgs& a)
{
    try {
        writeRunReport(resolveDbPath(a.db), a.runs, a.out);
        std::cout << a.out << '\n';
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addReportCommand(CLI::App& app)
{
    auto args = std::make_shared<ReportArgs>();
    CLI::App* cmd = app.add_subcommand("report", "Export one run, or a comparison of several, as .html, .json or .csv");
    cmd->add_option("runs", args->runs, "Run ids")->required();
    addDbOption(*cmd, args->db);
    cmd->add_option("--out", args->out, "Output file; the extension picks the format")->required();
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
