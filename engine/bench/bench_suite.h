// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The benchmark suite shared by tests/bench/foxhunt-bench and `foxhunt-cli bench`.

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace foxhunt::bench {

/// A database file in the temp folder, removed with its WAL files on destruction.
class ScratchDb {
public:
    ScratchDb()
    {
        static std::atomic<int> counter{0};
        m_path = (std::filesystem::temp_directory_path() /
                  ("foxhunt-bench-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".db"))
                     .string();
        remove();
    }
    ~ScratchDb() { remove(); }
    ScratchDb(const ScratchDb&) = delete;
    ScratchDb& operator=(const ScratchDb&) = delete;
    /// The file's path.
    const std::string& path() const { return m_path; }

private:
    void remove()
    {
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(m_path + suffix, ec);
    }
    std::string m_path;
};

/// Sets threads (FOXHUNT_THREADS, default 1) and adds machine facts to the JSON context.
void prepare();
/// runAll()'s exit code when --benchmark_filter matched no benchmark.
inline constexpr int kNoBenchmarkMatched = 3;
/// Runs the registered benchmarks with Google Benchmark's command-line flags
/// (e.g. --benchmark_format=json --benchmark_repetitions=5). Returns an exit code: 0, 1 for an
/// unknown flag, kNoBenchmarkMatched when the filter matched nothing.
int runAll(int argc, char** argv);

} // namespace foxhunt::bench
