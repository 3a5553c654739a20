#include "engine/data/reader.h"

#include "engine/data/csv_reader.h"
#include "engine/data/dbn_reader.h"
#include "engine/data/import_error.h"

#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace foxhunt {

namespace {

bool isZstd(std::string_view head)
{
    return head.size() >= 4 && static_cast<unsigned char>(head[0]) == 0x28 && static_cast<unsigned char>(head[1]) == 0xB5
           && static_cast<unsigned char>(head[2]) == 0x2F && static_cast<unsigned char>(head[3]) == 0xFD;
}

// Skippable zstd frames (0x184D2A50-5F) may precede the data frames.
bool isZstdSkippable(std::string_view head)
{
    return head.size() >= 4 && (static_cast<unsigned char>(head[0]) & 0xF0) == 0x50
           && static_cast<unsigned char>(head[1]) == 0x2A && static_cast<unsigned char>(head[2]) == 0x4D
           && static_cast<unsigned char>(head[3]) == 0x18;
}

struct DStreamDeleter {
    void operator()(ZSTD_DStream* s) const { ZSTD_freeDStream(s); }
};

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

std::string zstdDecompress(std::string_view name, std::string_view compressed)
{
    std::unique_ptr<ZSTD_DStream, DStreamDeleter> stream(ZSTD_createDStream());
    if (!stream) throw ImportError(std::string(name), 0, "cannot allocate a zstd decoder");
    ZSTD_initDStream(stream.get());

    std::string out;
    const unsigned long long hint = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
    std::size_t capacity = compressed.size() * 4 + ZSTD_DStreamOutSize();
    if (hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR && hint < (1ULL << 34))
        capacity = std::max<std::size_t>(capacity, std::size_t(hint) + ZSTD_DStreamOutSize());
    out.resize(capacity);

    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    std::size_t produced = 0;
    std::size_t last = 0;
    while (in.pos < in.size || last != 0) {
        if (out.size() - produced < ZSTD_DStreamOutSize()) out.resize(out.size() * 2);
        ZSTD_outBuffer ob{out.data() + produced, out.size() - produced, 0};
        const std::size_t inBefore = in.pos;
        last = ZSTD_decompressStream(stream.get(), &ob, &in);
        if (ZSTD_isError(last))
            throw ImportError(std::string(name), 0, std::string("corrupt zstd data: ") + ZSTD_getErrorName(last));
        produced += ob.pos;
        // No input consumed and no output made with input exhausted: the frame is cut short.
        if (in.pos == in.size && last != 0 && ob.pos == 0 && inBefore == in.pos)
            throw ImportError(std::string(name), 0, "truncated zstd data (the last frame is incomplete)");
    }
    out.resize(produced);
    return out;
}

ParsedFile readBarBuffer(std::string_view name, std::string_view bytes, const ReadOptions& options)
{
    std::string decompressed;
    if (isZstd(bytes) || isZstdSkippable(bytes)) {
        decompressed = zstdDecompress(name, bytes);
        bytes = decompressed;
    }
    FileFormat format = options.format;
    if (format == FileFormat::Auto) {
        const std::string_view head = bytes.substr(0, 64 * 1024);
        // Column overrides can make a header readable that detection alone does not know.
        const bool overridden = !isDbnPrelude(head) && !isDatabentoCsvHeader(head) && isGenericCsvHeader(head, options.csv);
        format = overridden ? FileFormat::Csv : detectFormat(name, head);
    }
    ParsedFile out;
    switch (format) {
    case FileFormat::Dbn: out = readDbn(name, bytes); break;
    case FileFormat::DatabentoCsv: out = readDatabentoCsv(name, bytes, options); break;
    case FileFormat::Csv:
    case FileFormat::Auto: out = readGenericCsv(name, bytes, options); break;
    }
    if (out.defaultSymbol.empty()) out.defaultSymbol = options.symbol;
    return out;
}

ParsedFile readBarFile(const std::string& path, const ReadOptions& options)
{
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw ImportError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    std::string bytes;
    if (std::fseek(f.get(), 0, SEEK_END) == 0) {
        const long size = std::ftell(f.get());
        if (size > 0) bytes.reserve(std::size_t(size));
        std::rewind(f.get());
    }
    char buf[1 << 16];
    while (true) {
        const std::size_t n = std::fread(buf, 1, sizeof buf, f.get());
        bytes.append(buf, n);
        if (n < sizeof buf) break;
    }
    if (std::ferror(f.get())) throw ImportError(path, 0, std::string("read error: ") + std::strerror(errno));
    return readBarBuffer(path, bytes, options);
}

} // namespace foxhunt
