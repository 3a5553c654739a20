// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/report/csv_field.h"

namespace foxhunt {

void appendCsvField(std::string& out, std::string_view field)
{
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
        out += field;
        return;
    }
    out += '"';
    for (const char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

std::string csvField(std::string_view field)
{
    std::string out;
    appendCsvField(out, field);
    return out;
}

} // namespace foxhunt
