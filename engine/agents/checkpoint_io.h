// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers shared by the agents' checkpoints (engine-internal; includes torch).

#include "engine/store/atomic_file.h"

#include <torch/torch.h>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace foxhunt::detail {

/// Writes an archive to `path` through memory. LibTorch's file writer finishes the
/// file in its destructor, so a full disk there ends the process (std::terminate);
/// writeFileAtomically reports it as an error and leaves no partial file.
inline void saveArchive(torch::serialize::OutputArchive& archive, const std::string& path, const std::string& what)
{
    std::ostringstream bytes;
    try {
        archive.save_to(bytes);
    } catch (const c10::Error& e) {
        throw std::runtime_error(path + ": cannot write " + what + ": " + e.what_without_backtrace());
    }
    writeFileAtomically(path, bytes.view());
}

/// Host vector -> owning tensor.
template <typename T>
torch::Tensor toTensor(const std::vector<T>& values, torch::Dtype dtype)
{
    return torch::from_blob(const_cast<T*>(values.data()), {static_cast<int64_t>(values.size())}, dtype).clone();
}

/// Owning tensor -> host vector.
template <typename T>
std::vector<T> fromTensor(const torch::Tensor& tensor)
{
    // Empty tensors may come back from an archive with the default dtype.
    const torch::Tensor t = tensor.to(torch::kCPU, c10::CppTypeToScalarType<T>::value).contiguous();
    const T* p = t.data_ptr<T>();
    return std::vector<T>(p, p + t.numel());
}

/// Reads an int from an archive.
inline int64_t readInt(torch::serialize::InputArchive& archive, const std::string& key)
{
    c10::IValue v;
    archive.read(key, v);
    return v.toInt();
}

/// Reads a double from an archive.
inline double readDouble(torch::serialize::InputArchive& archive, const std::string& key)
{
    c10::IValue v;
    archive.read(key, v);
    return v.toDouble();
}

/// Reads a tensor into a fresh handle (InputArchive::read into a defined
/// tensor calls set_() on it, which must not see a tensor of another dtype).
inline torch::Tensor readTensor(torch::serialize::InputArchive& archive, const std::string& key)
{
    torch::Tensor t;
    archive.read(key, t);
    return t;
}

/// Reads a string from an archive.
inline std::string readString(torch::serialize::InputArchive& archive, const std::string& key)
{
    c10::IValue v;
    archive.read(key, v);
    return v.toStringRef();
}

/// Writes a checkpoint's run identity text (nothing when empty).
inline void writeIdentity(torch::serialize::OutputArchive& archive, const std::string& identity)
{
    if (!identity.empty()) archive.write("identity", c10::IValue(identity));
}

/// A checkpoint's run identity text; "" when the file carries none.
inline std::string readIdentity(torch::serialize::InputArchive& archive)
{
    c10::IValue v;
    return archive.try_read("identity", v) && v.isString() ? v.toStringRef() : std::string();
}

/// Flattens a module's parameters.
inline std::vector<float> flatParameters(const torch::nn::Module& module)
{
    std::vector<float> out;
    for (const auto& p : module.parameters()) {
        const torch::Tensor c = p.detach().to(torch::kCPU).contiguous();
        out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return out;
}

} // namespace foxhunt::detail
