// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/csv_reader.h"

#include "engine/data/bulk_memory.h"
#include "engine/data/import_error.h"
#include "engine/data/market_time.h"

#include <date/date.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <locale>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace foxhunt {

namespace {

constexpr std::int64_t kNsPerHour = 3600 * kNsPerSecond;

// No bar row comes near this; a longer line is a corrupt or hostile file, refused
// before any of it is copied (a 10 MB field would otherwise be carried along).
constexpr std::size_t kMaxLineBytes = 64 * 1024;

// Fields from p to e, counting a delimiter inside double quotes as text.
std::size_t countFields(const char* p, const char* e, char delim)
{
    std::size_t n = 1;
    bool quoted = false;
    for (; p < e; ++p) {
        if (*p == '"') quoted = !quoted;
        else if (*p == delim && !quoted) ++n;
    }
    return n;
}

constexpr std::array<std::uint64_t, 10> kPow10 = {1ULL,      10ULL,      100ULL,      1000ULL,      10000ULL,
                                                  100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL};

inline bool isDigit(char c)
{
    return static_cast<unsigned char>(c - '0') < 10;
}

// Days since 1970-01-01 for a proleptic Gregorian date; inline here because the
// CSV hot loop computes one per row.
constexpr std::int64_t civilDays(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Nanoseconds at the start of a day, saturated at the int64 limits: a date past
// 2262 (or before 1677) must reach the range check as such, not wrap around.
constexpr std::int64_t dayStartNs(std::int64_t days)
{
    constexpr std::int64_t kMaxDays = std::numeric_limits<std::int64_t>::max() / kNsPerDay;
    if (days > kMaxDays) return std::numeric_limits<std::int64_t>::max();
    if (days < -kMaxDays) return std::numeric_limits<std::int64_t>::min();
    return days * kNsPerDay;
}

inline std::int64_t addSaturated(std::int64_t a, std::int64_t b)
{
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
    return sum;
}

constexpr unsigned daysInMonth(std::int64_t y, unsigned m)
{
    constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m != 2) return kDays[m - 1];
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return leap ? 29 : 28;
}

// Reads exactly n digits at p.
inline bool digitsN(const char*& p, const char* e, int n, unsigned& out)
{
    if (e - p < n) return false;
    unsigned v = 0;
    for (int i = 0; i < n; ++i) {
        if (!isDigit(p[i])) return false;
        v = v * 10 + unsigned(p[i] - '0');
    }
    out = v;
    p += n;
    return true;
}

// Reads one or two digits at p.
inline bool digits12(const char*& p, const char* e, unsigned& out)
{
    if (p >= e || !isDigit(*p)) return false;
    out = unsigned(*p++ - '0');
    if (p < e && isDigit(*p)) out = out * 10 + unsigned(*p++ - '0');
    return true;
}

inline bool makeDays(unsigned y, unsigned m, unsigned d, std::int64_t& days)
{
    if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return false;
    days = civilDays(y, m, d);
    return true;
}

// Date part: YYYY-MM-DD, YYYY/MM/DD, YYYYMMDD, M/D/YYYY.
bool parseDatePart(const char*& p, const char* e, std::int64_t& days)
{
    unsigned y = 0, m = 0, d = 0;
    const char* q = p;
    if (e - q >= 5 && isDigit(q[0]) && isDigit(q[1]) && isDigit(q[2]) && isDigit(q[3])) {
        if (q[4] == '-' || q[4] == '/') {
            const char sep = q[4];
            digitsN(q, e, 4, y);
            ++q;
            if (!digits12(q, e, m) || q >= e || *q != sep) return false;
            ++q;
            if (!digits12(q, e, d)) return false;
        } else {
            if (!digitsN(q, e, 4, y) || !digitsN(q, e, 2, m) || !digitsN(q, e, 2, d)) return false;
        }
    } else {
        if (!digits12(q, e, m) || q >= e || *q != '/') return false;
        ++q;
        if (!digits12(q, e, d) || q >= e || *q != '/') return false;
        ++q;
        if (!digitsN(q, e, 4, y)) return false;
    }
    if (!makeDays(y, m, d, days)) return false;
    p = q;
    return true;
}

// Time part: H[H]:MM[:SS[.fffffffff]] [AM|PM], then optional Z or +-HH[:MM].
bool parseTimePart(const char*& p, const char* e, std::int64_t& nsOfDay, bool& hasOffset, std::int64_t& offsetNs)
{
    unsigned h = 0, mi = 0, s = 0;
    std::uint64_t frac = 0;
    if (!digits12(p, e, h) || p >= e || *p != ':') return false;
    ++p;
    if (!digitsN(p, e, 2, mi)) return false;
    if (p < e && *p == ':') {
        ++p;
        if (!digitsN(p, e, 2, s)) return false;
        if (p < e && (*p == '.' || *p == ',')) {
            ++p;
            int n = 0;
            while (p < e && isDigit(*p)) {
                if (n < 9) frac = frac * 10 + std::uint64_t(*p - '0');
                ++n;
                ++p;
            }
            if (n == 0) return false;
            if (n < 9) frac *= kPow10[9 - n];
        }
    }
    const char* q = p;
    while (q < e && *q == ' ') ++q;
    if (e - q >= 2 && (q[1] == 'M' || q[1] == 'm') && (q[0] == 'A' || q[0] == 'a' || q[0] == 'P' || q[0] == 'p')) {
        if (h < 1 || h > 12) return false;
        const bool pm = q[0] == 'P' || q[0] == 'p';
        h = h % 12 + (pm ? 12 : 0);
        p = q + 2;
    }
    if (h > 23 || mi > 59 || s > 60) return false;
    nsOfDay = std::int64_t(h) * kNsPerHour + std::int64_t(mi) * kNsPerMinute + std::int64_t(s) * kNsPerSecond +
              std::int64_t(frac);
    hasOffset = false;
    offsetNs = 0;
    if (p < e && (*p == 'Z' || *p == 'z')) {
        ++p;
        hasOffset = true;
    } else if (p < e && (*p == '+' || *p == '-')) {
        const bool neg = *p == '-';
        ++p;
        unsigned oh = 0, om = 0;
        if (!digitsN(p, e, 2, oh)) return false;
        if (p < e && *p == ':') ++p;
        if (p < e && isDigit(*p) && !digitsN(p, e, 2, om)) return false;
        if (oh > 23 || om > 59) return false;
        offsetNs = (std::int64_t(oh) * 60 + om) * kNsPerMinute * (neg ? -1 : 1);
        hasOffset = true;
    }
    return true;
}

inline std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
}

