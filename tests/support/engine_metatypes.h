// SPDX-License-Identifier: GPL-3.0-or-later
// The engine's enums as Qt Test data columns, declared once for the tests that share them
// (a test bundle compiles several of those tests as one translation unit).
#pragma once

#include "engine/forecast/forecaster_trainer.h"
#include "engine/session/training_session.h"

#include <QMetaType>

Q_DECLARE_METATYPE(foxhunt::ForecasterKind)
Q_DECLARE_METATYPE(foxhunt::ModelKind)
