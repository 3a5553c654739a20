// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/app_settings.h"

#include "models/precision/int8_backend.h"

#include <QSettings>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace foxhunt {

namespace mp = models::precision;

QString toString(PaletteChoice choice)
{
    switch (choice) {
    case PaletteChoice::Light: return QStringLiteral("light");
    case PaletteChoice::Dark: return QStringLiteral("dark");
    case PaletteChoice::System: break;
    }
    return QStringLiteral("system");
}

PaletteChoice paletteChoiceFromString(const QString& text)
{
    if (text.compare(QLatin1String("light"), Qt::CaseInsensitive) == 0) return PaletteChoice::Light;
    if (text.compare(QLatin1String("dark"), Qt::CaseInsensitive) == 0) return PaletteChoice::Dark;
    return PaletteChoice::System;
}

int AppSettings::refreshIntervalMs() const
{
    return 1000 / std::clamp(refreshHz, 1, kMaxRefreshHz);
}

void AppSettings::applyTo(SessionConfig& config) const
{
    config.device = device;
    config.threads = threads;
    config.workers = workers;
    config.distributedTimeoutSeconds = workerTimeoutSeconds;
    config.precision = precision;
    config.ensemble = ensemble;
    // Checkpoints stay beside the run's database (SessionConfig::checkpointDir ""), so they move and
    // copy with it; the data folder holds that database from the next launch on.
}

bool AppSettings::operator==(const AppSettings& o) const
{
    const PrecisionSettings& p = precision;
    const PrecisionSettings& q = o.precision;
    return device == o.device && threads == o.threads && workers == o.workers &&
           workerTimeoutSeconds == o.workerTimeoutSeconds && p.amp == q.amp && p.ampAuto == q.ampAuto &&
           p.int8 == q.int8 && p.int8Backend == q.int8Backend && p.int8MaxDegradation == q.int8MaxDegradation &&
           p.int8StaticActivations == q.int8StaticActivations && p.calibrationBars == q.calibrationBars &&
           p.int8RefreshEvery == q.int8RefreshEvery && p.memoryBudgetMb == q.memoryBudgetMb &&
           p.memoryBudgetAction == q.memoryBudgetAction && ensemble == o.ensemble && refreshHz == o.refreshHz &&
           dataDir == o.dataDir && palette == o.palette;
}

AppSettings AppSettings::load(const QSettings& s)
{
    AppSettings a;
    const auto get = [&s](const char* key) { return s.value(QStringLiteral("settings/") + QLatin1String(key)); };
    const auto readInt = [&](const char* key, auto& field, long long lo, long long hi) {
        bool ok = false;
        const long long v = get(key).toLongLong(&ok);
        if (ok && v >= lo && v <= hi) field = static_cast<std::decay_t<decltype(field)>>(v);
    };
    const auto readDouble = [&](const char* key, double& field) {
        bool ok = false;
        const double v = get(key).toDouble(&ok);
        if (ok) field = v;
    };
    const auto readBool = [&](const char* key, bool& field) {
        if (const QVariant v = get(key); v.isValid()) field = v.toBool();
    };
    if (const QString d = get("device").toString(); !d.isEmpty()) a.device = d.toStdString();
    readInt("threads", a.threads, 1, 1024);
    readInt("workers", a.workers, 1, kMaxWorkers);
    {
        bool ok = false;
        const double v = get("worker_timeout_s").toDouble(&ok);
        if (ok && v >= 1.0 && v <= kMaxWorkerTimeoutSeconds) a.workerTimeoutSeconds = v;
    }
    mp::MixedPrecisionConfig& amp = a.precision.amp;
    readBool("amp/enabled", amp.enabled);
    if (const QString t = get("amp/dtype").toString(); !t.isEmpty()) {
        try {
            amp.dtype = mp::half_type_from_string(t.toStdString());
        } catch (const std::invalid_argument&) {
            // A hand-edited or future value: keep the default type.
        }
    }
    readDouble("amp/loss_scale", amp.loss_scale);
    readBool("amp/dynamic_loss_scale", amp.dynamic_loss_scale);
    readDouble("amp/growth_factor", amp.growth_factor);
    readDouble("amp/backoff_factor", amp.backoff_factor);
    readInt("amp/growth_interval", amp.growth_interval, 1, std::numeric_limits<int>::max());
    readBool("amp/auto", a.precision.ampAuto);
    readBool("int8/enabled", a.precision.int8);
    if (const QString b = get("int8/backend").toString(); mp::int8_backend_from_string(b.toStdString()))
        a.precision.int8Backend = b.toStdString();
    {
        bool ok = false;
        const double v = get("int8/max_degradation").toDouble(&ok);
        if (ok && v >= 0.0 && v <= 1.0) a.precision.int8MaxDegradation = v;
    }
    readBool("int8/static_activations", a.precision.int8StaticActivations);
    readInt("int8/calibration_bars", a.precision.calibrationBars, 0, std::numeric_limits<int>::max());
    readInt("int8/refresh_every", a.precision.int8RefreshEvery, 0, std::numeric_limits<int>::max());
    {
        bool ok = false;
        const double v = get("memory_budget_mb").toDouble(&ok);
        if (ok && v >= 0.0 && std::isfinite(v)) a.precision.memoryBudgetMb = v;
    }
    if (get("memory_budget_action").toString() == QLatin1String("warn"))
        a.precision.memoryBudgetAction = MemoryBudgetAction::Warn;
    readBool("ensemble", a.ensemble);
    readInt("refresh_hz", a.refreshHz, 1, kMaxRefreshHz);
    a.dataDir = get("data_dir").toString();
    a.palette = paletteChoiceFromString(get("palette").toString());
    return a;
}