inline bool parseFixed(const char* p, const char* e, std::int64_t& out)
{
    bool neg = false;
    if (p < e && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        ++p;
    }
    std::uint64_t ip = 0;
    int nd = 0;
    while (p < e && isDigit(*p)) {
        if (++nd > 11) return false;
        ip = ip * 10 + std::uint64_t(*p - '0');
        ++p;
    }
    std::uint64_t frac = 0;
    int fd = 0;
    bool roundUp = false;
    if (p < e && *p == '.') {
        ++p;
        while (p < e && isDigit(*p)) {
            if (fd < 9) frac = frac * 10 + std::uint64_t(*p - '0');
            else if (fd == 9) roundUp = *p >= '5';
            ++fd;
            ++p;
        }
    }
    if (p != e || nd + fd == 0) return false;
    if (fd < 9) frac *= kPow10[9 - fd];
    constexpr std::uint64_t kMaxInt = std::uint64_t(std::numeric_limits<std::int64_t>::max()) / 1'000'000'000;
    if (ip > kMaxInt) return false;
    const std::uint64_t v = ip * 1'000'000'000ULL + frac + (roundUp ? 1 : 0);
    if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return false;
    out = neg ? -std::int64_t(v) : std::int64_t(v);
    return true;
}

inline bool parseInt(const char* p, const char* e, std::uint64_t& out)
{
    if (p == e) return false;
    std::uint64_t v = 0;
    int n = 0;
    for (; p < e; ++p) {
        if (!isDigit(*p) || ++n > 19) return false;
        v = v * 10 + std::uint64_t(*p - '0');
    }
    out = v;
    return true;
}

inline bool parseSignedInt(const char* p, const char* e, std::int64_t& out)
{
    const bool neg = p < e && *p == '-';
    if (neg || (p < e && *p == '+')) ++p;
    std::uint64_t v = 0;
    if (!parseInt(p, e, v) || v > std::uint64_t(std::numeric_limits<std::int64_t>::max())) return false;
    out = neg ? -std::int64_t(v) : std::int64_t(v);
    return true;
}

// Volume: a whole number, also written as "123.0".
inline bool parseVolume(const char* p, const char* e, std::uint64_t& out)
{
    const char* dot = static_cast<const char*>(std::memchr(p, '.', std::size_t(e - p)));
    if (!dot) return parseInt(p, e, out);
    for (const char* q = dot + 1; q < e; ++q)
        if (*q != '0') return false;
    return parseInt(p, dot, out);
}

std::optional<TextTimestamp> parseTimestampImpl(const char* p, const char* e)
{
    while (p < e && *p == ' ') ++p;
    while (e > p && e[-1] == ' ') --e;
    if (p == e) return std::nullopt;
    bool allDigits = true;
    for (const char* q = p; q < e; ++q)
        if (!isDigit(*q)) {
            allDigits = false;
            break;
        }
    if (allDigits && e - p > 8) {
        std::uint64_t v = 0;
        if (!parseInt(p, e, v)) return std::nullopt;
        const auto n = e - p;
        const std::uint64_t scale = n <= 10 ? 1'000'000'000ULL : n <= 13 ? 1'000'000ULL : n <= 16 ? 1000ULL : 1ULL;
        if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max()) / scale)
            return TextTimestamp{std::numeric_limits<std::int64_t>::max(), true};
        return TextTimestamp{std::int64_t(v * scale), true};
    }
    std::int64_t days = 0;
    if (!parseDatePart(p, e, days)) return std::nullopt;
    TextTimestamp ts{dayStartNs(days), false};
    if (p == e) return ts;
    if (*p == 'T' || *p == 't') ++p;
    else {
        if (*p != ' ') return std::nullopt;
        while (p < e && *p == ' ') ++p;
    }
    std::int64_t tod = 0, off = 0;
    bool hasOff = false;
    if (!parseTimePart(p, e, tod, hasOff, off) || p != e) return std::nullopt;
    ts.ns = addSaturated(ts.ns, tod - off);
    ts.exact = hasOff;
    return ts;
}

