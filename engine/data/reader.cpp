// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/reader.h"

#include "engine/data/csv_reader.h"
#include "engine/data/dbn_reader.h"
#include "engine/data/import_error.h"
#include "engine/data/input_file.h"

#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace foxhunt {

namespace {

bool isZstd(std::string_view head)
{
    return head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x28 &&
           static_cast<unsigned char>(head[1]) == 0xB5 && static_cast<unsigned char>(head[2]) == 0x2F &&
           static_cast<unsigned char>(head[3]) == 0xFD;
}

// Skippable zstd frames (0x184D2A50-5F) may precede the data frames.
bool isZstdSkippable(std::string_view head)
{
    return head.size() >= 4 && (static_cast<unsigned char>(head[0]) & 0xF0) == 0x50 &&
           static_cast<unsigned char>(head[1]) == 0x2A && static_cast<unsigned char>(head[2]) == 0x4D &&
           static_cast<unsigned char>(head[3]) == 0x18;
}

struct DCtxDeleter {
    void operator()(ZSTD_DCtx* s) const { ZSTD_freeDCtx(s); }
};

/// zstd's default ZSTD_WINDOWLOG_LIMIT_DEFAULT: frames needing a larger window are refused.
constexpr int kZstdWindowLogMax = 27;

/// "1.5 GiB", "64 MiB", "27 bytes".
std::string formatByteCount(std::uint64_t bytes)
{
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[48];
    if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    else std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

} // namespace

FileFormat detectFormat(std::string_view path, std::string_view head)
{
    if (isDbnPrelude(head) || isZstd(head) || isZstdSkippable(head)) return FileFormat::Dbn;
    if (head.empty()) throw ImportError(std::string(path), 0, "empty file");
    if (std::memchr(head.data(), '\0', head.size()))
        throw ImportError(std::string(path), 0, "unrecognised binary file (neither DBN nor zstd)");
    if (isDatabentoCsvHeader(head)) return FileFormat::DatabentoCsv;
    if (isGenericCsvHeader(head)) return FileFormat::Csv;
    throw ImportError(std::string(path), 1,
                      "unrecognised format: the header names no timestamp/open/high/low/close columns");
}

std::uint64_t decompressedLimit(std::uint64_t compressedBytes, const ReadLimits& limits)
{
    const std::uint64_t ratio = std::max<std::uint64_t>(limits.maxCompressionRatio, 1);
    const std::uint64_t byRatio = compressedBytes > std::numeric_limits<std::uint64_t>::max() / ratio
                                      ? std::numeric_limits<std::uint64_t>::max()
                                      : compressedBytes * ratio;
    return std::min(limits.maxDecompressedBytes, std::max(limits.minDecompressedBytes, byRatio));
}

std::string zstdDecompress(std::string_view name, std::string_view compressed, const ReadLimits& limits)
{
    const std::uint64_t limit = decompressedLimit(compressed.size(), limits);
    auto tooLarge = [&](const std::string& what, const char* outcome) {
        return ImportError(std::string(name), 0,
                           what + " the limit of " + formatByteCount(limit) + " for " +
                               formatByteCount(compressed.size()) + " of compressed input (" +
                               std::to_string(limits.maxCompressionRatio) + "x its size, at least " +
                               formatByteCount(limits.minDecompressedBytes) + ", at most " +
                               formatByteCount(limits.maxDecompressedBytes) + "); " + outcome);
    };
    // What the frame headers claim is believed only as far as the limit: the old decoder set
    // aside every claimed byte up front (15 GiB for a 27-byte file). Frames are walked one by one;
    // a corrupt or cut-off one ends the walk and is left to the decoder's message.
    std::uint64_t claimed = 0;
    bool allClaimed = true;
    for (std::string_view rest = compressed; !rest.empty();) {
        const unsigned long long size = ZSTD_getFrameContentSize(rest.data(), rest.size());
        if (size == ZSTD_CONTENTSIZE_ERROR) {
            allClaimed = false;
            break;
        }
        if (size == ZSTD_CONTENTSIZE_UNKNOWN) {
            allClaimed = false;
        } else {
            constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
            claimed = size > most - claimed ? most : claimed + size;
            if (claimed > limit)
                throw tooLarge("the zstd frames claim " + formatByteCount(claimed) + " uncompressed, more than",
                               "nothing was decompressed");
        }
        const std::size_t frame = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
        if (ZSTD_isError(frame)) {
            allClaimed = false;
            break;
        }
        rest.remove_prefix(frame);
    }

    std::unique_ptr<ZSTD_DCtx, DCtxDeleter> stream(ZSTD_createDCtx());
    if (!stream) throw ImportError(std::string(name), 0, "cannot allocate a zstd decoder");
    // The decoder's own window stays at zstd's default bound (128 MiB) whatever a frame asks for.
    ZSTD_DCtx_setParameter(stream.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax);

    std::string out;
    if (allClaimed) out.reserve(static_cast<std::size_t>(claimed));
    std::string chunk(ZSTD_DStreamOutSize(), '\0');
    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    std::size_t last = 0;
    while (in.pos < in.size || last != 0) {
        ZSTD_outBuffer ob{chunk.data(), chunk.size(), 0};
        const std::size_t inBefore = in.pos;
        last = ZSTD_decompressStream(stream.get(), &ob, &in);
        if (ZSTD_isError(last))
            throw ImportError(std::string(name), 0, std::string("corrupt zstd data: ") + ZSTD_getErrorName(last));
        if (out.size() + ob.pos > limit)
            throw tooLarge("the zstd data decompresses to more than", "decompression stopped there");
        out.append(chunk.data(), ob.pos);
        // No input consumed and no output made with input exhausted: the frame is cut short.
        if (in.pos == in.size && last != 0 && ob.pos == 0 && inBefore == in.pos)
            throw ImportError(std::string(name), 0, "truncated zstd data (the last frame is incomplete)");
    }
    return out;
}

ParsedFile readBarBuffer(std::string_view name, std::string_view bytes, const ReadOptions& options)
{
    std::string decompressed;
    if (isZstd(bytes) || isZstdSkippable(bytes)) {
        decompressed = zstdDecompress(name, bytes, options.limits);
        bytes = decompressed;
    }
    FileFormat format = options.format;
    if (format == FileFormat::Auto) {
        const std::string_view head = bytes.substr(0, 64 * 1024);
        // Column overrides can make a header readable that detection alone does not know.
        const bool overridden = !isDbnPrelude(head) && !isDatabentoCsvHeader(head) &&
                                isGenericCsvHeader(head, options.csv);
        format = overridden ? FileFormat::Csv : detectFormat(name, head);
    }
    ParsedFile out;
    switch (format) {
    case FileFormat::Dbn: out = readDbn(name, bytes, options.progress); break;
    case FileFormat::DatabentoCsv: out = readDatabentoCsv(name, bytes, options); break;
    case FileFormat::Csv:
    case FileFormat::Auto: out = readGenericCsv(name, bytes, options); break;
    }
    if (out.defaultSymbol.empty()) out.defaultSymbol = options.symbol;
    return out;
}

ParsedFile readBarFile(const std::string& path, const ReadOptions& options)
{
    return readBarBuffer(path, readInputFile(path, options.limits), options);
}

} // namespace foxhunt