AppSettings AppSettings::load()
{
    return load(QSettings());
}

void AppSettings::save(QSettings& s) const
{
    s.beginGroup(QStringLiteral("settings"));
    s.setValue(QStringLiteral("device"), QString::fromStdString(device));
    s.setValue(QStringLiteral("threads"), threads);
    s.setValue(QStringLiteral("workers"), workers);
    s.setValue(QStringLiteral("worker_timeout_s"), workerTimeoutSeconds);
    const mp::MixedPrecisionConfig& amp = precision.amp;
    s.setValue(QStringLiteral("amp/enabled"), amp.enabled);
    s.setValue(QStringLiteral("amp/dtype"), QString::fromStdString(mp::to_string(amp.dtype)));
    s.setValue(QStringLiteral("amp/loss_scale"), amp.loss_scale);
    s.setValue(QStringLiteral("amp/dynamic_loss_scale"), amp.dynamic_loss_scale);
    s.setValue(QStringLiteral("amp/growth_factor"), amp.growth_factor);
    s.setValue(QStringLiteral("amp/backoff_factor"), amp.backoff_factor);
    s.setValue(QStringLiteral("amp/growth_interval"), static_cast<qlonglong>(amp.growth_interval));
    s.setValue(QStringLiteral("amp/auto"), precision.ampAuto);
    s.setValue(QStringLiteral("int8/enabled"), precision.int8);
    s.setValue(QStringLiteral("int8/backend"), QString::fromStdString(precision.int8Backend));
    s.setValue(QStringLiteral("int8/max_degradation"), precision.int8MaxDegradation);
    s.setValue(QStringLiteral("int8/static_activations"), precision.int8StaticActivations);
    s.setValue(QStringLiteral("int8/calibration_bars"), precision.calibrationBars);
    s.setValue(QStringLiteral("int8/refresh_every"), precision.int8RefreshEvery);
    s.setValue(QStringLiteral("memory_budget_mb"), precision.memoryBudgetMb);
    s.setValue(QStringLiteral("memory_budget_action"), precision.memoryBudgetAction == MemoryBudgetAction::Warn
                                                           ? QStringLiteral("warn")
                                                           : QStringLiteral("refuse"));
    s.setValue(QStringLiteral("ensemble"), ensemble);
    s.setValue(QStringLiteral("refresh_hz"), refreshHz);
    s.setValue(QStringLiteral("data_dir"), dataDir);
    s.setValue(QStringLiteral("palette"), toString(palette));
    s.endGroup();
}

void AppSettings::save() const
{
    QSettings s;
    save(s);
}

} // namespace foxhunt
