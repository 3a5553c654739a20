// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/store/sha256.h"

#include "engine/data/import_error.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace foxhunt {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
    ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>())
{
    m_impl->ctx = EVP_MD_CTX_new();
    if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256: OpenSSL digest initialisation failed");
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes)
{
    if (EVP_DigestUpdate(m_impl->ctx, bytes.data(), bytes.size()) != 1)
        throw std::runtime_error("SHA-256: OpenSSL digest update failed");
}

std::string Sha256::hex()
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(m_impl->ctx, digest, &length) != 1)
        throw std::runtime_error("SHA-256: OpenSSL digest finalisation failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(kHex[digest[i] >> 4]);
        out.push_back(kHex[digest[i] & 0xF]);
    }
    return out;
}

std::string sha256Hex(std::string_view bytes)
{
    Sha256 hasher;
    hasher.update(bytes);
    return hasher.hex();
}

std::string sha256File(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ImportError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    Sha256 hasher;
    std::vector<char> buffer(1 << 20);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto got = in.gcount();
        if (got > 0) hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
    if (in.bad()) throw ImportError(path, 0, "read error while hashing");
    return hasher.hex();
}

} // namespace foxhunt
