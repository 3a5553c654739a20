// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/run_store.h"

#include "engine/store/run_owner.h"
#include "engine/store/sqlite_util.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <limits>
#include <cerrno>
#include <filesystem>
#include <csignal>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace foxhunt {

namespace {

constexpr const char* kRunColumns =
    "id, name, created, COALESCE(finished, 0), status, config, COALESCE(series_id, 0), series, COALESCE(from_ts, 0), "
    "COALESCE(to_ts, 0), versions, error, uuid, notes, COALESCE(trashed_at, 0), trash_path, COALESCE(group_id, 0), "
    "COALESCE(group_member, 0)";

RunInfo readRun(const sql::Statement& q)
{
    RunInfo r;
    r.id = q.int64(0);
    r.name = q.text(1);
    r.createdNs = q.int64(2);
    r.finishedNs = q.int64(3);
    r.status = runStatusFromString(q.text(4));
    r.configJson = q.text(5);
    r.seriesId = q.int64(6);
    r.series = q.text(7);
    r.fromTs = q.int64(8);
    r.toTs = q.int64(9);
    r.versionsJson = q.text(10);
    r.error = q.text(11);
    r.uuid = q.text(12);
    r.notes = q.text(13);
    r.trashedNs = q.int64(14);
    r.trashPath = q.text(15);
    r.groupId = q.int64(16);
    r.groupMember = q.int64(17);
    return r;
}

/// Characters (code points) in UTF-8 text, or throws std::invalid_argument naming `what` when the
/// bytes are not UTF-8 or hold a control character (tab and newline too, unless `multiLine`).
std::size_t checkedLength(const std::string& text, const std::string& what, bool multiLine)
{
    std::size_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++count) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const std::size_t bytes = lead < 0x80           ? 1
                                  : (lead >> 5) == 0x6  ? 2
                                  : (lead >> 4) == 0xe  ? 3
                                  : (lead >> 3) == 0x1e ? 4
                                                        : 0;
        if (bytes == 0 || i + bytes > text.size()) throw std::invalid_argument(what + " is not UTF-8 text");
        for (std::size_t k = 1; k < bytes; ++k)
            if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80)
                throw std::invalid_argument(what + " is not UTF-8 text");
        if (bytes == 1 && (lead < 0x20 || lead == 0x7f) &&
            !(multiLine && (lead == '\n' || lead == '\t' || lead == '\r')))
            throw std::invalid_argument(what + " may not hold control characters" +
                                        (multiLine ? std::string() : std::string(" (tabs, line breaks)")));
        i += bytes;
    }
    return count;
}

std::string trimmed(const std::string& text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

/// Tags of each run, sorted case-insensitively (`runId` 0: of every run).
std::map<std::int64_t, std::vector<std::string>> readTags(sqlite3* db, std::int64_t runId)
{
    sql::Statement q(db, "SELECT run_id, tag FROM run_tags WHERE ?1 = 0 OR run_id = ?1 ORDER BY run_id, tag");
    q.bind(1, runId);
    std::map<std::int64_t, std::vector<std::string>> out;
    while (q.step()) out[q.int64(0)].push_back(q.text(1));
    return out;
}

/// `file` relative to `folder` when it lies inside it (after resolving both), else nullopt.
std::optional<std::filesystem::path> relativeInside(const std::filesystem::path& folder,
                                                    const std::filesystem::path& file)
{
    std::error_code ec;
    const std::filesystem::path f = std::filesystem::weakly_canonical(std::filesystem::absolute(folder, ec), ec);
    if (ec) return std::nullopt;
    const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(file, ec), ec);
    if (ec) return std::nullopt;
    const std::filesystem::path rel = p.lexically_relative(f);
    if (rel.empty() || rel == "." || *rel.begin() == "..") return std::nullopt;
    return rel;
}

bool processAlive(std::int64_t pid)
{
    if (pid <= 0) return false;
    if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
    return errno == EPERM;
}

