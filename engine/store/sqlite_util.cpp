// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/sqlite_util.h"

#include <sqlite3.h>

namespace foxhunt::sql {

namespace {

std::string dbName(sqlite3* db)
{
    const char* name = db ? sqlite3_db_filename(db, "main") : nullptr;
    return name && *name ? std::string(name) : std::string("(database)");
}

} // namespace

void fail(sqlite3* db, std::string_view context)
{
    const char* message = db ? sqlite3_errmsg(db) : "out of memory";
    throw StoreError(dbName(db) + ": " + std::string(context) + ": " + message);
}

void exec(sqlite3* db, std::string_view sql)
{
    const std::string text(sql);
    if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, text.substr(0, 60));
}

Statement::Statement(sqlite3* db, std::string_view sql) : m_db(db), m_sql(sql)
{
    if (sqlite3_prepare_v3(db, m_sql.data(), static_cast<int>(m_sql.size()), SQLITE_PREPARE_PERSISTENT, &m_stmt,
                           nullptr) != SQLITE_OK) {
        sqlite3_finalize(m_stmt);
        m_stmt = nullptr;
        fail(db, "preparing '" + m_sql.substr(0, 60) + "'");
    }
}

Statement::~Statement()
{
    sqlite3_finalize(m_stmt);
}

Statement& Statement::bind(int index, std::int64_t value)
{
    if (sqlite3_bind_int64(m_stmt, index, value) != SQLITE_OK) fail(m_db, "binding");
    return *this;
}

Statement& Statement::bindDouble(int index, double value)
{
    if (sqlite3_bind_double(m_stmt, index, value) != SQLITE_OK) fail(m_db, "binding");
    return *this;
}

Statement& Statement::bind(int index, std::string_view value)
{
    if (sqlite3_bind_text(m_stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        fail(m_db, "binding");
    return *this;
}

Statement& Statement::bindNull(int index)
{
    if (sqlite3_bind_null(m_stmt, index) != SQLITE_OK) fail(m_db, "binding");
    return *this;
}

bool Statement::step()
{
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string context = "running '" + m_sql.substr(0, 60) + "'";
    sqlite3_reset(m_stmt);
    fail(m_db, context);
}

void Statement::run()
{
    step();
    reset();
}

void Statement::reset()
{
    sqlite3_reset(m_stmt);
}

std::int64_t Statement::int64(int column) const
{
    return sqlite3_column_int64(m_stmt, column);
}

double Statement::real(int column) const
{
    return sqlite3_column_double(m_stmt, column);
}

std::string Statement::text(int column) const
{
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column))) : std::string();
}

bool Statement::isNull(int column) const
{
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

Transaction::Transaction(sqlite3* db) : m_db(db)
{
    exec(db, "BEGIN IMMEDIATE");
    m_open = true;
}

Transaction::~Transaction()
{
    if (m_open) sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit()
{
    exec(m_db, "COMMIT");
    m_open = false;
}

} // namespace foxhunt::sql
