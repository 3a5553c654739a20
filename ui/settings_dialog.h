// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Settings... : device, threads, worker processes, mixed precision (AMP), INT8, ensemble, chart
// refresh rate, data folder and palette. Changes apply to the next run; the
// dialog shows the engine's own verdict on a precision choice for the device.

#include "ui/app_settings.h"

#include <QDialog>

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
QT_END_NAMESPACE

namespace foxhunt {

/// Edits an AppSettings. Widgets carry object names (machineSummary, device, threads, workers, workerTimeout,
/// ampAuto, ampEnabled, ampDtype, ampPreset, lossScale, dynamicScale, growthFactor, backoffFactor, growthInterval,
/// int8Enabled, int8Backend, int8MaxDegradation, int8Static, calibrationBars, int8Refresh, memoryBudget, memoryBudgetWarn, ensemble, refreshHz,
/// dataDir, palette) so tests can drive them.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    /// Shows `current`; the device list is the engine's (cpu, then each CUDA device of this build).
    explicit SettingsDialog(const AppSettings& current, QWidget* parent = nullptr);

    /// The settings as edited.
    AppSettings settings() const;
    /// The engine's objection to the precision choice on the chosen device ("" when it can run).
    QString precisionProblem() const { return m_problemText; }

private:
    void load(const AppSettings& s);
    void applyPreset(int index);
    void onPrecisionEdited();
    void updatePrecisionState();
    void browseDataDir();

    AppSettings m_base;
    QComboBox* m_device = nullptr;
    QSpinBox* m_threads = nullptr;
    QSpinBox* m_workers = nullptr;
    QDoubleSpinBox* m_workerTimeout = nullptr;
    QComboBox* m_preset = nullptr;
    QCheckBox* m_ampAuto = nullptr;
    QCheckBox* m_ampEnabled = nullptr;
    QComboBox* m_dtype = nullptr;
    QDoubleSpinBox* m_lossScale = nullptr;
    QCheckBox* m_dynamic = nullptr;
    QDoubleSpinBox* m_growth = nullptr;
    QDoubleSpinBox* m_backoff = nullptr;
    QSpinBox* m_interval = nullptr;
    QLabel* m_precisionNote = nullptr;
    QCheckBox* m_int8 = nullptr;
    QComboBox* m_int8Backend = nullptr;
    QDoubleSpinBox* m_int8Gate = nullptr;
    QDoubleSpinBox* m_memoryBudget = nullptr;
    QCheckBox* m_memoryBudgetWarn = nullptr;
    QCheckBox* m_int8Static = nullptr;
    QSpinBox* m_calibration = nullptr;
    QSpinBox* m_int8Refresh = nullptr;
    QCheckBox* m_ensemble = nullptr;
    QSpinBox* m_refreshHz = nullptr;
    QLineEdit* m_dataDir = nullptr;
    QComboBox* m_palette = nullptr;
    QString m_problemText;
    bool m_loading = false;
};

} // namespace foxhunt
