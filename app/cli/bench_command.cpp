// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli bench : the same benchmark set as tests/bench/foxhunt-bench.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/bench/bench_suite.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace foxhunt::cli {

namespace {

struct BenchArgs {
    bool json = false;
    std::string filter;
    int repetitions = 3;
    double minTime = 0;
};

int run(const BenchArgs& a)
{
    std::vector<std::string> args{"foxhunt-cli bench"};
    if (a.json) args.emplace_back("--benchmark_format=json");
    if (!a.filter.empty()) args.push_back("--benchmark_filter=" + a.filter);
    if (a.repetitions > 1) {
        args.push_back("--benchmark_repetitions=" + std::to_string(a.repetitions));
        args.emplace_back("--benchmark_report_aggregates_only=true");
    }
    if (a.minTime > 0) args.push_back("--benchmark_min_time=" + std::to_string(a.minTime));
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const int rc = bench::runAll(static_cast<int>(args.size()), argv.data());
    if (rc == bench::kNoBenchmarkMatched) {
        // Google Benchmark says so on stderr only; stdout must stay what --json promises.
        const std::string message = "no benchmark matches --filter '" + a.filter +
                                    "' (foxhunt-bench --benchmark_list_tests lists them)";
        if (a.json) printJson(nlohmann::json{{"error", message}});
        else printError(message);
        return kExitError;
    }
    return rc == 0 ? kExitOk : kExitError;
}

} // namespace

Runner addBenchCommand(CLI::App& app)
{
    auto args = std::make_shared<BenchArgs>();
    CLI::App* cmd = app.add_subcommand("bench", "Run the benchmark suite (median of repetitions)");
    cmd->add_flag("--json", args->json, "Print Google Benchmark JSON");
    cmd->add_option("--filter", args->filter, "Regular expression of benchmarks to run");
    cmd->add_option("--repetitions", args->repetitions, "Repetitions per benchmark (median reported)")
        ->capture_default_str();
    cmd->add_option("--min-time", args->minTime, "Minimum seconds per benchmark run");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
