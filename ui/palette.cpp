// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/palette.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

namespace foxhunt {

namespace {

PaletteChoice g_current = PaletteChoice::System;

QPalette darkPalette()
{
    // Fusion's dark scheme: greys with enough contrast for chart text, a blue highlight.
    QPalette p;
    const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225), disabled(128, 128, 128);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, QColor(90, 160, 240));
    p.setColor(QPalette::Highlight, QColor(42, 130, 218));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, QColor(70, 70, 74));
    p.setColor(QPalette::Midlight, QColor(60, 60, 64));
    p.setColor(QPalette::Mid, QColor(40, 40, 42));
    p.setColor(QPalette::Dark, QColor(20, 20, 22));
    p.setColor(QPalette::Shadow, Qt::black);
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

QPalette lightPalette()
{
    QPalette p(QColor(239, 239, 239));
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::AlternateBase, QColor(247, 247, 247));
    p.setColor(QPalette::Text, Qt::black);
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::ButtonText, Qt::black);
    p.setColor(QPalette::Highlight, QColor(48, 140, 198));
    p.setColor(QPalette::HighlightedText, Qt::white);
    return p;
}

} // namespace

QPalette paletteFor(PaletteChoice choice)
{
    switch (choice) {
    case PaletteChoice::Light: return lightPalette();
    case PaletteChoice::Dark: return darkPalette();
    case PaletteChoice::System: break;
    }
    return QApplication::style()->standardPalette();
}

void applyPalette(PaletteChoice choice)
{
    // Fusion draws every palette role, so our light and dark palettes look the same on any desktop;
    // "System" keeps (or returns to) the desktop's own widget style and colours.
    static const QString desktopStyle = QApplication::style()->name();
    const QString wanted = choice == PaletteChoice::System ? desktopStyle : QStringLiteral("Fusion");
    if (QApplication::style()->name().compare(wanted, Qt::CaseInsensitive) != 0)
        if (QStyle* style = QStyleFactory::create(wanted)) QApplication::setStyle(style);
    g_current = choice;
    // An empty palette resolves every role from the style and platform: the system's colours.
    QApplication::setPalette(choice == PaletteChoice::System ? QPalette() : paletteFor(choice));
}

PaletteChoice currentPalette()
{
    return g_current;
}

QChart::ChartTheme chartThemeFor(PaletteChoice choice)
{
    switch (choice) {
    case PaletteChoice::Light: return QChart::ChartThemeLight;
    case PaletteChoice::Dark: return QChart::ChartThemeDark;
    case PaletteChoice::System: break;
    }
    return QApplication::palette().color(QPalette::Window).lightness() < 128 ? QChart::ChartThemeDark
                                                                             : QChart::ChartThemeLight;
}

int applyChartTheme(QWidget* root, PaletteChoice choice)
{
    if (!root) return 0;
    const QChart::ChartTheme theme = chartThemeFor(choice);
    int changed = 0;
    for (QChartView* view : root->findChildren<QChartView*>()) {
        if (!view->chart() || view->chart()->theme() == theme) continue;
        view->chart()->setTheme(theme);
        ++changed;
    }
    return changed;
}

} // namespace foxhunt
