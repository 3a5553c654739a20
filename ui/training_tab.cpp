// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/training_tab.h"

#include "ui/dashboard.h"
#include "ui/series_label.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDate>
#include <QDateEdit>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QAbstractItemView>
#include <QLabel>
#include <QPair>
#include <QScrollArea>
#include <QSettings>
#include <QSignalBlocker>
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
    m_trainSeries->setObjectName(QStringLiteral("trainSeries"));
    // Long labels (symbol, interval, range) must not widen the form past its maximum.
    m_trainSeries->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_trainSeries->setMinimumContentsLength(20);
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
    m_seeds = new QSpinBox;
    m_seeds->setObjectName(QStringLiteral("seedsBox"));
    m_seeds->setRange(1, 64);
    m_seeds->setValue(1);
    m_seeds->setSuffix(tr(" run(s)"));
    m_seeds->setToolTip(tr("More than one: a run group, one run per seed from Seed upwards, trained one after "
                           "another. Select its runs in the Runs tab and press Groups for the figures across the "
                           "seeds with 95 % intervals and the deflated Sharpe (foxhunt-cli train --seeds does the "
                           "same in parallel processes)"));
    form->addRow(tr("Seeds"), m_seeds);

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
    connect(m_trainSeries, &QComboBox::currentIndexChanged, this, &TrainingTab::applySeriesRange);

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

void TrainingTab::setSteps(int steps)
{
    m_steps->setValue(steps);
}

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

namespace {
constexpr int kFirstDayRole = Qt::UserRole + 1;
constexpr int kLastDayRole = Qt::UserRole + 2;
} // namespace

void TrainingTab::setSeries(const std::vector<SeriesInfo>& all, std::int64_t defaultId)
{
    const QString current = m_trainSeries->currentData().toString();
    {
        // One range change, for the series chosen at the end, not one per item on the way.
        const QSignalBlocker blocker(m_trainSeries);
        m_trainSeries->clear();
        m_trainSeries->addItem(tr("Default (first real, else synthetic)"), QString());
        for (const SeriesInfo& s : all) {
            const QString label = seriesLabel(s);
            const auto [first, last] = seriesTradingDays(s);
            m_trainSeries->addItem(label, QString::number(s.id));
            const int row = m_trainSeries->count() - 1;
            m_trainSeries->setItemData(row, label, Qt::ToolTipRole);
            m_trainSeries->setItemData(row, first, kFirstDayRole);
            m_trainSeries->setItemData(row, last, kLastDayRole);
            if (s.id == defaultId) {
                m_trainSeries->setItemText(0, tr("Default (%1)").arg(label));
                m_trainSeries->setItemData(0, m_trainSeries->itemText(0), Qt::ToolTipRole);
                m_trainSeries->setItemData(0, first, kFirstDayRole);
                m_trainSeries->setItemData(0, last, kLastDayRole);
            }
        }
        m_trainSeries->setCurrentIndex(std::max(0, m_trainSeries->findData(current)));
    }
    // The box is as wide as the form allows; its list opens wide enough for whole labels.
    m_trainSeries->view()->setMinimumWidth(m_trainSeries->view()->sizeHintForColumn(0) + 24);
    applySeriesRange();
}

bool TrainingTab::selectSeries(std::int64_t id)
{
    const int row = m_trainSeries->findData(QString::number(id));
    if (row < 0) return false;
    m_trainSeries->setCurrentIndex(row);
    return true;
}

void TrainingTab::applySeriesRange()
{
    m_trainSeries->setToolTip(m_trainSeries->currentText());
    const QDate first = m_trainSeries->currentData(kFirstDayRole).toDate();
    const QDate last = m_trainSeries->currentData(kLastDayRole).toDate();
    for (QDateEdit* edit : {m_fromDate, m_toDate}) {
        if (first.isValid() && last.isValid()) {
            edit->setDateRange(first, last); // moves a date outside it to the nearer end
        } else {
            edit->clearMinimumDate();
            edit->clearMaximumDate();
        }
    }
}

void TrainingTab::saveState(QSettings& s) const
{
    s.beginGroup(QStringLiteral("training"));
    QStringList models;
    for (QCheckBox* box : m_modelBoxes)
        if (box->isChecked()) models << box->property("model").toString();
    s.setValue(QStringLiteral("models"), models);
    s.setValue(QStringLiteral("series"), m_trainSeries->currentData().toString());
    s.setValue(QStringLiteral("steps"), m_steps->value());
    s.setValue(QStringLiteral("seed"), m_seed->value());
    s.setValue(QStringLiteral("seeds"), m_seeds->value());
    s.setValue(QStringLiteral("whole_series"), m_wholeSeries->isChecked());
    s.setValue(QStringLiteral("from"), m_fromDate->date().toString(Qt::ISODate));
    s.setValue(QStringLiteral("to"), m_toDate->date().toString(Qt::ISODate));
    s.setValue(QStringLiteral("preset"), m_preset->currentData().toString());
    s.setValue(QStringLiteral("agent_learning_rate"), m_agentLearningRate->value());
    s.setValue(QStringLiteral("forecaster_learning_rate"), m_forecasterLearningRate->value());
    s.setValue(QStringLiteral("past_length"), m_pastLength->value());
    s.setValue(QStringLiteral("dashboard_metrics"), m_dashboard->pickedMetrics());
    s.endGroup();
}

void TrainingTab::restoreState(const QSettings& s)
{
    const auto get = [&s](const char* key) { return s.value(QStringLiteral("training/") + QLatin1String(key)); };
    if (const QVariant v = get("models"); v.isValid()) setModels(v.toStringList());
    // A series deleted since keeps Default.
    if (const QVariant v = get("series"); v.isValid())
        if (const int row = m_trainSeries->findData(v.toString()); row >= 0) m_trainSeries->setCurrentIndex(row);
    const auto setInt = [&](const char* key, QSpinBox* box) {
        bool ok = false;
        const int v = get(key).toInt(&ok);
        if (ok && v >= box->minimum() && v <= box->maximum()) box->setValue(v);
    };
    setInt("steps", m_steps);
    setInt("seed", m_seed);
    setInt("seeds", m_seeds);
    if (const QVariant v = get("whole_series"); v.isValid()) m_wholeSeries->setChecked(v.toBool());
    // After the series: its range clamps dates that no longer fit.
    for (auto [key, edit] : {std::pair{"from", m_fromDate}, std::pair{"to", m_toDate}})
        if (const QDate d = QDate::fromString(get(key).toString(), Qt::ISODate); d.isValid()) edit->setDate(d);
    // The preset sets the window; a window saved by hand comes after it.
    if (const int row = m_preset->findData(get("preset").toString()); row >= 0) m_preset->setCurrentIndex(row);
    for (auto [key, box] : {std::pair{"agent_learning_rate", m_agentLearningRate},
                            std::pair{"forecaster_learning_rate", m_forecasterLearningRate}}) {
        bool ok = false;
        const double v = get(key).toDouble(&ok);
        if (ok && v >= box->minimum() && v <= box->maximum()) box->setValue(v);
    }
    setInt("past_length", m_pastLength);
    if (const QVariant v = get("dashboard_metrics"); v.isValid()) m_dashboard->setPickedMetrics(v.toStringList());
}

int TrainingTab::seedCount() const
{
    return m_seeds->value();
}

void TrainingTab::setNextRunSummary(const QString& text)
{
    m_nextRunSummary->setText(text);
}

} // namespace foxhunt
