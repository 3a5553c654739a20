// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/precision/kernel_plan.h"

#include "models/compat.h"
#include "models/hardware/machine_probe.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

namespace foxhunt::models::precision {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Timings measured in this process, for callers without a cache: a refresh of the same model
// does not time its shapes again.
struct ProcessMemo {
    std::mutex mutex;
    std::map<std::string, std::vector<KernelTiming>> timings;
};

ProcessMemo& memo()
{
    static ProcessMemo m;
    return m;
}

void synchronize(const torch::Device& device)
{
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

bool allowed(Int8Backend backend, const KernelShape& shape)
{
    return backend != Int8Backend::Auto && (backend != Int8Backend::Static || shape.static_range);
}

} // namespace

std::string KernelShape::key() const
{
    return std::to_string(in_features) + "x" + std::to_string(out_features) + " @ " + std::to_string(rows) +
           (static_range ? " static" : "");
}

std::vector<Int8Backend> candidate_backends(const KernelShape& shape, const torch::Device& device)
{
    std::vector<Int8Backend> c{Int8Backend::Float, Int8Backend::Dequantize};
    if (device.is_cpu() && onednn_quantized_available()) c.push_back(Int8Backend::OneDnn);
    if (device.is_cuda() && compat::kHasIntMm) c.push_back(Int8Backend::CudaIntMm);
    if (shape.static_range) c.push_back(Int8Backend::Static);
    return c;
}

std::vector<KernelTiming> time_kernels(const KernelShape& shape, const torch::Device& device,
                                       const std::vector<Int8Backend>& candidates)
{
    torch::NoGradGuard no_grad;
    // Its own generator: timing must not move the caller's random stream.
    auto generator = at::detail::createCPUGenerator(/*seed_val=*/0x5eed);
    auto opts = torch::TensorOptions().dtype(torch::kFloat);
    const auto weight = (at::normal(0.0, 1.0, {shape.out_features, shape.in_features}, generator, opts) /
                         std::sqrt(static_cast<double>(std::max<int64_t>(1, shape.in_features))))
                            .to(device);
    const auto bias = (at::normal(0.0, 0.1, {shape.out_features}, generator, opts)).to(device);
    const auto x = at::normal(0.0, 1.0, {shape.rows, shape.in_features}, generator, opts).to(device);
    const auto reference = torch::nn::functional::linear(x, weight, bias);
    const double reference_norm = std::max(reference.norm().item<double>(), 1e-30);

    auto layer_options = Int8LinearOptions();
    if (shape.static_range) layer_options.activation_absmax(x.abs().max().item<double>());
    Int8Linear layer(weight, bias, layer_options);
    layer->to(device);

    std::vector<KernelTiming> timings;
    for (const Int8Backend backend : candidates) {
        if (!allowed(backend, shape)) continue;
        layer->set_plan({{shape.rows, backend}});
        KernelTiming t;
        t.backend = backend;
        torch::Tensor y;
        try {
            for (int i = 0; i < 2; ++i) y = layer->forward(x); // first-use packing and allocations
            synchronize(device);
        } catch (const c10::Error&) {
            continue; // a backend this build cannot run at this shape is no candidate
        }
        t.relative_error = (y - reference).norm().item<double>() / reference_norm;
        std::vector<double> micros;
        const auto budget = Clock::now();
        while (micros.size() < 5 || (micros.size() < 50 && seconds_since(budget) < 0.002)) {
            const auto t0 = Clock::now();
            layer->forward(x);
            synchronize(device);
            micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        std::nth_element(micros.begin(), micros.begin() + static_cast<std::ptrdiff_t>(micros.size() / 2), micros.end());
        t.micros = micros[micros.size() / 2];
        timings.push_back(t);
    }
    return timings;
}

Int8Backend choose_backend(const std::vector<KernelTiming>& timings, double max_error,
                           const std::vector<Int8Backend>& exclude)
{
    const KernelTiming* best = nullptr;
    for (const KernelTiming& t : timings) {
        if (t.relative_error > max_error || !std::isfinite(t.relative_error)) continue;
        if (std::find(exclude.begin(), exclude.end(), t.backend) != exclude.end()) continue;
        if (!best || t.micros < best->micros) best = &t;
    }
    return best ? best->backend : Int8Backend::Float;
}

std::string choose_block_kernel(const std::vector<BlockTiming>& timings, double max_error)
{
    const BlockTiming* best = nullptr;
    for (const BlockTiming& t : timings)
        if (t.relative_error <= max_error && (!best || t.micros < best->micros)) best = &t;
    return best ? best->kernel : std::string("layers");
}

std::string KernelPlan::summary() const
{
    std::map<std::string, int> counts;
    for (const LayerKernel& l : layers) ++counts[to_string(l.backend)];
    for (const BlockKernel& b : blocks)
        if (b.kernel != "layers") ++counts[b.kernel];
    std::vector<std::pair<std::string, int>> ordered(counts.begin(), counts.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string s;
    for (const auto& [name, n] : ordered) s += (s.empty() ? "" : ", ") + name + " " + std::to_string(n);
    return s.empty() ? "no int8 layers" : s;
}

std::vector<std::string> FusedInt8Block::choose_block_kernels(const std::vector<int64_t>& rows,
                                                              const std::vector<std::vector<BlockTiming>>& timings,
                                                              double max_error) const
{
    (void)rows;
    std::vector<std::string> chosen;
    for (const auto& t : timings) chosen.push_back(choose_block_kernel(t, max_error));
    return chosen;
}

std::vector<BlockTiming> time_block_candidates(const std::vector<std::string>& kernels,
                                               const std::function<torch::Tensor(const std::string&)>& run)
{
    torch::NoGradGuard no_grad;
    std::vector<BlockTiming> timings;
    torch::Tensor reference;
    for (const std::string& kernel : kernels) {
        const auto y = run(kernel);
        run(kernel); // warm: packs, caches
        std::vector<double> micros;
        const auto t0 = Clock::now();
        while (micros.size() < 5 || (micros.size() < 50 && Clock::now() - t0 < std::chrono::milliseconds(4))) {
            const auto a = Clock::now();
            run(kernel);
            micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
        }
        std::nth_element(micros.begin(), micros.begin() + static_cast<long>(micros.size() / 2), micros.end());
        double error = 0.0;
        if (!reference.defined()) {
            reference = y;
        } else {
            const double norm = reference.norm().item<double>();
            error = norm > 0.0 ? (y - reference).norm().item<double>() / norm : 0.0;
        }
        timings.push_back({kernel, micros[micros.size() / 2], error});
    }
    return timings;
}

KernelPlan plan_int8_kernels(torch::nn::Module& int8_model, const std::function<void()>& serve,
                             const KernelPlanOptions& options)
{
    std::vector<std::pair<std::string, Int8LinearImpl*>> layers;
    std::vector<std::pair<std::string, FusedInt8Block*>> blocks;
    for (const auto& item : int8_model.named_modules()) {
        if (auto* l = item.value()->as<Int8LinearImpl>()) layers.emplace_back(item.key(), l);
        if (auto* b = dynamic_cast<FusedInt8Block*>(item.value().get())) blocks.emplace_back(item.key(), b);
    }

    // The rows each layer and block serves, from a run through the default backends.
    const auto record = [&](bool on) {
        for (auto& [name, l] : layers) l->set_recording(on);
        for (auto& [name, b] : blocks) b->set_block_recording(on);
    };
    for (auto& [name, l] : layers) l->set_plan({});
    for (auto& [name, b] : blocks) b->set_block_plan({});
    record(true);
    try {
        torch::NoGradGuard no_grad;
        serve();
    } catch (...) {
        record(false);
        throw;
    }
    record(false);

    KernelPlan plan;
    plan.by_hand = options.backend != Int8Backend::Auto;
    const std::string machine = options.machine.empty() ? hardware::this_machine().fingerprint() : options.machine;
    const auto first = int8_model.buffers();
    const torch::Device device = first.empty() ? torch::Device(torch::kCPU) : first.front().device();
    const std::string device_name = device.str();
    const auto t0 = Clock::now();
    std::map<KernelShape, std::pair<std::vector<KernelTiming>, bool>> measured; // shape -> (timings, from cache)

    for (auto& [name, l] : layers) {
        std::vector<RowsBackend> entries;
        for (const int64_t rows : l->recorded_rows()) {
            const KernelShape shape{l->in_features(), l->out_features(), rows,
                                    l->options.activation_absmax().has_value()};
            LayerKernel k{name, shape, Int8Backend::Dequantize, {}, false};
            if (plan.by_hand) {
                // Static by hand applies where there is a range; elsewhere the layer's default.
                k.backend = allowed(options.backend, shape) ? options.backend : l->resolved_backend(device.type());
            } else {
                auto found = measured.find(shape);
                if (found == measured.end()) {
                    const std::string memo_key = machine + "|" + device_name + "|" + shape.key();
                    std::optional<std::vector<KernelTiming>> timings;
                    if (options.cache) {
                        timings = options.cache->find(machine, device_name, shape);
                    } else {
                        std::lock_guard lock(memo().mutex);
                        if (auto m = memo().timings.find(memo_key); m != memo().timings.end()) timings = m->second;
                    }
                    const bool cached = timings.has_value();
                    if (!cached) {
                        const auto candidates = candidate_backends(shape, device);
                        timings = options.timer ? options.timer(shape, device, candidates)
                                                : time_kernels(shape, device, candidates);
                        if (options.cache) {
                            options.cache->store(machine, device_name, shape, *timings);
                        } else {
                            std::lock_guard lock(memo().mutex);
                            memo().timings[memo_key] = *timings;
                        }
                    }
                    ++(cached ? plan.cached_shapes : plan.measured_shapes);
                    found = measured.emplace(shape, std::make_pair(std::move(*timings), cached)).first;
                }
                k.timings = found->second.first;
                k.cached = found->second.second;
                std::vector<KernelTiming> usable;
                for (const KernelTiming& t : k.timings)
                    if (allowed(t.backend, shape)) usable.push_back(t);
                k.backend = choose_backend(usable, options.max_layer_error, options.exclude);
            }
            entries.push_back({rows, k.backend});
            plan.layers.push_back(std::move(k));
        }
        l->set_plan(std::move(entries));
    }
    // Blocks are timed through the layers' plan just set, so "layers" is what they would serve.
    if (!plan.by_hand) {
        for (auto& [name, b] : blocks) {
            const std::vector<int64_t> rows = b->block_recorded_rows();
            std::vector<std::vector<BlockTiming>> timings;
            for (const int64_t r : rows) {
                torch::NoGradGuard no_grad;
                timings.push_back(b->time_block_kernels(r));
            }
            const std::vector<std::string> chosen = b->choose_block_kernels(rows, timings, options.max_layer_error);
            TORCH_CHECK(chosen.size() == rows.size(), "plan_int8_kernels: block ", name, " chose ", chosen.size(),
                        " kernels for ", rows.size(), " row counts");
            std::vector<std::pair<int64_t, std::string>> entries;
            for (size_t i = 0; i < rows.size(); ++i) {
                entries.emplace_back(rows[i], chosen[i]);
                plan.blocks.push_back({name, rows[i], chosen[i], std::move(timings[i])});
            }
            b->set_block_plan(std::move(entries));
            plan.released_bytes += b->release_unplanned();
        }
    }
    plan.measure_seconds = seconds_since(t0);
    return plan;
}

} // namespace foxhunt::models::precision
