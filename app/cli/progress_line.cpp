// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/progress_line.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace foxhunt::cli {

namespace {

/// 480000 -> "480,000".
std::string grouped(std::uint64_t n)
{
    std::string digits = std::to_string(n);
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), 1, ',');
    return digits;
}

/// 310000 -> "310k", 3100 -> "3.1k", 42 -> "42".
std::string compact(double rate)
{
    static constexpr const char* kSuffix[] = {"", "k", "M", "G", "T"};
    int power = 0;
    while (rate >= 999.5 && power < 4) {
        rate /= 1000.0;
        ++power;
    }
    char text[32];
    if (power > 0 && rate < 9.95) std::snprintf(text, sizeof text, "%.1f%s", rate, kSuffix[power]);
    else std::snprintf(text, sizeof text, "%.0f%s", rate, kSuffix[power]);
    return text;
}

/// Seconds -> "m:ss", or "h:mm:ss" from an hour on.
std::string clock(double seconds)
{
    const auto s = static_cast<long long>(std::ceil(std::max(0.0, seconds)));
    char text[48];
    if (s >= 3600) std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    return text;
}

} // namespace

void addProgressOptions(CLI::App& command, ProgressMode& mode)
{
    CLI::Option* on = command.add_flag_callback(
        "--progress", [&mode] { mode = ProgressMode::On; },
        "Show a progress line on stderr even when it is not a terminal");
    CLI::Option* off = command.add_flag_callback(
        "--no-progress", [&mode] { mode = ProgressMode::Off; },
        "Never show the progress line (default: only on a terminal)");
    on->excludes(off);
}

bool progressEnabled(ProgressMode mode)
{
    switch (mode) {
    case ProgressMode::On: return true;
    case ProgressMode::Off: return false;
    case ProgressMode::Auto: break;
    }
    return ::isatty(STDERR_FILENO) == 1;
}

std::string formatProgressLine(std::string_view label, std::uint64_t done, std::uint64_t total, std::string_view unit,
                               double elapsedSeconds)
{
    if (total > 0 && done > total) done = total;
    std::string line(label);
    line += ':';
    if (!unit.empty()) {
        line += ' ' + grouped(done);
        if (total > 0) line += '/' + grouped(total);
        line += ' ';
        line += unit;
    }
    if (total > 0) line += "  " + std::to_string(done * 100 / total) + " %";
    const bool rateKnown = elapsedSeconds > 0 && done > 0;
    const double rate = rateKnown ? static_cast<double>(done) / elapsedSeconds : 0.0;
    if (rateKnown && !unit.empty()) {
        line += "  " + compact(rate) + ' ';
        line += unit;
        line += "/s";
    }
    if (total > 0)
        line += "  ETA " + (rateKnown ? clock(static_cast<double>(total - done) / rate) : std::string("-:--"));
    return line;
}

ProgressLine::ProgressLine(ProgressMode mode, std::string label, std::string unit)
    : m_enabled(progressEnabled(mode)), m_label(std::move(label)), m_unit(std::move(unit))
{
}

ProgressLine::~ProgressLine()
{
    if (m_printed && !m_finished) std::cerr << '\n' << std::flush;
}

void ProgressLine::update(std::uint64_t done, std::uint64_t total)
{
    if (!m_enabled) return;
    m_done = done;
    m_total = total;
    const auto now = std::chrono::steady_clock::now();
    if (m_printed && now - m_last < std::chrono::milliseconds(100)) return;
    m_last = now;
    print();
}

void ProgressLine::finish()
{
    if (!m_enabled || m_finished) return;
    print();
    std::cerr << '\n' << std::flush;
    m_finished = true;
}

void ProgressLine::print()
{
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    std::string line = formatProgressLine(m_label, m_done, m_total, m_unit, elapsed);
    const std::size_t length = line.size();
    if (length < m_width) line.append(m_width - length, ' ');
    m_width = std::max(m_width, length);
    std::cerr << '\r' << line << std::flush;
    m_printed = true;
}

} // namespace foxhunt::cli
