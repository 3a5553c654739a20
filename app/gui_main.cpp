#include "ui/main_window.h"
#include <QApplication>
int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    foxhunt::MainWindow w;
    w.show();
    return app.exec();
}
