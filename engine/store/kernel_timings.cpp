// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/kernel_timings.h"

#include "engine/store/bar_store.h"
#include "engine/store/sqlite_util.h"

#include <chrono>

namespace foxhunt {

KernelTimingTable::KernelTimingTable(BarStore& store) : m_database(store.database()) { }

std::optional<std::vector<StoredKernelTiming>> KernelTimingTable::find(const std::string& machine,
                                                                       const std::string& device,
                                                                       const std::string& shape) const
{
    sql::Statement q(m_database.handle(), "SELECT backend, micros, relative_error FROM kernel_timings "
                                          "WHERE machine = ?1 AND device = ?2 AND shape = ?3 ORDER BY backend");
    q.bind(1, machine).bind(2, device).bind(3, shape);
    std::vector<StoredKernelTiming> timings;
    while (q.step()) timings.push_back({q.text(0), q.real(1), q.real(2)});
    if (timings.empty()) return std::nullopt;
    return timings;
}

void KernelTimingTable::store(const std::string& machine, const std::string& device, const std::string& shape,
                              const std::vector<StoredKernelTiming>& timings)
{
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    sql::Transaction tx(m_database.handle());
    sql::Statement clear(m_database.handle(),
                         "DELETE FROM kernel_timings WHERE machine = ?1 AND device = ?2 AND shape = ?3");
    clear.bind(1, machine).bind(2, device).bind(3, shape).run();
    sql::Statement insert(m_database.handle(), "INSERT INTO kernel_timings VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (const StoredKernelTiming& t : timings) {
        insert.reset();
        insert.bind(1, machine)
            .bind(2, device)
            .bind(3, shape)
            .bind(4, t.backend)
            .bindDouble(5, t.micros)
            .bindDouble(6, t.relativeError)
            .bind(7, static_cast<std::int64_t>(now));
        insert.run();
    }
    tx.commit();
}

std::size_t KernelTimingTable::count(const std::string& machine) const
{
    sql::Statement q(m_database.handle(), machine.empty() ? "SELECT count(*) FROM kernel_timings"
                                                          : "SELECT count(*) FROM kernel_timings WHERE machine = ?1");
    if (!machine.empty()) q.bind(1, machine);
    q.step();
    return static_cast<std::size_t>(q.int64(0));
}

} // namespace foxhunt
