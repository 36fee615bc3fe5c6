// What a predicted run's step sends, unit by unit, and when each bucket's gradients are in: the
// step's own layout (parallel::layout_ddp_buckets, layout_fsdp_units) over the measured run's
// parameter shapes, its collectives (parallel::plan_communication), and what the schedule needs
// on top of them to time them: which timed unit each bucket waits for, which FSDP unit each timed
// unit gathers. The layout itself is not laid out here. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel/comm_plan.hpp"
#include "parallel/layout.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::predict {

using parallel::CollectiveCall;
using parallel::CommGroup;
using parallel::CommPurpose;
using parallel::PlannedCollective;
using parallel::to_string;

// The units a run times (the record's unit_timings), in forward order.
enum class UnitKind { embedding, block, head };
struct UnitShape {
  std::string name;  // "embedding", "block.0", ..., "head"
  UnitKind kind = UnitKind::block;
  int64_t parameters = 0;
};

struct CommPlanInput {
  std::vector<UnitShape> units;  // forward order: embedding, block.0 .. block.N-1, head
  // The model's parameters in registration order, each naming its timed unit (an index into
  // `units`) and its element size: fp32 4, bf16-true 2.
  std::vector<parallel::ParameterShape> parameters;
  parallel::DistMode strategy = parallel::DistMode::none;
  bool zero3 = false;
  parallel::UnitPolicy fsdp_units = parallel::UnitPolicy::whole_model;
  int64_t fsdp_min_unit_params = 0;  // by_size's threshold
  int64_t world_size = 1;
  int64_t shard_size = 1;  // S: W unless hybrid
  int64_t grad_accum = 1;
  int64_t ddp_bucket_bytes = parallel::kDefaultDdpBucketBytes;
  bool ddp_skip_sync = true;  // DDP's all-reduces on the last micro-batch only
  parallel::CommBackend backend = parallel::CommBackend::nccl;
};

// One unit of communication as the schedule times it: an FSDP unit or a DDP bucket.
struct CommUnit {
  std::string name;             // the layout's: "root", "block.3", "model", "bucket.0"
  int64_t padded_elements = 0;  // FSDP: a multiple of S; DDP: its elements
  // DDP: the timed unit whose backward accumulates the bucket's last gradient, and how far
  // through that backward (gradients assumed to arrive evenly over a unit's backward, in
  // reverse registration order within it).
  int64_t ready_unit = -1;
  double ready_fraction = 1.0;
};

// The collectives (and bytes_per_iteration) are parallel::CommPlan's, over `layout`.
struct CommPlan : parallel::CommPlan {
  parallel::Layout layout;
  std::vector<CommUnit> units;  // one per layout unit
  // FSDP only: which units each timed unit gathers under ZeRO-3 (the step's own rule).
  parallel::Zero3Gathers fsdp_gathers;
};

// Throws std::invalid_argument when the units are not embedding, blocks, head, a size is not
// positive, a parameter names no timed unit, or S does not divide W.
CommPlan plan_communication(const CommPlanInput& input);

}  // namespace tokbench::predict
