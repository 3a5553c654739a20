// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/runtime.h"
#include "models/compat.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <dlfcn.h>

namespace foxhunt::models {

std::string torchVersion()
{
    return TORCH_VERSION;
}

bool cudaAvailable()
{
    return torch::cuda::is_available();
}

std::vector<std::string> computeDevices()
{
    std::vector<std::string> devices{"cpu"};
    if (torch::cuda::is_available())
        for (std::size_t i = 0; i < torch::cuda::device_count(); ++i) devices.push_back("cuda:" + std::to_string(i));
    return devices;
}

void setThreads(int intraOpThreads)
{
    if (intraOpThreads <= 0) return;
    at::set_num_threads(intraOpThreads);
    // OpenBLAS runs its own thread pool beside LibTorch's OpenMP one; keep them
    // equal so they do not oversubscribe the cores. Looked up at run time
    // because the BLAS in use is chosen by the system's alternatives.
    using SetFn = void (*)(int);
    if (auto fn = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(intraOpThreads);
}

int threads()
{
    return at::get_num_threads();
}

} // namespace foxhunt::models
