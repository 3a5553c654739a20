// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// RFC 4180 fields for the CSV files the engine writes.

#include <string>
#include <string_view>

namespace foxhunt {

/// Appends one CSV field: as is when plain, else in double quotes with each quote doubled
/// (a field holding a comma, a quote, a CR or an LF, per RFC 4180).
void appendCsvField(std::string& out, std::string_view field);

/// The field as appendCsvField writes it.
std::string csvField(std::string_view field);

} // namespace foxhunt
