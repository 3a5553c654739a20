// SPDX-License-Identifier: GPL-3.0-or-later
// Report benchmarks: exporting one run with one million stored metric samples
// (4 models x 10 metrics x 25,000 steps) as HTML, JSON and CSV, store read
// included. Goal: under 10 s per format. The PDF writer lives in the Qt layer;
// set FOXHUNT_BENCH_REPORT_DB=/path.db to keep the store and time
// `foxhunt-cli report 1 --db /path.db --out x.pdf` against it.

#include "engine/report/run_report.h"
#include "engine/store/bar_store.h"
#include "engine/store/run_store.h"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace {

using namespace foxhunt;

constexpr int kSteps = 25'000;
const char* kModels[] = {"dqn", "ppo", "mamba2", "tft"};
const char* kMetrics[] = {"loss",       "loss_scale",      "grad_norm",        "latency_ms",    "param_bytes",
                          "grad_bytes", "optimizer_bytes", "activation_bytes", "learning_rate", "skipped_steps"};

/// The store with the one-million-sample run, built once per process.
class ReportStore {
public:
    static ReportStore& instance()
    {
        static ReportStore store;
        return store;
    }
    const std::string& path() const { return m_path; }
    std::int64_t runId() const { return m_run; }
    std::int64_t samples() const { return m_samples; }
    ~ReportStore()
    {
        if (m_keep) return;
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(m_path + suffix);
    }

private:
    ReportStore()
    {
        const char* keep = std::getenv("FOXHUNT_BENCH_REPORT_DB");
        m_keep = keep && *keep;
        m_path = m_keep ? std::string(keep)
                        : (std::filesystem::temp_directory_path() /
                           ("foxhunt-bench-report-" + std::to_string(::getpid()) + ".db"))
                              .string();
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(m_path + suffix);
        BarStore store(m_path);
        RunStore runs(store);
        m_run = runs.createRun("bench 1M samples", R"({"models":["dqn","ppo","mamba2","tft"],"seed":1,"device":"cpu"})",
                               SeriesInfo{}, 0, 0, R"({"foxhunt":"bench","torch":"1.13.1","cuda":false})");
        MetricBatch batch;
        batch.reserve(100'000);
        for (const char* model : kModels)
            for (const char* metric : kMetrics) {
                for (std::int64_t step = 1; step <= kSteps; ++step)
                    batch.push_back(
                        {model, metric, step, 1'700'000'000'000'000'000 + step * 1'000'000,
                         1.0 / std::sqrt(static_cast<double>(step)) + 1e-3 * static_cast<double>(step % 97)});
                if (batch.size() >= 100'000) {
                    runs.appendMetrics(m_run, batch);
                    m_samples += static_cast<std::int64_t>(batch.size());
                    batch.clear();
                }
            }
        runs.appendMetrics(m_run, batch);
        m_samples += static_cast<std::int64_t>(batch.size());
        runs.setStatus(m_run, RunStatus::Finished);
    }
    std::string m_path;
    bool m_keep = false;
    std::int64_t m_run = 0;
    std::int64_t m_samples = 0;
};

void exportFormat(benchmark::State& state, const char* extension)
{
    ReportStore& store = ReportStore::instance();
    const std::string out = (std::filesystem::temp_directory_path() /
                             ("foxhunt-bench-report-" + std::to_string(::getpid()) + extension))
                                .string();
    for (auto _ : state) writeRunReport(store.path(), {store.runId()}, out);
    state.counters["file_bytes"] = static_cast<double>(std::filesystem::file_size(out));
    std::filesystem::remove(out);
    state.SetItemsProcessed(state.iterations() * store.samples());
}

void BM_ReportHtml1M(benchmark::State& state)
{
    exportFormat(state, ".html");
}
void BM_ReportJson1M(benchmark::State& state)
{
    exportFormat(state, ".json");
}
void BM_ReportCsv1M(benchmark::State& state)
{
    exportFormat(state, ".csv");
}

// One iteration per repetition: each is seconds long; three repetitions give a median.
BENCHMARK(BM_ReportHtml1M)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_ReportJson1M)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_ReportCsv1M)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true);

} // namespace
