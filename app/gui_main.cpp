// SPDX-License-Identifier: GPL-3.0-or-later
// foxhunt: the desktop app. Parses the command line, opens the main window.

#include "ui/app_settings.h"
#include "ui/main_window.h"

#include "engine/store/bar_store.h"
#include "models/process.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QMessageBox>
#include <QSettings>

int main(int argc, char** argv)
{
    foxhunt::models::prepareProcess();
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("foxhunt"));
    QApplication::setOrganizationName(QStringLiteral("foxhunt"));
    QApplication::setApplicationDisplayName(QStringLiteral("Foxhunt"));
    QApplication::setApplicationVersion(QStringLiteral(FOXHUNT_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/foxhunt/icon.svg")));
    QGuiApplication::setDesktopFileName(QStringLiteral(FOXHUNT_APP_ID));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Foxhunt: train and watch trading models on E-mini S&P 500 futures bars."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dbOption(QStringLiteral("db"), QStringLiteral("SQLite store to open."),
                                      QStringLiteral("path"));
    const QCommandLineOption resetOption(QStringLiteral("reset-settings"),
                                         QStringLiteral("Forget saved settings and window layout."));
    parser.addOption(dbOption);
    parser.addOption(resetOption);
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Bar files to import on start."),
                                 QStringLiteral("[files...]"));
    parser.process(app);

    // Settings, palette, window geometry and splitters all live in this one QSettings file.
    if (parser.isSet(resetOption)) QSettings().clear();

    // The store follows the data folder chosen in Settings; --db overrides both.
    const QString dataDir = foxhunt::AppSettings::load().dataDir;
    QString db;
    if (parser.isSet(dbOption)) {
        db = parser.value(dbOption);
    } else if (!dataDir.isEmpty() && QDir().mkpath(dataDir)) {
        db = QDir(dataDir).filePath(QStringLiteral("foxhunt.db"));
    } else {
        try {
            db = QString::fromStdString(foxhunt::defaultDatabasePath());
        } catch (const std::exception& e) {
            QMessageBox::critical(nullptr, QStringLiteral("Foxhunt"), QString::fromStdString(e.what()));
            return 1;
        }
    }
    foxhunt::MainWindow window(db);
    window.show();
    if (!parser.positionalArguments().isEmpty()) window.importFromCommandLine(parser.positionalArguments());
    return app.exec();
}
