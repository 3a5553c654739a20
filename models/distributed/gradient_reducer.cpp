// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/distributed/gradient_reducer.h"

#include <chrono>

namespace foxhunt::models::dist {

struct GradientReducer::Impl {
    struct Slot {
        torch::Tensor parameter;
        std::size_t bucket = 0;
        std::int64_t offset = 0; ///< element offset inside the bucket
        unsigned hook = 0;
        bool ready = false; ///< gradient copied in during this backward
    };

    struct Bucket {
        torch::Tensor flat; ///< [elements], the parameters' dtype
        std::vector<std::size_t> slots;
        std::size_t ready = 0;
        bool started = false;
        PendingReduce pending;
    };

    std::shared_ptr<Communicator> communicator;
    std::vector<Slot> slots;
    std::vector<Bucket> buckets;
    std::size_t nextToStart = 0;
    int overlapped = 0;
    std::int64_t bytes = 0;

    void start(Bucket& b)
    {
        // Parameters without a gradient this step (unused by the forward) contribute zeros.
        for (std::size_t i : b.slots)
            if (!slots[i].ready) b.flat.narrow(0, slots[i].offset, slots[i].parameter.numel()).zero_();
        b.pending = communicator->all_reduce_sum_async(b.flat);
        b.started = true;
    }

    void onGradient(std::size_t index, const torch::Tensor& grad)
    {
        Slot& s = slots[index];
        Bucket& b = buckets[s.bucket];
        {
            torch::NoGradGuard guard;
            b.flat.narrow(0, s.offset, s.parameter.numel()).copy_(grad.reshape({-1}));
        }
        if (!s.ready) {
            s.ready = true;
            ++b.ready;
        }
        // Start every full bucket that is next in line; later full ones wait their turn.
        while (nextToStart < buckets.size() && buckets[nextToStart].ready == buckets[nextToStart].slots.size()) {
            start(buckets[nextToStart++]);
            ++overlapped;
        }
    }
};

GradientReducer::GradientReducer(std::vector<torch::Tensor> parameters, std::shared_ptr<Communicator> communicator,
                                 std::int64_t bucket_bytes)
    : m_impl(std::make_unique<Impl>())
{
    TORCH_CHECK(communicator, "GradientReducer: no communicator");
    TORCH_CHECK(bucket_bytes > 0, "GradientReducer: bucket_bytes must be positive");
    Impl& d = *m_impl;
    d.communicator = std::move(communicator);
    // Reverse registration order approximates the order backward produces gradients in.
    std::vector<torch::Tensor> trainable;
    for (auto it = parameters.rbegin(); it != parameters.rend(); ++it)
        if (it->requires_grad()) trainable.push_back(*it);
    TORCH_CHECK(!trainable.empty(), "GradientReducer: no trainable parameters");
    std::int64_t bucketElements = 0, bucketBytes = 0;
    torch::ScalarType bucketType = trainable.front().scalar_type();
    // Buckets live where the group reduces: on the GPU under NCCL, else in host memory (a CUDA
    // gradient is then copied straight into the host bucket, with no device-side staging).
    const torch::Device home = trainable.front().device();
    const torch::Device bucketDevice = d.communicator->reduces_on(home) ? home : torch::Device(torch::kCPU);
    const auto flat = [&](std::int64_t n, torch::ScalarType t) {
        return torch::zeros({n}, torch::TensorOptions().dtype(t).device(bucketDevice));
    };
    for (const torch::Tensor& p : trainable) {
        const std::int64_t size = p.numel() * static_cast<std::int64_t>(p.element_size());
        if (d.buckets.empty() || bucketBytes + size > bucket_bytes || p.scalar_type() != bucketType) {
            if (!d.buckets.empty()) d.buckets.back().flat = flat(bucketElements, bucketType);
            d.buckets.emplace_back();
            bucketElements = bucketBytes = 0;
            bucketType = p.scalar_type();
        }
        Impl::Slot s;
        s.parameter = p;
        s.bucket = d.buckets.size() - 1;
        s.offset = bucketElements;
        d.buckets.back().slots.push_back(d.slots.size());
        d.slots.push_back(s);
        bucketElements += p.numel();
        bucketBytes += size;
        d.bytes += size;
    }
    d.buckets.back().flat = flat(bucketElements, bucketType);
    for (std::size_t i = 0; i < d.slots.size(); ++i) {
        Impl* impl = &d;
        d.slots[i].hook = d.slots[i].parameter.register_hook(
            [impl, i](const torch::Tensor& grad) { impl->onGradient(i, grad); });
    }
}

GradientReducer::~GradientReducer()
{
    for (Impl::Slot& s : m_impl->slots) s.parameter.remove_hook(s.hook);
}

std::size_t GradientReducer::bucket_count() const
{
    return m_impl->buckets.size();
}
Communicator& GradientReducer::communicator() const
{
    return *m_impl->communicator;
}

ReduceTimes GradientReducer::synchronize()
{
    Impl& d = *m_impl;
    ReduceTimes times;
    times.bytes = d.bytes;
    times.overlapped_buckets = d.overlapped;
    const auto t0 = std::chrono::steady_clock::now();
    while (d.nextToStart < d.buckets.size()) d.start(d.buckets[d.nextToStart++]);
    const double world = static_cast<double>(d.communicator->world_size());
    torch::NoGradGuard guard;
    for (Impl::Bucket& b : d.buckets) {
        b.pending.wait();
        b.flat.div_(world);
        for (std::size_t i : b.slots) {
            Impl::Slot& s = d.slots[i];
            torch::Tensor mean = b.flat.narrow(0, s.offset, s.parameter.numel()).view_as(s.parameter);
            if (s.parameter.grad().defined()) s.parameter.mutable_grad().copy_(mean);
            else s.parameter.mutable_grad() = mean.clone().to(s.parameter.device());
            s.ready = false;
        }
        b.ready = 0;
        b.started = false;
    }
    d.nextToStart = 0;
    d.overlapped = 0;
    times.wait_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return times;
}

} // namespace foxhunt::models::dist
