// The parallel step's own memory work, which a one-rank run does not contain: DDP copies each
// gradient into its bucket, scales the bucket and copies the average back (ddp_step.cpp); FSDP
// zeroes each unit's flat gradient, which autograd then accumulates every gradient into (where a
// one-rank run's first micro-batch hands autograd's result over as the gradient, uncopied), keeps
// its shard of the reduced sum and scales it, and on
// Gloo stages its all-gathers through a zeroed full buffer (fsdp_step.cpp, flat_collectives.cpp).
// Counted in bytes written per iteration on one rank, copies apart from fills, from the plan's
// layout and collectives, so the prediction times them with the machine's measured copy rate.
#pragma once

#include <cstdint>
#include <vector>

#include "predict/comm_plan.hpp"

namespace tokbench::predict {

// What a fill costs against a copy of the same bytes, derived, not fitted: a copy reads its
// bytes and writes them, a fill (zero_) only writes them, so a fill moves half the memory
// traffic the copy rate was measured with (the probe times memcpy only; docs/predict.md, "The
// step's own copies", gives the validation set's figures before and after).
inline constexpr double kFillCostOfCopy = 0.5;
// And an accumulation (a += b) against a copy: streamed from memory it would move three passes
// of the bytes (two reads, one write) against the copy's two, but the gradient autograd adds was
// just computed and is partly still in the caches: in Kineto traces of ZeRO-2 on two ranks
// (pythia-70m cut to 4 blocks, SmolLM2-135M cut to 2, on this project's 2-core Intel Xeon VM)
// the accumulations took 0.76-0.80 of the probe's memcpy time per byte. Counted as a copy
// (docs/predict.md, "The step's own copies"); not measured per prediction.
inline constexpr double kAddCostOfCopy = 1.0;

struct StepCopyBytes {
  int64_t copied = 0;  // passes that read and write: copies, in-place scales, a shard kept or added
  int64_t filled = 0;  // passes that only write: a buffer zeroed
  int64_t added = 0;   // passes that read two and write one: gradients accumulated into a buffer
  int64_t total() const { return copied + filled + added; }
  // The bytes a memcpy would take as long to move: what the copy rate times.
  double copy_equivalent() const {
    return static_cast<double>(copied) + kFillCostOfCopy * static_cast<double>(filled) +
           kAddCostOfCopy * static_cast<double>(added);
  }
  StepCopyBytes& operator+=(const StepCopyBytes& o) {
    copied += o.copied;
    filled += o.filled;
    added += o.added;
    return *this;
  }
};

// Where the step makes its copies, so the schedule runs each there, beside whatever collectives
// are in flight: per call of each of the plan's collectives, just before it is issued (a DDP
// bucket's gradients copied in; a unit's flat gradient zeroed; a Gloo gather's full buffer
// zeroed and the shard copied in) and just after its wait (a DDP bucket scaled by 1/W and the
// average copied back; a reduce-scatter's part kept or added); and once per iteration at the
// optimizer step (the shard gradients scaled by 1/W).
struct PlacedCopyBytes {
  std::vector<StepCopyBytes> before_issue, after_wait;  // per call, one per plan.collectives entry
  StepCopyBytes at_step;
  // Every pass of one iteration: the calls' (x their calls per iteration) and the step's.
  StepCopyBytes per_iteration(const CommPlan& plan) const;
};

// Bytes one rank's step writes beyond what a one-rank run writes (each pass over a buffer
// counted once), where it writes them. `gloo`: the all-gathers are staged through all-reduces of
// zeroed full buffers.
PlacedCopyBytes placed_copy_bytes(const CommPlan& plan, int64_t shard_size, bool gloo);

}  // namespace tokbench::predict
