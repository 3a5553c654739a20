// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/dbn_reader.h"

#include "engine/data/bulk_memory.h"
#include "engine/data/import_error.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace foxhunt {

static_assert(std::endian::native == std::endian::little, "the DBN reader decodes little-endian records in place");

namespace {

// The OHLCV record as laid out on disk (natural alignment gives the wire layout).
struct OhlcvRecord {
    std::uint8_t length;
    std::uint8_t rtype;
    std::uint16_t publisherId;
    std::uint32_t instrumentId;
    std::uint64_t tsEvent;
    std::int64_t open;
    std::int64_t high;
    std::int64_t low;
    std::int64_t close;
    std::uint64_t volume;
};
static_assert(sizeof(OhlcvRecord) == kDbnOhlcvSize);

constexpr std::size_t kPreludeSize = 8;
constexpr std::size_t kFixedMetadataSize = 100;
constexpr std::size_t kRecordHeaderSize = 16;
constexpr std::size_t kV1SymbolCstrLen = 22;

// Encoders pad the metadata so records start 8-byte aligned.
constexpr std::size_t kMetadataAlignment = 8;

// Bounds-checked reads over the metadata body of one version's layout; an overrun
// means the declared length and the version byte disagree (or the file is cut).
class Cursor {
public:
    Cursor(std::string_view name, std::string_view bytes, std::uint8_t version)
        : m_name(name), m_bytes(bytes), m_version(version)
    {
    }

