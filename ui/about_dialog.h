// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Help -> About Foxhunt: the version and store, the licence (GPL-3.0-or-later, in full) and the
// third-party components the program links or compiles in, each with its licence.

#include <QDialog>

QT_BEGIN_NAMESPACE
class QTabWidget;
class QTableWidget;
class QTextBrowser;
QT_END_NAMESPACE

namespace foxhunt {

class AboutDialog : public QDialog {
    Q_OBJECT
public:
    /// `databasePath` is the store the window works on.
    explicit AboutDialog(const QString& databasePath, QWidget* parent = nullptr);

    /// The third-party table (component, version, licence, web site), for tests.
    QTableWidget* componentTable() const { return m_components; }
    /// The licence text shown (the LICENSE file, built in).
    QString licenceText() const;
    QTabWidget* tabs() const { return m_tabs; }

private:
    QTabWidget* m_tabs = nullptr;
    QTableWidget* m_components = nullptr;
    QTextBrowser* m_licence = nullptr;
};

} // namespace foxhunt
