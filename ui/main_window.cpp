#include "ui/main_window.h"
namespace foxhunt {
MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) { setWindowTitle(QStringLiteral("Foxhunt")); }
} // namespace foxhunt
