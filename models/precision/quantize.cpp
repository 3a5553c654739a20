// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/quantize.h"

#include <algorithm>

namespace foxhunt::models::precision {

int64_t module_bytes(const torch::nn::Module& module)
{
    int64_t n = 0;
    for (const auto& p : module.parameters()) n += p.numel() * p.element_size();
    for (const auto& b : module.buffers()) n += b.numel() * b.element_size();
    return n;
}

std::vector<std::pair<std::string, int64_t>> named_tensor_bytes(const torch::nn::Module& module)
{
    std::vector<std::pair<std::string, int64_t>> v;
    for (const auto& p : module.named_parameters())
        v.emplace_back(p.key(), p.value().numel() * p.value().element_size());
    for (const auto& b : module.named_buffers()) v.emplace_back(b.key(), b.value().numel() * b.value().element_size());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
}

void check_quantizable(const torch::nn::Module& module)
{
    std::string blocked;
    int64_t quantizable = 0;
    for (const auto& item : module.named_modules()) {
        const auto& m = item.value();
        const std::string name = item.key().empty() ? std::string("(root)") : item.key();
        if (m->as<QuantizableLinearImpl>() || m->as<QuantizableLstmImpl>()) ++quantizable;
        const char* kind = m->as<torch::nn::LinearImpl>()               ? "torch::nn::Linear"
                           : m->as<torch::nn::LSTMImpl>()               ? "torch::nn::LSTM"
                           : m->as<torch::nn::GRUImpl>()                ? "torch::nn::GRU"
                           : m->as<torch::nn::RNNImpl>()                ? "torch::nn::RNN"
                           : m->as<torch::nn::MultiheadAttentionImpl>() ? "torch::nn::MultiheadAttention"
                                                                        : nullptr;
        if (kind) blocked += (blocked.empty() ? "" : ", ") + name + " (" + kind + ")";
    }
    if (!blocked.empty())
        throw NotQuantizable(std::string(__FILE__) + ": quantize_for_inference: cannot swap " + blocked +
                             " for int8; build these with precision::QuantizableLinear / QuantizableLstm");
    if (quantizable == 0)
        throw NotQuantizable(std::string(__FILE__) +
                             ": quantize_for_inference: the model has no QuantizableLinear or QuantizableLstm layer");
}

QuantizeReport quantize_module(torch::nn::Module& module, const QuantizeOptions& options)
{
    check_quantizable(module);
    QuantizeReport report;
    report.float_bytes = module_bytes(module);
    module.eval();
    const auto modules = module.named_modules();
    if (options.calibrate) {
        for (const auto& item : modules) {
            if (auto* l = item.value()->as<QuantizableLinearImpl>()) l->set_observing(true);
            if (auto* l = item.value()->as<QuantizableLstmImpl>()) l->set_observing(true);
        }
        {
            torch::NoGradGuard ng;
            options.calibrate(module);
        }
        for (const auto& item : modules) {
            if (auto* l = item.value()->as<QuantizableLinearImpl>()) l->set_observing(false);
            if (auto* l = item.value()->as<QuantizableLstmImpl>()) l->set_observing(false);
        }
    }
    const bool static_range = static_cast<bool>(options.calibrate);
    for (const auto& item : modules) {
        if (auto* l = item.value()->as<QuantizableLinearImpl>()) {
            // A layer no calibration sample reached keeps a dynamic range rather than failing.
            l->quantize(options.backend, static_range && l->observed_absmax() > 0.0);
            ++report.linear_layers;
            report.quantized.push_back(item.key());
        } else if (auto* l = item.value()->as<QuantizableLstmImpl>()) {
            l->quantize(options.backend, static_range && l->observed_absmax() > 0.0);
            ++report.lstm_layers;
            report.quantized.push_back(item.key());
        }
        if (auto* c = dynamic_cast<Int8Convertible*>(item.value().get()); c && !c->converted_to_int8()) {
            c->convert_to_int8();
            ++report.converted_modules;
            report.quantized.push_back(item.key().empty() ? std::string("(root)") : item.key());
        }
    }
    report.int8_bytes = module_bytes(module);
    return report;
}

void copy_state(const torch::nn::Module& from, torch::nn::Module& to)
{
    torch::NoGradGuard ng;
    auto dst_params = to.named_parameters();
    for (const auto& p : from.named_parameters()) {
        auto* d = dst_params.find(p.key());
        TORCH_CHECK(d != nullptr, "copy_state: no parameter '", p.key(), "' in the destination");
        d->copy_(p.value());
    }
    auto dst_buffers = to.named_buffers();
    for (const auto& b : from.named_buffers()) {
        auto* d = dst_buffers.find(b.key());
        TORCH_CHECK(d != nullptr, "copy_state: no buffer '", b.key(), "' in the destination");
        d->copy_(b.value());
    }
}

} // namespace foxhunt::models::precision
