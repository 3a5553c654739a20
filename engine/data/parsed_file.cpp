// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/data/parsed_file.h"

#include <stdexcept>

namespace foxhunt {

std::string toString(FileFormat format)
{
    switch (format) {
    case FileFormat::Auto: return "auto";
    case FileFormat::Dbn: return "dbn";
    case FileFormat::DatabentoCsv: return "databento-csv";
    case FileFormat::Csv: return "csv";
    }
    return "auto";
}

FileFormat fileFormatFromString(const std::string& name)
{
    if (name == "auto") return FileFormat::Auto;
    if (name == "dbn") return FileFormat::Dbn;
    if (name == "databento-csv") return FileFormat::DatabentoCsv;
    if (name == "csv") return FileFormat::Csv;
    throw std::invalid_argument("unknown format '" + name + "' (auto, dbn, databento-csv, csv)");
}

} // namespace foxhunt
