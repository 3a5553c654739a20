// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// LibTorch runtime facts and thread settings, without exposing torch headers.

#include <string>
#include <vector>

namespace foxhunt::models {

/// LibTorch version string, e.g. "1.13.1".
std::string torchVersion();
/// True when this LibTorch build can use CUDA and a device is present.
bool cudaAvailable();
/// The devices this build can compute on: "cpu", then "cuda:0", "cuda:1", ... when CUDA is available.
std::vector<std::string> computeDevices();
/// Sets LibTorch's intra-op threads and the BLAS thread count together.
/// 0 keeps the current value. See DESIGN.md: on 2 cores, 1 thread is faster.
void setThreads(int intraOpThreads);
/// LibTorch's current intra-op thread count.
int threads();

} // namespace foxhunt::models
