// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/training_tab.h"

#include "ui/dashboard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDate>
#include <QDateEdit>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPair>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace foxhunt {

TrainingTab::TrainingTab(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QHBoxLayout(this);
    auto* config = new QGroupBox(tr("Run configuration"));
    auto* form = new QFormLayout(config);
    auto* models = new QWidget;
    auto* modelsLayout = new QVBoxLayout(models);
    modelsLayout->setContentsMargins(0, 0, 0, 0);
    const QList<QPair<QString, QString>> kinds = {{QStringLiteral("dqn"), tr("DQN (agent)")},
                                                  {QStringLiteral("ppo"), tr("PPO (agent)")},
                                                  {QStringLiteral("mamba2"), tr("Mamba-2 (forecaster)")},
                                                  {QStringLiteral("tft"), tr("TFT (forecaster)")}};
    for (const auto& [key, label] : kinds) {
        auto* box = new QCheckBox(label);
        box->setProperty("model", key);
        box->setChecked(key == QLatin1String("dqn"));
        modelsLayout->addWidget(box);
        m_modelBoxes << box;
    }
    form->addRow(tr("Models"), models);
    m_trainSeries = new QComboBox;
    form->addRow(tr("Series"), m_trainSeries);
    m_steps = new QSpinBox;
    m_steps->setRange(1, 100'000'000);
    m_steps->setValue(20'000);
    m_steps->setToolTip(tr("Environment steps for agents, optimizer steps for forecasters"));
    form->addRow(tr("Steps per model"), m_steps);
    m_seed = new QSpinBox;
    m_seed->setRange(0, 1'000'000);
    m_seed->setValue(1);
    form->addRow(tr("Seed"), m_seed);

    // Date range: whole series by default; otherwise ES trading days, inclusive.
    m_wholeSeries = new QCheckBox(tr("Whole series"));
    m_wholeSeries->setChecked(true);
    form->addRow(tr("Date range"), m_wholeSeries);
    m_fromDate = new QDateEdit(QDate(2024, 1, 2));
    m_toDate = new QDateEdit(QDate(2024, 12, 31));
    for (QDateEdit* edit : {m_fromDate, m_toDate}) {
        edit->setCalendarPopup(true);
        edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
        edit->setEnabled(false);
        connect(m_wholeSeries, &QCheckBox::toggled, edit, &QWidget::setDisabled);
    }
    form->addRow(tr("From"), m_fromDate);
    form->addRow(tr("To"), m_toDate);

    // Presets set the network sizes; the key hyperparameters below can be edited on top.
    const SessionConfig defaults = SessionConfig::defaults();
    m_preset = new QComboBox;
    m_preset->addItem(tr("Default"), QStringLiteral("default"));
    m_preset->addItem(tr("Small and fast"), QStringLiteral("small"));
    m_preset->addItem(tr("Seed scale"), QStringLiteral("seed"));
    m_preset->setToolTip(tr("Default: the sizes the planted-edge tests learn with. Small and fast: half-width "
                            "networks, shorter forecaster windows and a DQN that starts learning after 200 "
                            "steps (PPO updates every 256), for a quick look. Seed scale: the seeds' layer "
                            "sizes (Mamba-2 d_model 512 on 60 bars, TFT hidden 32 on 100 bars, agents "
                            "256x256), big enough for BF16 and INT8 to pay where the CPU has avx512_bf16 "
                            "and avx512_vnni; slower per step."));
    form->addRow(tr("Preset"), m_preset);
    auto learningRateBox = [](double value) {
        auto* box = new QDoubleSpinBox;
        box->setDecimals(6);
        box->setRange(1e-6, 1.0);
        box->setSingleStep(1e-4);
        box->setValue(value);
        return box;
    };
    m_agentLearningRate = learningRateBox(defaults.dqn.learningRate);
    m_agentLearningRate->setToolTip(tr("Adam learning rate of DQN and PPO"));
    form->addRow(tr("Agent learning rate"), m_agentLearningRate);
    m_forecasterLearningRate = learningRateBox(defaults.mamba2.learningRate);
    m_forecasterLearningRate->setToolTip(tr("Peak AdamW learning rate of Mamba-2 and the TFT (warmup, then cosine)"));
    form->addRow(tr("Forecaster learning rate"), m_forecasterLearningRate);
    m_pastLength = new QSpinBox;
    m_pastLength->setRange(8, 1024);
    m_pastLength->setValue(static_cast<int>(defaults.mamba2.windowing.pastLength));
    m_pastLength->setToolTip(tr("Past bars the forecasters see per window"));
    form->addRow(tr("Forecaster window"), m_pastLength);
    // The window box shows the preset's (Mamba-2's) window; changed by hand it sets both forecasters'.
    connect(m_preset, &QComboBox::currentIndexChanged, this,
            [this] { m_pastLength->setValue(static_cast<int>(presetConfig().mamba2.windowing.pastLength)); });
    m_nextRunSummary = new QLabel;
    m_nextRunSummary->setObjectName(QStringLiteral("nextRunSummary"));
    m_nextRunSummary->setWordWrap(true);
    m_nextRunSummary->setToolTip(tr("From Settings (Ctrl+,); applies to the next run"));
    form->addRow(tr("Next run on"), m_nextRunSummary);
    config->setMaximumWidth(380); // the longest model and series names fit
    layout->addWidget(config, 0, Qt::AlignTop);

    m_dashboard = new Dashboard;
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_dashboard);
    layout->addWidget(scroll, 1);
}