// Layouts the fast path above does not read, tried with date::parse when it misses.
// Whitespace in a layout matches any run of whitespace, also none.
struct FallbackLayout {
    const char* format;
    enum class Zone { Naive, Offset, Abbreviation } zone;
};
constexpr std::array<FallbackLayout, 22> kFallbackLayouts = {{
    {"%Y-%m-%dT%H:%M:%S %Ez", FallbackLayout::Zone::Offset},
    {"%Y-%m-%dT%H:%M:%S %z", FallbackLayout::Zone::Offset},
    {"%Y-%m-%d %H:%M:%S %Ez", FallbackLayout::Zone::Offset},
    {"%Y-%m-%d %H:%M:%S %z", FallbackLayout::Zone::Offset},
    {"%Y-%m-%d %H:%M %Ez", FallbackLayout::Zone::Offset},
    {"%Y-%m-%dT%H:%M:%S %Z", FallbackLayout::Zone::Abbreviation},
    {"%Y-%m-%d %H:%M:%S %Z", FallbackLayout::Zone::Abbreviation},
    {"%Y%m%dT%H%M%S", FallbackLayout::Zone::Naive},
    {"%Y%m%dT%H%M%S%z", FallbackLayout::Zone::Offset},
    {"%d.%m.%Y %H:%M:%S", FallbackLayout::Zone::Naive},
    {"%d.%m.%Y %H:%M", FallbackLayout::Zone::Naive},
    {"%d.%m.%Y", FallbackLayout::Zone::Naive},
    {"%m/%d/%y %H:%M:%S", FallbackLayout::Zone::Naive},
    {"%m/%d/%y %H:%M", FallbackLayout::Zone::Naive},
    {"%m/%d/%y", FallbackLayout::Zone::Naive},
    {"%d-%b-%Y %H:%M:%S", FallbackLayout::Zone::Naive},
    {"%d-%b-%Y %H:%M", FallbackLayout::Zone::Naive},
    {"%d-%b-%Y", FallbackLayout::Zone::Naive},
    {"%d %b %Y %H:%M:%S", FallbackLayout::Zone::Naive},
    {"%d %b %Y", FallbackLayout::Zone::Naive},
    {"%b %d %Y %H:%M:%S", FallbackLayout::Zone::Naive},
    {"%a %b %d %H:%M:%S %Y", FallbackLayout::Zone::Naive},
}};

// GCC 12 sees date.h's seconds parser (a long double set on every path that reads it)
// as maybe uninitialized once it is inlined here; the warning is about the library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
std::optional<TextTimestamp> parseWithLayout(std::string_view text, const FallbackLayout& layout)
{
    std::istringstream in{std::string(text)};
    in.imbue(std::locale::classic());
    date::fields<std::chrono::nanoseconds> fields;
    std::string abbreviation;
    std::chrono::minutes offset{0};
    date::from_stream(in, layout.format, fields, &abbreviation, &offset);
    if (in.fail() || in.peek() != std::char_traits<char>::eof() || !fields.ymd.ok()) return std::nullopt;
    bool exact = layout.zone == FallbackLayout::Zone::Offset;
    if (layout.zone == FallbackLayout::Zone::Abbreviation) {
        // Only the abbreviations that name one offset; "EST" or "CET" would be a guess.
        if (abbreviation != "UTC" && abbreviation != "GMT" && abbreviation != "Z") return std::nullopt;
        exact = true;
    }
    const std::int64_t days = civilDays(int(fields.ymd.year()), unsigned(fields.ymd.month()),
                                        unsigned(fields.ymd.day()));
    const std::int64_t tod = fields.has_tod ? fields.tod.to_duration().count() : 0;
    const std::int64_t off = std::chrono::duration_cast<std::chrono::nanoseconds>(offset).count();
    return TextTimestamp{addSaturated(dayStartNs(days), tod - off), exact};
}
#pragma GCC diagnostic pop

// The slow path: date::parse with each fallback layout, the one that matched last first
// (a file keeps one layout, so a whole file in it costs one attempt a row).
std::optional<TextTimestamp> parseTimestampFallback(std::string_view text, std::size_t& hint)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    if (text.empty() || text.size() > 64) return std::nullopt;
    if (hint < kFallbackLayouts.size())
        if (auto ts = parseWithLayout(text, kFallbackLayouts[hint])) return ts;
    for (std::size_t i = 0; i < kFallbackLayouts.size(); ++i) {
        if (i == hint) continue;
        if (auto ts = parseWithLayout(text, kFallbackLayouts[i])) {
            hint = i;
            return ts;
        }
    }
    return std::nullopt;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

