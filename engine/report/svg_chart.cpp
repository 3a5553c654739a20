#include "engine/report/svg_chart.h"

#include "engine/data/market_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace foxhunt {

namespace {

/// Keeps first/last and the min and max of each bucket, in x order.
void decimate(const SvgSeries& s, int maxPoints, std::vector<double>& xs, std::vector<double>& ys)
{
    const std::size_t n = std::min(s.x.size(), s.y.size());
    if (n <= static_cast<std::size_t>(maxPoints) || maxPoints < 4) {
        xs.assign(s.x.begin(), s.x.begin() + static_cast<std::ptrdiff_t>(n));
        ys.assign(s.y.begin(), s.y.begin() + static_cast<std::ptrdiff_t>(n));
        return;
    }
    const std::size_t buckets = static_cast<std::size_t>(maxPoints) / 2;
    for (std::size_t k = 0; k < buckets; ++k) {
        const std::size_t b = n * k / buckets, e = n * (k + 1) / buckets;
        if (b >= e) continue;
        std::size_t lo = b, hi = b;
        for (std::size_t i = b; i < e; ++i) {
            if (s.y[i] < s.y[lo]) lo = i;
            if (s.y[i] > s.y[hi]) hi = i;
        }
        const std::size_t first = std::min(lo, hi), second = std::max(lo, hi);
        xs.push_back(s.x[first]);
        ys.push_back(s.y[first]);
        if (second != first) {
            xs.push_back(s.x[second]);
            ys.push_back(s.y[second]);
        }
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
    if (a != 0 && (a >= 1e6 || a < 1e-3))
        std::snprintf(buf, sizeof buf, "%.3g", v);
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
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

std::string renderSvgLineChart(const std::vector<SvgSeries>& series, const SvgChartOptions& o)
{
    const double left = 64, right = 12, top = o.title.empty() ? 12 : 30, bottom = 40;
    const double w = o.width, h = o.height;
    const double plotW = w - left - right, plotH = h - top - bottom;

    std::vector<std::vector<double>> xs(series.size()), ys(series.size());
    double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
    for (std::size_t i = 0; i < series.size(); ++i) {
        decimate(series[i], o.maxPoints, xs[i], ys[i]);
        for (std::size_t k = 0; k < xs[i].size(); ++k) {
            if (!std::isfinite(xs[i][k]) || !std::isfinite(ys[i][k])) continue;
            xmin = std::min(xmin, xs[i][k]);
            xmax = std::max(xmax, xs[i][k]);
            ymin = std::min(ymin, ys[i][k]);
            ymax = std::max(ymax, ys[i][k]);
        }
    }
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h
        << "\" width=\"100%\" role=\"img\" class=\"chart\"><title>" << escapeXml(o.title) << "</title>";
    svg << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>";
    if (!o.title.empty())
        svg << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" << escapeXml(o.title)
            << "</text>";
    if (!std::isfinite(xmin)) {
        svg << "<text x=\"" << w / 2 << "\" y=\"" << h / 2 << "\" text-anchor=\"middle\" fill=\"#888\">no data</text></svg>";
        return svg.str();
    }
    if (xmax == xmin) xmax = xmin + 1;
    if (ymax == ymin) {
        ymax += 0.5;
        ymin -= 0.5;
    }
    const double pad = (ymax - ymin) * 0.05;
    ymin -= pad;
    ymax += pad;
    auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * plotW; };
    auto py = [&](double y) { return top + (1.0 - (y - ymin) / (ymax - ymin)) * plotH; };

    svg << "<g font-size=\"10\" fill=\"#555\" stroke=\"none\">";
    const double ystep = niceStep(ymax - ymin, 5);
    for (double y = std::ceil(ymin / ystep) * ystep; y <= ymax; y += ystep) {
        svg << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << py(y) << "\" y2=\"" << py(y)
            << "\" stroke=\"#eee\"/>";
        svg << "<text x=\"" << left - 4 << "\" y=\"" << py(y) + 3 << "\" text-anchor=\"end\">" << number(y) << "</text>";
    }
    std::vector<double> xticks;
    if (o.timeAxis) {
        for (int k = 0; k <= 5; ++k) xticks.push_back(xmin + (xmax - xmin) * k / 5);
    } else {
        const double xstep = niceStep(xmax - xmin, 6);
        for (double x = std::ceil(xmin / xstep) * xstep; x <= xmax + xstep * 1e-9; x += xstep) xticks.push_back(x);
    }
    for (double x : xticks) {
        std::string label = o.timeAxis ? formatUtc(static_cast<std::int64_t>(x) * 1'000'000'000).substr(0, 10) : number(x);
        svg << "<text x=\"" << px(x) << "\" y=\"" << top + plotH + 14 << "\" text-anchor=\"middle\">" << label
            << "</text>";
    }
    if (!o.yLabel.empty())
        svg << "<text x=\"12\" y=\"" << top + plotH / 2 << "\" transform=\"rotate(-90 12 " << top + plotH / 2
            << ")\" text-anchor=\"middle\">" << escapeXml(o.yLabel) << "</text>";
    svg << "</g>";
    svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW << "\" height=\"" << plotH
        << "\" fill=\"none\" stroke=\"#999\"/>";

    for (std::size_t i = 0; i < series.size(); ++i) {
        svg << "<polyline fill=\"none\" stroke=\"" << escapeXml(series[i].color)
            << "\" stroke-width=\"1.2\" vector-effect=\"non-scaling-stroke\" points=\"";
        char buf[48];
        for (std::size_t k = 0; k < xs[i].size(); ++k) {
            if (!std::isfinite(ys[i][k])) continue;
            std::snprintf(buf, sizeof buf, "%.1f,%.1f ", px(xs[i][k]), py(ys[i][k]));
            svg << buf;
        }
        svg << "\"/>";
        const double ly = top + 12 + 14 * static_cast<double>(i);
        svg << "<text x=\"" << left + plotW - 6 << "\" y=\"" << ly << "\" text-anchor=\"end\" font-size=\"11\" fill=\""
            << escapeXml(series[i].color) << "\">" << escapeXml(series[i].name) << "</text>";
    }
    svg << "</svg>";
    return svg.str();
}

} // namespace foxhunt
