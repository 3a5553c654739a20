// foxhunt: the desktop app. Parses the command line, opens the main window.

#include "ui/main_window.h"

#include "engine/store/bar_store.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QSettings>

int main(int argc, char** argv)
{
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

    if (parser.isSet(resetOption)) QSettings().clear();

    const QString db = parser.isSet(dbOption) ? parser.value(dbOption)
                                              : QString::fromStdString(foxhunt::defaultDatabasePath());
    foxhunt::MainWindow window(db);
    window.show();
    if (!parser.positionalArguments().isEmpty()) window.importFiles(parser.positionalArguments());
    return app.exec();
}
