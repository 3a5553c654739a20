#pragma once
// Kernel timings measured on a machine, kept in the store so that an INT8 copy's kernel plan is
// measured once per machine and layer shape, not once per run. std-only.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

class BarStore;

/// One kernel's measurement at one layer shape.
struct StoredKernelTiming {
    std::string backend;        ///< "fp32", "dequantize", "onednn", "static", "cuda-int-mm"
    double micros = 0.0;        ///< median microseconds per call
    double relativeError = 0.0; ///< output error against the float product
};

/// The kernel_timings table of a store, through the store's connection (same thread as it).
class KernelTimingTable {
public:
    /// Reads and writes through `store`.
    explicit KernelTimingTable(BarStore& store) : m_store(store) {}

    /// The timings stored for `shape` on `device` of `machine` (a fingerprint); nullopt when none.
    std::optional<std::vector<StoredKernelTiming>> find(const std::string& machine, const std::string& device,
                                                        const std::string& shape) const;
    /// Replaces the timings of `shape` on `device` of `machine`, in one transaction.
    void store(const std::string& machine, const std::string& device, const std::string& shape,
               const std::vector<StoredKernelTiming>& timings);
    /// Rows stored for `machine` ("" = all machines).
    std::size_t count(const std::string& machine = {}) const;

private:
    BarStore& m_store;
};

} // namespace foxhunt
