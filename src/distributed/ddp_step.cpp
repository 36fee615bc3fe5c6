// DDP as a training step: every rank holds the whole model and optimizer; gradients are
// averaged across ranks before each optimizer step. Parameters are packed into buckets of
// about bucket_bytes in reverse registration order (roughly the order backward produces
// their gradients, as PyTorch's Reducer does); when a bucket's last gradient is accumulated
// on the syncing micro-batch, its gradients are flattened and all-reduced asynchronously
// while backward goes on. The optimizer step waits for what is still in flight: that wait
// is the exposed communication (ExposedCommTimer: host time on the CPU, device events on CUDA).
//
// Not c10d's Reducer: the torch wheel exports it, but it is internal API shaped around Python
// DDP's bookkeeping (unused-parameter search, comm hooks, static graphs, a Logger), with no
// stability promise across the two LibTorch versions tokbench builds against. Hooks over
// c10d buckets are a page of code whose every wait this step can time.
#include <torch/torch.h>

#include "account/range_names.hpp"
#include "distributed/collectives.hpp"
#include "distributed/exposed_comm.hpp"
#include "distributed/grad_hooks.hpp"
#include "distributed/parallel_step.hpp"
#include "train/dtype_mode.hpp"
#include "train/parameter_shapes.hpp"
#include "train/profile_trace.hpp"

namespace tokbench::distributed {
namespace {

struct Bucket {
  std::vector<at::Tensor> params;
  std::vector<int64_t> offsets;  // of each parameter in `flat`
  at::Tensor flat;               // the bucket's gradients, flattened, for the all-reduce
  int64_t ready = 0;             // gradients accumulated on the syncing micro-batch so far
  c10::intrusive_ptr<c10d::Work> work;
};

class DdpStep final : public train::TrainStep {
 public:
  DdpStep(model::GPT model, const c10::Device& device, const ProcessGroups& groups, const DdpOptions& options)
      : model_(std::move(model)), device_(device), groups_(groups), options_(options),
        computation_(options.computation ? options.computation : train::make_eager_computation(options.dtype)),
        optimizer_((model_->to(device, train::param_dtype(options.dtype)), model_->parameters()), options.adamw,
                   device),
        comm_timer_(device) {
    model_->train();
    broadcast_parameters(*groups_.world, *model_);
    build_buckets();
  }

  at::Tensor forward_backward(const train::TokenBatch& batch, int64_t micro, int64_t grad_accum) override {
    syncing_ = !options_.skip_sync_until_last_micro || micro == grad_accum - 1;
    if (syncing_) {
      for (auto& b : buckets_) b.ready = 0;
    }
    at::Tensor loss = computation_->forward_backward(model_, batch, grad_accum);
    if (syncing_ && !options_.skip_sync_until_last_micro && micro != grad_accum - 1) {
      // Syncing every micro-batch (the reference's old behaviour): the average of the sums
      // equals the sum of the averages, so each micro-batch's reduced gradient is kept.
      finish_all_reduce();
    }
    return loss;
  }

  at::Tensor optimizer_step(const at::Tensor& loss) override {
    finish_all_reduce();
    optimizer_.step();
    optimizer_.zero_grad(options_.zero_grad);
    return mean_over_ranks(*groups_.world, loss, groups_.world_size);
  }

  double take_exposed_comm_seconds() override { return comm_timer_.take_seconds(); }
  int64_t resident_state_bytes() const override {
    return train::module_tensor_bytes(*model_) + optimizer_.state_bytes() + bucket_bytes();
  }
  int64_t optimizer_state_bytes() const override { return optimizer_.state_bytes(); }
  int64_t optimizer_state_step() const override { return optimizer_.state_step(); }
  int64_t optimizer_steps_taken() const override { return optimizer_.steps_taken(); }
  bool fused_adamw() const override { return optimizer_.fused(); }
  void release_after_failure() override { train::drop_gradients(*model_); }
  std::vector<at::Tensor> full_parameters() override { return train::clone_parameters(*model_); }
  std::string kernel_note() const override { return computation_->kernel_note(); }
  train::MemoryBreakdown memory_parts() const override {
    train::MemoryBreakdown parts;
    parts.parameters = train::parameter_bytes(*model_);
    parts.gradients = train::whole_gradient_bytes(*model_);
    parts.optimizer_state = optimizer_.state_bytes();
    parts.comm_buffers = bucket_bytes();  // allocated once, held for the run
    return parts;
  }
  void set_forward_end_callback(std::function<void()> callback) override {
    computation_->set_forward_end_callback(std::move(callback));
  }
  model::GPT model() const override { return model_; }
  const parallel::Layout* comm_layout() const override { return &layout_; }

