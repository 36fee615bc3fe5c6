// The single-device step (train_step.hpp), whichever computation it runs, and the eager loss
// computation (loss_computation.hpp), the default of every step.
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <unordered_set>

#include "model/python_numbers.hpp"
#include "train/dtype_mode.hpp"
#include "train/profile_trace.hpp"
#include "train/train_step.hpp"

namespace tokbench::train {
namespace {

// C++ twin of `with torch.autocast(device_type, dtype=torch.bfloat16)`: the cast cache is
// cleared when the outermost region exits, or stale bf16 copies of updated weights would
// be reused by the next forward.
class AutocastRegion {
 public:
  AutocastRegion(c10::DeviceType device_type, bool enabled) : device_type_(device_type), enabled_(enabled) {
    if (!enabled_) return;
    previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
    previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
    at::autocast::set_autocast_enabled(device_type_, true);
    at::autocast::set_autocast_dtype(device_type_, at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
    at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  c10::DeviceType device_type_;
  bool enabled_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

class EagerComputation final : public LossComputation {
 public:
  explicit EagerComputation(model::TrainPrecision dtype) : dtype_(dtype) {}
  at::Tensor forward_backward(model::GPT& model, const TokenBatch& batch, int64_t grad_accum) override {
    return forward_backward_loss(model, batch, dtype_, grad_accum, [this] { forward_ended(); });
  }

 private:
  model::TrainPrecision dtype_;
};

class EagerStep final : public TrainStep {
 public:
  EagerStep(model::GPT model, const c10::Device& device, const EagerStepOptions& options)
      : model_(std::move(model)), options_(options),
        computation_(options.computation ? options.computation : make_eager_computation(options.dtype)),
        optimizer_((model_->to(device, param_dtype(options.dtype)), model_->parameters()), options.adamw, device) {
    model_->train();
  }

  at::Tensor forward_backward(const TokenBatch& batch, int64_t /*micro*/, int64_t grad_accum) override {
    return computation_->forward_backward(model_, batch, grad_accum);
  }

  at::Tensor optimizer_step(const at::Tensor& loss) override {
    optimizer_.step();
    optimizer_.zero_grad(options_.zero_grad);
    return loss;
  }

  int64_t resident_state_bytes() const override {
    return module_tensor_bytes(*model_) + optimizer_.state_bytes();
  }
  int64_t optimizer_state_bytes() const override { return optimizer_.state_bytes(); }
  int64_t optimizer_state_step() const override { return optimizer_.state_step(); }
  int64_t optimizer_steps_taken() const override { return optimizer_.steps_taken(); }
  bool fused_adamw() const override { return optimizer_.fused(); }

  void release_after_failure() override { drop_gradients(*model_); }
  std::vector<at::Tensor> full_parameters() override { return clone_parameters(*model_); }
  std::string kernel_note() const override { return computation_->kernel_note(); }
  MemoryBreakdown memory_parts() const override {
    MemoryBreakdown parts;
    parts.parameters = parameter_bytes(*model_);
    parts.gradients = whole_gradient_bytes(*model_);
    parts.optimizer_state = optimizer_.state_bytes();
    return parts;
  }
  void set_forward_end_callback(std::function<void()> callback) override {
    computation_->set_forward_end_callback(std::move(callback));
  }
  model::GPT model() const override { return model_; }

 private:
  model::GPT model_;
  EagerStepOptions options_;
  std::shared_ptr<LossComputation> computation_;
  AdamW optimizer_;
};

}  // namespace

std::shared_ptr<LossComputation> make_eager_computation(model::TrainPrecision dtype) {
  return std::make_shared<EagerComputation>(dtype);
}

at::Tensor forward_backward_loss(model::GPT& model, const TokenBatch& batch, model::TrainPrecision dtype,
                                 int64_t grad_accum, const std::function<void()>& forward_end) {
  // The reference's micro-batch (python/tokbench_python_step.py), operator for operator
  // (docs/eager-parity.md): under autocast the forward and the loss, whose cross-entropy
  // autocast takes in fp32; the loss divided by GA as Python divides by an int; backward
  // seeded as torch.autograd.backward seeds it, ones_like(loss, preserve_format).
  const bool autocast = dtype == model::TrainPrecision::bf16_mixed;
  const int64_t vocab = model->config().vocab();
  // The logits (B·T·V floats) live until backward ends, as in the reference's loop, and are
  // freed before returning: part of the step.
  torch::Tensor logits, loss, scaled;
  {
    TraceRange range(account::ranges::kForward);  // named for --profile's trace (profile_trace.hpp)
    AutocastRegion region(batch.x.device().type(), autocast);
    logits = model->forward(batch.x);  // (B, T, V)
    TraceRange loss_range(account::ranges::kLoss);
    auto flat_logits = logits.reshape({-1, vocab});  // Python evaluates the arguments left to right
    auto flat_targets = batch.y.reshape({-1});
    loss = at::cross_entropy_loss(flat_logits, flat_targets, {}, at::Reduction::Mean, /*ignore_index=*/-1);
    scaled = at::div(loss, model::python_number(grad_accum));
  }
  if (forward_end) forward_end();
  {
    TraceRange range(account::ranges::kBackward);
    scaled.backward(at::ones_like(scaled, at::TensorOptions().pinned_memory(false), at::MemoryFormat::Preserve));
  }
  logits.reset();
  return loss.detach();
}

void drop_gradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad().reset();
}

std::vector<at::Tensor> clone_parameters(const torch::nn::Module& module) {
  std::vector<at::Tensor> copies;
  for (const auto& p : module.parameters()) copies.push_back(p.detach().clone());
  return copies;
}

namespace {

// Bytes of the storages behind the tensors it is shown, each storage counted once (views and
// tied parameters share one).
class StorageBytes {
 public:
  void add(const torch::Tensor& t) {
    if (t.defined() && t.has_storage() && seen_.insert(t.storage().unsafeGetStorageImpl()).second)
      bytes_ += static_cast<int64_t>(t.storage().nbytes());
  }
  int64_t bytes() const { return bytes_; }

 private:
  std::unordered_set<const void*> seen_;
  int64_t bytes_ = 0;
};

}  // namespace

int64_t module_tensor_bytes(const torch::nn::Module& module) {
  StorageBytes counted;
  for (const auto& p : module.parameters()) {
    counted.add(p);
    counted.add(p.grad());
  }
  for (const auto& b : module.buffers()) counted.add(b);
  return counted.bytes();
}

int64_t parameter_bytes(const torch::nn::Module& module) {
  StorageBytes counted;
  for (const auto& p : module.parameters()) counted.add(p);
  return counted.bytes();
}

int64_t whole_gradient_bytes(const torch::nn::Module& module) {
  int64_t bytes = 0;
  for (const auto& p : module.parameters()) bytes += p.numel() * static_cast<int64_t>(p.element_size());
  return bytes;
}

std::unique_ptr<TrainStep> make_eager_step(model::GPT model, const c10::Device& device,
                                           const EagerStepOptions& options) {
  return std::make_unique<EagerStep>(std::move(model), device, options);
}

}  // namespace tokbench::train