char detectDelimiter(std::string_view header)
{
    const auto commas = std::count(header.begin(), header.end(), ',');
    const auto semis = std::count(header.begin(), header.end(), ';');
    const auto tabs = std::count(header.begin(), header.end(), '\t');
    if (tabs > commas && tabs >= semis) return '\t';
    if (semis > commas) return ';';
    return ',';
}

// Splits a header line into trimmed, lower-cased names.
std::vector<std::string> headerNames(std::string_view line, char delim)
{
    std::vector<std::string> names;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = line.find(delim, start);
        const std::string_view field = line.substr(start,
                                                   pos == std::string_view::npos ? line.size() - start : pos - start);
        names.push_back(lower(trim(field)));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return names;
}

int findColumn(const std::vector<std::string>& names, std::initializer_list<std::string_view> candidates)
{
    for (std::string_view c : candidates)
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == c) return int(i);
    return -1;
}

int findNamed(std::string_view file, const std::vector<std::string>& names, const std::optional<std::string>& override,
              std::initializer_list<std::string_view> candidates)
{
    if (override) {
        const std::string want = lower(*override);
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == want) return int(i);
        throw ImportError(std::string(file), 1, "no column named '" + *override + "' in the header");
    }
    return findColumn(names, candidates);
}

std::string_view firstLine(std::string_view text)
{
    if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
        static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
        text.remove_prefix(3);
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
}

const std::initializer_list<std::string_view> kTimestampNames = {
    "timestamp", "datetime", "date/time", "date_time", "date time", "time stamp", "ts_event", "ts", "time_stamp"};
const std::initializer_list<std::string_view> kDateNames = {"date", "day", "trade_date"};
const std::initializer_list<std::string_view> kTimeNames = {"time", "bar_time"};
const std::initializer_list<std::string_view> kOpenNames = {"open", "o", "open_price"};
const std::initializer_list<std::string_view> kHighNames = {"high", "h", "high_price"};
const std::initializer_list<std::string_view> kLowNames = {"low", "l", "low_price"};
const std::initializer_list<std::string_view> kCloseNames = {"close", "c", "close_price", "last"};
const std::initializer_list<std::string_view> kVolumeNames = {"volume", "vol", "v"};
const std::initializer_list<std::string_view> kSymbolNames = {"symbol", "ticker", "contract", "instrument"};

// Where each needed value sits in a row.
struct Columns {
    int ts = -1, date = -1, time = -1;
    int open = -1, high = -1, low = -1, close = -1, volume = -1;
    int symbol = -1, instrument = -1, rtype = -1;
    int maxIndex = -1;
    std::vector<std::string> names;

    void finish()
    {
        for (int c : {ts, date, time, open, high, low, close, volume, symbol, instrument, rtype})
            maxIndex = std::max(maxIndex, c);
    }
    std::string nameOf(int index) const
    {
        return index >= 0 && std::size_t(index) < names.size() ? names[std::size_t(index)] : "?";
    }
};

enum class Dialect { Databento, Generic };

// Shared row loop of both readers. Rows are split only as far as the last needed column.
class CsvParser {
public:
    CsvParser(std::string_view name, std::string_view text, const ReadOptions& options, Dialect dialect)
        : m_name(name), m_text(text), m_options(options), m_dialect(dialect)
    {
    }

    ParsedFile run();

private:
    [[noreturn]] void fail(std::uint64_t line, const std::string& reason) const
    {
        throw ImportError(std::string(m_name), line, reason);
    }
    void resolveColumns(std::string_view header);
    std::int64_t rowTimestamp(std::uint64_t line);
    std::int64_t price(int column, std::uint64_t line);
    [[noreturn]] __attribute__((noinline, cold)) void badPrice(int column, std::uint64_t line) const;
    [[noreturn]] __attribute__((noinline, cold)) void badVolume(std::uint64_t line) const;
    [[noreturn]] __attribute__((noinline, cold)) void outOfRange(std::uint64_t line) const;
    const char* unquoteEscaped(const char* p, const char* le, std::string& out, std::uint64_t line) const;
    [[noreturn]] __attribute__((noinline, cold)) void tooLong(std::uint64_t line, std::size_t bytes) const;
    std::uint32_t instrumentFor(std::string_view symbol, std::uint64_t line);
    std::string_view field(int column) const { return m_fields[std::size_t(column)]; }

    std::string_view m_name;
    std::string_view m_text;
    const ReadOptions& m_options;
    Dialect m_dialect;
    char m_delim = ',';
    Columns m_cols;
    std::vector<std::string_view> m_fields;
    std::vector<std::string> m_unquoted; ///< storage for fields that held "" (m_fields points here)
    std::optional<ZoneConverter> m_zone;
    std::int64_t m_prevUtc = std::numeric_limits<std::int64_t>::min();
    std::size_t m_fallbackHint = 0; ///< the date::parse layout that matched last
    bool m_prettyPrices = true;
    ParsedFile m_out;
    std::unordered_map<std::string, std::uint32_t> m_symbolIds;
    std::uint32_t m_lastSymbolId = 0;
    std::string m_lastSymbol;
};

