// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/svg_chart.h"

#include "engine/data/market_time.h"
#include "engine/telemetry/decimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <sstream>

namespace foxhunt {

namespace {

/// The points of a series to draw: all of them up to maxPoints, else the first, the last and the
/// min and max of each bucket, in x order (engine/telemetry/decimate.h); at most maxPoints.
void decimate(const SvgSeries& s, int maxPoints, std::vector<double>& xs, std::vector<double>& ys)
{
    const std::size_t n = std::min(s.x.size(), s.y.size());
    if (n <= static_cast<std::size_t>(maxPoints) || maxPoints < 6) {
        xs.assign(s.x.begin(), s.x.begin() + static_cast<std::ptrdiff_t>(n));
        ys.assign(s.y.begin(), s.y.begin() + static_cast<std::ptrdiff_t>(n));
        return;
    }
    for (const std::size_t i : decimateMinMax(std::span<const double>(s.y.data(), n), maxPoints / 2)) {
        xs.push_back(s.x[i]);
        ys.push_back(s.y[i]);
    }
}

/// "Nice" tick step (1, 2 or 5 times a power of ten) for about `target` ticks.
double niceStep(double range, int target)
{
    if (!(range > 0)) return 1.0;
    const double raw = range / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / mag;
    const double nice = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
    return nice * mag;
}

std::string number(double v)
{
    char buf[32];
    const double a = std::fabs(v);
    if (a != 0 && (a >= 1e6 || a < 1e-3)) std::snprintf(buf, sizeof buf, "%.3g", v);
    else std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// A tick label with enough digits to tell neighbouring ticks `step` apart (no "-0").
std::string tickLabel(double v, double step)
{
    if (std::fabs(v) < std::fabs(step) * 1e-9) v = 0;
    const double a = std::fabs(v);
    if (a == 0 || (a < 1e6 && a >= 1e-3)) return number(v);
    const int digits = std::clamp(static_cast<int>(std::ceil(std::log10(a / std::fabs(step)))) + 1, 3, 15);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

/// Rough advance of one character, in viewBox units, of the charts' sans-serif at `fontSize`
/// (bold digits and capitals are the widest; a little generous so estimates never overflow).
double charWidth(double fontSize)
{
    return fontSize * 0.62;
}

/// The chart's title in lines that fit `width`: wrapped at spaces into at most two lines, then shrunk
/// (down to 9 units) until the longest fits, a word longer than that cut with an ellipsis.
struct TitleLayout {
    std::vector<std::string> lines;
    double fontSize = 13;
    double height = 0; ///< from the top of the chart to below the last line
};

TitleLayout layoutTitle(const std::string& title, double width)
{
    TitleLayout t;
    if (title.empty()) return t;
    std::vector<std::string> words;
    std::istringstream in(title);
    for (std::string w; in >> w;) words.push_back(w);
    const auto wrap = [&](double fontSize) {
        const std::size_t perLine = static_cast<std::size_t>(std::max(1.0, width / charWidth(fontSize)));
        std::vector<std::string> lines;
        for (const std::string& w : words) {
            if (!lines.empty() && lines.back().size() + 1 + w.size() <= perLine) lines.back() += ' ' + w;
            else lines.push_back(w);
        }
        return std::pair{lines, perLine};
    };
    for (double size = 13; size >= 9; size -= 1) {
        auto [lines, perLine] = wrap(size);
        t.fontSize = size;
        t.lines = lines;
        const bool fits = lines.size() <= 2 && std::all_of(lines.begin(), lines.end(),
                                                           [&](const std::string& l) { return l.size() <= perLine; });
        if (fits) break;
        if (size == 9) {
            // Still too long at the smallest size: keep two lines, the second cut.
            t.lines.resize(std::min<std::size_t>(t.lines.size(), 2));
            for (std::size_t i = 0; i < t.lines.size(); ++i) {
                const bool cut = t.lines[i].size() > perLine || (i == 1 && lines.size() > 2);
                if (cut) t.lines[i] = t.lines[i].substr(0, perLine > 3 ? perLine - 3 : 0) + "...";
            }
        }
    }
    t.height = 8 + (t.fontSize + 4) * static_cast<double>(t.lines.size());
    return t;
}

/// The title's <text> lines, starting at x; class "title" marks them.
std::string titleSvg(const TitleLayout& t, double x)
{
    std::ostringstream svg;
    for (std::size_t i = 0; i < t.lines.size(); ++i)
        svg << "<text class=\"title\" x=\"" << x << "\" y=\"" << 4 + (t.fontSize + 4) * static_cast<double>(i + 1) - 2
            << "\" font-size=\"" << t.fontSize << "\" font-weight=\"bold\">" << escapeXml(t.lines[i]) << "</text>";
    return svg.str();
}

} // namespace

std::string escapeXml(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::vector<std::string> timeTickLabels(const std::vector<double>& seconds)
{
    // formatUtc gives "YYYY-MM-DD HH:MM:SS..."; keep the fewest characters that tell every tick
    // apart: the date, then hours and minutes, then seconds.
    std::vector<std::string> full;
    for (double s : seconds) {
        std::string t = formatUtc(static_cast<std::int64_t>(s) * 1'000'000'000);
        if (t.size() > 10 && t[10] == 'T') t[10] = ' ';
        full.push_back(std::move(t));
    }
    const auto distinct = [&](std::size_t length) {
        for (std::size_t i = 1; i < full.size(); ++i)
            if (full[i].substr(0, length) == full[i - 1].substr(0, length)) return false;
        return true;
    };
    std::size_t length = 10;
    for (std::size_t candidate : {std::size_t(10), std::size_t(16), std::size_t(19)}) {
        length = candidate;
        if (distinct(candidate)) break;
    }
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < full.size(); ++i) {
        std::string l = full[i].substr(0, length);
        // With times shown, a tick on the same day as the one before it needs no date.
        if (length > 10 && i > 0 && full[i].substr(0, 10) == full[i - 1].substr(0, 10)) l = l.substr(11);
        labels.push_back(std::move(l));
    }
    return labels;
}

std::string renderSvgLineChart(const std::vector<SvgSeries>& series, const SvgChartOptions& o)
{
    const double w = o.width, h = o.height;
    const double left = 64, right = 12;
    const TitleLayout title = layoutTitle(o.title, w - 16);
    const double top = o.title.empty() ? 12 : std::max(30.0, title.height + 4);

    std::vector<std::vector<double>> xs(series.size()), ys(series.size());
    double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
    std::size_t samples = 0; // finite points over all series
    for (std::size_t i = 0; i < series.size(); ++i) {
        decimate(series[i], o.maxPoints, xs[i], ys[i]);
        for (std::size_t k = 0; k < xs[i].size(); ++k) {
            if (!std::isfinite(xs[i][k]) || !std::isfinite(ys[i][k])) continue;
            ++samples;
            xmin = std::min(xmin, xs[i][k]);
            xmax = std::max(xmax, xs[i][k]);
            ymin = std::min(ymin, ys[i][k]);
            ymax = std::max(ymax, ys[i][k]);
        }
    }

    // The legend goes below the x tick labels, outside the plot, in as many rows as it needs.
    struct LegendItem {
        std::size_t series;
        double x;
        int row;
    };
    std::vector<LegendItem> legend;
    {
        const double fontSize = 11, swatch = 14, gap = 12;
        double x = left;
        int row = 0;
        for (std::size_t i = 0; i < series.size(); ++i) {
            if (series[i].name.empty()) continue;
            const double itemW = swatch + 4 + charWidth(fontSize) * static_cast<double>(series[i].name.size());
            if (x > left && x + itemW > w - right) {
                x = left;
                ++row;
            }
            legend.push_back({i, x, row});
            x += itemW + gap;
        }
    }
    const int legendRows = legend.empty() ? 0 : legend.back().row + 1;
    const double bottom = 40 + 14.0 * legendRows;
    const double plotW = w - left - right, plotH = std::max(20.0, h - top - bottom);

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h
        << "\" width=\"100%\" role=\"img\" class=\"chart\"><title>" << escapeXml(o.title) << "</title>";
    svg << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>";
    svg << titleSvg(title, 8);
    if (!std::isfinite(xmin)) {
        svg << "<text x=\"" << w / 2 << "\" y=\"" << h / 2
            << "\" text-anchor=\"middle\" fill=\"#888\">no data</text></svg>";
        return svg.str();
    }
    if (xmax == xmin) {
        // One sample (or all at one x): it sits in the middle.
        xmin -= 0.5;
        xmax += 0.5;
    }
    if (ymax == ymin) {
        // A constant (a fixed learning rate): centred on its value, a tenth of it either side.
        const double half = ymin != 0 ? std::fabs(ymin) * 0.1 : 1.0;
        ymin -= half;
        ymax += half;
    } else {
        const double pad = (ymax - ymin) * 0.05;
        ymin -= pad;
        ymax += pad;
    }
    auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * plotW; };
    auto py = [&](double y) { return top + (1.0 - (y - ymin) / (ymax - ymin)) * plotH; };

    svg << "<g font-size=\"10\" fill=\"#555\" stroke=\"none\">";
    const double ystep = niceStep(ymax - ymin, 5);
    for (double y = std::ceil(ymin / ystep) * ystep; y <= ymax; y += ystep) {
        svg << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << py(y) << "\" y2=\"" << py(y)
            << "\" stroke=\"#eee\"/>";
        svg << "<text class=\"ytick\" x=\"" << left - 4 << "\" y=\"" << py(y) + 3 << "\" text-anchor=\"end\">"
            << tickLabel(y, ystep) << "</text>";
    }
    std::vector<double> xticks;
    if (samples == 1) {
        xticks.push_back((xmin + xmax) / 2);
    } else if (o.timeAxis) {
        for (int k = 0; k <= 5; ++k) xticks.push_back(xmin + (xmax - xmin) * k / 5);
    } else {
        const double xstep = niceStep(xmax - xmin, 6);
        for (double x = std::ceil(xmin / xstep) * xstep; x <= xmax + xstep * 1e-9; x += xstep) xticks.push_back(x);
    }
    const std::vector<std::string> timeLabels = o.timeAxis ? timeTickLabels(xticks) : std::vector<std::string>{};
    for (std::size_t i = 0; i < xticks.size(); ++i) {
        const double x = xticks[i];
        const std::string label = o.timeAxis ? timeLabels[i] : number(x);
        svg << "<text x=\"" << px(x) << "\" y=\"" << top + plotH + 14 << "\" text-anchor=\"middle\">" << label
            << "</text>";
    }
    if (!o.yLabel.empty())
        svg << "<text x=\"12\" y=\"" << top + plotH / 2 << "\" transform=\"rotate(-90 12 " << top + plotH / 2
            << ")\" text-anchor=\"middle\">" << escapeXml(o.yLabel) << "</text>";
    svg << "</g>";
    svg << "<rect class=\"plot\" x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW << "\" height=\"" << plotH
        << "\" fill=\"none\" stroke=\"#999\"/>";

    char buf[64];
    for (std::size_t i = 0; i < series.size(); ++i) {
        const std::string colour = escapeXml(series[i].color);
        std::vector<std::pair<double, double>> points;
        for (std::size_t k = 0; k < xs[i].size(); ++k)
            if (std::isfinite(xs[i][k]) && std::isfinite(ys[i][k])) points.emplace_back(px(xs[i][k]), py(ys[i][k]));
        if (points.size() == 1) {
            // A line needs two points: a lone sample is a dot.
            std::snprintf(buf, sizeof buf, "cx=\"%.1f\" cy=\"%.1f\"", points[0].first, points[0].second);
            svg << "<circle " << buf << " r=\"3\" fill=\"" << colour << "\"/>";
            continue;
        }
        svg << "<polyline fill=\"none\" stroke=\"" << colour
            << "\" stroke-width=\"1.2\" vector-effect=\"non-scaling-stroke\" points=\"";
        for (const auto& [x, y] : points) {
            std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x, y);
            svg << buf;
        }
        svg << "\"/>";
    }
    if (samples == 1)
        svg << "<text x=\"" << left + plotW - 6 << "\" y=\"" << top + 14
            << "\" text-anchor=\"end\" font-size=\"10\" fill=\"#888\">1 sample</text>";
    for (const LegendItem& item : legend) {
        const double ly = top + plotH + 28 + 14.0 * item.row;
        const std::string colour = escapeXml(series[item.series].color);
        svg << "<line x1=\"" << item.x << "\" x2=\"" << item.x + 14 << "\" y1=\"" << ly - 4 << "\" y2=\"" << ly - 4
            << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>";
        svg << "<text class=\"legend\" x=\"" << item.x + 18 << "\" y=\"" << ly << "\" font-size=\"11\" fill=\""
            << colour << "\">" << escapeXml(series[item.series].name) << "</text>";
    }
    svg << "</svg>";
    return svg.str();
}

namespace {
double barChartTop(const SvgChartOptions& o)
{
    return o.title.empty() ? 8.0 : std::max(30.0, layoutTitle(o.title, o.width - 16).height + 4);
}
} // namespace

double svgBarChartHeight(std::size_t bars, const SvgChartOptions& o)
{
    return barChartTop(o) + 18.0 * static_cast<double>(bars) + 10.0;
}

std::string renderSvgBarChart(const std::vector<std::string>& labels, const std::vector<double>& values,
                              const SvgChartOptions& o)
{
    const std::size_t n = std::min(labels.size(), values.size());
    const double rowH = 18, top = barChartTop(o), left = 150, right = 60;
    const double w = o.width, h = svgBarChartHeight(n, o);
    double vmax = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(values[i])) vmax = std::max(vmax, std::fabs(values[i]));
    if (!(vmax > 0)) vmax = 1;
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h
        << "\" width=\"100%\" role=\"img\" class=\"chart\"><title>" << escapeXml(o.title) << "</title>";
    svg << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>";
    svg << titleSvg(layoutTitle(o.title, w - 16), 8);
    if (n == 0)
        svg << "<text x=\"" << w / 2 << "\" y=\"" << h / 2 << "\" text-anchor=\"middle\" fill=\"#888\">no data</text>";
    char buf[160];
    for (std::size_t i = 0; i < n; ++i) {
        const double y = top + rowH * static_cast<double>(i);
        const double v = std::isfinite(values[i]) ? values[i] : 0.0;
        const double len = std::fabs(v) / vmax * (w - left - right);
        std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#1f77b4\"/>",
                      left, y + 2, len, rowH - 4);
        svg << "<text x=\"" << left - 6 << "\" y=\"" << y + rowH - 5 << "\" font-size=\"11\" text-anchor=\"end\">"
            << escapeXml(labels[i]) << "</text>" << buf << "<text x=\"" << left + len + 4 << "\" y=\"" << y + rowH - 5
            << "\" font-size=\"10\" fill=\"#555\">" << number(values[i]) << "</text>";
    }
    svg << "</svg>";
    return svg.str();
}

