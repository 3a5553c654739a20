// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/session/components.h"

#include "models/runtime.h"

#include <nlohmann/json.hpp>
#include <openssl/opensslv.h>
#include <sqlite3.h>
#include <zstd.h>

namespace foxhunt {

std::vector<Component> engineComponents()
{
    const std::string json = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                             std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                             std::to_string(NLOHMANN_JSON_VERSION_PATCH);
    return {
        {"LibTorch", models::torchVersion(), "BSD-3-Clause", "https://pytorch.org"},
        {"SQLite", sqlite3_libversion(), "blessing (public domain)", "https://sqlite.org"},
        {"zstd", ZSTD_versionString(), "BSD-3-Clause OR GPL-2.0-only", "https://facebook.github.io/zstd/"},
        {"OpenSSL (libcrypto, SHA-256)", OPENSSL_VERSION_TEXT, "Apache-2.0", "https://www.openssl.org"},
        {"date (Howard Hinnant)", "", "MIT", "https://github.com/HowardHinnant/date"},
        {"nlohmann-json", json, "MIT", "https://github.com/nlohmann/json"},
        {"OpenBLAS (through libblas.so.3)", "", "BSD-3-Clause", "https://www.openblas.net"},
    };
}

} // namespace foxhunt
