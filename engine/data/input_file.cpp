// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/input_file.h"

#include "engine/data/import_error.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace foxhunt {

namespace {

/// The descriptor a path names when it is this process's own: /dev/stdin, /dev/fd/N,
/// /proc/self/fd/N (what `<(...)` expands to). nullopt for every other path.
std::optional<int> descriptorOf(const std::string& path)
{
    if (path == "/dev/stdin") return 0;
    for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
        if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
        int fd = -1;
        const char* begin = path.data() + prefix.size();
        const char* end = path.data() + path.size();
        const auto [ptr, ec] = std::from_chars(begin, end, fd);
        if (ec == std::errc() && ptr == end && fd >= 0) return fd;
    }
    return std::nullopt;
}

/// "a named FIFO", "a character device", ... for the messages.
std::string kindOf(mode_t mode)
{
    if (S_ISFIFO(mode)) return "a named FIFO (a pipe with a name)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISDIR(mode)) return "a folder";
    return "not a regular file";
}

std::string refusal(mode_t mode)
{
    if (S_ISDIR(mode)) return "is a folder, not a file";
    std::string why = "is " + kindOf(mode) + ", not a regular file";
    if (S_ISFIFO(mode)) why += ": opening it would wait for a writer that may never come";
    else if (S_ISCHR(mode) || S_ISBLK(mode)) why += ": a device may never end";
    return why + "; import a file, or pipe the data in as /dev/stdin";
}

/// Reads `fd` to its end, up to `bound` bytes (0 = no bound).
std::string readAll(const std::string& path, int fd, std::uint64_t bound, const ChunkObserver& observe)
{
    std::string bytes;
    struct stat st { };
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        bytes.reserve(static_cast<std::size_t>(st.st_size));
    std::string chunk(std::size_t{1} << 16, '\0');
    while (true) {
        const ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // A descriptor inherited in non-blocking mode: wait for data rather than fail.
            pollfd wait{fd, POLLIN, 0};
            ::poll(&wait, 1, -1);
            continue;
        }
        if (n < 0) throw ImportError(path, 0, std::string("read error: ") + std::strerror(errno));
        if (n == 0) break;
        if (bound > 0 && bytes.size() + static_cast<std::size_t>(n) > bound)
            throw ImportError(path, 0,
                              "more than " + std::to_string(bound) +
                                  " bytes arrived through this pipe or device; reading stopped there "
                                  "(import it as a file instead)");
        const std::string_view got(chunk.data(), static_cast<std::size_t>(n));
        if (observe) observe(got);
        bytes.append(got);
    }
    return bytes;
}

} // namespace

std::optional<std::string> inputFileProblem(const std::string& path)
{
    if (const std::optional<int> fd = descriptorOf(path)) {
        struct stat st { };
        if (::fstat(*fd, &st) != 0) return "names descriptor " + std::to_string(*fd) + ", which is not open";
        if (S_ISDIR(st.st_mode)) return refusal(st.st_mode);
        return std::nullopt;
    }
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    if (S_ISREG(st.st_mode)) return std::nullopt;
    return refusal(st.st_mode);
}

std::string readInputFile(const std::string& path, const ReadLimits& limits, const ChunkObserver& observe)
{
    if (const std::optional<std::string> problem = inputFileProblem(path)) throw ImportError(path, 0, *problem);
    if (const std::optional<int> fd = descriptorOf(path)) {
        // Read from the descriptor itself: reopening /dev/fd/N of a pipe would not give its data twice,
        // and the stream is consumed exactly once.
        struct stat st { };
        const bool regular = ::fstat(*fd, &st) == 0 && S_ISREG(st.st_mode);
        return readAll(path, *fd, regular ? 0 : limits.maxStreamBytes, observe);
    }
    // O_NONBLOCK: should the path turn into a FIFO after the check, opening it still cannot hang.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw ImportError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st { };
    if (::fstat(fd, &st) != 0) throw ImportError(path, 0, std::string("cannot read: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw ImportError(path, 0, refusal(st.st_mode));
    return readAll(path, fd, 0, observe);
}

} // namespace foxhunt
