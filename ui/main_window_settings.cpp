// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow: Settings, the speed control, run status, palette and layout.
// Kept apart from main_window.cpp so the window's frame and these features change independently.

#include "ui/main_window.h"

#include "ui/dashboard.h"
#include "ui/palette.h"
#include "ui/settings_dialog.h"
#include "ui/training_controller.h"
#include "ui/training_tab.h"

#include "engine/session/devices.h"

#include <QAction>
#include <QComboBox>
#include <QIcon>
#include <QKeySequence>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTime>
#include <QToolBar>

#include <algorithm>

namespace foxhunt {

namespace {

namespace mp = models::precision;

QString precisionSummary(const PrecisionSettings& p)
{
    QStringList parts;
    if (p.ampAuto) {
        parts << MainWindow::tr("AMP auto");
    } else if (p.amp.enabled) {
        const QString dtype = p.amp.dtype == mp::HalfType::F16 ? QStringLiteral("FP16") : QStringLiteral("BF16");
        parts << (p.amp.scales_loss() ? MainWindow::tr("AMP %1 (scale %2%3)")
                                            .arg(dtype)
                                            .arg(p.amp.loss_scale)
                                            .arg(p.amp.dynamic_loss_scale ? MainWindow::tr(", dynamic") : QString())
                                      : MainWindow::tr("AMP %1").arg(dtype));
    } else {
        parts << QStringLiteral("FP32");
    }
    if (p.int8)
        parts << (p.int8StaticActivations
                      ? MainWindow::tr("INT8 %1, calibrated (%2 bars)")
                            .arg(QString::fromStdString(p.int8Backend))
                            .arg(p.calibrationBars)
                      : MainWindow::tr("INT8 %1, dynamic").arg(QString::fromStdString(p.int8Backend)));
    return parts.join(QStringLiteral(" + "));
}

QString configSummary(const SessionConfig& c)
{
    QString text = MainWindow::tr("%1 · %n thread(s) · %2", nullptr, c.threads)
                       .arg(QString::fromStdString(c.device), precisionSummary(c.precision));
    if (c.workers > 1)
        text += MainWindow::tr(" · %n processes (timeout %1 s)", nullptr, c.workers).arg(c.distributedTimeoutSeconds);
    if (c.ensemble) text += MainWindow::tr(" · ensemble");
    return text;
}

QString speedLabel(double speed)
{
    return speed <= 0.0 ? MainWindow::tr("Max") : MainWindow::tr("%1x").arg(speed);
}

QString hms(qint64 ms)
{
    const qint64 s = ms / 1000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

QAction* MainWindow::createSettingsAction()
{
    m_settingsAction = new QAction(QIcon::fromTheme(QStringLiteral("preferences-system")), tr("Se&ttings..."), this);
    m_settingsAction->setObjectName(QStringLiteral("settingsAction"));
    m_settingsAction->setShortcut(QKeySequence(QStringLiteral("Ctrl+,")));
    m_settingsAction->setToolTip(
        tr("Device, threads, worker processes, precision, INT8, refresh rate, palette (applies to the next run)"));
    connect(m_settingsAction, &QAction::triggered, this, [this] { openSettings(); });
    return m_settingsAction;
}

void MainWindow::buildSpeedControl(QToolBar* bar)
{
    m_speed = new QComboBox;
    m_speed->setObjectName(QStringLiteral("speedControl"));
    m_speed->setToolTip(tr("Replay pace: as fast as the models train, or N times real time (applies at once)"));
    for (const double speed : {0.0, 1.0, 10.0, 100.0, 1000.0}) m_speed->addItem(speedLabel(speed), speed);
    connect(m_speed, &QComboBox::currentIndexChanged, this,
            [this](int) { m_training->setSpeed(m_speed->currentData().toDouble()); });
    bar->addWidget(new QLabel(tr(" Speed ")));
    bar->addWidget(m_speed);
}

void MainWindow::setSpeed(double speed)
{
    int index = m_speed->findData(speed);
    if (index < 0) {
        m_speed->addItem(speedLabel(speed), speed);
        index = m_speed->count() - 1;
    }
    m_speed->setCurrentIndex(index);
    // Same index again emits nothing; the controller must still get the pace.
    m_training->setSpeed(speed);
}

double MainWindow::speed() const
{
    return m_speed->currentData().toDouble();
}

void MainWindow::buildRunStatus()
{
    const auto label = [this](const char* name, const QString& tip) {
        auto* l = new QLabel;
        l->setObjectName(QLatin1String(name));
        l->setToolTip(tip);
        statusBar()->addPermanentWidget(l);
        return l;
    };
    m_statusRate = label("statusRate", tr("Bars replayed per second"));
    m_runProgress = new QProgressBar;
    m_runProgress->setObjectName(QStringLiteral("runProgress"));
    m_runProgress->setToolTip(tr("Bars replayed of the bars the run will replay"));
    m_runProgress->setRange(0, 1000);
    m_runProgress->setTextVisible(false);
    m_runProgress->setMaximumWidth(160);
    m_runProgress->setVisible(false);
    statusBar()->addPermanentWidget(m_runProgress);
    m_statusEta = label("statusEta", tr("Time left at the current bars per second"));
    m_statusStep = label("statusStep", tr("Bars replayed / bars the run will replay"));
    m_statusElapsed = label("statusElapsed", tr("Time since the run started"));
    m_statusDevice = label("statusDevice", tr("What the running run trains with"));
    m_statusTimer.setInterval(500);
    connect(&m_statusTimer, &QTimer::timeout, this, &MainWindow::updateRunStatus);
}

void MainWindow::onRunSamples(const MetricBatch& batch)
{
    {
        const ScopedHandlerTiming timing(m_uiTimings, QStringLiteral("charts"));
        m_dashboard->addSamples(batch);
    }
    // New charts take the palette's theme once, when they first appear.
    if (m_dashboard->chartCount() != m_themedCharts) {
        const ScopedHandlerTiming timing(m_uiTimings, QStringLiteral("chart theme"));
        m_themedCharts = m_dashboard->chartCount();
        if (applyChartTheme(m_dashboard, m_settings.palette) > 0) m_dashboard->restyle();
    }
}

void MainWindow::updateRunStatus()
{
    const ScopedHandlerTiming timing(m_uiTimings, QStringLiteral("status"));
    const bool running = m_training->running();
    m_statusElapsed->setText(m_hadRun || running ? hms(m_training->elapsedMs()) : QString());
    const long long total = m_training->totalTicks();
    const long long tick = m_training->tick();
    m_runProgress->setVisible(running && total > 0);
    if (total > 0) m_runProgress->setValue(static_cast<int>(std::min(tick, total) * 1000 / total));
    if (!running) {
        m_statusRate->clear();
        m_statusEta->clear();
        if (m_hadRun) {
            m_statusStep->setText(total > 0 ? tr("bar %1 / %2").arg(tick).arg(total) : tr("bar %1").arg(tick));
            m_statusDevice->setText(runSummary());
        }
        return;
    }
    m_hadRun = true;
    const qint64 ms = m_rateClock.elapsed();
    if (ms >= 250) {
        m_barsPerSecond = static_cast<double>(tick - m_rateTick) * 1000.0 / static_cast<double>(ms);
        m_rateTick = tick;
        m_rateClock.restart();
    }
    m_statusRate->setText(tr("%1 bars/s").arg(m_barsPerSecond, 0, 'f', m_barsPerSecond < 10 ? 1 : 0));
    // ETA from the rate of the last quarter second or more; none until there is a rate.
    if (total > 0 && m_barsPerSecond > 0)
        m_statusEta->setText(tr("ETA %1").arg(
            hms(static_cast<qint64>(1000.0 * static_cast<double>(std::max(0LL, total - tick)) / m_barsPerSecond))));
    else m_statusEta->setText(total > 0 ? tr("ETA -") : QString());
    m_statusStep->setText(total > 0 ? tr("bar %1 / %2").arg(tick).arg(total) : tr("bar %1").arg(tick));
    m_statusDevice->setText(runSummary());
    const QString run = m_runId > 0 ? tr("run %1").arg(m_runId) : tr("training");
    if (m_training->stopping()) m_statusRun->setText(tr("%1 · Stopping…").arg(run));
    else if (m_training->paused()) m_statusRun->setText(tr("%1 · Paused").arg(run));
    else m_statusRun->setText(m_runId > 0 ? run : tr("training..."));
}

QString MainWindow::runSummary() const
{
    if (!m_training->running() && !m_hadRun) return QString();
    return configSummary(m_training->runConfig());
}

void MainWindow::updateNextRunSummary()
{
    if (!m_trainingTab) return;
    SessionConfig next = SessionConfig::defaults();
    m_settings.applyTo(next);
    m_trainingTab->setNextRunSummary(configSummary(next));
}

void MainWindow::applySettings(const AppSettings& settings)
{
    m_settings = settings;
    m_settings.save();
    applyPalette(m_settings.palette);
    if (applyChartTheme(this, m_settings.palette) > 0)
        for (Dashboard* dashboard : findChildren<Dashboard*>()) dashboard->restyle(); // the live one and the Runs tab's
    m_training->setRefreshInterval(m_settings.refreshIntervalMs());
    updateNextRunSummary();
}

SettingsDialog* MainWindow::openSettings()
{
    if (auto* open = findChild<SettingsDialog*>(); open && open->isVisible()) {
        open->raise();
        return open;
    }
    auto* dialog = new SettingsDialog(m_settings, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        applySettings(dialog->settings());
        const QString running = m_training->running() ? tr(" The running run keeps %1.").arg(runSummary()) : QString();
        statusBar()->showMessage(tr("Settings saved; they apply to the next run.") + running, 8000);
    });
    dialog->open();
    return dialog;
}

void MainWindow::reportError(const QString& title, const QString& message)
{
    m_lastError = message;
    m_log->appendPlainText(title + QStringLiteral(": ") + message);
    statusBar()->showMessage(title + QStringLiteral(": ") + message, 15000);
    Q_EMIT errorReported(message);
    if (isVisible() && !qEnvironmentVariableIsSet("FOXHUNT_NO_DIALOGS")) QMessageBox::warning(this, title, message);
}

QList<QSplitter*> MainWindow::layoutSplitters() const
{
    QList<QSplitter*> named;
    for (QSplitter* s : findChildren<QSplitter*>())
        if (!s->objectName().isEmpty()) named << s;
    return named;
}

void MainWindow::saveLayout() const
{
    QSettings s;
    s.beginGroup(QStringLiteral("window"));
    s.setValue(QStringLiteral("geometry"), saveGeometry());
    s.setValue(QStringLiteral("state"), saveState());
    s.setValue(QStringLiteral("tab"), m_tabs->currentIndex());
    for (const QSplitter* sp : layoutSplitters())
        s.setValue(QStringLiteral("splitters/") + sp->objectName(), sp->saveState());
    // How the user likes to read the charts, as TensorBoard keeps them between sessions.
    s.setValue(QStringLiteral("dashboard/smoothing"), m_dashboard->smoothing());
    s.setValue(QStringLiteral("dashboard/ignoreOutliers"), m_dashboard->ignoresOutliers());
    s.endGroup();
    m_trainingTab->saveState(s); // the next run's form, as the user left it
}

bool MainWindow::restoreLayout()
{
    QSettings s;
    m_trainingTab->restoreState(s);
    s.beginGroup(QStringLiteral("window"));
    if (!s.contains(QStringLiteral("geometry"))) return false;
    restoreGeometry(s.value(QStringLiteral("geometry")).toByteArray());
    restoreState(s.value(QStringLiteral("state")).toByteArray());
    m_tabs->setCurrentIndex(s.value(QStringLiteral("tab"), 0).toInt());
    for (QSplitter* sp : layoutSplitters())
        if (const QVariant v = s.value(QStringLiteral("splitters/") + sp->objectName()); v.isValid())
            sp->restoreState(v.toByteArray());
    m_dashboard->setSmoothing(s.value(QStringLiteral("dashboard/smoothing"), m_dashboard->smoothing()).toDouble());
    m_dashboard->setIgnoreOutliers(
        s.value(QStringLiteral("dashboard/ignoreOutliers"), m_dashboard->ignoresOutliers()).toBool());
    return true;
}

} // namespace foxhunt
