// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/settings_dialog.h"

#include "engine/session/devices.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <thread>

namespace foxhunt {

namespace mp = models::precision;

namespace {

// Index 0 of the preset box is "Custom": fields that match no preset.
constexpr int kCustomPreset = 0;
constexpr AmpPreset kPresets[] = {AmpPreset::Disabled, AmpPreset::Ampere, AmpPreset::VoltaTuring};

template <typename W>
W* named(W* widget, const char* name)
{
    widget->setObjectName(QLatin1String(name));
    return widget;
}

QDoubleSpinBox* doubleBox(const char* name, double lo, double hi, int decimals)
{
    auto* box = named(new QDoubleSpinBox, name);
    box->setRange(lo, hi);
    box->setDecimals(decimals);
    return box;
}

QSpinBox* intBox(const char* name, int lo, int hi)
{
    auto* box = named(new QSpinBox, name);
    box->setRange(lo, hi);
    return box;
}

} // namespace

SettingsDialog::SettingsDialog(const AppSettings& current, QWidget* parent) : QDialog(parent), m_base(current)
{
    setWindowTitle(tr("Settings"));
    auto* layout = new QVBoxLayout(this);
    auto* note = new QLabel(tr("Changes apply to the next run; a running run keeps what it started with."));
    note->setWordWrap(true);
    layout->addWidget(note);
    // One page per section: all four stacked were taller than a 768-pixel screen.
    auto* tabs = named(new QTabWidget, "settingsTabs");
    layout->addWidget(tabs);

    auto* compute = new QWidget;
    auto* computeForm = new QFormLayout(compute);
    auto* machine = named(new QLabel(QString::fromStdString(machineSummary())), "machineSummary");
    machine->setWordWrap(true);
    machine->setToolTip(tr("What decides which precisions can pay here: native BF16 (AVX512-BF16 or AMX) for BF16 "
                           "autocast, int8 dot products (VNNI or AMX) for INT8 kernels; foxhunt-cli machine --json "
                           "prints the same"));
    computeForm->addRow(tr("This machine"), machine);
    m_device = named(new QComboBox, "device");
    for (const std::string& d : computeDevices())
        m_device->addItem(QString::fromStdString(d), QString::fromStdString(d));
    computeForm->addRow(tr("Device"), m_device);
    m_threads = intBox("threads", 1, 256);
    m_threads->setToolTip(tr("LibTorch intra-op threads; on a 2-core machine 1 is fastest"));
    computeForm->addRow(tr("Threads"), m_threads);
    m_workers = intBox("workers", 1, AppSettings::kMaxWorkers);
    m_workers->setToolTip(
        tr("Processes that train one run together (data parallel): each trains on its own share of the bars with "
           "the thread count above, and their gradients are averaged after every backward pass. 1 = this process "
           "only; N = this process plus N - 1 worker processes it starts. This machine has %n hardware thread(s); "
           "processes x threads beyond that only compete for cores.",
           nullptr, static_cast<int>(std::max(1U, std::thread::hardware_concurrency()))));
    computeForm->addRow(tr("Worker processes"), m_workers);
    m_workerTimeout = doubleBox("workerTimeout", 1.0, AppSettings::kMaxWorkerTimeoutSeconds, 0);
    m_workerTimeout->setSuffix(tr(" s"));
    m_workerTimeout->setToolTip(tr("With more than one worker process: a process that stops answering for this long "
                                   "fails the run, and the error names its rank"));
    computeForm->addRow(tr("Worker timeout"), m_workerTimeout);
    connect(m_workers, &QSpinBox::valueChanged, this, [this](int n) { m_workerTimeout->setEnabled(n > 1); });
    tabs->addTab(compute, tr("Compute"));

    auto* amp = new QWidget;
    auto* ampForm = new QFormLayout(amp);
    m_preset = named(new QComboBox, "ampPreset");
    m_preset->addItem(tr("Custom"));
    m_preset->addItem(tr("Disabled (FP32)"));
    m_preset->addItem(tr("Ampere and newer (BF16, no scaling)"));
    m_preset->addItem(tr("Volta / Turing (FP16, dynamic scale 2048)"));
    ampForm->addRow(tr("Preset"), m_preset);
    m_ampAuto = named(
        new QCheckBox(tr("Auto: time each model's train step and use the device's preset only where it is "
                         "faster")),
        "ampAuto");
    m_ampAuto->setToolTip(
        tr("BF16 on a CPU with native BF16 or an Ampere+ GPU, FP16 on Volta/Turing; a model whose "
           "measured step is not at least 5 % faster trains in FP32. The reason is stored with the run."));
    ampForm->addRow(tr("Auto"), m_ampAuto);
    m_ampEnabled = named(new QCheckBox(tr("Train under autocast")), "ampEnabled");
    ampForm->addRow(tr("AMP"), m_ampEnabled);
    m_dtype = named(new QComboBox, "ampDtype");
    m_dtype->addItem(QStringLiteral("FP16"), QStringLiteral("f16"));
    m_dtype->addItem(QStringLiteral("BF16"), QStringLiteral("bf16"));
    ampForm->addRow(tr("Half type"), m_dtype);
    m_lossScale = doubleBox("lossScale", 1e-6, 1e12, 3);
    ampForm->addRow(tr("Loss scale"), m_lossScale);
    m_dynamic = named(new QCheckBox(tr("Adapt the scale (grow after clean steps, back off on inf/NaN)")),
                      "dynamicScale");
    ampForm->addRow(tr("Dynamic scaling"), m_dynamic);
    m_growth = doubleBox("growthFactor", 1.0, 100.0, 3);
    ampForm->addRow(tr("Growth factor"), m_growth);
    m_backoff = doubleBox("backoffFactor", 0.0, 1.0, 3);
    ampForm->addRow(tr("Backoff factor"), m_backoff);
    m_interval = intBox("growthInterval", 1, std::numeric_limits<int>::max());
    ampForm->addRow(tr("Growth interval"), m_interval);
    m_precisionNote = named(new QLabel, "precisionNote");
    m_precisionNote->setWordWrap(true);
    // Room for the engine's longest verdict, so the dialog does not jump (or clip it) as choices change.
    m_precisionNote->setMinimumHeight(m_precisionNote->fontMetrics().lineSpacing() * 3);
    m_precisionNote->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    ampForm->addRow(m_precisionNote);
    tabs->addTab(amp, tr("Mixed precision (AMP)"));

    auto* int8 = new QWidget;
    auto* int8Form = new QFormLayout(int8);
    m_int8 = named(new QCheckBox(tr("Keep an INT8 copy of each model, checked against FP32")), "int8Enabled");
    int8Form->addRow(tr("INT8"), m_int8);
    m_int8Backend = named(new QComboBox, "int8Backend");
    m_int8Backend->addItem(tr("Auto (timed per layer on this machine)"), QStringLiteral("auto"));
    m_int8Backend->addItem(tr("oneDNN int8 GEMM"), QStringLiteral("onednn"));
    m_int8Backend->addItem(tr("Dequantize per call (least memory)"), QStringLiteral("dequantize"));
    m_int8Backend->addItem(tr("FP32 kernels on int8-rounded weights"), QStringLiteral("fp32"));
    m_int8Backend->addItem(tr("Static int8 activations"), QStringLiteral("static"));
    m_int8Backend->setToolTip(tr("Auto times each layer shape's kernels once per machine (kept in the database), and "
                                 "the TFT's fused blocks (its variable selection, fused or as tables over the "
                                 "calibrated input ranges, its GRNs, and its attention with the key projections "
                                 "folded into the queries) at the rows they serve, and uses the fastest accurate "
                                 "ones; a copy slower than FP32 at batch 1 or 32 is not served"));
    int8Form->addRow(tr("Kernels"), m_int8Backend);
    m_int8Gate = doubleBox("int8MaxDegradation", 0.0, 100.0, 1);
    m_int8Gate->setSuffix(tr(" %"));
    m_int8Gate->setToolTip(tr("An INT8 copy whose validation loss is worse than FP32's by more than this is not "
                              "served: forecasts, ensemble inputs and the INT8 policy fall back to FP32"));
    int8Form->addRow(tr("Serve only within"), m_int8Gate);
    m_int8Static = named(new QCheckBox(tr("Static activation ranges (calibrated)")), "int8Static");
    int8Form->addRow(tr("Activations"), m_int8Static);
    m_calibration = intBox("calibrationBars", 1, 1'000'000);
    int8Form->addRow(tr("Calibration bars"), m_calibration);
    m_int8Refresh = intBox("int8Refresh", 0, std::numeric_limits<int>::max());
    m_int8Refresh->setSpecialValueText(tr("at the end only"));
    m_int8Refresh->setSuffix(tr(" bars"));
    int8Form->addRow(tr("Refresh every"), m_int8Refresh);
    m_memoryBudget = doubleBox("memoryBudget", 0.0, 1.0e7, 1);
    m_memoryBudget->setSpecialValueText(tr("none"));
    m_memoryBudget->setSuffix(tr(" MiB"));
    m_memoryBudget->setToolTip(tr("Memory all served models may take together (weights plus activations at batch 32), "
                                  "measured before the first step; the report shows the headroom"));
    int8Form->addRow(tr("Memory budget"), m_memoryBudget);
    m_memoryBudgetWarn = named(new QCheckBox(tr("Only warn when over (else refuse to start)")), "memoryBudgetWarn");
    int8Form->addRow(QString(), m_memoryBudgetWarn);
    tabs->addTab(int8, tr("INT8 inference"));

    auto* app = new QWidget;
    auto* appForm = new QFormLayout(app);
    m_ensemble = named(new QCheckBox(tr("Feed the forecasters' median forecasts to the agents")), "ensemble");
    appForm->addRow(tr("Ensemble"), m_ensemble);
    m_refreshHz = intBox("refreshHz", 1, AppSettings::kMaxRefreshHz);
    m_refreshHz->setSuffix(tr(" Hz"));
    appForm->addRow(tr("Chart refresh"), m_refreshHz);
    auto* dirRow = new QWidget;
    auto* dirLayout = new QHBoxLayout(dirRow);
    dirLayout->setContentsMargins(0, 0, 0, 0);
    m_dataDir = named(new QLineEdit, "dataDir");
    m_dataDir->setPlaceholderText(tr("default ($XDG_DATA_HOME/foxhunt)"));
    auto* browse = new QPushButton(tr("Browse..."));
    connect(browse, &QPushButton::clicked, this, &SettingsDialog::browseDataDir);
    dirLayout->addWidget(m_dataDir, 1);
    dirLayout->addWidget(browse);
    dirRow->setToolTip(tr("The store moves here on the next launch; its runs' checkpoints are kept beside it"));
    appForm->addRow(tr("Data folder"), dirRow);
    m_palette = named(new QComboBox, "palette");
    m_palette->addItem(tr("System"), toString(PaletteChoice::System));
    m_palette->addItem(tr("Light"), toString(PaletteChoice::Light));
    m_palette->addItem(tr("Dark"), toString(PaletteChoice::Dark));
    appForm->addRow(tr("Palette"), m_palette);
    tabs->addTab(app, tr("Run and display"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                         QDialogButtonBox::RestoreDefaults);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { load(AppSettings{}); });
    layout->addWidget(buttons);

    connect(m_preset, &QComboBox::currentIndexChanged, this, &SettingsDialog::applyPreset);
    for (QCheckBox* box : {m_ampAuto, m_ampEnabled, m_dynamic})
        connect(box, &QCheckBox::toggled, this, &SettingsDialog::onPrecisionEdited);
    for (QComboBox* box : {m_dtype, m_device})
        connect(box, &QComboBox::currentIndexChanged, this, &SettingsDialog::onPrecisionEdited);
    for (QDoubleSpinBox* box : {m_lossScale, m_growth, m_backoff})
        connect(box, &QDoubleSpinBox::valueChanged, this, &SettingsDialog::onPrecisionEdited);
    connect(m_interval, &QSpinBox::valueChanged, this, &SettingsDialog::onPrecisionEdited);
    connect(m_int8, &QCheckBox::toggled, this, &SettingsDialog::updatePrecisionState);
    connect(m_int8Static, &QCheckBox::toggled, this, &SettingsDialog::updatePrecisionState);

    load(current);
}

void SettingsDialog::load(const AppSettings& s)
{
    m_loading = true;
    const int device = m_device->findData(QString::fromStdString(s.device));
    if (device < 0) {
        // A device saved on another build (e.g. cuda:1 on a CPU-only build): show it, so the
        // engine's check names it, rather than silently switching to the CPU.
        m_device->addItem(tr("%1 (not in this build)").arg(QString::fromStdString(s.device)),
                          QString::fromStdString(s.device));
        m_device->setCurrentIndex(m_device->count() - 1);
    } else {
        m_device->setCurrentIndex(device);
    }
    m_threads->setValue(s.threads);
    m_workers->setValue(s.workers);
    m_workerTimeout->setValue(s.workerTimeoutSeconds);
    m_workerTimeout->setEnabled(s.workers > 1);
    const mp::MixedPrecisionConfig& amp = s.precision.amp;
    m_ampEnabled->setChecked(amp.enabled);
    m_dtype->setCurrentIndex(amp.dtype == mp::HalfType::F16 ? 0 : 1);
    m_lossScale->setValue(amp.loss_scale);
    m_dynamic->setChecked(amp.dynamic_loss_scale);
    m_growth->setValue(amp.growth_factor);
    m_backoff->setValue(amp.backoff_factor);
    m_interval->setValue(
        static_cast<int>(std::min<std::int64_t>(amp.growth_interval, std::numeric_limits<int>::max())));
    m_ampAuto->setChecked(s.precision.ampAuto);
    m_int8->setChecked(s.precision.int8);
    m_int8Backend->setCurrentIndex(
        std::max(0, m_int8Backend->findData(QString::fromStdString(s.precision.int8Backend))));
    m_int8Gate->setValue(100.0 * s.precision.int8MaxDegradation);
    m_int8Static->setChecked(s.precision.int8StaticActivations);
    m_calibration->setValue(std::max(1, s.precision.calibrationBars));
    m_int8Refresh->setValue(
        static_cast<int>(std::min<long long>(s.precision.int8RefreshEvery, std::numeric_limits<int>::max())));
    m_memoryBudget->setValue(s.precision.memoryBudgetMb);
    m_memoryBudgetWarn->setChecked(s.precision.memoryBudgetAction == MemoryBudgetAction::Warn);
    m_ensemble->setChecked(s.ensemble);
    m_refreshHz->setValue(s.refreshHz);
    m_dataDir->setText(s.dataDir);
    m_palette->setCurrentIndex(std::max(0, m_palette->findData(toString(s.palette))));
    m_loading = false;
    onPrecisionEdited();
}

AppSettings SettingsDialog::settings() const
{
    AppSettings s = m_base;
    s.device = m_device->currentData().toString().toStdString();
    s.threads = m_threads->value();
    s.workers = m_workers->value();
    s.workerTimeoutSeconds = m_workerTimeout->value();
    mp::MixedPrecisionConfig& amp = s.precision.amp;
    amp.enabled = m_ampEnabled->isChecked();
    amp.dtype = m_dtype->currentIndex() == 0 ? mp::HalfType::F16 : mp::HalfType::BF16;
    amp.loss_scale = m_lossScale->value();
    amp.dynamic_loss_scale = m_dynamic->isChecked();
    amp.growth_factor = m_growth->value();
    amp.backoff_factor = m_backoff->value();
    amp.growth_interval = m_interval->value();
    s.precision.ampAuto = m_ampAuto->isChecked();
    s.precision.int8 = m_int8->isChecked();
    s.precision.int8Backend = m_int8Backend->currentData().toString().toStdString();
    s.precision.int8MaxDegradation = m_int8Gate->value() / 100.0;
    s.precision.int8StaticActivations = m_int8Static->isChecked();
    s.precision.calibrationBars = m_calibration->value();
    s.precision.int8RefreshEvery = m_int8Refresh->value();
    s.precision.memoryBudgetMb = m_memoryBudget->value();
    s.precision.memoryBudgetAction = m_memoryBudgetWarn->isChecked() ? MemoryBudgetAction::Warn
                                                                     : MemoryBudgetAction::Refuse;
    s.ensemble = m_ensemble->isChecked();
    s.refreshHz = m_refreshHz->value();
    s.dataDir = m_dataDir->text().trimmed();
    s.palette = paletteChoiceFromString(m_palette->currentData().toString());
    return s;
}

void SettingsDialog::applyPreset(int index)
{
    if (m_loading || index <= kCustomPreset) return;
    const mp::MixedPrecisionConfig amp = ampPreset(kPresets[index - 1]);
    m_loading = true;
    m_ampEnabled->setChecked(amp.enabled);
    m_dtype->setCurrentIndex(amp.dtype == mp::HalfType::F16 ? 0 : 1);
    m_lossScale->setValue(amp.loss_scale);
    m_dynamic->setChecked(amp.dynamic_loss_scale);
    m_growth->setValue(amp.growth_factor);
    m_backoff->setValue(amp.backoff_factor);
    m_interval->setValue(static_cast<int>(amp.growth_interval));
    m_loading = false;
    onPrecisionEdited();
}

void SettingsDialog::onPrecisionEdited()
{
    if (m_loading) return;
    const AppSettings s = settings();
    int presetIndex = kCustomPreset;
    if (const std::optional<AmpPreset> p = matchingAmpPreset(s.precision.amp))
        for (int i = 0; i < static_cast<int>(std::size(kPresets)); ++i)
            if (kPresets[i] == *p) presetIndex = i + 1;
    {
        const QSignalBlocker block(m_preset);
        m_preset->setCurrentIndex(presetIndex);
    }

    // Mark FP16 by what the engine says about it on this device, not by a rule of our own.
    mp::MixedPrecisionConfig fp16 = s.precision.amp;
    fp16.enabled = true;
    fp16.dtype = mp::HalfType::F16;
    const DeviceCheck fp16Check = checkPrecision(fp16, s.device);
    const bool fp16Blocked = !fp16Check.ok && fp16Check.problem.find("FP16") != std::string::npos;
    m_dtype->setItemText(0, fp16Blocked ? tr("FP16 (needs CUDA)") : QStringLiteral("FP16"));

    const DeviceCheck check = checkPrecision(s.precision.amp, s.device);
    m_problemText = check.ok ? QString() : QString::fromStdString(check.problem);
    updatePrecisionState();
}

void SettingsDialog::updatePrecisionState()
{
    const bool autoAmp = m_ampAuto->isChecked();
    m_preset->setEnabled(!autoAmp);
    m_ampEnabled->setEnabled(!autoAmp);
    const bool amp = !autoAmp && m_ampEnabled->isChecked();
    for (QWidget* w : std::initializer_list<QWidget*>{m_dtype, m_lossScale, m_dynamic}) w->setEnabled(amp);
    const bool dynamic = amp && m_dynamic->isChecked();
    for (QWidget* w : std::initializer_list<QWidget*>{m_growth, m_backoff, m_interval}) w->setEnabled(dynamic);
    m_int8Static->setEnabled(m_int8->isChecked());
    m_int8Backend->setEnabled(m_int8->isChecked());
    m_int8Gate->setEnabled(m_int8->isChecked());
    m_calibration->setEnabled(m_int8->isChecked() && m_int8Static->isChecked());
    m_int8Refresh->setEnabled(m_int8->isChecked());

    const AppSettings s = settings();
    const DeviceCheck check = checkPrecision(s.precision.amp, s.device);
    const QString suggestion = QString::fromStdString(check.suggestion).toHtmlEscaped();
    if (!check.ok) {
        m_precisionNote->setText(tr("<b>Will not run:</b> %1. %2").arg(m_problemText.toHtmlEscaped(), suggestion));
        m_precisionNote->setStyleSheet(QStringLiteral("color: #b00020;"));
    } else if (autoAmp) {
        m_precisionNote->setText(tr("Auto on %1: each model is timed in FP32 and under the device's preset when the "
                                    "run starts.")
                                     .arg(QString::fromStdString(s.device)));
        m_precisionNote->setStyleSheet(QString());
    } else {
        // The engine may still advise (e.g. BF16 on a CPU without native BF16 arithmetic).
        m_precisionNote->setText(amp ? tr("Runs on %1. %2").arg(QString::fromStdString(s.device), suggestion)
                                     : QString());
        m_precisionNote->setStyleSheet(QString());
    }
}

void SettingsDialog::browseDataDir()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Data folder"), m_dataDir->text());
    if (!dir.isEmpty()) m_dataDir->setText(dir);
}

} // namespace foxhunt
