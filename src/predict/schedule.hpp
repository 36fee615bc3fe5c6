// One training iteration of tokbench's own step, simulated: a compute timeline (per micro-batch
// the embedding's forward, each block's, the head's forward and backward, the blocks' backward
// in reverse, the embedding's backward; the optimizer at the end) and one communication stream
// (a collective starts when it is issued and the stream is free, in issue order), with the
// waits tokbench's DDP and FSDP steps make (src/distributed/ddp_step.cpp, fsdp_step.cpp;
// docs/predict.md, "The schedule"). Torch-free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "predict/comm_plan.hpp"

namespace tokbench::predict {

struct ScheduleInput {
  parallel::DistMode strategy = parallel::DistMode::none;
  bool zero3 = false;
  bool ddp_overlap = true;    // DDP: all-reduce buckets during backward (else all at the optimizer step)
  bool ddp_skip_sync = true;  // DDP: all-reduce on the last micro-batch only
  int64_t grad_accum = 1;
  // Per timed unit, forward order (embedding, blocks, head), seconds per micro-batch: the
  // compute time on the predicted rank, contention already applied.
  std::vector<double> forward_seconds, backward_seconds;
  double optimizer_seconds = 0;  // the whole step, once per iteration
  // The step's own copies (step_copies.hpp), where the step makes them: per call of each
  // collective just before it is issued and just after its wait (one per plan.collectives entry;
  // empty: none), and once per iteration before the optimizer. They run on the compute timeline,
  // beside whatever collectives are in flight.
  std::vector<double> copy_before_issue_seconds, copy_after_wait_seconds;
  double step_copy_seconds = 0;
  CommPlan plan;
  std::vector<double> collective_seconds;  // one per plan.collectives entry
  // The fraction of the compute rate a running collective takes (CPU ranks: Gloo's core; 0 on
  // GPUs, whose collectives run on the network's engines).
  double comm_compute_steal = 0;
  // The fraction of its own rate (its time in collective_seconds) a collective runs at while the
  // rank computes beside it (CPU ranks: Gloo's threads get their share of the cores the compute
  // also runs on; 1 on GPUs). While the compute waits for it, it runs at its full rate.
  double comm_rate_beside_compute = 1;
};

// One collective as it ran in the simulated iteration.
struct ScheduledCollective {
  int64_t collective = 0;  // index into plan.collectives
  int64_t micro_batch = 0;
  double issued = 0, started = 0, finished = 0;  // seconds from the iteration's start
};

struct ScheduleResult {
  double iteration_seconds = 0;
  double compute_seconds = 0;      // the compute ops' own times (forward, backward, optimizer)
  double optimizer_seconds = 0;
  double step_copy_seconds = 0;    // the step's own copies, all of them (part of compute_seconds)
  double comm_seconds = 0;         // the collectives' durations, summed (hidden or not)
  double exposed_comm_seconds = 0; // time compute waited for collectives (as a run reports it)
  double contention_seconds = 0;   // compute slowed down by collectives sharing its cores
  // Of it, the step's own copies slowed beside collectives (the rest slowed forward, backward
  // and optimizer work): a measured run books each in the category of the work it slowed.
  double copy_contention_seconds = 0;
  std::vector<ScheduledCollective> collectives;

  // The collectives' time compute did not wait for.
  double hidden_comm_seconds() const { return std::max(0.0, comm_seconds - exposed_comm_seconds); }
};

// Throws std::invalid_argument when the input's sizes disagree (units, collectives, copies).
ScheduleResult simulate_iteration(const ScheduleInput& input);

}  // namespace tokbench::predict
