#include "app/cli/cli_util.h"

#include "engine/store/bar_store.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

namespace foxhunt::cli {

void addDbOption(CLI::App& command, std::string& dbPath)
{
    command.add_option("--db", dbPath, "SQLite store (default: $XDG_DATA_HOME/foxhunt/foxhunt.db)");
}

std::string resolveDbPath(const std::string& option)
{
    return option.empty() ? defaultDatabasePath() : option;
}

void printJson(const nlohmann::json& value)
{
    std::cout << value.dump(2) << '\n';
}

void printError(const std::string& message)
{
    std::cerr << "foxhunt-cli: " << message << '\n';
}

} // namespace foxhunt::cli
