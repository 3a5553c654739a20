// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one error type an import raises: what a user needs to fix the file.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace foxhunt {

/// A file that cannot be imported. what() reads `file:line: reason`; line is
/// the 1-based text line for CSV files, the 1-based record number for DBN
/// (0 when the problem is not tied to one line, e.g. a truncated header).
class ImportError : public std::runtime_error {
public:
    ImportError(std::string file, std::uint64_t line, std::string reason)
        : std::runtime_error(format(file, line, reason)), m_file(std::move(file)), m_line(line),
          m_reason(std::move(reason))
    {
    }

    const std::string& file() const { return m_file; }
    std::uint64_t line() const { return m_line; }
    const std::string& reason() const { return m_reason; }

private:
    static std::string format(const std::string& file, std::uint64_t line, const std::string& reason)
    {
        return line > 0 ? file + ':' + std::to_string(line) + ": " + reason : file + ": " + reason;
    }

    std::string m_file;
    std::uint64_t m_line = 0;
    std::string m_reason;
};

} // namespace foxhunt