void TrainingTab::setModels(const QStringList& models)
{
    for (QCheckBox* box : m_modelBoxes) box->setChecked(models.contains(box->property("model").toString()));
}

void TrainingTab::setSteps(int steps) { m_steps->setValue(steps); }

SessionConfig TrainingTab::config() const
{
    SessionConfig config = SessionConfig::defaults();
    config.models.clear();
    for (QCheckBox* box : m_modelBoxes)
        if (box->isChecked())
            if (const auto kind = modelKindFromString(box->property("model").toString().toStdString()))
                config.models.push_back(*kind);
    config.steps = m_steps->value();
    config.seed = static_cast<std::uint64_t>(m_seed->value());
    config.series = m_trainSeries->currentData().toString().toStdString();
    if (!m_wholeSeries->isChecked()) {
        const QDate epoch(1970, 1, 1);
        config.fromDay = epoch.daysTo(m_fromDate->date());
        config.toDay = epoch.daysTo(m_toDate->date());
    }
    applyModelPreset(config, selectedPreset());
    config.dqn.learningRate = config.ppo.learningRate = m_agentLearningRate->value();
    const auto window = static_cast<std::size_t>(m_pastLength->value());
    const bool windowByHand = window != config.mamba2.windowing.pastLength;
    for (ForecasterConfig* f : {&config.mamba2, &config.tft}) {
        f->learningRate = m_forecasterLearningRate->value();
        if (windowByHand) f->windowing.pastLength = window;
    }
    return config;
}

ModelPreset TrainingTab::selectedPreset() const
{
    return modelPresetFromString(m_preset->currentData().toString().toStdString()).value_or(ModelPreset::Default);
}

SessionConfig TrainingTab::presetConfig() const
{
    SessionConfig c = SessionConfig::defaults();
    applyModelPreset(c, selectedPreset());
    return c;
}

void TrainingTab::setSeries(const std::vector<SeriesInfo>& all)
{
    const QString current = m_trainSeries->currentData().toString();
    m_trainSeries->clear();
    m_trainSeries->addItem(tr("Default (first real, else synthetic)"), QString());
    for (const SeriesInfo& s : all)
        m_trainSeries->addItem(QString::fromStdString(s.symbol) + (s.synthetic() ? tr(" (synthetic)") : QString()),
                               QString::number(s.id));
    m_trainSeries->setCurrentIndex(std::max(0, m_trainSeries->findData(current)));
}

void TrainingTab::setNextRunSummary(const QString& text) { m_nextRunSummary->setText(text); }

} // namespace foxhunt
