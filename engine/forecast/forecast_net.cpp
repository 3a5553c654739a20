// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/forecast/forecast_net.h"

#include <stdexcept>
#include <utility>

namespace foxhunt::detail {

namespace mm = foxhunt::models::mamba2;
namespace mt = foxhunt::models::tft;
namespace mp = foxhunt::models::precision;

void ForecastNet::addInterpretation(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                    InterpretationSums&)
{
    throw std::logic_error("this forecaster's network has no interpretation");
}

namespace {

/// What every network shares: a TORCH_MODULE holder behind the interface, and quantizing it.
template <class Derived, class Holder>
class HeldNet : public ForecastNet {
public:
    explicit HeldNet(Holder net) : m_net(std::move(net)) { }

    torch::nn::Module& module() override { return *m_net; }

    std::shared_ptr<ForecastNet> quantized(const Calibration& calibrate, mp::QuantizeReport* report) const override
    {
        mp::QuantizeOptions options;
        if (calibrate)
            options.calibrate = [&calibrate](torch::nn::Module& copy) {
                Derived view(
                    Holder(std::dynamic_pointer_cast<typename Holder::ContainedType>(copy.shared_from_this())));
                calibrate(view);
            };
        return std::make_shared<Derived>(mp::quantize_for_inference(m_net, options, report));
    }

protected:
    Holder m_net;
};

class Mamba2Net final : public HeldNet<Mamba2Net, mm::Mamba2Forecaster> {
public:
    using HeldNet::HeldNet;

    torch::Tensor forecast(const torch::Tensor& past, const torch::Tensor& known, const torch::Tensor&) override
    {
        return m_net->forward(past, known);
    }
};

class TftNet final : public HeldNet<TftNet, mt::TemporalFusionTransformer> {
public:
    using HeldNet::HeldNet;

    torch::Tensor forecast(const torch::Tensor& past, const torch::Tensor& known, const torch::Tensor& statics) override
    {
        return m_net->forward(past, known, statics).quantiles;
    }

    bool interprets() const override { return true; }

    void addInterpretation(const torch::Tensor& past, const torch::Tensor& known, const torch::Tensor& statics,
                           InterpretationSums& sums) override
    {
        const mt::TftOutput out = m_net->forward(past, known, statics);
        const auto add = [](torch::Tensor& sum, const torch::Tensor& x) {
            if (!x.defined() || x.numel() == 0) return;
            const torch::Tensor s = x.to(torch::kDouble).sum(0);
            sum = sum.defined() ? sum + s : s;
        };
        add(sums.encoder, out.encoder_importances);
        add(sums.decoder, out.decoder_importances);
        add(sums.statics, out.static_importances);
        add(sums.attention, out.attention.mean(1));
    }
};

} // namespace

mm::Mamba2ForecasterOptions mamba2Options(const ForecasterConfig& c, const ForecastNetShape& s)
{
    return mm::Mamba2ForecasterOptions(s.inputs, s.horizon, s.quantiles)
        .known_features(s.known)
        .d_model(c.dModel)
        .n_layers(c.layers)
        .d_state(c.dState)
        .head_dim(c.headDim)
        .expand(c.expand)
        .ngroups(c.ngroups)
        .chunk_size(c.chunkSize);
}

mt::TftOptions tftOptions(const ForecasterConfig& c, const ForecastNetShape& s)
{
    return mt::TftOptions(s.inputs, s.known, s.horizon, s.quantiles)
        .n_static(s.statics)
        .hidden_size(c.hiddenSize)
        .embedding_size(c.embeddingSize)
        .n_heads(c.heads)
        .lstm_layers(c.lstmLayers)
        .dropout(c.dropout);
}

std::shared_ptr<ForecastNet> makeForecastNet(const ForecasterConfig& c, const ForecastNetShape& s)
{
    switch (c.kind) {
    case ForecasterKind::Mamba2: return std::make_shared<Mamba2Net>(mm::Mamba2Forecaster(mamba2Options(c, s)));
    case ForecasterKind::Tft: return std::make_shared<TftNet>(mt::TemporalFusionTransformer(tftOptions(c, s)));
    }
    throw std::invalid_argument("makeForecastNet: unknown forecaster kind");
}

} // namespace foxhunt::detail
