// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/process.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <malloc.h>
#include <mutex>

namespace foxhunt::models {
namespace {

ProcessSetup g_setup;
std::once_flag g_once;

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    std::size_t start = 0;
    while (start < s.size() && s[start] == ' ') ++start;
    return s.substr(start);
}

} // namespace

std::string BlasInfo::summary() const
{
    std::string out = library.rfind("OpenBLAS", 0) == 0 ? std::string("OpenBLAS") : library;
    if (!kernels.empty()) out += ", " + kernels + " kernels";
    if (!forcedBy.empty()) out += " (forced by " + forcedBy + ")";
    return out;
}

BlasInfo blasInfo()
{
    BlasInfo info;
    // Looked up by name in the process: the BLAS behind libblas.so.3 is chosen by Debian's
    // alternatives, so it is only known at run time.
    using TextFn = char* (*)();
    auto config = reinterpret_cast<TextFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
    auto corename = reinterpret_cast<TextFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    if (config) {
        info.library = trimmed(config());
        if (info.library.rfind("OpenBLAS", 0) != 0) info.library = "OpenBLAS " + info.library;
        if (corename) info.kernels = trimmed(corename());
        if (!info.kernels.empty()) info.kernels[0] = char(std::toupper(static_cast<unsigned char>(info.kernels[0])));
        if (const char* forced = std::getenv("OPENBLAS_CORETYPE"); forced && *forced)
            info.forcedBy = std::string("OPENBLAS_CORETYPE=") + forced;
    } else if (dlsym(RTLD_DEFAULT, "MKL_Get_Version")) {
        info.library = "Intel MKL";
    } else if (dlsym(RTLD_DEFAULT, "bli_info_get_version_str")) {
        info.library = "BLIS";
    } else {
        info.library = "reference BLAS";
    }
    return info;
}

ProcessSetup prepareProcess()
{
    std::call_once(g_once, [] {
        if (const char* mode = std::getenv("FOXHUNT_MALLOC"); mode && std::strcmp(mode, "default") == 0) return;
        // Setting either threshold also switches off glibc's dynamic mmap threshold.
        const int keep = static_cast<int>(kMallocKeepBytes);
        if (mallopt(M_MMAP_THRESHOLD, keep) == 1 && mallopt(M_TRIM_THRESHOLD, keep) == 1)
            g_setup.mallocKeepBytes = kMallocKeepBytes;
    });
    return g_setup;
}

ProcessSetup processSetup()
{
    return g_setup;
}

} // namespace foxhunt::models
