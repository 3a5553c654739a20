// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/hardware/machine_probe.h"

#include <torch/cuda.h>
#include <torch/version.h>

#if defined(FOXHUNT_TORCH_CUDA)
#include <ATen/cuda/CUDAContext.h>
#endif

#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace foxhunt::models::hardware {

namespace {

std::string_view trim(std::string_view s)
{
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r");
    return s.substr(first, last - first + 1);
}

// Every "name : value" line, as they come; entries are separated by blank lines.
template <class Visit>
void for_each_field(std::string_view text, Visit&& visit)
{
    while (!text.empty()) {
        const auto end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        visit(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
}

CpuFeatures features_from_flags(std::string_view flags)
{
    std::set<std::string_view> present;
    while (!flags.empty()) {
        const auto space = flags.find(' ');
        const std::string_view flag = flags.substr(0, space);
        if (!flag.empty()) present.insert(flag);
        flags = space == std::string_view::npos ? std::string_view{} : flags.substr(space + 1);
    }
    CpuFeatures f;
    f.avx2 = present.contains("avx2");
    f.avx512f = present.contains("avx512f");
    f.avx512_bf16 = present.contains("avx512_bf16");
    f.avx512_vnni = present.contains("avx512_vnni");
    f.avx_vnni = present.contains("avx_vnni");
    f.amx_bf16 = present.contains("amx_bf16");
    f.amx_int8 = present.contains("amx_int8");
    return f;
}

int to_int(std::string_view s)
{
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return s.empty() ? -1 : v;
}

std::string readable_bytes(std::uint64_t bytes)
{
    std::ostringstream out;
    out.precision(3);
    out << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
    return out.str();
}

std::vector<GpuInfo> cuda_devices()
{
    std::vector<GpuInfo> gpus;
#if defined(FOXHUNT_TORCH_CUDA)
    if (!torch::cuda::is_available()) return gpus;
    for (std::size_t i = 0; i < torch::cuda::device_count(); ++i) {
        const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
        gpus.push_back(
            {static_cast<int>(i), p->name, p->major, p->minor, static_cast<std::uint64_t>(p->totalGlobalMem)});
    }
#endif
    return gpus;
}

} // namespace

std::vector<std::string> CpuFeatures::names() const
{
    const std::pair<bool, const char*> all[] = {
        {avx2, "avx2"},         {avx512f, "avx512f"},   {avx512_bf16, "avx512_bf16"}, {avx512_vnni, "avx512_vnni"},
        {avx_vnni, "avx_vnni"}, {amx_bf16, "amx_bf16"}, {amx_int8, "amx_int8"}};
    std::vector<std::string> v;
    for (const auto& [on, name] : all)
        if (on) v.emplace_back(name);
    return v;
}

MachineInfo parse_cpuinfo(std::string_view text)
{
    MachineInfo m;
    bool flags_read = false;
    std::set<std::pair<int, int>> cores;
    int physical_id = 0;
    for_each_field(text, [&](std::string_view key, std::string_view value) {
        if (key == "processor") {
            ++m.logical_cpus;
            physical_id = 0;
        } else if (key == "model name" && m.cpu_model == "unknown CPU" && !value.empty()) {
            m.cpu_model = std::string(value);
        } else if ((key == "flags" || key == "Features") && !flags_read) {
            m.cpu = features_from_flags(value);
            flags_read = true;
        } else if (key == "physical id") {
            physical_id = to_int(value);
        } else if (key == "core id") {
            cores.insert({physical_id, to_int(value)});
        }
    });
    m.physical_cores = cores.empty() ? m.logical_cpus : static_cast<int>(cores.size());
    return m;
}

const MachineInfo& this_machine()
{
    static const MachineInfo machine = [] {
        std::ifstream in("/proc/cpuinfo");
        std::stringstream text;
        text << in.rdbuf();
        MachineInfo m = parse_cpuinfo(text.str());
        // Containers may see fewer CPUs than /proc/cpuinfo lists.
        const int usable = static_cast<int>(std::thread::hardware_concurrency());
        if (m.logical_cpus == 0 || (usable > 0 && usable < m.logical_cpus)) {
            m.logical_cpus = usable;
            m.physical_cores = std::min(m.physical_cores > 0 ? m.physical_cores : usable, usable);
        }
        m.gpus = cuda_devices();
        m.torch_version = TORCH_VERSION;
        return m;
    }();
    return machine;
}

const GpuInfo* find_gpu(const MachineInfo& machine, int index)
{
    for (const auto& g : machine.gpus)
        if (g.index == index) return &g;
    return nullptr;
}

std::string MachineInfo::summary() const
{
    std::string s = cpu_model + ", " + std::to_string(physical_cores) +
                    (physical_cores == 1 ? " core / " : " cores / ") + std::to_string(logical_cpus) +
                    (logical_cpus == 1 ? " thread" : " threads");
    const std::pair<bool, const char*> shown[] = {{cpu.avx2, "AVX2"},
                                                  {cpu.avx512f, "AVX-512"},
                                                  {cpu.avx512_bf16, "AVX512-BF16"},
                                                  {cpu.avx512_vnni, "AVX512-VNNI"},
                                                  {cpu.avx_vnni, "AVX-VNNI"},
                                                  {cpu.amx_bf16, "AMX-BF16"},
                                                  {cpu.amx_int8, "AMX-INT8"}};
    std::string features;
    for (const auto& [on, name] : shown)
        if (on) features += (features.empty() ? "" : ", ") + std::string(name);
    s += "; " + (features.empty() ? std::string("no AVX2") : features);
    if (gpus.empty()) return s + "; no GPU";
    for (const auto& g : gpus)
        s += "; cuda:" + std::to_string(g.index) + " " + g.name + " (compute " + g.capability() + ", " +
             readable_bytes(g.memory_bytes) + ")";
    return s;
}

std::string MachineInfo::fingerprint() const
{
    std::string key = cpu_model + "|" + std::to_string(logical_cpus) + "|";
    for (const auto& f : cpu.names()) key += f + ",";
    for (const auto& g : gpus) key += "|" + g.name + "@" + g.capability();
    return key + "|torch " + torch_version;
}

} // namespace foxhunt::models::hardware
