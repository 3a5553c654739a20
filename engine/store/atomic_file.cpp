// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace foxhunt {

namespace {

[[noreturn]] void fail(const std::string& path, int error)
{
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(error));
}

/// The folder of `path` ("." when it names none), for the directory fsync after the rename.
std::string folderOf(const std::string& path)
{
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// Opens a new, unique temporary file beside `path`; returns its descriptor and sets `name`.
int openTemporary(const std::string& path, std::string& name)
{
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        name = path + '.' + std::to_string(::getpid()) + '-' + std::to_string(counter.fetch_add(1)) + ".part";
        // 0666 and the umask, as the target would get from a plain open; O_EXCL never reuses a stranger's file.
        const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

} // namespace

void writeFileAtomically(const std::string& path, std::string_view bytes, const WriteCall& write)
{
    std::string partial;
    const int fd = openTemporary(path, partial);
    if (fd < 0) fail(path, errno);

    auto abandon = [&](int error, bool open) {
        if (open) ::close(fd);
        ::unlink(partial.c_str());
        fail(path, error);
    };

    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = write ? write(fd, bytes.data() + done, bytes.size() - done)
                                : ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) abandon(errno, true);
        // write(2) returning 0 for a non-empty buffer is a full device that set no errno.
        if (n == 0) abandon(ENOSPC, true);
        done += static_cast<std::size_t>(n);
    }
    // Delayed allocation and network file systems report a full disk only here.
    if (::fsync(fd) != 0) abandon(errno, true);
    if (::close(fd) != 0) abandon(errno, false);
    if (std::rename(partial.c_str(), path.c_str()) != 0) abandon(errno, false);

    // The rename itself reaches the disk with the folder; a failure here loses nothing written.
    const int dir = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

} // namespace foxhunt
