// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Light and dark palettes on the Fusion style, and the chart theme that goes with each.

#include "ui/app_settings.h"

#include <QtCharts/QChart>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace foxhunt {

/// The palette a choice stands for (System: the style's standard palette).
QPalette paletteFor(PaletteChoice choice);
/// Sets the Fusion style and the palette on the whole application; remembers the choice for chartThemeFor().
void applyPalette(PaletteChoice choice);
/// The palette last applied (System before any).
PaletteChoice currentPalette();
/// The chart theme matching a choice (System follows the application palette's window lightness).
QChart::ChartTheme chartThemeFor(PaletteChoice choice);
/// Sets the matching theme on every chart view under `root` whose theme differs; returns how many changed.
int applyChartTheme(QWidget* root, PaletteChoice choice);

} // namespace foxhunt