void CsvParser::resolveColumns(std::string_view header)
{
    const CsvOverrides& ov = m_options.csv;
    m_delim = ov.delimiter ? ov.delimiter : detectDelimiter(header);
    m_cols.names = headerNames(header, m_delim);
    const auto& names = m_cols.names;
    auto require = [&](int index, std::string_view what) {
        if (index < 0) fail(1, "no " + std::string(what) + " column in the header");
    };
    if (m_dialect == Dialect::Databento) {
        m_cols.ts = findNamed(m_name, names, ov.timestampColumn, {"ts_event"});
        m_cols.rtype = findColumn(names, {"rtype"});
        m_cols.instrument = findColumn(names, {"instrument_id"});
        m_cols.symbol = findNamed(m_name, names, ov.symbolColumn, {"symbol"});
        require(m_cols.ts, "ts_event");
    } else {
        if (ov.dateColumn) {
            m_cols.date = findNamed(m_name, names, ov.dateColumn, {});
            if (ov.timeColumn) m_cols.time = findNamed(m_name, names, ov.timeColumn, {});
        } else if (ov.timestampColumn) {
            m_cols.ts = findNamed(m_name, names, ov.timestampColumn, {});
        } else {
            m_cols.ts = findColumn(names, kTimestampNames);
            if (m_cols.ts < 0) {
                m_cols.date = findColumn(names, kDateNames);
                m_cols.time = findColumn(names, kTimeNames);
                // A lone "time" column holds the whole timestamp in some exports.
                if (m_cols.date < 0 && m_cols.time >= 0) std::swap(m_cols.ts, m_cols.time);
            }
        }
        m_cols.symbol = findNamed(m_name, names, ov.symbolColumn, kSymbolNames);
        if (m_cols.ts < 0 && m_cols.date < 0)
            fail(1, "no timestamp column (timestamp, datetime, date/time, date + time) in the header");
    }
    m_cols.open = findNamed(m_name, names, ov.openColumn, kOpenNames);
    m_cols.high = findNamed(m_name, names, ov.highColumn, kHighNames);
    m_cols.low = findNamed(m_name, names, ov.lowColumn, kLowNames);
    m_cols.close = findNamed(m_name, names, ov.closeColumn, kCloseNames);
    m_cols.volume = findNamed(m_name, names, ov.volumeColumn, kVolumeNames);
    require(m_cols.open, "open");
    require(m_cols.high, "high");
    require(m_cols.low, "low");
    require(m_cols.close, "close");
    require(m_cols.volume, "volume");
    m_cols.finish();
    m_fields.resize(std::size_t(m_cols.maxIndex) + 1);
    m_unquoted.resize(m_fields.size());
}

std::int64_t CsvParser::rowTimestamp(std::uint64_t line)
{
    std::optional<TextTimestamp> ts;
    std::string_view shown;
    if (m_cols.ts >= 0) {
        shown = field(m_cols.ts);
        if (m_options.csv.timestampFormat && !m_options.csv.timestampFormat->empty()) {
            ts = parseTextTimestamp(shown, *m_options.csv.timestampFormat);
        } else {
            ts = parseTimestampImpl(shown.data(), shown.data() + shown.size());
            if (!ts) [[unlikely]]
                ts = parseTimestampFallback(shown, m_fallbackHint);
        }
    } else {
        const std::string_view d = field(m_cols.date);
        shown = d;
        const char* p = d.data();
        const char* e = p + d.size();
        while (e > p && e[-1] == ' ') --e;
        std::int64_t days = 0;
        if (parseDatePart(p, e, days) && p == e) {
            ts = TextTimestamp{dayStartNs(days), false};
            if (m_cols.time >= 0) {
                const std::string_view t = field(m_cols.time);
                const char* tp = t.data();
                const char* te = tp + t.size();
                while (tp < te && *tp == ' ') ++tp;
                while (te > tp && te[-1] == ' ') --te;
                std::int64_t tod = 0, off = 0;
                bool hasOff = false;
                if (parseTimePart(tp, te, tod, hasOff, off) && tp == te) {
                    ts->ns = addSaturated(ts->ns, tod - off);
                    ts->exact = hasOff;
                } else {
                    ts = parseTimestampFallback(std::string(d) + ' ' + std::string(t), m_fallbackHint);
                    if (!ts) fail(line, "bad time '" + std::string(t) + "'");
                }
            }
        } else {
            ts = m_cols.time >= 0
                     ? parseTimestampFallback(std::string(d) + ' ' + std::string(field(m_cols.time)), m_fallbackHint)
                     : parseTimestampFallback(d, m_fallbackHint);
        }
    }
    if (!ts) fail(line, "bad timestamp '" + std::string(shown) + "'");
    if (ts->exact || m_dialect == Dialect::Databento) {
        if (ts->ns < kMinBarTs || ts->ns >= kMaxBarTs) [[unlikely]]
            outOfRange(line);
        return ts->ns;
    }
    // A day either side covers every zone offset and keeps the conversion clear of int64's ends.
    if (ts->ns < kMinBarTs - kNsPerDay || ts->ns >= kMaxBarTs + kNsPerDay) [[unlikely]]
        outOfRange(line);

    // Naive local time: the earliest offset of an ambiguous hour, unless that would
    // not move past the previous bar (the repeated hour after a fall-back).
    std::optional<std::int64_t> utc = m_zone->localToUtc(ts->ns, AmbiguousTime::Earliest);
    if (!utc)
        fail(line, "local time " + formatUtc(ts->ns).substr(0, 19) + " does not exist in " + m_zone->name() +
                       " (skipped by the daylight-saving change)");
    if (*utc <= m_prevUtc) {
        const std::optional<std::int64_t> later = m_zone->localToUtc(ts->ns, AmbiguousTime::Latest);
        if (later && *later > m_prevUtc) utc = later;
    }
    if (*utc < kMinBarTs || *utc >= kMaxBarTs) [[unlikely]]
        outOfRange(line);
    return *utc;
}