    template <typename T>
    T read()
    {
        need(sizeof(T));
        T v;
        std::memcpy(&v, m_bytes.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    // A fixed-width, NUL-terminated, zero-padded text field. Anything else is a sign
    // that the layout is misread (a changed version byte) or the file is corrupt.
    std::string cstr(std::size_t width, const char* what)
    {
        need(width);
        const char* p = m_bytes.data() + m_pos;
        const auto* nul = static_cast<const char*>(std::memchr(p, '\0', width));
        const std::size_t len = nul ? std::size_t(nul - p) : width;
        for (std::size_t i = 0; i < len; ++i)
            if (static_cast<unsigned char>(p[i]) < 0x20 || static_cast<unsigned char>(p[i]) > 0x7E)
                insane(what, "holds non-text bytes");
        for (std::size_t i = len; i < width; ++i)
            if (p[i] != '\0') insane(what, "has bytes after its terminator");
        m_pos += width;
        return std::string(p, len);
    }
    void skip(std::size_t n)
    {
        need(n);
        m_pos += n;
    }
    void seek(std::size_t pos)
    {
        if (pos > m_bytes.size()) fail();
        m_pos = pos;
    }
    // The layout must use the declared length exactly, up to the alignment padding.
    void finish() const
    {
        const std::size_t left = m_bytes.size() - m_pos;
        const bool padding = left < kMetadataAlignment && std::all_of(m_bytes.begin() + std::ptrdiff_t(m_pos),
                                                                      m_bytes.end(), [](char c) { return c == '\0'; });
        if (!padding)
            throw ImportError(std::string(m_name), 0,
                              "DBN metadata length disagrees with the v" + std::to_string(m_version) + " layout (" +
                                  std::to_string(m_bytes.size()) + " bytes declared, the layout ends after " +
                                  std::to_string(m_pos) + "): the version byte or the length is wrong");
    }
    [[noreturn]] void insane(const char* what, const char* problem) const
    {
        throw ImportError(std::string(m_name), 0,
                          "DBN metadata " + std::string(what) + " at byte " + std::to_string(8 + m_pos) + " " +
                              problem + " (read as v" + std::to_string(m_version) +
                              "): the version byte may be wrong or the file corrupt");
    }

private:
    void need(std::size_t n) const
    {
        if (m_bytes.size() - m_pos < n) fail();
    }
    [[noreturn]] void fail() const
    {
        throw ImportError(std::string(m_name), 0,
                          "truncated DBN metadata: the " + std::to_string(m_bytes.size()) +
                              " bytes declared end inside the v" + std::to_string(m_version) +
                              " layout (the version byte or the length is wrong)");
    }

    std::string_view m_name;
    std::string_view m_bytes;
    std::uint8_t m_version;
    std::size_t m_pos = 0;
};

std::vector<std::string> readSymbolList(Cursor& c, std::size_t width)
{
    const auto count = c.read<std::uint32_t>();
    std::vector<std::string> out;
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(c.cstr(width, "symbol"));
    return out;
}

std::optional<std::uint32_t> parseId(const std::string& text)
{
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
    return v;
}

DbnMetadata readMetadata(std::string_view name, std::string_view body, std::uint8_t version)
{
    DbnMetadata m;
    m.version = version;
    Cursor c(name, body, version);
    m.dataset = c.cstr(16, "dataset");
    m.schema = c.read<std::uint16_t>();
    m.start = c.read<std::uint64_t>();
    m.end = c.read<std::uint64_t>();
    m.limit = c.read<std::uint64_t>();
    std::size_t width = kV1SymbolCstrLen;
    if (version == 1) {
        c.skip(8); // record_count, unused since v2
        m.stypeIn = c.read<std::uint8_t>();
        m.stypeOut = c.read<std::uint8_t>();
        m.tsOut = c.read<std::uint8_t>() != 0;
    } else {
        m.stypeIn = c.read<std::uint8_t>();
        m.stypeOut = c.read<std::uint8_t>();
        m.tsOut = c.read<std::uint8_t>() != 0;
        width = c.read<std::uint16_t>();
        if (width == 0)
            throw ImportError(std::string(name), 0,
                              "DBN metadata has symbol_cstr_len 0 (read as v" + std::to_string(version) +
                                  "): the version byte may be wrong");
    }
    c.seek(kFixedMetadataSize);
    c.skip(c.read<std::uint32_t>()); // schema definition, unused
    m.symbols = readSymbolList(c, width);
    m.partial = readSymbolList(c, width);
    m.notFound = readSymbolList(c, width);
    const auto mappings = c.read<std::uint32_t>();
    for (std::uint32_t i = 0; i < mappings; ++i) {
        const std::string raw = c.cstr(width, "raw symbol");
        const auto intervals = c.read<std::uint32_t>();
        for (std::uint32_t j = 0; j < intervals; ++j) {
            SymbolMapping sm;
            sm.rawSymbol = raw;
            sm.startDate = c.read<std::uint32_t>();
            sm.endDate = c.read<std::uint32_t>();
            sm.symbol = c.cstr(width, "mapped symbol");
            m.mappings.push_back(std::move(sm));
        }
    }
    c.finish();
    return m;
}

} // namespace

std::int64_t dbnSchemaIntervalNs(std::uint16_t schema)
{
    switch (schema) {
    case 5: return kNsPerSecond;
    case 6: return kNsPerMinute;
    case 7: return 60 * kNsPerMinute;
    case 8:
    case 13: return kNsPerDay;
    default: return 0;
    }
}

std::int64_t dbnRtypeIntervalNs(std::uint8_t rtype)
{
    switch (rtype) {
    case kRtypeOhlcv1s: return kNsPerSecond;
    case kRtypeOhlcv1m: return kNsPerMinute;
    case kRtypeOhlcv1h: return 60 * kNsPerMinute;
    case kRtypeOhlcv1d:
    case kRtypeOhlcvEod: return kNsPerDay;
    default: return 0;
    }
}

bool isDbnPrelude(std::string_view head)
{
    // Any binary version byte: an unsupported version is then named as such by readDbn.
    // A printable one ("DBNx...") is left to the text formats.
    const auto v = head.size() >= 4 ? static_cast<unsigned char>(head[3]) : 0x20;
    return head.substr(0, 3) == "DBN" && (v < 0x20 || v > 0x7E);
}

ParsedFile readDbn(std::string_view name, std::string_view bytes, const ParseProgress& progress)
{
    const std::string file(name);
    if (bytes.size() < kPreludeSize) throw ImportError(file, 0, "truncated DBN prelude");
    if (bytes.substr(0, 3) != "DBN") throw ImportError(file, 0, "not a DBN file (no 'DBN' prelude)");
    const auto version = static_cast<std::uint8_t>(bytes[3]);
    if (version < 1 || version > 3)
        throw ImportError(file, 0, "unsupported DBN version " + std::to_string(version) + " (1-3 are supported)");
    std::uint32_t metaLen = 0;
    std::memcpy(&metaLen, bytes.data() + 4, 4);
    if (bytes.size() - kPreludeSize < metaLen)
        throw ImportError(file, 0,
                          "truncated DBN metadata (" + std::to_string(metaLen) + " bytes declared, " +
                              std::to_string(bytes.size() - kPreludeSize) + " present)");

    ParsedFile out;
    out.path = file;
    out.format = FileFormat::Dbn;
    out.dbn = readMetadata(name, bytes.substr(kPreludeSize, metaLen), version);
    out.dataset = out.dbn.dataset;

    for (const SymbolMapping& sm : out.dbn.mappings) {
        if (out.dbn.stypeOut == 0) {
            if (const auto id = parseId(sm.symbol)) out.symbols[*id] = sm.rawSymbol;
        } else if (const auto id = parseId(sm.rawSymbol)) {
            out.symbols[*id] = sm.symbol;
        }
    }

    const std::string_view records = bytes.substr(kPreludeSize + metaLen);
    const char* const base = records.data();
    const std::size_t size = records.size();
    out.bars.reserve(size / kDbnOhlcvSize);
    out.lines.reserve(size / kDbnOhlcvSize);
    adviseHugePages(out.bars);
    adviseHugePages(out.lines);

    std::uint64_t recordNo = 0;
    std::size_t pos = 0;
    std::uint8_t firstRtype = 0;
    bool mixedRtypes = false;
    while (pos < size) {
        ++recordNo;
        if ((recordNo & 0xFFFF) == 0 && progress) progress(static_cast<double>(pos) / static_cast<double>(size));
        const std::size_t remaining = size - pos;
        const std::size_t length = std::size_t(static_cast<std::uint8_t>(base[pos])) * 4;
        if (length < kRecordHeaderSize)
            throw ImportError(file, recordNo, "corrupt DBN record: length " + std::to_string(length) + " bytes");
        if (length > remaining)
            throw ImportError(file, recordNo,
                              "truncated DBN record: needs " + std::to_string(length) + " bytes, " +
                                  std::to_string(remaining) + " left");
        const auto rtype = static_cast<std::uint8_t>(base[pos + 1]);
        if ((rtype >= kRtypeOhlcv1s && rtype <= kRtypeOhlcvEod) || rtype == kRtypeOhlcvDeprecated) {
            if (length < kDbnOhlcvSize)
                throw ImportError(file, recordNo, "OHLCV record of " + std::to_string(length) + " bytes (56 expected)");
            OhlcvRecord r;
            std::memcpy(&r, base + pos, sizeof r);
            // Past INT64_MAX the conversion below would wrap to a date before 1970.
            if (r.tsEvent > static_cast<std::uint64_t>(INT64_MAX)) [[unlikely]]
                throw ImportError(file, recordNo,
                                  r.tsEvent == kUndefinedTimestamp
                                      ? "undefined ts_event (Databento's null timestamp, UINT64_MAX)"
                                      : "ts_event " + std::to_string(r.tsEvent) +
                                            " ns lies after 2262, beyond what the store holds");
            Bar bar;
            bar.tsEvent = static_cast<std::int64_t>(r.tsEvent);
            bar.open = r.open;
            bar.high = r.high;
            bar.low = r.low;
            bar.close = r.close;
            bar.volume = r.volume;
            bar.instrumentId = r.instrumentId;
            out.bars.push_back(bar);
            out.lines.push_back(recordNo);
            if (firstRtype == 0) firstRtype = rtype;
            else if (rtype != firstRtype) mixedRtypes = true;
        } else {
            ++out.recordsSkipped;
        }
        pos += length;
    }

    if (out.recordsSkipped > 0)
        out.warnings.push_back(std::to_string(out.recordsSkipped) + " DBN record" +
                               (out.recordsSkipped == 1 ? "" : "s") + " of other types skipped");
    if (!out.dbn.partial.empty())
        out.warnings.push_back(std::to_string(out.dbn.partial.size()) + " symbol(s) only partially resolved, e.g. " +
                               out.dbn.partial.front());
    if (!out.dbn.notFound.empty())
        out.warnings.push_back(std::to_string(out.dbn.notFound.size()) + " requested symbol(s) not found, e.g. " +
                               out.dbn.notFound.front());

    out.intervalNs = dbnSchemaIntervalNs(out.dbn.schema);
    if (out.intervalNs == 0 && !mixedRtypes) out.intervalNs = dbnRtypeIntervalNs(firstRtype);
    return out;
}

} // namespace foxhunt
