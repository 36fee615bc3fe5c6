// What tokbench's DDP and FSDP steps send per iteration, unit by unit: every collective with its
// purpose, its process group and its bytes, from the units' parameter counts alone. The
// prediction times these; a run can record "bytes moved per collective per unit" with the same
// function, so the two never disagree about what was sent. Mirrors src/distributed's steps
// (docs/distributed.md): DDP's buckets in reverse registration order; FSDP's flat buffers, one
// per unit, padded to a multiple of the shard-group size S; on Gloo the reduce-scatter and the
// all-gather are the in-place all-reduce of the whole flat buffer. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tokbench::predict {

// The units a run times (the record's unit_timings), in forward order.
enum class UnitKind { embedding, block, head };
struct UnitShape {
  std::string name;  // "embedding", "block.0", ..., "head"
  UnitKind kind = UnitKind::block;
  int64_t parameters = 0;
};

enum class Strategy { none, ddp, fsdp };
enum class FsdpUnits { whole_model, per_block };  // --bucketing-mode none | block
enum class Backend { gloo, nccl };

enum class CollectiveCall { all_reduce, all_gather, reduce_scatter };
enum class CommGroup {
  world,    // every rank (DDP)
  shard,    // the S ranks sharing a unit's flat buffer (all W ranks unless hybrid)
  replica,  // the W/S ranks holding the same shard (hybrid only)
};
enum class CommPurpose {
  ddp_bucket,              // a DDP bucket's all-reduce, once its last gradient is accumulated
  gather_for_forward,      // ZeRO-3: a unit's parameters before its forward
  gather_for_backward,     // ZeRO-3: again before its backward
  reduce_gradients,        // FSDP: a unit's flat gradient after its backward, every micro-batch
  reduce_across_replicas,  // hybrid: the summed shard across replicas, at the optimizer step
  refresh_parameters,      // ZeRO-2: the updated shards gathered back after the optimizer step
};

std::string_view to_string(CollectiveCall call);    // "all_reduce", ... (the comm document's words)
std::string_view to_string(CommGroup group);        // "world", "shard", "replica"
std::string_view to_string(CommPurpose purpose);    // "ddp_bucket", "gather_for_forward", ...

struct CommPlanInput {
  std::vector<UnitShape> units;  // forward order: embedding, block.0 .. block.N-1, head
  int64_t bytes_per_element = 4;  // of the parameters (and gradients): fp32 4, bf16-true 2
  Strategy strategy = Strategy::none;
  bool zero3 = false;
  FsdpUnits fsdp_units = FsdpUnits::whole_model;
  int64_t world_size = 1;
  int64_t shard_size = 1;  // S: W unless hybrid
  int64_t grad_accum = 1;
  int64_t ddp_bucket_bytes = 25'000'000;
  bool ddp_skip_sync = true;  // DDP's all-reduces on the last micro-batch only
  Backend backend = Backend::nccl;
};

// One unit of communication: an FSDP unit (its flat buffer) or a DDP bucket.
struct CommUnit {
  std::string name;                    // "root", "block.3", "model", "bucket.0"
  std::vector<int64_t> timing_units;   // FSDP: the timed units whose parameters it holds
  int64_t elements = 0;                // real parameter elements
  int64_t padded_elements = 0;         // FSDP: a multiple of S; DDP: = elements
  // DDP: the timed unit whose backward accumulates the bucket's last gradient, and how far
  // through that backward (gradients assumed to arrive evenly over a unit's backward).
  int64_t ready_unit = -1;
  double ready_fraction = 1.0;
};

struct PlannedCollective {
  int64_t comm_unit = 0;  // index into CommPlan::units
  CommPurpose purpose = CommPurpose::ddp_bucket;
  CollectiveCall call = CollectiveCall::all_reduce;  // what is called (Gloo: all-reduce for every one)
  CommGroup group = CommGroup::world;
  int64_t group_size = 1;
  int64_t bytes = 0;          // the buffer the call is given (NCCL's "size")
  int64_t per_iteration = 1;  // how many times an iteration issues it (GA for per-micro-batch ones)
};

struct CommPlan {
  std::vector<CommUnit> units;
  std::vector<PlannedCollective> collectives;  // per unit, in the order the step issues them within a unit
  // Which FSDP unit each timed unit belongs to (FSDP only; empty otherwise).
  std::vector<int64_t> fsdp_unit_of;
  int64_t bytes_per_iteration() const;  // sum of bytes x per_iteration
};

// Throws std::invalid_argument when the units are not embedding, blocks, head, or a size is
// not positive, or S does not divide W.
CommPlan plan_communication(const CommPlanInput& input);

// The plan as a run record and a prediction write it: `bytes_per_iteration`, and `collectives`,
// each with its unit, purpose, call, group, group size, bytes and times per iteration.
nlohmann::ordered_json to_json(const CommPlan& plan);

}  // namespace tokbench::predict
