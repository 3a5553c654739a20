// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A progress line on stderr for the long CLI jobs (import, train, replay, report):
// N/total, percent, rate and ETA, rewritten in place with '\r' while stderr is a terminal.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace foxhunt::cli {

/// Whether a command shows its progress line.
enum class ProgressMode {
    Auto, ///< only when stderr is a terminal
    On,   ///< --progress
    Off,  ///< --no-progress
};

/// Adds `--progress` and `--no-progress` (mutually exclusive) to a command; neither leaves Auto.
void addProgressOptions(CLI::App& command, ProgressMode& mode);

/// True for On, false for Off, isatty(2) for Auto.
bool progressEnabled(ProgressMode mode);

/// One progress line, without '\r' or newline, e.g.
/// `import es.csv: 120,000/480,000 bars  25 %  310k bars/s  ETA 0:01`.
/// total 0 = unknown: no percent and no ETA. elapsedSeconds <= 0 or done 0: no rate, ETA `-:--`.
/// An empty unit leaves out the counts and the rate (a job that only knows a fraction).
std::string formatProgressLine(std::string_view label, std::uint64_t done, std::uint64_t total, std::string_view unit,
                               double elapsedSeconds);

/// Prints a job's progress line to stderr, at most ten times a second, when enabled.
class ProgressLine {
public:
    ProgressLine(ProgressMode mode, std::string label, std::string unit);
    /// Ends the line (a newline) if anything was printed and finish() was not called.
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    bool enabled() const { return m_enabled; }
    /// Reports `done` of `total` (0 = unknown); reads the clock, so a per-bar caller calls it
    /// every few hundred bars.
    void update(std::uint64_t done, std::uint64_t total);
    /// Prints the last figures once more, whatever the time since the last line, and a newline.
    void finish();

private:
    void print();

    bool m_enabled = false;
    std::string m_label;
    std::string m_unit;
    std::uint64_t m_done = 0;
    std::uint64_t m_total = 0;
    std::size_t m_width = 0; ///< the longest line printed, blanked over by shorter ones
    bool m_printed = false;
    bool m_finished = false;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point m_last{};
};

} // namespace foxhunt::cli
