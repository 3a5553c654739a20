// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The user's settings for the next run and for the app, as plain data, with
// load/save over QSettings. A running run keeps the config it started with.

#include "engine/session/training_session.h"

#include <QString>

QT_BEGIN_NAMESPACE
class QSettings;
QT_END_NAMESPACE

namespace foxhunt {

/// The colour scheme of the window and its charts.
enum class PaletteChoice { System, Light, Dark };
/// "system", "light", "dark".
QString toString(PaletteChoice choice);
/// Parses the names above; System for anything else.
PaletteChoice paletteChoiceFromString(const QString& text);

/// Settings that apply to the next run (device, threads, worker processes, precision,
/// ensemble) and to the app (chart refresh rate, data folder, palette).
struct AppSettings {
    std::string device = "cpu";         ///< "cpu" or "cuda:N"
    int threads = 1;                    ///< LibTorch intra-op threads
    int workers = 1;                    ///< processes training one run together (data parallel), each with `threads`
    double workerTimeoutSeconds = 60.0; ///< a rank silent this long fails the run
    PrecisionSettings precision;        ///< AMP and INT8 of the next run
    bool ensemble = false;              ///< forecasts feed the agents' observations
    int refreshHz = 10;                 ///< chart drains per second, 1..10
    QString dataDir;                    ///< "" = the default data folder ($XDG_DATA_HOME/foxhunt)
    PaletteChoice palette = PaletteChoice::System;

    /// Highest chart refresh rate (DESIGN.md: metrics reach the UI at <= 10 Hz).
    static constexpr int kMaxRefreshHz = 10;
    /// Most worker processes offered (the engine accepts up to 256; beyond the cores they only compete).
    static constexpr int kMaxWorkers = 64;
    /// Longest worker timeout offered, in seconds.
    static constexpr double kMaxWorkerTimeoutSeconds = 3600.0;

    /// Milliseconds between drains for refreshHz (clamped to 1..10 Hz).
    int refreshIntervalMs() const;
    /// Writes these settings into a run config (device, threads, workers and their timeout, precision,
    /// ensemble). Checkpoints go beside the database, wherever the data folder puts it.
    void applyTo(SessionConfig& config) const;

    /// Reads the "settings/" group; missing or bad keys keep their defaults.
    static AppSettings load(const QSettings& settings);
    /// Reads the application's QSettings.
    static AppSettings load();
    /// Writes the "settings/" group.
    void save(QSettings& settings) const;
    /// Writes to the application's QSettings.
    void save() const;

    /// Field-wise equality (PrecisionSettings compared field by field).
    bool operator==(const AppSettings& other) const;
};

} // namespace foxhunt
