// SPDX-License-Identifier: GPL-3.0-or-later
// The real desktop binary as a new user meets it: --help and --version answer
// without a display, and a first start with an empty data folder creates the
// store holding only the synthetic default, while --reset-settings forgets
// the saved settings. Runs with QT_QPA_PLATFORM=offscreen.

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class TestFirstRun : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void answersWithoutWindow_data();
    void answersWithoutWindow();
    void firstStartCreatesSyntheticStore();

private:
    /// Environment of a user with a fresh home under m_dir/<name>.
    QProcessEnvironment freshUser(const QString& name) const;
    /// The series in @p db as foxhunt-cli bars --json lists them; empty while unreadable.
    static QJsonArray storedSeries(const QString& db);
    QTemporaryDir m_dir;
};

void TestFirstRun::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QFile::exists(QStringLiteral(FOXHUNT_GUI_PATH)));
}

QProcessEnvironment TestFirstRun::freshUser(const QString& name) const
{
    const QString home = m_dir.filePath(name);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), home);
    env.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/data"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("FOXHUNT_NO_DIALOGS"), QStringLiteral("1"));
    return env;
}

QJsonArray TestFirstRun::storedSeries(const QString& db)
{
    QProcess bars;
    bars.start(QStringLiteral(FOXHUNT_CLI_PATH),
               {QStringLiteral("bars"), QStringLiteral("--db"), db, QStringLiteral("--json")});
    if (!bars.waitForFinished(60000) || bars.exitStatus() != QProcess::NormalExit || bars.exitCode() != 0) return {};
    return QJsonDocument::fromJson(bars.readAllStandardOutput()).object().value(QStringLiteral("series")).toArray();
}

void TestFirstRun::answersWithoutWindow_data()
{
    QTest::addColumn<QString>("option");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("version") << "--version" << QStringList{QStringLiteral("foxhunt " FOXHUNT_TEST_VERSION)};
    QTest::newRow("help") << "--help"
                          << QStringList{QStringLiteral("--db"), QStringLiteral("--reset-settings"),
                                         QStringLiteral("--version"), QStringLiteral("files")};
}

void TestFirstRun::answersWithoutWindow()
{
    QFETCH(QString, option);
    QFETCH(QStringList, expected);
    const QString user = QStringLiteral("answers-") + QString::fromLatin1(QTest::currentDataTag());
    QProcess p;
    p.setProcessEnvironment(freshUser(user));
    p.start(QStringLiteral(FOXHUNT_GUI_PATH), {option});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    for (const QString& e : expected) QVERIFY2(out.contains(e), qPrintable(out));
    // Answering a question is no first start: no data folder appears.
    QVERIFY(!QDir(m_dir.filePath(user) + QStringLiteral("/data/foxhunt")).exists());
}

void TestFirstRun::firstStartCreatesSyntheticStore()
{
    const QProcessEnvironment env = freshUser(QStringLiteral("first"));
    const QString data = env.value(QStringLiteral("XDG_DATA_HOME"));
    const QString db = data + QStringLiteral("/foxhunt/foxhunt.db");
    QVERIFY(QDir().mkpath(data));
    QVERIFY(QDir(data).isEmpty());

    // A setting left by an earlier version, which --reset-settings must drop.
    const QString config = env.value(QStringLiteral("XDG_CONFIG_HOME")) + QStringLiteral("/foxhunt");
    QVERIFY(QDir().mkpath(config));
    QFile conf(config + QStringLiteral("/foxhunt.conf"));
    QVERIFY(conf.open(QIODevice::WriteOnly));
    conf.write("[General]\nstaleSetting=1\n");
    conf.close();

    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    app.start(QStringLiteral(FOXHUNT_GUI_PATH), {QStringLiteral("--reset-settings")});
    QVERIFY(app.waitForStarted(60000));

    // The window seeds the store in its constructor; read it only once the
    // app has created the file, so the reader never creates it first.
    QTRY_VERIFY_WITH_TIMEOUT(app.state() != QProcess::Running || QFile::exists(db), 120000);
    QCOMPARE(app.state(), QProcess::Running);
    QJsonArray series;
    QTRY_VERIFY_WITH_TIMEOUT(!(series = storedSeries(db)).isEmpty() || app.state() != QProcess::Running, 120000);
    QCOMPARE(app.state(), QProcess::Running);
    QCOMPARE(series.size(), 1);
    const QJsonObject synthetic = series.at(0).toObject();
    QVERIFY(synthetic.value(QStringLiteral("synthetic")).toBool());
    QVERIFY(synthetic.value(QStringLiteral("bars")).toInt() > 1000);

    // The settings were cleared before the window was built, so by now too.
    QVERIFY(conf.open(QIODevice::ReadOnly));
    QVERIFY(!conf.readAll().contains("staleSetting"));
    conf.close();

    app.kill();
    QVERIFY(app.waitForFinished(60000));
}

// A core application, so QProcess learns of the app exiting while the QTRY loops wait.
QTEST_GUILESS_MAIN(TestFirstRun)
#include "tst_first_run.moc"