/// Bytes set aside for a run's last words (see RunStore::leaveNote).
constexpr std::size_t kNoteBytes = 4096;

/// The note's text: what was written before the first NUL, or "" for none.
std::string readNote(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::string text(kNoteBytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text.substr(0, text.find('\0'));
}

/// Groups take the same kind of owner lock as runs, in a lock file of their own.
std::string groupLockKey(const std::string& databasePath)
{
    return databasePath + ".groups";
}

constexpr const char* kGroupColumns = "id, uuid, kind, config, members, created, COALESCE(finished, 0), status";

RunGroupInfo readGroup(const sql::Statement& q, const std::string& databasePath)
{
    RunGroupInfo g;
    g.id = q.int64(0);
    g.uuid = q.text(1);
    g.kind = groupKindFromString(q.text(2));
    g.configJson = q.text(3);
    const nlohmann::json members = nlohmann::json::parse(q.text(4), nullptr, false);
    if (members.is_array())
        for (const nlohmann::json& m : members)
            if (m.is_number_integer()) g.members.push_back(m.get<std::int64_t>());
    g.createdNs = q.int64(5);
    g.finishedNs = q.int64(6);
    g.status = runStatusFromString(q.text(7));
    if (g.status == RunStatus::Running && run_owner::probe(groupLockKey(databasePath), g.id) == run_owner::Owner::Gone)
        g.status = RunStatus::Interrupted;
    return g;
}

} // namespace

std::string toString(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Seeds: return "seeds";
    case GroupKind::Folds: return "folds";
    case GroupKind::Sweep: return "sweep";
    }
    return "seeds";
}

GroupKind groupKindFromString(const std::string& name)
{
    for (GroupKind k : {GroupKind::Seeds, GroupKind::Folds, GroupKind::Sweep})
        if (toString(k) == name) return k;
    throw std::invalid_argument("unknown run group kind '" + name + "'");
}

std::string toString(RunStatus status)
{
    switch (status) {
    case RunStatus::Running: return "running";
    case RunStatus::Finished: return "finished";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Failed: return "failed";
    case RunStatus::Interrupted: return "interrupted";
    }
    return "failed";
}

RunStatus runStatusFromString(const std::string& name)
{
    for (RunStatus s :
         {RunStatus::Running, RunStatus::Finished, RunStatus::Stopped, RunStatus::Failed, RunStatus::Interrupted})
        if (toString(s) == name) return s;
    throw std::invalid_argument("unknown run status '" + name + "'");
}

std::int64_t RunStore::createRun(const std::string& name, const std::string& configJson, const SeriesInfo& series,
                                 std::int64_t fromTs, std::int64_t toTs, const std::string& versionsJson,
                                 const NewRunLabels& labels)
{
    std::vector<std::string> tags;
    for (const std::string& t : labels.tags) tags.push_back(checkedTag(t));
    sql::Transaction tx(m_database.handle());
    sql::Statement q(m_database.handle(),
                     "INSERT INTO runs(name, created, status, config, series_id, series, from_ts, to_ts, versions, "
                     "owner_pid, uuid) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, lower(hex(randomblob(16))))");
    q.bind(1, name).bind(2, wallClockNs()).bind(3, configJson);
    if (series.id > 0) q.bind(4, series.id);
    else q.bindNull(4);
    q.bind(5, series.symbol).bind(6, fromTs).bind(7, toTs).bind(8, versionsJson).bind(9, std::int64_t{::getpid()});
    q.run();
    const std::int64_t id = sqlite3_last_insert_rowid(m_database.handle());
    sql::Statement tag(m_database.handle(), "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES (?, ?)");
    for (const std::string& t : tags) {
        tag.bind(1, id).bind(2, t).run();
        tag.reset();
    }
    if (labels.groupId > 0) addGroupMember(labels.groupId, id, labels.groupMember);
    tx.commit();
    takeOwnership(id);
    return id;
}

