// SPDX-License-Identifier: GPL-3.0-or-later
// The Training tab's run configuration: date range, preset and key hyperparameters reach the
// SessionConfig the next run starts with, and a reversed date range is refused before any work.
// The form is remembered across launches, and the dates stay within the chosen series.

#include "ui/main_window.h"
#include "ui/training_tab.h"
#include "tests/support/test_bundle.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDateEdit>
#include <QDoubleSpinBox>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

namespace tst_run_config {

using foxhunt::MainWindow;
using foxhunt::SessionConfig;

class TestRunConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void defaultsAreTheEngineDefaults();
    void formReachesConfig_data();
    void formReachesConfig();
    void reversedDateRangeIsRefused();
    void datesStayWithinTheSeries();
    void formIsRememberedAcrossLaunches();

private:
    QString db(const char* name) const { return m_dir.filePath(QLatin1String(name)); }
    QTemporaryDir m_dir;
};

void TestRunConfig::initTestCase()
{
    qputenv("FOXHUNT_NO_DIALOGS", "1");
    QVERIFY(m_dir.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("config")));
    QApplication::setOrganizationName(QStringLiteral("foxhunt-test"));
    QApplication::setApplicationName(QStringLiteral("tst_run_config"));
}

void TestRunConfig::defaultsAreTheEngineDefaults()
{
    MainWindow w(db("defaults.db"));
    const SessionConfig c = w.nextRunConfig();
    const SessionConfig d = SessionConfig::defaults();
    QVERIFY(!c.fromDay && !c.toDay);
    QCOMPARE(c.dqn.learningRate, d.dqn.learningRate);
    QCOMPARE(c.ppo.learningRate, d.ppo.learningRate);
    QCOMPARE(c.mamba2.learningRate, d.mamba2.learningRate);
    QCOMPARE(c.tft.windowing.pastLength, d.tft.windowing.pastLength);
    QCOMPARE(c.dqn.hidden, d.dqn.hidden);
    QVERIFY(!w.fromDateEdit()->isEnabled());
}

void TestRunConfig::formReachesConfig_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("dqnWidth");
    QTest::addColumn<int>("pastLength");
    QTest::addColumn<int>("learningStarts");
    QTest::addColumn<int>("tftPastLength");
    QTest::addColumn<int>("mambaWidth");
    QTest::newRow("default") << "default" << 64 << 60 << 1000 << 60 << 32;
    QTest::newRow("small") << "small" << 32 << 32 << 200 << 32 << 16;
    // The seeds' layer sizes; each forecaster keeps its own window unless the box is changed.
    QTest::newRow("seed") << "seed" << 256 << 60 << 1000 << 100 << 512;
}

void TestRunConfig::formReachesConfig()
{
    QFETCH(QString, preset);
    QFETCH(int, dqnWidth);
    QFETCH(int, pastLength);
    QFETCH(int, learningStarts);
    QFETCH(int, tftPastLength);
    QFETCH(int, mambaWidth);
    MainWindow w(db("form.db"));
    w.wholeSeriesBox()->setChecked(false);
    QVERIFY(w.fromDateEdit()->isEnabled());
    w.fromDateEdit()->setDate(QDate(2024, 2, 5));
    w.toDateEdit()->setDate(QDate(2024, 2, 9));
    w.presetBox()->setCurrentIndex(w.presetBox()->findData(preset));
    w.agentLearningRateBox()->setValue(0.0025);
    w.forecasterLearningRateBox()->setValue(0.0005);

    const SessionConfig c = w.nextRunConfig();
    QCOMPARE(*c.fromDay, QDate(1970, 1, 1).daysTo(QDate(2024, 2, 5)));
    QCOMPARE(*c.toDay, QDate(1970, 1, 1).daysTo(QDate(2024, 2, 9)));
    QCOMPARE(c.dqn.learningRate, 0.0025);
    QCOMPARE(c.ppo.learningRate, 0.0025);
    QCOMPARE(c.mamba2.learningRate, 0.0005);
    QCOMPARE(c.tft.learningRate, 0.0005);
    QCOMPARE(c.dqn.hidden.front(), dqnWidth);
    QCOMPARE(static_cast<int>(c.mamba2.windowing.pastLength), pastLength);
    QCOMPARE(static_cast<int>(c.tft.windowing.pastLength), tftPastLength);
    QCOMPARE(static_cast<int>(c.dqn.learningStarts), learningStarts);
    QCOMPARE(c.mamba2.dModel, mambaWidth);
    // The same sizes as the engine's preset (what the benchmarks and the CLI use).
    SessionConfig engine = SessionConfig::defaults();
    foxhunt::applyModelPreset(engine, *foxhunt::modelPresetFromString(preset.toStdString()));
    QCOMPARE(c.tft.hiddenSize, engine.tft.hiddenSize);
    QCOMPARE(c.ppo.hidden, engine.ppo.hidden);
    QCOMPARE(c.dqn.batchSize, engine.dqn.batchSize);
    // A window set by hand is both forecasters' window.
    w.pastLengthBox()->setValue(48);
    const SessionConfig byHand = w.nextRunConfig();
    QCOMPARE(static_cast<int>(byHand.mamba2.windowing.pastLength), 48);
    QCOMPARE(static_cast<int>(byHand.tft.windowing.pastLength), 48);
}

