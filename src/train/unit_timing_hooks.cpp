// The per-unit timing pass's marks (unit_timing_hooks.hpp).
#include "train/unit_timing_hooks.hpp"

#include <torch/torch.h>

#include <utility>

namespace tokbench::train {
namespace {

// A hook that marks when the gradient of `t` arrives, registered before any other hook on `t`
// would run (hooks run in registration order). A tensor that needs no gradient has none to mark.
void mark_gradient_arrival(const torch::Tensor& t, const std::shared_ptr<UnitMarks>& marks,
                           const std::function<void(UnitMarks&)>& on_arrival) {
  if (!t.requires_grad()) return;
  t.register_hook([marks, on_arrival](const torch::Tensor& grad) {
    on_arrival(*marks);
    return grad;
  });
}

class UnitTimingHooks final : public model::GPTImpl::ForwardHooks {
 public:
  UnitTimingHooks(std::shared_ptr<model::GPTImpl::ForwardHooks> inner, std::shared_ptr<UnitMarks> marks)
      : inner_(std::move(inner)), marks_(std::move(marks)) {}

  void before_root() override {
    marks_->mark(&MicroBatchMarks::forward_start);
    if (inner_) inner_->before_root();
  }

  torch::Tensor after_embedding(torch::Tensor x) override {
    mark_gradient_arrival(x, marks_, [](UnitMarks& m) { m.mark(&MicroBatchMarks::embedding_grad); });
    if (inner_) x = inner_->after_embedding(std::move(x));
    marks_->mark(&MicroBatchMarks::embedding_end);
    return x;
  }

  void before_block(int64_t layer) override {
    marks_->mark(&MicroBatchMarks::block_start, layer);
    if (inner_) inner_->before_block(layer);
  }

  torch::Tensor after_block(int64_t layer, torch::Tensor output) override {
    mark_gradient_arrival(output, marks_, [layer](UnitMarks& m) { m.mark(&MicroBatchMarks::output_grad, layer); });
    if (inner_) output = inner_->after_block(layer, std::move(output));
    marks_->mark(&MicroBatchMarks::block_end, layer);
    return output;
  }

  // The head's forward ends with the loss, at the computation's forward-end callback (the
  // pass's), not here: the eager computation takes the loss after the root's forward.
  torch::Tensor after_root(torch::Tensor logits) override {
    return inner_ ? inner_->after_root(std::move(logits)) : logits;
  }

 private:
  std::shared_ptr<model::GPTImpl::ForwardHooks> inner_;  // the step's; null when it has none
  std::shared_ptr<UnitMarks> marks_;
};

}  // namespace

UnitMarks::UnitMarks(UnitClock& clock, int64_t n_layer) : clock_(clock), n_layer_(n_layer) {}

void UnitMarks::start_micro_batch() {
  MicroBatchMarks fresh;
  const auto n = static_cast<std::size_t>(n_layer_);
  fresh.block_start.assign(n, -1);
  fresh.block_end.assign(n, -1);
  fresh.output_grad.assign(n, -1);
  const std::lock_guard<std::mutex> lock(mutex_);
  micro_batches_.push_back(std::move(fresh));
}

void UnitMarks::mark(int64_t MicroBatchMarks::*point) {
  const int64_t at = clock_.mark();
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!micro_batches_.empty()) micro_batches_.back().*point = at;
}

void UnitMarks::mark(std::vector<int64_t> MicroBatchMarks::*points, int64_t layer) {
  const int64_t at = clock_.mark();
  const std::lock_guard<std::mutex> lock(mutex_);
  if (micro_batches_.empty()) return;
  auto& slots = micro_batches_.back().*points;
  if (layer >= 0 && layer < static_cast<int64_t>(slots.size())) slots[static_cast<std::size_t>(layer)] = at;
}

std::vector<MicroBatchMarks> UnitMarks::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(micro_batches_, {});
}

std::size_t UnitMarks::pending() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return micro_batches_.size();
}

ScopedUnitTimingHooks::ScopedUnitTimingHooks(model::GPT model, std::shared_ptr<UnitMarks> marks)
    : model_(std::move(model)), wrapped_(model_->forward_hooks()) {
  model_->set_forward_hooks(std::make_shared<UnitTimingHooks>(wrapped_, std::move(marks)));
}

ScopedUnitTimingHooks::~ScopedUnitTimingHooks() { model_->set_forward_hooks(wrapped_); }

}  // namespace tokbench::train
