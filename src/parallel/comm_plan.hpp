// What tokbench's DDP and FSDP steps send per iteration, from the layout they built: every
// collective with its purpose, its process group and its bytes. The run records this plan over
// its step's own layout (unit_timings.communication); `tokbench predict` times it over the layout
// of the run it predicts. On Gloo the reduce-scatter and the all-gather are the in-place
// all-reduce of the whole flat buffer (flat_collectives.cpp). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/layout.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::parallel {

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

std::string_view to_string(CollectiveCall call);  // "all_reduce", ... (the comm document's words)
std::string_view to_string(CommGroup group);      // "world", "shard", "replica"
std::string_view to_string(CommPurpose purpose);  // "ddp_bucket", "gather_for_forward", ...

// How the step runs over its layout (the layout holds the shard size S).
struct CommSettings {
  DistMode mode = DistMode::none;  // none, ddp or fsdp (tokbench's own steps)
  ShardMode shard_mode = ShardMode::zero2;
  int64_t world_size = 1;
  int64_t grad_accum = 1;
  bool ddp_skip_sync = true;  // DDP's all-reduces on the last micro-batch only
  CommBackend backend = CommBackend::nccl;
};

struct PlannedCollective {
  int64_t comm_unit = 0;  // index into the layout's units
  CommPurpose purpose = CommPurpose::ddp_bucket;
  CollectiveCall call = CollectiveCall::all_reduce;  // what is called (Gloo: all-reduce for every one)
  CommGroup group = CommGroup::world;
  int64_t group_size = 1;
  int64_t bytes = 0;          // the buffer the call is given (NCCL's "size")
  int64_t per_iteration = 1;  // how many times an iteration issues it (GA for per-micro-batch ones)
  std::string unit;           // the layout unit's name (the record's "unit")
};

struct CommPlan {
  std::vector<PlannedCollective> collectives;  // per unit, in the order the step issues them within a unit
  int64_t bytes_per_iteration() const;         // sum of bytes x per_iteration
};

// Empty for one rank or mode none. Throws std::invalid_argument for fsdp2 (PyTorch's schedule,
// not tokbench's), a non-positive size, or a shard size that does not divide the world size.
CommPlan plan_communication(const Layout& layout, const CommSettings& settings);

}  // namespace tokbench::parallel
