// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Training tab: the next run's configuration (models, series, steps, seed,
// date range, preset, key hyperparameters) beside the live dashboard.
// MainWindow composes it and adds what Settings give (AppSettings::applyTo()).

#include "engine/session/training_session.h"
#include "engine/store/bar_store.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

QT_BEGIN_NAMESPACE
class QSettings;
class QCheckBox;
class QComboBox;
class QDateEdit;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
QT_END_NAMESPACE

namespace foxhunt {

class Dashboard;

class TrainingTab : public QWidget {
    Q_OBJECT
public:
    explicit TrainingTab(QWidget* parent = nullptr);

    /// Which models the next run trains ("dqn", "ppo", "mamba2", "tft").
    void setModels(const QStringList& models);
    /// Steps per model of the next run.
    void setSteps(int steps);
    /// Lists the stored series to train on after "Default" (which names the series `defaultId`, the one a
    /// run takes when none is chosen); the chosen one stays chosen while listed. Each is shown by
    /// seriesLabel() (symbol, interval, trading days).
    void setSeries(const std::vector<SeriesInfo>& all, std::int64_t defaultId = 0);
    /// Chooses stored series `id` in the Series box; false when it is not listed.
    bool selectSeries(std::int64_t id);
    /// The Series box.
    QComboBox* seriesBox() const { return m_trainSeries; }
    /// Writes the form (models, series, steps, seed, date range, preset, learning rates, window) to the
    /// "training/" group.
    void saveState(QSettings& settings) const;
    /// Restores what saveState() wrote; keys that are missing or no longer fit keep the form's values.
    void restoreState(const QSettings& settings);
    /// What the controls give the next run, before Settings are applied.
    SessionConfig config() const;
    /// The model preset chosen (Default, Small and fast, Seed scale).
    ModelPreset selectedPreset() const;
    /// SessionConfig::defaults() with the chosen preset's sizes.
    SessionConfig presetConfig() const;
    /// How many seeds the next start trains (the Seeds box): 1 is one run; N > 1 is a run group of
    /// seeds Seed .. Seed + N - 1, one run after another.
    int seedCount() const;
    QSpinBox* seedsBox() const { return m_seeds; }
    /// The "Next run on" line (what Settings give the next run).
    void setNextRunSummary(const QString& text);

    QCheckBox* wholeSeriesBox() const { return m_wholeSeries; }
    QDateEdit* fromDateEdit() const { return m_fromDate; }
    QDateEdit* toDateEdit() const { return m_toDate; }
    QComboBox* presetBox() const { return m_preset; }
    QDoubleSpinBox* agentLearningRateBox() const { return m_agentLearningRate; }
    QDoubleSpinBox* forecasterLearningRateBox() const { return m_forecasterLearningRate; }
    QSpinBox* pastLengthBox() const { return m_pastLength; }
    Dashboard* dashboard() const { return m_dashboard; }

private:
    /// Bounds From/To by the chosen series' first and last trading days (clamping them into it).
    void applySeriesRange();

    Dashboard* m_dashboard = nullptr;
    QList<QCheckBox*> m_modelBoxes;
    QSpinBox* m_steps = nullptr;
    QSpinBox* m_seed = nullptr;
    QSpinBox* m_seeds = nullptr;
    QCheckBox* m_wholeSeries = nullptr;
    QDateEdit* m_fromDate = nullptr;
    QDateEdit* m_toDate = nullptr;
    QComboBox* m_preset = nullptr;
    QDoubleSpinBox* m_agentLearningRate = nullptr;
    QDoubleSpinBox* m_forecasterLearningRate = nullptr;
    QSpinBox* m_pastLength = nullptr;
    QComboBox* m_trainSeries = nullptr;
    QLabel* m_nextRunSummary = nullptr;
};

} // namespace foxhunt