std::int64_t RunStore::createGroup(GroupKind kind, const std::string& configJson,
                                   const std::vector<std::int64_t>& members)
{
    if (members.empty()) throw std::invalid_argument("a run group needs at least one member");
    if (std::set<std::int64_t>(members.begin(), members.end()).size() != members.size())
        throw std::invalid_argument("a run group's members must differ (a member is trained once)");
    sql::Statement q(m_database.handle(),
                     "INSERT INTO run_groups(uuid, kind, config, members, created, status, owner_pid) "
                     "VALUES (lower(hex(randomblob(16))), ?, ?, ?, ?, 'running', ?)");
    q.bind(1, toString(kind)).bind(2, configJson).bind(3, nlohmann::json(members).dump()).bind(4, wallClockNs());
    q.bind(5, std::int64_t{::getpid()}).run();
    const std::int64_t id = sqlite3_last_insert_rowid(m_database.handle());
    try {
        run_owner::acquire(groupLockKey(m_database.path()), id);
    } catch (const std::runtime_error&) {
        // No lock file: the group then never reads as interrupted, which only costs a resume's hint.
    }
    return id;
}

void RunStore::reopenGroup(std::int64_t groupId)
{
    bool held = true;
    try {
        held = run_owner::acquire(groupLockKey(m_database.path()), groupId);
    } catch (const std::runtime_error&) {
    }
    if (!held) throw std::runtime_error("run group " + std::to_string(groupId) + " is being run by another process");
    sql::Statement q(m_database.handle(),
                     "UPDATE run_groups SET status = 'running', finished = NULL, owner_pid = ? WHERE id = ?");
    q.bind(1, std::int64_t{::getpid()}).bind(2, groupId).run();
}

void RunStore::addGroupMember(std::int64_t groupId, std::int64_t runId, std::int64_t member)
{
    const std::optional<RunGroupInfo> g = group(groupId);
    if (!g) throw std::invalid_argument("no run group " + std::to_string(groupId));
    if (std::find(g->members.begin(), g->members.end(), member) == g->members.end())
        throw std::invalid_argument(std::to_string(member) + " is not a member of run group " +
                                    std::to_string(groupId));
    sql::Statement taken(m_database.handle(),
                         "SELECT id FROM runs WHERE group_id = ? AND group_member = ? AND id != ?");
    taken.bind(1, groupId).bind(2, member).bind(3, runId);
    if (taken.step())
        throw std::invalid_argument("member " + std::to_string(member) + " of run group " + std::to_string(groupId) +
                                    " is run " + std::to_string(taken.int64(0)) + " already");
    sql::Statement q(m_database.handle(), "UPDATE runs SET group_id = ?, group_member = ? WHERE id = ?");
    q.bind(1, groupId).bind(2, member).bind(3, runId).run();
}

void RunStore::setGroupStatus(std::int64_t groupId, RunStatus status)
{
    sql::Statement q(m_database.handle(), "UPDATE run_groups SET status = ?, finished = ? WHERE id = ?");
    q.bind(1, toString(status));
    if (status == RunStatus::Running) q.bindNull(2);
    else q.bind(2, wallClockNs());
    q.bind(3, groupId).run();
    if (status != RunStatus::Running) run_owner::release(groupLockKey(m_database.path()), groupId);
}

std::vector<RunGroupInfo> RunStore::groups() const
{
    sql::Statement q(m_database.handle(), std::string("SELECT ") + kGroupColumns + " FROM run_groups ORDER BY id DESC");
    std::vector<RunGroupInfo> out;
    while (q.step()) out.push_back(readGroup(q, m_database.path()));
    return out;
}

std::optional<RunGroupInfo> RunStore::group(std::int64_t groupId) const
{
    sql::Statement q(m_database.handle(), std::string("SELECT ") + kGroupColumns + " FROM run_groups WHERE id = ?");
    q.bind(1, groupId);
    if (!q.step()) return std::nullopt;
    return readGroup(q, m_database.path());
}

