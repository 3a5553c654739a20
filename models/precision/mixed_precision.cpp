#include "models/precision/mixed_precision.h"

#include "models/compat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace foxhunt::models::precision {

std::string to_string(HalfType type) { return type == HalfType::F16 ? "f16" : "bf16"; }

HalfType half_type_from_string(const std::string& text)
{
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == "f16" || t == "fp16" || t == "float16" || t == "half") return HalfType::F16;
    if (t == "bf16" || t == "bfloat16") return HalfType::BF16;
    throw std::invalid_argument("mixed precision: unknown dtype '" + text + "' (expected f16 or bf16)");
}

MixedPrecisionConfig MixedPrecisionConfig::disabled() { return {}; }

MixedPrecisionConfig MixedPrecisionConfig::for_ampere()
{
    MixedPrecisionConfig c;
    c.enabled = true;
    c.dtype = HalfType::BF16;
    c.loss_scale = 1.0;
    c.dynamic_loss_scale = false;
    return c;
}

MixedPrecisionConfig MixedPrecisionConfig::for_volta_turing()
{
    MixedPrecisionConfig c;
    c.enabled = true;
    c.dtype = HalfType::F16;
    c.loss_scale = 2048.0;
    c.dynamic_loss_scale = true;
    return c;
}

bool MixedPrecisionConfig::scales_loss() const
{
    if (!enabled) return false;
    if (dtype == HalfType::F16) return true;
    return dynamic_loss_scale || loss_scale != 1.0;
}

PrecisionCheck validate(const MixedPrecisionConfig& config, ComputeDevice device)
{
    PrecisionCheck r;
    r.usable = config;
    auto fail = [&](std::string problem, std::string suggestion, MixedPrecisionConfig fix) {
        r.ok = false;
        r.problem = std::move(problem);
        r.suggestion = std::move(suggestion);
        r.usable = fix;
        return r;
    };
    if (!config.enabled) return r;
    if (!(config.loss_scale > 0.0) || !std::isfinite(config.loss_scale))
        return fail("loss scale must be a positive finite number", "use 1024 (FP16) or 1 (BF16)",
                    config.dtype == HalfType::F16 ? MixedPrecisionConfig::for_volta_turing()
                                                  : MixedPrecisionConfig::for_ampere());
    if (!(config.growth_factor > 1.0) || !(config.backoff_factor > 0.0 && config.backoff_factor < 1.0) ||
        config.growth_interval <= 0) {
        MixedPrecisionConfig fix = config;
        fix.growth_factor = 2.0;
        fix.backoff_factor = 0.5;
        fix.growth_interval = 2000;
        return fail("loss scaler needs growth_factor > 1, 0 < backoff_factor < 1 and growth_interval > 0",
                    "use growth 2.0, backoff 0.5, interval 2000 (torch.amp.GradScaler's defaults)", fix);
    }
    if (device == ComputeDevice::Cpu) {
        if (config.dtype == HalfType::F16 && !compat::kCpuAutocastSupportsHalf) {
            MixedPrecisionConfig fix = MixedPrecisionConfig::for_ampere();
            return fail("FP16 autocast is a CUDA feature; this LibTorch (" TORCH_VERSION
                        ") has no FP16 autocast on the CPU",
                        "use BF16 (CPU autocast; no loss scaling needed), e.g. the for_ampere() preset", fix);
        }
        if (config.dtype == HalfType::BF16)
            r.suggestion = "BF16 on a CPU without native BF16 arithmetic (AVX512-BF16/AMX) can be slower than FP32";
        return r;
    }
    if (config.dtype == HalfType::BF16 && config.scales_loss())
        r.suggestion = "BF16 has FP32's exponent range: loss scaling is unnecessary (for_ampere() uses scale 1, static)";
    return r;
}

} // namespace foxhunt::models::precision