void TestRunConfig::reversedDateRangeIsRefused()
{
    MainWindow w(db("reversed.db"));
    w.wholeSeriesBox()->setChecked(false);
    w.fromDateEdit()->setDate(QDate(2024, 2, 14));
    w.toDateEdit()->setDate(QDate(2024, 2, 13));
    QVERIFY(!w.startTraining());
    QVERIFY2(w.lastErrorMessage().contains(QLatin1String("date range")), qPrintable(w.lastErrorMessage()));
}

void TestRunConfig::datesStayWithinTheSeries()
{
    MainWindow w(db("range.db"));
    QComboBox* series = w.trainingTab()->seriesBox();
    QCOMPARE(series->count(), 2); // Default and the synthetic series
    // The synthetic default covers the trading days 2024-01-08 .. 2024-03-01; Default names it.
    QVERIFY2(series->itemText(0).contains(QStringLiteral("2024-01-08 – 2024-03-01")), qPrintable(series->itemText(0)));
    for (int row : {0, 1}) {
        series->setCurrentIndex(row);
        QCOMPARE(w.fromDateEdit()->minimumDate(), QDate(2024, 1, 8));
        QCOMPARE(w.fromDateEdit()->maximumDate(), QDate(2024, 3, 1));
        QCOMPARE(w.toDateEdit()->minimumDate(), QDate(2024, 1, 8));
        QCOMPARE(w.toDateEdit()->maximumDate(), QDate(2024, 3, 1));
    }
    // The form's own starting dates (2024-01-02 .. 2024-12-31) were clamped to the series.
    QCOMPARE(w.fromDateEdit()->date(), QDate(2024, 1, 8));
    QCOMPARE(w.toDateEdit()->date(), QDate(2024, 3, 1));
    w.wholeSeriesBox()->setChecked(false);
    w.fromDateEdit()->setDate(QDate(2023, 6, 1));
    w.toDateEdit()->setDate(QDate(2025, 6, 1));
    const SessionConfig c = w.nextRunConfig();
    QCOMPARE(*c.fromDay, QDate(1970, 1, 1).daysTo(QDate(2024, 1, 8)));
    QCOMPARE(*c.toDay, QDate(1970, 1, 1).daysTo(QDate(2024, 3, 1)));
}

void TestRunConfig::formIsRememberedAcrossLaunches()
{
    QSettings().remove(QStringLiteral("training"));
    const QString path = db("remembered.db");
    {
        MainWindow w(path);
        w.setTrainingModels({QStringLiteral("ppo"), QStringLiteral("tft")});
        w.setTrainingSteps(1234);
        w.presetBox()->setCurrentIndex(w.presetBox()->findData(QStringLiteral("small")));
        w.trainingTab()->seriesBox()->setCurrentIndex(1);
        w.wholeSeriesBox()->setChecked(false);
        w.fromDateEdit()->setDate(QDate(2024, 1, 22));
        w.toDateEdit()->setDate(QDate(2024, 2, 2));
        w.show();
        w.close(); // what quitting does: the form is saved with the layout
    }
    MainWindow w(path);
    const SessionConfig c = w.nextRunConfig();
    QCOMPARE(c.models.size(), std::size_t{2});
    QVERIFY(c.models[0] == foxhunt::ModelKind::Ppo);
    QVERIFY(c.models[1] == foxhunt::ModelKind::Tft);
    QCOMPARE(c.steps, 1234LL);
    QCOMPARE(w.presetBox()->currentData().toString(), QStringLiteral("small"));
    QCOMPARE(w.trainingTab()->seriesBox()->currentIndex(), 1);
    QVERIFY(!c.series.empty());
    QVERIFY(!w.wholeSeriesBox()->isChecked());
    QCOMPARE(*c.fromDay, QDate(1970, 1, 1).daysTo(QDate(2024, 1, 22)));
    QCOMPARE(*c.toDay, QDate(1970, 1, 1).daysTo(QDate(2024, 2, 2)));
    QSettings().remove(QStringLiteral("training"));
}

} // namespace tst_run_config

FOXHUNT_TEST_MAIN(tst_run_config::TestRunConfig)
#include "tst_run_config.moc"
