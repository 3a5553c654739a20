#pragma once
// Small helpers shared by the CLI commands.

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace CLI { class App; }

namespace foxhunt::cli {

/// Adds `--db PATH` (default: the per-user data directory) to a command.
void addDbOption(CLI::App& command, std::string& dbPath);
/// The database path to use: the option's value, else the per-user default.
std::string resolveDbPath(const std::string& option);
/// Writes pretty JSON and a newline to stdout.
void printJson(const nlohmann::json& value);
/// Writes "foxhunt-cli: message" to stderr.
void printError(const std::string& message);

} // namespace foxhunt::cli