std::vector<RunInfo> RunStore::groupMembers(std::int64_t groupId) const
{
    const std::optional<RunGroupInfo> g = group(groupId);
    if (!g) return {};
    sql::Statement q(m_database.handle(), std::string("SELECT ") + kRunColumns + " FROM runs WHERE group_id = ?");
    q.bind(1, groupId);
    std::vector<RunInfo> out;
    while (q.step()) out.push_back(readRun(q));
    const auto rank = [&](const RunInfo& r) {
        return std::find(g->members.begin(), g->members.end(), r.groupMember) - g->members.begin();
    };
    std::sort(out.begin(), out.end(), [&](const RunInfo& a, const RunInfo& b) { return rank(a) < rank(b); });
    return out;
}

void RunStore::takeOwnership(std::int64_t runId)
{
    bool held = true;
    try {
        held = run_owner::acquire(m_database.path(), runId);
    } catch (const std::runtime_error&) {
        // No lock file (a read-only folder beside a writable database): the
        // process ID recorded with the run is all a later start can go by.
    }
    if (!held) throw std::runtime_error("run " + std::to_string(runId) + " is being run by another process");
    reserveNote(runId);
}

std::filesystem::path RunStore::notePath(std::int64_t runId) const
{
    if (run_owner::lockPath(m_database.path()).empty()) return {};
    const std::optional<RunInfo> info = run(runId);
    if (!info || info->uuid.empty()) return {};
    return std::filesystem::path(checkpointFolder()) / runFolderName(*info) / "last-words";
}

void RunStore::reserveNote(std::int64_t runId)
{
    const std::filesystem::path path = notePath(runId);
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string zeros(kNoteBytes, '\0');
    out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
    out.close();
    if (out) m_notes[runId] = path;
}

