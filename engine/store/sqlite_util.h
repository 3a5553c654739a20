// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Thin RAII helpers over the SQLite C API: prepared statements, transactions,
// and errors turned into StoreError with the database path and the SQL at fault.

#include "engine/store/database.h"

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace foxhunt::sql {

/// Throws StoreError reading `<db path>: <context>: <sqlite message>`.
[[noreturn]] void fail(sqlite3* db, std::string_view context);

/// Runs one or more statements that return no rows.
void exec(sqlite3* db, std::string_view sql);

/// A prepared statement; bind indices are 1-based, column indices 0-based.
class Statement {
public:
    /// Prepares `sql`; throws StoreError when it does not compile.
    Statement(sqlite3* db, std::string_view sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, std::string_view value);
    Statement& bindDouble(int index, double value);
    Statement& bindNull(int index);

    /// Steps once: true when a row is available, false when done.
    bool step();
    /// Steps a statement that must not return rows.
    void run();
    /// Resets for another execution; bindings are kept until rebound.
    void reset();

    std::int64_t int64(int column) const;
    std::string text(int column) const;
    double real(int column) const;
    bool isNull(int column) const;

    sqlite3_stmt* get() const { return m_stmt; }

private:
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
    std::string m_sql;
};

/// BEGIN IMMEDIATE on construction; ROLLBACK in the destructor unless committed.
class Transaction {
public:
    explicit Transaction(sqlite3* db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

private:
    sqlite3* m_db = nullptr;
    bool m_open = false;
};

} // namespace foxhunt::sql
