// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/about_dialog.h"

#include "engine/session/components.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtGlobal>

namespace foxhunt {

namespace {

struct Row {
    QString name, version, licence, url;
};

/// What the window adds to the engine's components: Qt's modules (the Charts module is GPL-3,
/// which is why Foxhunt is GPL-3.0-or-later) and CLI11 in foxhunt-cli.
QList<Row> components()
{
    QList<Row> rows;
    const QString qt = QString::fromLatin1(qVersion());
    rows.push_back({QStringLiteral("Qt (Core, Gui, Widgets, Svg, PrintSupport)"), qt,
                    QStringLiteral("LGPL-3.0-only OR GPL-2.0-or-later"), QStringLiteral("https://www.qt.io")});
    rows.push_back(
        {QStringLiteral("Qt Charts"), qt, QStringLiteral("GPL-3.0-only"), QStringLiteral("https://www.qt.io")});
    for (const Component& c : engineComponents())
        rows.push_back({QString::fromStdString(c.name), QString::fromStdString(c.version),
                        QString::fromStdString(c.licence), QString::fromStdString(c.url)});
    rows.push_back({QStringLiteral("CLI11 (foxhunt-cli)"), QString(), QStringLiteral("BSD-3-Clause"),
                    QStringLiteral("https://github.com/CLIUtils/CLI11")});
    return rows;
}

} // namespace

AboutDialog::AboutDialog(const QString& databasePath, QWidget* parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("aboutDialog"));
    setWindowTitle(tr("About Foxhunt"));
    auto* layout = new QVBoxLayout(this);
    m_tabs = new QTabWidget;

    auto* about = new QLabel(
        tr("<h3>Foxhunt %1</h3><p>A workbench for training and watching trading models on E-mini S&amp;P 500 "
           "futures bars.</p><p>Copyright 2026 Foxhunt developers. Foxhunt is free software: you can redistribute "
           "it and/or modify it under the terms of the GNU General Public License as published by the Free "
           "Software Foundation, either version 3 of the License, or (at your option) any later version "
           "(%2). It comes with no warranty; see the Licence tab.</p><p>No market data is included: the "
           "synthetic series is generated on this machine and real bars are the ones you import.</p>"
           "<p>Store: %3</p>")
            .arg(QStringLiteral(FOXHUNT_VERSION), QString::fromLatin1(kFoxhuntLicence), databasePath.toHtmlEscaped()));
    about->setWordWrap(true);
    about->setTextInteractionFlags(Qt::TextBrowserInteraction);
    about->setOpenExternalLinks(true);
    m_tabs->addTab(about, tr("About"));

    m_licence = new QTextBrowser;
    m_licence->setObjectName(QStringLiteral("licenceText"));
    QFile licence(QStringLiteral(":/foxhunt/LICENSE"));
    m_licence->setPlainText(licence.open(QIODevice::ReadOnly) ? QString::fromUtf8(licence.readAll())
                                                              : tr("The licence text is missing from this build."));
    m_tabs->addTab(m_licence, tr("Licence"));

    const QList<Row> rows = components();
    m_components = new QTableWidget(static_cast<int>(rows.size()), 4);
    m_components->setObjectName(QStringLiteral("thirdParty"));
    m_components->setHorizontalHeaderLabels({tr("Component"), tr("Version"), tr("Licence"), tr("Web site")});
    m_components->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_components->verticalHeader()->hide();
    for (int r = 0; r < rows.size(); ++r) {
        const Row& row = rows[r];
        int c = 0;
        for (const QString& text :
             {row.name, row.version.isEmpty() ? tr("system library") : row.version, row.licence, row.url})
            m_components->setItem(r, c++, new QTableWidgetItem(text));
    }
    m_components->resizeColumnsToContents();
    m_components->horizontalHeader()->setStretchLastSection(true);
    m_tabs->addTab(m_components, tr("Third-party notices"));

    layout->addWidget(m_tabs);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(720, 480);
}

QString AboutDialog::licenceText() const
{
    return m_licence->toPlainText();
}

} // namespace foxhunt
