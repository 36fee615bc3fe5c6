// Where an iteration's time goes, unit by unit: forward, backward and optimizer seconds of the
// embedding, of each transformer block and of the head, measured by a pass of a few untimed
// iterations after the measured window (train/unit_timing_pass.hpp; docs/run.md, "Per-unit
// timings"). A plain record, torch-free, so the bench layer's result record carries it without
// LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parallel/layout.hpp"

namespace tokbench::train {

struct UnitTiming {
  std::string name;  // "embedding", "block.0", ..., "head"
  std::string kind;  // "embedding", "block" or "head"
  // The unit's own parameters (embedding: wte; block: its norms, attention and MLP; head: the
  // final norm and lm_head), each parameter counted once, in the first unit that holds it.
  int64_t parameters = 0;
  // Per micro-batch: each iteration's mean over its micro-batches, the median over the pass's
  // iterations (one disturbed iteration of five moves nothing).
  double forward_seconds = 0;
  double backward_seconds = 0;  // likewise
  // Per iteration: the pass's median optimizer step split over the units by their parameters
  // (the step is one fused or foreach call over every parameter, not a call per unit).
  double optimizer_seconds = 0;
};

struct UnitTimings {
  int64_t iterations = 0;                   // profile iterations measured
  std::string clock;                        // "host" (CPU) or "cuda_events"
  int64_t micro_batches_per_iteration = 0;  // GA
  double iteration_seconds = 0;             // median wall time of one profile iteration
  double exposed_comm_seconds = 0;          // mean per profile iteration (TrainStep's)
  double optimizer_seconds = 0;             // median per iteration, the whole optimizer step
  std::vector<UnitTiming> units;            // embedding, block.0 .. block.{n-1}, head
  // The model's parameters in registration order (what a prediction lays buckets and units out
  // over), and the layout the step built its DDP buckets or FSDP units from (what the record
  // says it sent; none for one device).
  std::vector<parallel::ParameterShape> parameter_shapes;
  std::optional<parallel::Layout> comm_layout;
};

}  // namespace tokbench::train
