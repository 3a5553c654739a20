// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Human-readable text of an import batch, shown in the window and dialogs.

#include "ui/import_controller.h"

#include <QString>

#include <vector>

namespace foxhunt {

/// One paragraph per file: format, bars, duplicates, gaps, rolls, warnings, or the rejection.
QString formatImportReport(const std::vector<ImportOutcome>& outcomes);

} // namespace foxhunt
