// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/int8_backend.h"

namespace foxhunt::models::precision {

std::string to_string(Int8Backend backend)
{
    switch (backend) {
    case Int8Backend::Auto: return "auto";
    case Int8Backend::OneDnn: return "onednn";
    case Int8Backend::CudaIntMm: return "cuda-int-mm";
    case Int8Backend::Dequantize: return "dequantize";
    case Int8Backend::Float: return "fp32";
    case Int8Backend::Static: return "static";
    }
    return "unknown";
}

std::optional<Int8Backend> int8_backend_from_string(const std::string& name)
{
    for (const Int8Backend b : {Int8Backend::Auto, Int8Backend::OneDnn, Int8Backend::CudaIntMm, Int8Backend::Dequantize,
                                Int8Backend::Float, Int8Backend::Static})
        if (to_string(b) == name) return b;
    return std::nullopt;
}

} // namespace foxhunt::models::precision