 private:

  // The buckets as parallel::layout_ddp_buckets lays them out; each gets its flat buffer here.
  void build_buckets() {
    auto params = model_->parameters();
    layout_ = parallel::layout_ddp_buckets(train::parameter_shapes(model_), options_.bucket_bytes);
    for (const auto& unit : layout_.units) {
      Bucket bucket;
      for (const int64_t i : unit.parameters) bucket.params.push_back(params[i]);
      bucket.offsets = unit.offsets;
      bucket.flat = at::empty({unit.elements}, bucket.params.front().options().requires_grad(false));
      buckets_.push_back(std::move(bucket));
    }
    if (!options_.overlap) return;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      for (auto& p : buckets_[b].params) {
        on_grad_accumulated(p, device_, [this, b] {
          Bucket& bucket = buckets_[b];
          if (syncing_ && ++bucket.ready == static_cast<int64_t>(bucket.params.size())) launch(bucket);
        });
      }
    }
  }

  int64_t bucket_bytes() const {
    int64_t bytes = 0;
    for (const auto& b : buckets_) bytes += static_cast<int64_t>(b.flat.nbytes());
    return bytes;
  }

  void launch(Bucket& bucket) {
    torch::NoGradGuard no_grad;
    {
      train::TraceRange range(account::ranges::kCommBuffers);  // the time account's elementwise work
      fill_flat(bucket);
    }
    std::vector<at::Tensor> tensors{bucket.flat};
    bucket.work = groups_.world->allreduce(tensors);
  }

  // The bucket's gradients into its flat buffer.
  static void fill_flat(Bucket& bucket) {
    for (std::size_t i = 0; i < bucket.params.size(); ++i) {
      const at::Tensor& g = bucket.params[i].grad();
      auto slot = bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel());
      if (g.defined()) {
        slot.copy_(g.reshape({-1}));
      } else {
        slot.zero_();  // a parameter backward did not reach contributes nothing
      }
    }
  }

  // Launches what backward did not (no overlap, or parameters without gradients), waits for
  // every bucket, and writes the averaged gradients back.
  void finish_all_reduce() {
    torch::NoGradGuard no_grad;
    for (auto& b : buckets_)
      if (!b.work) launch(b);
    const double scale = 1.0 / static_cast<double>(groups_.world_size);
    for (auto& b : buckets_) {
      comm_timer_.wait(*b.work);
      b.work.reset();
      train::TraceRange range(account::ranges::kCommBuffers);  // the time account's elementwise work
      b.flat.mul_(scale);
      for (std::size_t i = 0; i < b.params.size(); ++i) {
        auto& p = b.params[i];
        auto averaged = b.flat.narrow(0, b.offsets[i], p.numel()).view(p.sizes());
        if (p.grad().defined()) {
          p.mutable_grad().copy_(averaged);
        } else {
          p.mutable_grad() = averaged.clone();
        }
      }
      b.ready = 0;
    }
  }


  model::GPT model_;
  c10::Device device_;
  ProcessGroups groups_;
  DdpOptions options_;
  std::shared_ptr<train::LossComputation> computation_;
  train::AdamW optimizer_;
  parallel::Layout layout_;  // what buckets_ were built from
  std::vector<Bucket> buckets_;
  bool syncing_ = true;
  ExposedCommTimer comm_timer_;
};

}  // namespace

std::unique_ptr<train::TrainStep> make_ddp_step(model::GPT model, const c10::Device& device,
                                                const ProcessGroups& groups, const DdpOptions& options) {
  return std::make_unique<DdpStep>(std::move(model), device, groups, options);
}

}  // namespace tokbench::distributed