double svgIntervalChartHeight(std::size_t rows, const SvgChartOptions& o)
{
    return barChartTop(o) + 22.0 * static_cast<double>(rows) + 34.0;
}

std::string renderSvgIntervalChart(const std::vector<SvgInterval>& rows, const SvgChartOptions& o)
{
    const double rowH = 22, top = barChartTop(o), left = 170, right = 150;
    const double w = o.width, h = svgIntervalChartHeight(rows.size(), o), axisY = h - 26;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const SvgInterval& r : rows)
        for (double v : {r.estimate, r.lower, r.upper})
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    const bool any = std::isfinite(lo);
    if (!any) lo = hi = 0;
    if (!(hi > lo)) {
        const double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    const double padding = (hi - lo) * 0.05;
    lo -= padding;
    hi += padding;
    const double plotW = w - left - right;
    const auto xOf = [&](double v) { return left + (v - lo) / (hi - lo) * plotW; };

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h
        << "\" width=\"100%\" role=\"img\" class=\"chart\"><title>" << escapeXml(o.title) << "</title>";
    svg << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>";
    svg << titleSvg(layoutTitle(o.title, w - 16), 8);
    char buf[256];
    // The x axis: ticks under the rows, and a dashed line at zero when zero is in range.
    const double step = niceStep(hi - lo, 5);
    std::snprintf(buf, sizeof buf, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>", left,
                  axisY, left + plotW, axisY);
    svg << buf;
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
        std::snprintf(buf, sizeof buf,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>",
                      xOf(t), top, xOf(t), axisY, xOf(t), axisY, xOf(t), axisY + 4);
        svg << buf << "<text x=\"" << xOf(t) << "\" y=\"" << axisY + 16
            << "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">" << tickLabel(t, step) << "</text>";
    }
    if (lo < 0 && hi > 0) {
        std::snprintf(buf, sizeof buf,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
                      "stroke-dasharray=\"4 3\" class=\"zero\"/>",
                      xOf(0), top, xOf(0), axisY);
        svg << buf;
    }
    if (!o.yLabel.empty())
        svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << h - 2
            << "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">" << escapeXml(o.yLabel) << "</text>";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const SvgInterval& r = rows[i];
        const double y = top + rowH * static_cast<double>(i) + rowH / 2;
        svg << "<text x=\"" << left - 8 << "\" y=\"" << y + 4 << "\" font-size=\"11\" text-anchor=\"end\">"
            << escapeXml(r.label) << "</text>";
        if (!std::isfinite(r.estimate)) {
            svg << "<text x=\"" << left + 4 << "\" y=\"" << y + 4 << "\" font-size=\"10\" fill=\"#888\">no data</text>";
            continue;
        }
        if (std::isfinite(r.lower) && std::isfinite(r.upper)) {
            std::snprintf(buf, sizeof buf,
                          "<rect class=\"interval\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"8\" "
                          "fill=\"%s\" fill-opacity=\"0.35\" stroke=\"%s\"/>",
                          xOf(r.lower), y - 4, std::max(1.0, xOf(r.upper) - xOf(r.lower)), r.color.c_str(),
                          r.color.c_str());
            svg << buf;
        }
        std::snprintf(buf, sizeof buf, "<circle class=\"estimate\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>",
                      xOf(r.estimate), y, r.color.c_str());
        svg << buf << "<text x=\"" << left + plotW + 8 << "\" y=\"" << y + 4 << "\" font-size=\"10\" fill=\"#555\">"
            << number(r.estimate);
        if (std::isfinite(r.lower) && std::isfinite(r.upper))
            svg << " [" << number(r.lower) << ", " << number(r.upper) << "]";
        svg << "</text>";
    }
    if (!any)
        svg << "<text x=\"" << w / 2 << "\" y=\"" << (top + axisY) / 2
            << "\" text-anchor=\"middle\" fill=\"#888\">no data</text>";
    svg << "</svg>";
    return svg.str();
}

