#pragma once
// The benchmark suite shared by tests/bench/foxhunt-bench and `foxhunt-cli bench`.

namespace foxhunt::bench {

/// Sets threads (FOXHUNT_THREADS, default 1) and adds machine facts to the JSON context.
void prepare();
/// Runs the registered benchmarks with Google Benchmark's command-line flags
/// (e.g. --benchmark_format=json --benchmark_repetitions=5). Returns an exit code.
int runAll(int argc, char** argv);

} // namespace foxhunt::bench
