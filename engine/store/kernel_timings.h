// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Kernel timings measured on a machine, kept in the store so that an INT8 copy's kernel plan is
// measured once per machine and layer shape, not once per run. std-only.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

class BarStore;
class Database;

/// One kernel's measurement at one layer shape.
struct StoredKernelTiming {
    std::string backend;        ///< "fp32", "dequantize", "onednn", "static", "cuda-int-mm"
    double micros = 0.0;        ///< median microseconds per call
    double relativeError = 0.0; ///< output error against the float product
};

/// The kernel_timings table of a database, through its connection (same thread as it).
class KernelTimingTable {
public:
    /// Reads and writes through `database`, which must outlive the table.
    explicit KernelTimingTable(Database& database) : m_database(database) { }
    /// Reads and writes through the database `store` sits on.
    explicit KernelTimingTable(BarStore& store);

    /// The timings stored for `shape` on `device` of `machine` (a fingerprint); nullopt when none.
    std::optional<std::vector<StoredKernelTiming>> find(const std::string& machine, const std::string& device,
                                                        const std::string& shape) const;
    /// Replaces the timings of `shape` on `device` of `machine`, in one transaction.
    void store(const std::string& machine, const std::string& device, const std::string& shape,
               const std::vector<StoredKernelTiming>& timings);
    /// Rows stored for `machine` ("" = all machines).
    std::size_t count(const std::string& machine = {}) const;

private:
    Database& m_database;
};

} // namespace foxhunt
