// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt-ui-bench: the dashboard's refresh cost per tick under the offscreen
// platform. 4 models x 5 charts already hold --points points each; every tick
// adds --batch new samples per series (one drained batch) and, in the second
// figure, repaints the whole dashboard. Each model also logs --held scalars no
// chart draws (epsilon, td_error, q_mean, learning_rate: held for the Metrics
// picker; default 4), the first of them picked onto the dashboard. Prints one
// JSON object.

#include "ui/dashboard.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Stats {
    double median = 0;
    double p95 = 0;
    double max = 0;
};

Stats stats(std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5)]; };
    return {at(0.5), at(0.95), ms.back()};
}

long long argOr(int argc, char** argv, const char* name, long long fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
    return fallback;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const long long points = argOr(argc, argv, "--points", 200'000);
    const long long batchPerSeries = argOr(argc, argv, "--batch", 100);
    const int ticks = static_cast<int>(argOr(argc, argv, "--ticks", 100));
    const double smoothing = static_cast<double>(argOr(argc, argv, "--smoothing-percent", 0)) / 100.0;
    const auto held = static_cast<std::size_t>(std::clamp<long long>(argOr(argc, argv, "--held", 4), 0, 4));

    const std::vector<std::string> models = {"dqn", "ppo", "mamba2", "tft"};
    // One series in each of five charts: loss, loss scale, gradient norm, latency, memory.
    std::vector<std::string> metrics = {"loss", "loss_scale", "grad_norm", "latency_ms", "activation_bytes"};
    const std::size_t charted = metrics.size();
    const std::vector<std::string> heldNames = {"epsilon", "td_error", "q_mean", "learning_rate"};
    metrics.insert(metrics.end(), heldNames.begin(), heldNames.begin() + static_cast<std::ptrdiff_t>(held));

    foxhunt::Dashboard dashboard;
    // The window is full: new points thin the older half as they would after a long run.
    dashboard.setSeriesCapacity(static_cast<std::size_t>(points));
    dashboard.resize(1800, 1000);
    dashboard.setModels(
        {QStringLiteral("dqn"), QStringLiteral("ppo"), QStringLiteral("mamba2"), QStringLiteral("tft")});
    dashboard.setSmoothing(smoothing);
    if (held > 0)
        for (const std::string& m : models)
            dashboard.setMetricShown(QString::fromStdString(m), QString::fromStdString(heldNames.front()), true);
    dashboard.show();
    QApplication::processEvents();

    auto value = [](std::size_t series, long long step) {
        return 1.0 + 0.5 * std::sin(static_cast<double>(step) * 0.001 + static_cast<double>(series)) +
               0.1 * std::sin(static_cast<double>(step) * 0.37);
    };
    long long step = 0;
    const long long fillChunk = 20'000;
    QElapsedTimer fillTimer;
    fillTimer.start();
    foxhunt::MetricBatch batch;
    while (step < points) {
        const long long n = std::min(fillChunk, points - step);
        batch.clear();
        for (std::size_t m = 0; m < models.size(); ++m)
            for (std::size_t k = 0; k < metrics.size(); ++k)
                for (long long i = 0; i < n; ++i)
                    batch.push_back({models[m], metrics[k], step + i, 0, value(m * metrics.size() + k, step + i)});
        dashboard.addSamples(batch);
        step += n;
    }
    QApplication::processEvents();
    const double fillMs = static_cast<double>(fillTimer.nsecsElapsed()) / 1e6;

    std::vector<double> updateMs, repaintMs;
    QElapsedTimer t;
    for (int tick = 0; tick < ticks; ++tick) {
        batch.clear();
        // A drained batch is in production order: steps interleave across models and metrics.
        for (long long i = 0; i < batchPerSeries; ++i)
            for (std::size_t m = 0; m < models.size(); ++m)
                for (std::size_t k = 0; k < metrics.size(); ++k)
                    batch.push_back({models[m], metrics[k], step + i, 0, value(m * metrics.size() + k, step + i)});
        step += batchPerSeries;
        t.start();
        dashboard.addSamples(batch);
        const qint64 updated = t.nsecsElapsed();
        dashboard.repaint();
        const qint64 painted = t.nsecsElapsed();
        updateMs.push_back(static_cast<double>(updated) / 1e6);
        repaintMs.push_back(static_cast<double>(painted) / 1e6);
    }
    const Stats u = stats(updateMs), r = stats(repaintMs);
    std::printf("{\"benchmark\":\"dashboard_tick\",\"platform\":\"%s\",\"models\":%zu,\"charts_per_model\":%zu,"
                "\"held_metrics_per_model\":%zu,\"picked_charts_per_model\":%d,"
                "\"points_per_series\":%lld,\"points_held\":%d,\"new_samples_per_tick\":%zu,\"ticks\":%d,"
                "\"smoothing\":%.2f,\"fill_ms\":%.1f,"
                "\"update_ms\":{\"median\":%.3f,\"p95\":%.3f,\"max\":%.3f},"
                "\"update_and_repaint_ms\":{\"median\":%.3f,\"p95\":%.3f,\"max\":%.3f},\"goal_ms\":8}\n",
                qPrintable(QGuiApplication::platformName()), models.size(), charted, held, held > 0 ? 1 : 0, points,
                dashboard.pointCount(QStringLiteral("tft"), QStringLiteral("loss")), batch.size(), ticks, smoothing,
                fillMs, u.median, u.p95, u.max, r.median, r.p95, r.max);
    return 0;
}
