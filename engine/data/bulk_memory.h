// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Large reader outputs (tens of MB of bars) spend most of their time in page
// faults on first touch; asking for transparent huge pages cuts those 512-fold.

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace foxhunt {

/// Advises the kernel to back the reserved storage of `v` with huge pages
/// (Linux, THP in "madvise" mode). A no-op elsewhere and for small buffers.
template <typename T>
void adviseHugePages(std::vector<T>& v)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t kHuge = 2u << 20;
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const auto end = begin + v.capacity() * sizeof(T);
    const std::uintptr_t alignedBegin = (begin + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t alignedEnd = end & ~(kHuge - 1);
    if (alignedEnd > alignedBegin)
        ::madvise(reinterpret_cast<void*>(alignedBegin), alignedEnd - alignedBegin, MADV_HUGEPAGE);
#else
    (void)v;
#endif
}

} // namespace foxhunt
