// SPDX-License-Identifier: GPL-3.0-or-later
// Common setup of the benchmark suite: one intra-op thread unless told otherwise,
// and the machine facts every JSON report carries.

#include "engine/bench/bench_suite.h"

#include "models/process.h"
#include "models/runtime.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

namespace foxhunt::bench {

void prepare()
{
    const models::ProcessSetup setup = models::prepareProcess();
    int threads = 1;
    if (const char* env = std::getenv("FOXHUNT_THREADS")) threads = std::max(1, std::atoi(env));
    models::setThreads(threads);
    benchmark::AddCustomContext("foxhunt_version", FOXHUNT_VERSION);
    benchmark::AddCustomContext("torch_version", models::torchVersion());
    benchmark::AddCustomContext("intra_op_threads", std::to_string(threads));
    benchmark::AddCustomContext("hardware_threads", std::to_string(std::thread::hardware_concurrency()));
    benchmark::AddCustomContext("blas", models::blasInfo().summary());
    benchmark::AddCustomContext("malloc_keep_bytes", std::to_string(setup.mallocKeepBytes));
}

int runAll(int argc, char** argv)
{
    prepare();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return ran == 0 ? kNoBenchmarkMatched : 0;
}

} // namespace foxhunt::bench
