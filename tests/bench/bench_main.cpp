// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-bench: every benchmark of the project, JSON with --benchmark_format=json.
#include "engine/bench/bench_suite.h"

int main(int argc, char** argv)
{
    return foxhunt::bench::runAll(argc, argv);
}