std::string renderSvgHeatmap(const std::vector<std::vector<double>>& cells, const std::string& rowLabel,
                             const std::string& columnLabel, const SvgChartOptions& o)
{
    const std::size_t rows = cells.size();
    std::size_t cols = 0;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& r : cells) {
        cols = std::max(cols, r.size());
        for (double v : r)
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    }
    const TitleLayout title = layoutTitle(o.title, o.width - 16);
    const double left = 48, right = 70, top = o.title.empty() ? 10 : std::max(30.0, title.height + 4), bottom = 30;
    const double w = o.width, h = o.height;
    const double cw = cols ? (w - left - right) / static_cast<double>(cols) : 0;
    const double ch = rows ? (h - top - bottom) / static_cast<double>(rows) : 0;
    if (!std::isfinite(lo)) lo = hi = 0;
    const double span = hi > lo ? hi - lo : 1.0;
    // White to dark blue: readable on paper and in grey scale.
    auto colour = [&](double v) {
        const double t = std::isfinite(v) ? std::clamp((v - lo) / span, 0.0, 1.0) : 0.0;
        char buf[16];
        std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(255 - t * (255 - 8)),
                      static_cast<int>(255 - t * (255 - 48)), static_cast<int>(255 - t * (255 - 107)));
        return std::string(buf);
    };
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h
        << "\" width=\"100%\" role=\"img\" class=\"chart\"><title>" << escapeXml(o.title) << "</title>";
    svg << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>";
    svg << titleSvg(title, 8);
    char buf[160];
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cells[r].size(); ++c) {
            std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
                          left + cw * static_cast<double>(c), top + ch * static_cast<double>(r), cw + 0.05, ch + 0.05,
                          colour(cells[r][c]).c_str());
            svg << buf;
        }
    svg << "<g font-size=\"10\" fill=\"#555\">";
    const std::size_t rowEvery = std::max<std::size_t>(1, rows / 8), colEvery = std::max<std::size_t>(1, cols / 10);
    for (std::size_t r = 0; r < rows; r += rowEvery)
        svg << "<text x=\"" << left - 4 << "\" y=\"" << top + ch * (static_cast<double>(r) + 0.5) + 3
            << "\" text-anchor=\"end\">" << r + 1 << "</text>";
    for (std::size_t c = 0; c < cols; c += colEvery)
        svg << "<text x=\"" << left + cw * (static_cast<double>(c) + 0.5) << "\" y=\"" << h - bottom + 12
            << "\" text-anchor=\"middle\">" << c + 1 << "</text>";
    svg << "<text x=\"" << left + (w - left - right) / 2 << "\" y=\"" << h - 4 << "\" text-anchor=\"middle\">"
        << escapeXml(columnLabel) << "</text>";
    svg << "<text x=\"12\" y=\"" << top + (h - top - bottom) / 2 << "\" transform=\"rotate(-90 12 "
        << top + (h - top - bottom) / 2 << ")\" text-anchor=\"middle\">" << escapeXml(rowLabel) << "</text>";
    // Colour scale: low at the bottom, high at the top.
    const double sx = w - right + 14, sh = h - top - bottom;
    for (int k = 0; k < 20; ++k) {
        std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.2f\" width=\"12\" height=\"%.2f\" fill=\"%s\"/>", sx,
                      top + sh * (19 - k) / 20.0, sh / 20.0 + 0.05, colour(lo + span * (k + 0.5) / 20.0).c_str());
        svg << buf;
    }
    svg << "<text x=\"" << sx + 16 << "\" y=\"" << top + 8 << "\">" << number(hi) << "</text><text x=\"" << sx + 16
        << "\" y=\"" << top + sh << "\">" << number(lo) << "</text></g></svg>";
    return svg.str();
}

} // namespace foxhunt
