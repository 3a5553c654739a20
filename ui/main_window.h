#pragma once
#include <QMainWindow>
namespace foxhunt {
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
};
} // namespace foxhunt
