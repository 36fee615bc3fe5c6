// The marks of the per-unit timing pass (train/unit_timing_pass.hpp): forward hooks on the
// model that mark where each unit's forward begins and ends, and tensor hooks they register on
// the units' outputs that mark where each unit's backward begins, all on one UnitClock.
//
// The hooks wrap whatever hooks the step installed (FSDP's gather and free, GPTImpl::
// ForwardHooks) and forward every call to them, ordered so that a unit's own waits fall in the
// unit: the start of a block is marked before the step gathers it, its end after the step has
// freed it, and the gradient hook on its output is registered before the step's, so that the
// step's pre-backward gather counts in the block's backward too.
//
// Boundaries of one micro-batch, in order (n = n_layer):
//   forward:  forward_start (before_root) | embedding | embedding_end (after_embedding)
//             block_start[l] | block l | block_end[l]   ...   | head, loss | forward_end
//   backward: forward_end | head, loss | output_grad[n-1] | block n-1 | output_grad[n-2] ...
//             output_grad[0] | block 0 | embedding_grad | embedding | backward_end
// forward_end is the computation's forward-end callback (the loss computed, backward next);
// output_grad[l] is when the gradient of block l's output arrived (its backward begins, and the
// backward of the unit after it has ended); embedding_grad the gradient of the first block's
// input; backward_end the step's forward_backward returning (the step's end-of-backward work,
// e.g. FSDP's last reductions, counts in the embedding's backward).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "model/gpt.hpp"
#include "train/unit_clock.hpp"

namespace tokbench::train {

// One micro-batch's marks: indices on the UnitClock; -1 where a point was never reached.
struct MicroBatchMarks {
  int64_t forward_start = -1;
  int64_t embedding_end = -1;
  std::vector<int64_t> block_start, block_end;  // per block
  int64_t forward_end = -1;
  std::vector<int64_t> output_grad;  // per block
  int64_t embedding_grad = -1;
  int64_t backward_end = -1;
};

// The micro-batches' marks as the pass and the hooks take them. Thread-safe (on CUDA the
// gradient hooks run on autograd's thread while the pass waits in backward).
class UnitMarks {
 public:
  UnitMarks(UnitClock& clock, int64_t n_layer);

  // Marks that follow belong to a new micro-batch.
  void start_micro_batch();
  // Marks `point` of the current micro-batch (ignored outside a micro-batch).
  void mark(int64_t MicroBatchMarks::*point);
  void mark(std::vector<int64_t> MicroBatchMarks::*points, int64_t layer);
  // The micro-batches marked since the last call.
  std::vector<MicroBatchMarks> take();
  std::size_t pending() const;

 private:
  UnitClock& clock_;
  int64_t n_layer_;
  mutable std::mutex mutex_;
  std::vector<MicroBatchMarks> micro_batches_;
};

// Installs the marking hooks on `model`, wrapping the hooks installed there, for its lifetime;
// then puts the wrapped hooks back.
class ScopedUnitTimingHooks {
 public:
  ScopedUnitTimingHooks(model::GPT model, std::shared_ptr<UnitMarks> marks);
  ~ScopedUnitTimingHooks();
  ScopedUnitTimingHooks(const ScopedUnitTimingHooks&) = delete;
  ScopedUnitTimingHooks& operator=(const ScopedUnitTimingHooks&) = delete;

 private:
  model::GPT model_;
  std::shared_ptr<model::GPTImpl::ForwardHooks> wrapped_;
};

}  // namespace tokbench::train
