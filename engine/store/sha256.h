// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// SHA-256 through OpenSSL's EVP interface: file identity for imports.

#include <memory>
#include <string>
#include <string_view>

namespace foxhunt {

/// Incremental SHA-256; hex() finishes it.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(std::string_view bytes);
    /// Lower-case hex digest; the hasher cannot be updated afterwards.
    std::string hex();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// SHA-256 of a byte string, lower-case hex.
std::string sha256Hex(std::string_view bytes);

/// SHA-256 of a file's bytes, streamed. Throws ImportError when it cannot be read.
std::string sha256File(const std::string& path);

} // namespace foxhunt
