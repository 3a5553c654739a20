// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/run_owner.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace foxhunt::run_owner {

namespace {

struct LockFile {
    int fd = -1;
    std::set<std::int64_t> runs;
};

/// The lock files this process has open, by canonical lock path. A forked child
/// starts a registry of its own: the descriptors it inherited share their locks
/// with the parent, so a lock taken through them would outlive the child.
struct Registry {
    std::mutex mutex;
    pid_t pid = 0;
    std::map<std::string, LockFile> files;

    void forgetInheritedLocked()
    {
        const pid_t self = ::getpid();
        if (pid == self) return;
        for (auto& [path, file] : files)
            if (file.fd >= 0) ::close(file.fd);
        files.clear();
        pid = self;
    }
};

Registry& registry()
{
    static Registry r;
    return r;
}

std::string canonical(const std::string& path)
{
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? path : p.string();
}

struct flock byteOf(std::int64_t runId, short type)
{
    struct flock l { };
    l.l_type = type;
    l.l_whence = SEEK_SET;
    l.l_start = static_cast<off_t>(runId);
    l.l_len = 1;
    l.l_pid = 0; // required by F_OFD_*
    return l;
}

} // namespace

std::string lockPath(const std::string& databasePath)
{
    if (databasePath.empty() || databasePath == ":memory:" || databasePath.rfind("file::memory:", 0) == 0) return {};
    return databasePath + ".owners";
}

bool acquire(const std::string& databasePath, std::int64_t runId)
{
    const std::string path = lockPath(databasePath);
    if (path.empty() || runId <= 0) return true;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.forgetInheritedLocked();
    LockFile& file = r.files[canonical(path)];
    if (file.runs.count(runId)) return true;
    if (file.fd < 0) {
        file.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (file.fd < 0)
            throw std::runtime_error("cannot open the run lock file " + path + ": " + std::strerror(errno));
    }
    struct flock l = byteOf(runId, F_WRLCK);
    if (::fcntl(file.fd, F_OFD_SETLK, &l) != 0) {
        if (errno == EAGAIN || errno == EACCES) return false;
        throw std::runtime_error("cannot lock run " + std::to_string(runId) + " in " + path + ": " +
                                 std::strerror(errno));
    }
    file.runs.insert(runId);
    return true;
}

void release(const std::string& databasePath, std::int64_t runId)
{
    const std::string path = lockPath(databasePath);
    if (path.empty()) return;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.forgetInheritedLocked();
    const auto it = r.files.find(canonical(path));
    if (it == r.files.end() || !it->second.runs.erase(runId)) return;
    struct flock l = byteOf(runId, F_UNLCK);
    ::fcntl(it->second.fd, F_OFD_SETLK, &l);
}

Owner probe(const std::string& databasePath, std::int64_t runId)
{
    const std::string path = lockPath(databasePath);
    if (path.empty() || runId <= 0) return Owner::Unknown;
    {
        Registry& r = registry();
        std::lock_guard lock(r.mutex);
        r.forgetInheritedLocked();
        const auto it = r.files.find(canonical(path));
        if (it != r.files.end() && it->second.runs.count(runId)) return Owner::Alive;
    }
    // A descriptor of its own, so that this process's locks conflict with the probe too.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Owner::Unknown;
    struct flock l = byteOf(runId, F_WRLCK);
    const int rc = ::fcntl(fd, F_OFD_GETLK, &l);
    ::close(fd);
    if (rc != 0) return Owner::Unknown;
    return l.l_type == F_UNLCK ? Owner::Gone : Owner::Alive;
}

} // namespace foxhunt::run_owner