bool RunStore::leaveNote(std::int64_t runId, const std::string& text) noexcept
{
    const auto it = m_notes.find(runId);
    if (it == m_notes.end()) return false;
    const std::string line = text.substr(0, kNoteBytes - 1);
    const int fd = ::open(it->second.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    // Over bytes written at the run's start, so a full disk has room for it.
    const bool written = ::pwrite(fd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size()) &&
                         ::fdatasync(fd) == 0;
    ::close(fd);
    return written;
}

void RunStore::dropNote(std::int64_t runId)
{
    std::filesystem::path path;
    if (const auto it = m_notes.find(runId); it != m_notes.end()) {
        path = it->second;
        m_notes.erase(it);
    } else {
        path = notePath(runId);
    }
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (std::filesystem::is_empty(path.parent_path(), ec)) std::filesystem::remove(path.parent_path(), ec);
}

std::int64_t RunStore::seriesKey(std::int64_t runId, const std::string& model, const std::string& metric)
{
    if (m_cache.runId != runId) m_cache = {runId, {}};
    const std::string key = model + '\t' + metric;
    for (const auto& [k, id] : m_cache.ids)
        if (k == key) return id;
    sql::Statement insert(m_database.handle(), "INSERT INTO metric_series(run_id, model, metric) VALUES (?, ?, ?) "
                                               "ON CONFLICT(run_id, model, metric) DO NOTHING");
    insert.bind(1, runId).bind(2, model).bind(3, metric).run();
    sql::Statement find(m_database.handle(),
                        "SELECT id FROM metric_series WHERE run_id = ? AND model = ? AND metric = ?");
    find.bind(1, runId).bind(2, model).bind(3, metric);
    if (!find.step()) sql::fail(m_database.handle(), "metric series lookup");
    const std::int64_t id = find.int64(0);
    m_cache.ids.emplace_back(key, id);
    return id;
}

void RunStore::appendMetrics(std::int64_t runId, const MetricBatch& samples)
{
    if (samples.empty()) return;
    sql::Transaction tx(m_database.handle());
    sql::Statement insert(m_database.handle(),
                          "INSERT INTO metrics(series_id, step, wall_ns, value) VALUES (?, ?, ?, ?)");
    std::string lastKey;
    std::int64_t lastId = 0;
    for (const MetricSample& s : samples) {
        if (lastId == 0 || s.model.size() + s.metric.size() + 1 != lastKey.size() ||
            lastKey.compare(0, s.model.size(), s.model) != 0 ||
            lastKey.compare(s.model.size() + 1, std::string::npos, s.metric) != 0) {
            lastId = seriesKey(runId, s.model, s.metric);
            lastKey = s.model + '\t' + s.metric;
        }
        insert.bind(1, lastId).bind(2, s.step).bind(3, s.wallNs);
        if (std::isfinite(s.value)) insert.bindDouble(4, s.value);
        else insert.bindNull(4);
        insert.run();
        insert.reset();
    }
    tx.commit();
}

void RunStore::reopenRun(std::int64_t runId)
{
    if (const std::optional<RunInfo> info = run(runId); info && info->trashedNs > 0)
        throw std::invalid_argument("run " + std::to_string(runId) + " is in the trash; restore it before resuming it");
    sql::Statement q(m_database.handle(),
                     "UPDATE runs SET status = 'running', finished = NULL, error = '', owner_pid = ? WHERE id = ?");
    q.bind(1, std::int64_t{::getpid()}).bind(2, runId).run();
    takeOwnership(runId);
}

void RunStore::setVersions(std::int64_t runId, const std::string& versionsJson)
{
    sql::Statement q(m_database.handle(), "UPDATE runs SET versions = ? WHERE id = ?");
    q.bind(1, versionsJson).bind(2, runId).run();
}

void RunStore::setStatus(std::int64_t runId, RunStatus status, const std::string& error)
{
    sql::Statement q(m_database.handle(), "UPDATE runs SET status = ?, finished = ?, error = ? WHERE id = ?");
    q.bind(1, toString(status));
    if (status == RunStatus::Running) q.bindNull(2);
    else q.bind(2, wallClockNs());
    q.bind(3, error).bind(4, runId).run();
    if (status != RunStatus::Running) {
        dropNote(runId);
        run_owner::release(m_database.path(), runId);
    }
}

void RunStore::saveEvaluation(std::int64_t runId, const std::string& model, const std::string& split,
                              const std::string& resultJson)
{
    sql::Statement q(m_database.handle(),
                     "INSERT OR REPLACE INTO evaluations(run_id, model, split, result) VALUES (?, ?, ?, ?)");
    q.bind(1, runId).bind(2, model).bind(3, split).bind(4, resultJson).run();
}

void RunStore::addCheckpoint(std::int64_t runId, const std::string& model, std::int64_t step, const std::string& path)
{
    sql::Statement q(m_database.handle(),
                     "INSERT OR REPLACE INTO checkpoints(run_id, model, step, path, created) VALUES (?, ?, ?, ?, ?)");
    const std::optional<std::filesystem::path> rel = relativeInside(checkpointFolder(), path);
    std::error_code ec;
    const std::string stored = rel ? rel->generic_string() : std::filesystem::absolute(path, ec).string();
    q.bind(1, runId).bind(2, model).bind(3, step).bind(4, ec ? path : stored).bind(5, wallClockNs()).run();
}

void RunStore::deleteMetricsAfter(std::int64_t runId, const std::vector<std::pair<std::string, std::int64_t>>& lastKept)
{
    sql::Transaction tx(m_database.handle());
    sql::Statement q(m_database.handle(), "DELETE FROM metrics WHERE step > ?3 AND series_id IN "
                                          "(SELECT id FROM metric_series WHERE run_id = ?1 AND model = ?2)");
    for (const auto& [model, step] : lastKept) {
        q.bind(1, runId).bind(2, model).bind(3, step);
        q.run();
        q.reset();
    }
    tx.commit();
}

std::string RunStore::checkpointFolder() const
{
    return m_database.path() + ".checkpoints";
}

std::string RunStore::runFolderName(const RunInfo& run)
{
    return "run-" + std::to_string(run.id) + "-" + run.uuid;
}

std::vector<RunInfo> RunStore::runs(RunListing which) const
{
    const char* where = which == RunListing::Active    ? " WHERE trashed_at IS NULL"
                        : which == RunListing::Trashed ? " WHERE trashed_at IS NOT NULL"
                                                       : "";
    sql::Statement q(m_database.handle(),
                     std::string("SELECT ") + kRunColumns + " FROM runs" + where + " ORDER BY id DESC");
    std::vector<RunInfo> out;
    while (q.step()) out.push_back(readRun(q));
    std::map<std::int64_t, std::vector<std::string>> byRun = readTags(m_database.handle(), 0);
    for (RunInfo& r : out)
        if (const auto it = byRun.find(r.id); it != byRun.end()) r.tags = std::move(it->second);
    return out;
}

std::optional<RunInfo> RunStore::run(std::int64_t runId) const
{
    sql::Statement q(m_database.handle(), std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
    q.bind(1, runId);
    if (!q.step()) return std::nullopt;
    RunInfo info = readRun(q);
    info.tags = tags(runId);
    return info;
}

std::string RunStore::checkedName(const std::string& name)
{
    const std::string text = trimmed(name);
    const std::size_t length = checkedLength(text, "a run's name", /*multiLine=*/false);
    if (length > kMaxNameLength)
        throw std::invalid_argument("a run's name has at most " + std::to_string(kMaxNameLength) + " characters, not " +
                                    std::to_string(length));
    return text;
}

std::string RunStore::checkedTag(const std::string& tag)
{
    const std::string text = trimmed(tag);
    if (text.empty()) throw std::invalid_argument("a tag may not be empty");
    if (text.find(',') != std::string::npos)
        throw std::invalid_argument("a tag may not hold a comma (give each tag on its own): '" + text + "'");
    const std::size_t length = checkedLength(text, "a tag", /*multiLine=*/false);
    if (length > kMaxTagLength)
        throw std::invalid_argument("a tag has at most " + std::to_string(kMaxTagLength) + " characters, not " +
                                    std::to_string(length));
    return text;
}

void RunStore::requireRun(std::int64_t runId) const
{
    sql::Statement q(m_database.handle(), "SELECT 1 FROM runs WHERE id = ?");
    q.bind(1, runId);
    if (!q.step()) throw std::invalid_argument("no run " + std::to_string(runId) + " in " + m_database.path());
}

void RunStore::setName(std::int64_t runId, const std::string& name)
{
    const std::string text = checkedName(name);
    requireRun(runId);
    sql::Statement q(m_database.handle(), "UPDATE runs SET name = ? WHERE id = ?");
    q.bind(1, text).bind(2, runId).run();
}

void RunStore::setNotes(std::int64_t runId, const std::string& notes)
{
    const std::size_t length = checkedLength(notes, "a run's notes", /*multiLine=*/true);
    if (length > kMaxNotesLength)
        throw std::invalid_argument("a run's notes have at most " + std::to_string(kMaxNotesLength) +
                                    " characters, not " + std::to_string(length));
    requireRun(runId);
    sql::Statement q(m_database.handle(), "UPDATE runs SET notes = ? WHERE id = ?");
    q.bind(1, notes).bind(2, runId).run();
}

void RunStore::addTags(std::int64_t runId, const std::vector<std::string>& tags)
{
    std::vector<std::string> checked;
    for (const std::string& t : tags) checked.push_back(checkedTag(t));
    requireRun(runId);
    sql::Transaction tx(m_database.handle());
    sql::Statement q(m_database.handle(), "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES (?, ?)");
    for (const std::string& t : checked) {
        q.bind(1, runId).bind(2, t).run();
        q.reset();
    }
    tx.commit();
}

void RunStore::removeTags(std::int64_t runId, const std::vector<std::string>& tags)
{
    requireRun(runId);
    sql::Transaction tx(m_database.handle());
    sql::Statement q(m_database.handle(), "DELETE FROM run_tags WHERE run_id = ? AND tag = ?");
    for (const std::string& t : tags) {
        q.bind(1, runId).bind(2, trimmed(t)).run();
        q.reset();
    }
    tx.commit();
}

void RunStore::setTags(std::int64_t runId, const std::vector<std::string>& tags)
{
    std::vector<std::string> checked;
    for (const std::string& t : tags) checked.push_back(checkedTag(t));
    requireRun(runId);
    sql::Transaction tx(m_database.handle());
    sql::Statement clear(m_database.handle(), "DELETE FROM run_tags WHERE run_id = ?");
    clear.bind(1, runId).run();
    sql::Statement q(m_database.handle(), "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES (?, ?)");
    for (const std::string& t : checked) {
        q.bind(1, runId).bind(2, t).run();
        q.reset();
    }
    tx.commit();
}

std::vector<std::string> RunStore::tags(std::int64_t runId) const
{
    if (runId == 0) return {};
    std::map<std::int64_t, std::vector<std::string>> all = readTags(m_database.handle(), runId);
    return all.empty() ? std::vector<std::string>{} : std::move(all.begin()->second);
}

MetricBatch RunStore::metrics(std::int64_t runId, const std::string& model, const std::string& metric) const
{
    sql::Statement q(m_database.handle(),
                     "SELECT s.model, s.metric, m.step, m.wall_ns, m.value FROM metric_series s "
                     "JOIN metrics m ON m.series_id = s.id WHERE s.run_id = ?1 AND (?2 = '' OR s.model = ?2) "
                     "AND (?3 = '' OR s.metric = ?3) ORDER BY s.model, s.metric, m.step, m.rowid");
    q.bind(1, runId).bind(2, model).bind(3, metric);
    MetricBatch out;
    while (q.step())
        out.push_back({q.text(0), q.text(1), q.int64(2), q.int64(3),
                       q.isNull(4) ? std::numeric_limits<double>::quiet_NaN() : q.real(4)});
    return out;
}

std::uint64_t RunStore::metricCount(std::int64_t runId) const
{
    sql::Statement q(m_database.handle(),
                     "SELECT COUNT(*) FROM metric_series s JOIN metrics m ON m.series_id = s.id WHERE s.run_id = ?");
    q.bind(1, runId);
    return q.step() ? static_cast<std::uint64_t>(q.int64(0)) : 0;
}

std::vector<EvaluationRecord> RunStore::evaluations(std::int64_t runId) const
{
    sql::Statement q(m_database.handle(),
                     "SELECT model, split, result FROM evaluations WHERE run_id = ? ORDER BY model, split");
    q.bind(1, runId);
    std::vector<EvaluationRecord> out;
    while (q.step()) out.push_back({q.text(0), q.text(1), q.text(2)});
    return out;
}

std::vector<CheckpointRecord> RunStore::checkpoints(std::int64_t runId) const
{
    sql::Statement q(m_database.handle(),
                     "SELECT model, step, path, created FROM checkpoints WHERE run_id = ? ORDER BY model, step");
    q.bind(1, runId);
    std::vector<CheckpointRecord> out;
    const std::filesystem::path folder = checkpointFolder();
    while (q.step()) {
        const std::filesystem::path path = q.text(2);
        out.push_back({q.text(0), q.int64(1), (path.is_relative() ? folder / path : path).string(), q.int64(3)});
    }
    return out;
}

std::optional<CheckpointRecord> RunStore::lastCheckpoint(std::int64_t runId, const std::string& model) const
{
    std::optional<CheckpointRecord> last;
    for (CheckpointRecord& c : checkpoints(runId))
        if (c.model == model && (!last || c.step >= last->step)) last = std::move(c);
    return last;
}

RunDeletion RunStore::deleteRun(std::int64_t runId)
{
    RunDeletion deletion;
    const std::optional<RunInfo> info = run(runId);
    if (!info) return deletion;
    const std::vector<CheckpointRecord> files = checkpoints(runId);
    dropNote(runId);
    sql::Statement q(m_database.handle(), "DELETE FROM runs WHERE id = ?");
    q.bind(1, runId).run();
    if (m_cache.runId == runId) m_cache = {};

    // Only this database's files go: a file elsewhere, in a folder not named after this run,
    // may be another database's run with the same id.
    const std::string runFolder = info->uuid.empty() ? std::string() : runFolderName(*info);
    std::vector<std::filesystem::path> folders;
    for (const CheckpointRecord& c : files) {
        const std::filesystem::path path = c.path;
        const bool ours = relativeInside(checkpointFolder(), path) ||
                          (!runFolder.empty() && path.parent_path().filename() == runFolder);
        if (!ours) {
            deletion.kept.push_back(c.path + ": outside this database's checkpoint folder " + checkpointFolder() +
                                    " and not in a folder of this run; another database may use it");
            continue;
        }
        std::error_code ec;
        if (std::filesystem::remove(path, ec)) deletion.removed.push_back(c.path);
        else if (ec) deletion.kept.push_back(c.path + ": cannot remove: " + ec.message());
        if (std::find(folders.begin(), folders.end(), path.parent_path()) == folders.end())
            folders.push_back(path.parent_path());
    }
    for (const std::filesystem::path& folder : folders) {
        std::error_code ec;
        if (folder.filename() == runFolder && std::filesystem::is_empty(folder, ec))
            std::filesystem::remove(folder, ec);
    }
    return deletion;
}

void RunStore::trashRun(std::int64_t runId, const std::string& trashPath)
{
    const std::optional<RunInfo> info = run(runId);
    if (!info) throw std::invalid_argument("no run " + std::to_string(runId));
    if (info->trashedNs > 0) throw std::invalid_argument("run " + std::to_string(runId) + " is in the trash already");
    if (info->status == RunStatus::Running)
        throw std::invalid_argument("run " + std::to_string(runId) + " is still running; stop it before deleting it");
    sql::Statement q(m_database.handle(), "UPDATE runs SET trashed_at = ?, trash_path = ? WHERE id = ?");
    q.bind(1, wallClockNs()).bind(2, trashPath).bind(3, runId).run();
}

void RunStore::restoreRun(std::int64_t runId)
{
    const std::optional<RunInfo> info = run(runId);
    if (!info) throw std::invalid_argument("no run " + std::to_string(runId));
    if (info->trashedNs == 0) throw std::invalid_argument("run " + std::to_string(runId) + " is not in the trash");
    sql::Statement q(m_database.handle(), "UPDATE runs SET trashed_at = NULL, trash_path = '' WHERE id = ?");
    q.bind(1, runId).run();
}

int RunStore::markInterruptedRuns()
{
    sql::Statement q(m_database.handle(), "SELECT id, COALESCE(owner_pid, 0) FROM runs WHERE status = 'running'");
    std::vector<std::int64_t> dead;
    while (q.step()) {
        const std::int64_t id = q.int64(0);
        switch (run_owner::probe(m_database.path(), id)) {
        case run_owner::Owner::Alive: break;
        case run_owner::Owner::Gone: dead.push_back(id); break;
        case run_owner::Owner::Unknown:
            // A run from before the owner locks: its process ID is all there is.
            if (q.int64(1) != ::getpid() && !processAlive(q.int64(1))) dead.push_back(id);
            break;
        }
    }
    for (std::int64_t id : dead) {
        const std::filesystem::path note = notePath(id);
        const std::string words = note.empty() ? std::string() : readNote(note);
        if (words.empty()) setStatus(id, RunStatus::Interrupted, "the process running it ended unexpectedly");
        else setStatus(id, RunStatus::Failed, words + " (noted beside the database, which could not be written then)");
    }
    return static_cast<int>(dead.size());
}

} // namespace foxhunt