inline std::int64_t CsvParser::price(int column, std::uint64_t line)
{
    const std::string_view f = field(column);
    std::int64_t v = 0;
    bool ok;
    if (m_dialect == Dialect::Databento && !m_prettyPrices && std::memchr(f.data(), '.', f.size()) == nullptr)
        ok = parseSignedInt(f.data(), f.data() + f.size(), v);
    else ok = parseFixed(f.data(), f.data() + f.size(), v);
    if (!ok) [[unlikely]]
        badPrice(column, line);
    return v;
}

void CsvParser::outOfRange(std::uint64_t line) const
{
    std::string shown(field(m_cols.ts >= 0 ? m_cols.ts : m_cols.date));
    if (m_cols.ts < 0 && m_cols.time >= 0) shown += ' ' + std::string(field(m_cols.time));
    fail(line, "timestamp '" + shown + "' is outside the accepted range (" + kBarTimeRangeText + ")");
}

// The text of a quoted field that starts at p (past its opening quote), with each ""
// made one quote; returns the position of the closing quote.
const char* CsvParser::unquoteEscaped(const char* p, const char* le, std::string& out, std::uint64_t line) const
{
    out.clear();
    while (true) {
        const char* q = static_cast<const char*>(std::memchr(p, '"', std::size_t(le - p)));
        if (!q) fail(line, "unterminated quote");
        out.append(p, std::size_t(q - p));
        if (q + 1 < le && q[1] == '"') {
            out += '"';
            p = q + 2;
            continue;
        }
        return q;
    }
}

void CsvParser::tooLong(std::uint64_t line, std::size_t bytes) const
{
    fail(line, "line of " + std::to_string(bytes) + " bytes is longer than the " + std::to_string(kMaxLineBytes) +
                   " allowed");
}

void CsvParser::badVolume(std::uint64_t line) const
{
    const std::string_view vol = field(m_cols.volume);
    const std::string_view whole = vol.substr(0, vol.find('.'));
    const bool number = !whole.empty() && std::all_of(whole.begin(), whole.end(), isDigit);
    if (number && whole.size() >= 19)
        fail(line, "volume '" + std::string(vol) + "' cannot be real (the most a bar can hold is " +
                       std::to_string(kMaxBarVolume) + ")");
    fail(line, "bad volume '" + std::string(vol) + "'");
}

void CsvParser::badPrice(int column, std::uint64_t line) const
{
    fail(line, "bad " + m_cols.nameOf(column) + " price '" + std::string(field(column)) + "'");
}

std::uint32_t CsvParser::instrumentFor(std::string_view symbol, std::uint64_t line)
{
    if (symbol.empty()) fail(line, "empty symbol");
    if (symbol == m_lastSymbol) return m_lastSymbolId;
    auto it = m_symbolIds.find(std::string(symbol));
    if (it == m_symbolIds.end()) {
        const auto id = static_cast<std::uint32_t>(m_symbolIds.size() + 1);
        it = m_symbolIds.emplace(std::string(symbol), id).first;
        m_out.symbols[id] = std::string(symbol);
    }
    m_lastSymbol = std::string(symbol);
    m_lastSymbolId = it->second;
    return it->second;
}

