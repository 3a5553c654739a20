// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/error_text.h"

#include <c10/util/Exception.h>

namespace foxhunt {

std::string errorText(const std::exception& e)
{
    if (const auto* torchError = dynamic_cast<const c10::Error*>(&e)) {
        std::string text = torchError->what_without_backtrace();
        // LibTorch ends some messages with a newline before the (omitted) trace.
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        return text;
    }
    return e.what();
}

} // namespace foxhunt
