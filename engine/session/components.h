// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The libraries the engine links or compiles in, with their versions and licences, for the About
// dialog, `foxhunt-cli --version --verbose` style output and the package's copyright notice.

#include <string>
#include <vector>

namespace foxhunt {

/// One third-party component.
struct Component {
    std::string name;
    std::string version; ///< as the linked library reports it ("" when it cannot tell)
    std::string licence; ///< SPDX expression
    std::string url;
};

/// LibTorch, SQLite, zstd, OpenSSL (SHA-256), date, nlohmann-json and OpenBLAS, in that order.
std::vector<Component> engineComponents();

/// Foxhunt's own licence (SPDX).
inline constexpr const char* kFoxhuntLicence = "GPL-3.0-or-later";

} // namespace foxhunt