ParsedFile CsvParser::run()
{
    m_out.path = std::string(m_name);
    m_out.format = m_dialect == Dialect::Databento ? FileFormat::DatabentoCsv : FileFormat::Csv;
    m_out.defaultSymbol = m_options.symbol;

    std::string_view text = m_text;
    if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
        static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
        text.remove_prefix(3);
    const std::string_view header = firstLine(text);
    if (header.empty()) fail(1, "empty file (no header line)");
    if (header.size() > kMaxLineBytes) tooLong(1, header.size());
    resolveColumns(header);
    if (m_dialect == Dialect::Generic) {
        try {
            m_zone.emplace(m_options.timeZone);
        } catch (const std::invalid_argument& e) {
            fail(0, e.what());
        }
    }

    const std::size_t estimate = std::size_t(std::count(text.begin(), text.end(), '\n')) + 1;
    m_out.bars.reserve(estimate);
    m_out.lines.reserve(estimate);
    adviseHugePages(m_out.bars);
    adviseHugePages(m_out.lines);

    const char* p = text.data();
    const char* const end = p + text.size();
    {
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(end - p)));
        p = nl ? nl + 1 : end;
    }
    std::uint64_t line = 1;
    bool firstRow = true;
    const std::size_t needed = m_fields.size();
    const char delim = m_delim;
    const ParseProgress& progress = m_options.progress;
    while (p < end) {
        ++line;
        if ((line & 0xFFFF) == 0 && progress)
            progress(static_cast<double>(p - text.data()) / static_cast<double>(text.size()));
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(end - p)));
        const char* le = nl ? nl : end;
        const char* next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r') --le;
        if (le == p) {
            p = next;
            continue;
        }
        if (std::size_t(le - p) > kMaxLineBytes) [[unlikely]]
            tooLong(line, std::size_t(le - p));
        // Split only as far as the last needed column.
        std::size_t n = 0;
        const char* f = p;
        const char* rest = nullptr; // the first field past the needed ones, if any
        while (n < needed) {
            const char* fe;
            if (f < le && *f == '"') {
                const char* close = static_cast<const char*>(std::memchr(f + 1, '"', std::size_t(le - f - 1)));
                if (!close) fail(line, "unterminated quote");
                if (close + 1 < le && close[1] == '"') {
                    // RFC 4180: "" inside a quoted field is one quote, and the field goes on.
                    close = unquoteEscaped(f + 1, le, m_unquoted[n], line);
                    m_fields[n] = m_unquoted[n];
                    ++n;
                } else {
                    m_fields[n++] = std::string_view(f + 1, std::size_t(close - f - 1));
                }
                fe = static_cast<const char*>(std::memchr(close, delim, std::size_t(le - close)));
            } else {
                // Fields are short: a plain loop beats a memchr call per field.
                const char* q = f;
                while (q < le && *q != delim) ++q;
                fe = q < le ? q : nullptr;
                std::string_view v(f, std::size_t(q - f));
                if (!v.empty() && (v.front() == ' ' || v.back() == ' ')) v = trim(v);
                m_fields[n++] = v;
            }
            if (!fe) break;
            f = fe + 1;
            if (n == needed) rest = f;
        }
        if (n < needed)
            fail(line, "missing column '" + m_cols.nameOf(int(n)) + "' (row has " + std::to_string(n) +
                           " fields, header names " + std::to_string(m_cols.names.size()) + ")");
        // Columns past the needed ones are not read, but a row may not have more than the header names.
        if (rest) {
            const std::size_t total = needed + countFields(rest, le, delim);
            if (total > m_cols.names.size()) [[unlikely]]
                fail(line, "row has " + std::to_string(total) + " fields, the header names " +
                               std::to_string(m_cols.names.size()));
        }

        if (firstRow && m_dialect == Dialect::Databento) {
            const std::string_view o = field(m_cols.open);
            m_prettyPrices = std::memchr(o.data(), '.', o.size()) != nullptr;
            if (m_cols.rtype >= 0) {
                std::uint64_t rtype = 0;
                if (parseInt(field(m_cols.rtype).data(), field(m_cols.rtype).data() + field(m_cols.rtype).size(),
                             rtype)) {
                    switch (rtype) {
                    case 0x20: m_out.intervalNs = kNsPerSecond; break;
                    case 0x21: m_out.intervalNs = kNsPerMinute; break;
                    case 0x22: m_out.intervalNs = 60 * kNsPerMinute; break;
                    case 0x23:
                    case 0x24: m_out.intervalNs = kNsPerDay; break;
                    default: break;
                    }
                }
            }
        }
        firstRow = false;

        Bar bar;
        bar.tsEvent = rowTimestamp(line);
        bar.open = price(m_cols.open, line);
        bar.high = price(m_cols.high, line);
        bar.low = price(m_cols.low, line);
        bar.close = price(m_cols.close, line);
        const std::string_view vol = field(m_cols.volume);
        if (!parseVolume(vol.data(), vol.data() + vol.size(), bar.volume) || bar.volume > kMaxBarVolume) [[unlikely]]
            badVolume(line);
        if (m_dialect == Dialect::Databento) {
            if (m_cols.instrument >= 0) {
                const std::string_view id = field(m_cols.instrument);
                std::uint64_t v = 0;
                if (!parseInt(id.data(), id.data() + id.size(), v) || v > 0xFFFFFFFFULL)
                    fail(line, "bad instrument_id '" + std::string(id) + "'");
                bar.instrumentId = static_cast<std::uint32_t>(v);
                if (m_cols.symbol >= 0) {
                    const std::string_view sym = field(m_cols.symbol);
                    if (!sym.empty() && (bar.instrumentId != m_lastSymbolId || sym != m_lastSymbol)) {
                        m_out.symbols[bar.instrumentId] = std::string(sym);
                        m_lastSymbolId = bar.instrumentId;
                        m_lastSymbol = std::string(sym);
                    }
                }
            } else if (m_cols.symbol >= 0) {
                bar.instrumentId = instrumentFor(field(m_cols.symbol), line);
            }
        } else if (m_cols.symbol >= 0) {
            bar.instrumentId = instrumentFor(field(m_cols.symbol), line);
        }
        m_prevUtc = bar.tsEvent;
        m_out.bars.push_back(bar);
        m_out.lines.push_back(line);
        p = next;
    }
    return std::move(m_out);
}

