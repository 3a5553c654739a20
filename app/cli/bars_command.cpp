// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-cli bars : what is stored — series, counts, ranges, gaps, rolls.

#include "app/cli/cli_util.h"
#include "app/cli/commands.h"

#include "engine/data/market_time.h"
#include "engine/data/validation.h"
#include "engine/store/bar_store.h"
#include "engine/store/store_json.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>
#include <memory>

namespace foxhunt::cli {

namespace {

struct BarsArgs {
    std::string db;
    std::string series;
    bool json = false;
    int maxGaps = 20;
};

int run(const BarsArgs& a)
{
    try {
        BarStore store(resolveDbPath(a.db));
        std::vector<SeriesInfo> all = store.series();
        if (!a.series.empty()) {
            const auto one = store.findSeries(a.series);
            if (!one) {
                printError("no series '" + a.series + "' in " + store.path());
                return kExitError;
            }
            all = {*one};
        }
        nlohmann::json out = nlohmann::json::array();
        for (const SeriesInfo& s : all) {
            nlohmann::json j = toJson(s);
            const std::vector<Gap> gaps = findGaps(store.loadBars(s.id), s.intervalNs);
            const GapCounts counts = countGaps(gaps);
            nlohmann::json list = nlohmann::json::array();
            for (const Gap& g : gaps)
                if (g.kind == Gap::Kind::Other && static_cast<int>(list.size()) < a.maxGaps) list.push_back(toJson(g));
            j["gaps"] = {{"daily_breaks", counts.dailyBreaks},
                         {"weekends", counts.weekends},
                         {"holidays", counts.holidays},
                         {"other", counts.other},
                         {"other_list", list}};
            nlohmann::json rolls = nlohmann::json::array();
            for (const Roll& r : store.rolls(s.id)) rolls.push_back(toJson(r));
            j["rolls"] = rolls;
            out.push_back(j);
        }
        if (a.json) {
            printJson({{"db", store.path()}, {"series", out}});
            return kExitOk;
        }
        std::cout << store.path() << ": " << all.size() << " series\n";
        for (const nlohmann::json& j : out) {
            std::cout << std::setw(4) << j["id"].get<long long>() << "  " << std::left << std::setw(12)
                      << j["symbol"].get<std::string>() << std::right << ' ' << std::setw(13)
                      << j["kind"].get<std::string>() << ' ' << std::setw(6) << j["interval_s"].get<long long>()
                      << " s " << std::setw(9) << j["bars"].get<unsigned long long>() << " bars  "
                      << j["first_time"].get<std::string>() << " .. " << j["last_time"].get<std::string>() << "  gaps "
                      << j["gaps"]["daily_breaks"] << '/' << j["gaps"]["weekends"] << '/' << j["gaps"]["other"]
                      << "  rolls " << j["rolls"].size() << (j["synthetic"].get<bool>() ? "  [synthetic]" : "") << '\n';
        }
        return kExitOk;
    } catch (const std::exception& e) {
        printError(e.what());
        return kExitError;
    }
}

} // namespace

Runner addBarsCommand(CLI::App& app)
{
    auto args = std::make_shared<BarsArgs>();
    CLI::App* cmd = app.add_subcommand("bars", "List the stored series with counts, ranges, gaps and rolls");
    addDbOption(*cmd, args->db);
    cmd->add_option("--series", args->series, "Only this series (id or symbol)");
    cmd->add_option("--max-gaps", args->maxGaps, "Irregular gaps to list per series")->capture_default_str();
    cmd->add_flag("--json", args->json, "Print JSON");
    return [args] { return run(*args); };
}

} // namespace foxhunt::cli
