// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A full disk, simulated deterministically: RLIMIT_FSIZE makes every write(2)
// past `bytes` fail with EFBIG (SIGXFSZ ignored), on any file system, with no
// root and no tmpfs. For this process while in scope, or for a child process.

#include <csignal>

#include <sys/resource.h>

namespace foxhunt::testing {

/// Limits the size of files this process writes, until destroyed.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes)
    {
        getrlimit(RLIMIT_FSIZE, &m_saved);
        m_savedHandler = std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{bytes, m_saved.rlim_max};
        m_active = setrlimit(RLIMIT_FSIZE, &limit) == 0;
    }
    ~FileSizeLimit()
    {
        setrlimit(RLIMIT_FSIZE, &m_saved);
        std::signal(SIGXFSZ, m_savedHandler);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

    /// Whether the limit is in force (setrlimit can refuse).
    bool active() const { return m_active; }

    /// For QProcess::setChildProcessModifier: the same limit in a child, after fork.
    static void applyInChild(rlim_t bytes)
    {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit{};
        getrlimit(RLIMIT_FSIZE, &limit);
        limit.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &limit);
    }

private:
    rlimit m_saved{};
    void (*m_savedHandler)(int) = SIG_DFL;
    bool m_active = false;
};

} // namespace foxhunt::testing