bool headerHas(const std::vector<std::string>& names, std::initializer_list<std::string_view> candidates)
{
    return findColumn(names, candidates) >= 0;
}

} // namespace

std::optional<std::int64_t> parseFixedPoint(std::string_view text)
{
    std::int64_t v = 0;
    if (!parseFixed(text.data(), text.data() + text.size(), v)) return std::nullopt;
    return v;
}

std::optional<TextTimestamp> parseTextTimestamp(std::string_view text)
{
    if (auto ts = parseTimestampImpl(text.data(), text.data() + text.size())) return ts;
    std::size_t hint = 0;
    return parseTimestampFallback(text, hint);
}

std::optional<TextTimestamp> parseTextTimestamp(std::string_view text, std::string_view format)
{
    const char* p = text.data();
    const char* e = p + text.size();
    while (p < e && *p == ' ') ++p;
    while (e > p && e[-1] == ' ') --e;
    unsigned y = 1970, mo = 1, d = 1, h = 0, mi = 0, s = 0;
    std::uint64_t frac = 0;
    std::int64_t off = 0;
    bool exact = false;
    for (std::size_t i = 0; i < format.size(); ++i) {
        const char c = format[i];
        if (c == ' ') {
            if (p >= e || *p != ' ') return std::nullopt;
            while (p < e && *p == ' ') ++p;
            continue;
        }
        if (c != '%' || i + 1 == format.size()) {
            if (p >= e || *p != c) return std::nullopt;
            ++p;
            continue;
        }
        const char spec = format[++i];
        bool ok = true;
        switch (spec) {
        case 'Y': ok = digitsN(p, e, 4, y); break;
        case 'y':
            ok = digitsN(p, e, 2, y);
            y += y < 69 ? 2000 : 1900;
            break;
        case 'm': ok = digits12(p, e, mo); break;
        case 'd': ok = digits12(p, e, d); break;
        case 'H': ok = digits12(p, e, h); break;
        case 'M': ok = digitsN(p, e, 2, mi); break;
        case 'S':
            ok = digitsN(p, e, 2, s);
            if (ok && p < e && *p == '.') {
                ++p;
                int n = 0;
                while (p < e && isDigit(*p)) {
                    if (n < 9) frac = frac * 10 + std::uint64_t(*p - '0');
                    ++n;
                    ++p;
                }
                if (n < 9) frac *= kPow10[std::size_t(9 - n)];
            }
            break;
        case 'z': {
            if (p < e && (*p == 'Z' || *p == 'z')) {
                ++p;
            } else {
                if (p >= e || (*p != '+' && *p != '-')) return std::nullopt;
                const bool neg = *p++ == '-';
                unsigned oh = 0, om = 0;
                ok = digitsN(p, e, 2, oh);
                if (ok && p < e && *p == ':') ++p;
                ok = ok && digitsN(p, e, 2, om);
                off = (std::int64_t(oh) * 60 + om) * kNsPerMinute * (neg ? -1 : 1);
            }
            exact = true;
            break;
        }
        case '%':
            ok = p < e && *p == '%';
            ++p;
            break;
        default: return std::nullopt;
        }
        if (!ok) return std::nullopt;
    }
    if (p != e || h > 23 || mi > 59 || s > 60) return std::nullopt;
    std::int64_t days = 0;
    if (!makeDays(y, mo, d, days)) return std::nullopt;
    return TextTimestamp{addSaturated(dayStartNs(days), std::int64_t(h) * kNsPerHour + std::int64_t(mi) * kNsPerMinute +
                                                            std::int64_t(s) * kNsPerSecond + std::int64_t(frac) - off),
                         exact};
}

bool isDatabentoCsvHeader(std::string_view headerLine)
{
    const std::string_view line = firstLine(headerLine);
    const auto names = headerNames(line, detectDelimiter(line));
    return headerHas(names, {"ts_event"}) && headerHas(names, {"instrument_id"}) && headerHas(names, {"open"}) &&
           headerHas(names, {"close"});
}

bool isGenericCsvHeader(std::string_view headerLine, const CsvOverrides& overrides)
{
    const std::string_view line = firstLine(headerLine);
    const auto names = headerNames(line, overrides.delimiter ? overrides.delimiter : detectDelimiter(line));
    const bool hasTime = overrides.timestampColumn || overrides.dateColumn || headerHas(names, kTimestampNames) ||
                         headerHas(names, kDateNames) || headerHas(names, kTimeNames);
    return hasTime && (overrides.openColumn || headerHas(names, kOpenNames)) &&
           (overrides.closeColumn || headerHas(names, kCloseNames));
}

ParsedFile readDatabentoCsv(std::string_view name, std::string_view text, const ReadOptions& options)
{
    return CsvParser(name, text, options, Dialect::Databento).run();
}

ParsedFile readGenericCsv(std::string_view name, std::string_view text, const ReadOptions& options)
{
    return CsvParser(name, text, options, Dialect::Generic).run();
}

} // namespace foxhunt
