// The typed distributed part of a run plan: where this rank sits, how the model is
// parallelised, and the limits of its collectives. Resolved once from the options (bench's
// resolve step); nothing below it reads raw option strings. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "machine/dist_env.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::distributed {

// The vocabulary lives in src/parallel (shared with predict); these names keep the settings'
// users reading as before.
using parallel::CommBackend;
using parallel::DistMode;
using parallel::is_sharded;
using parallel::ShardMode;
using parallel::to_string;
using parallel::UnitPolicy;

struct DistributedSettings {
  machine::DistEnv env;                  // world size, rank, local rank, master address and port
  DistMode mode = DistMode::none;
  ShardMode shard_mode = ShardMode::zero2;
  UnitPolicy units = UnitPolicy::whole_model;
  // UnitPolicy::by_size: the parameter count that makes a module a unit (min_num_params).
  int64_t min_unit_params = 0;
  std::optional<int64_t> shard_group_size;  // hybrid sharding: ranks per shard group
  int64_t ddp_bucket_bytes = parallel::kDefaultDdpBucketBytes;
  bool ddp_overlap = true;
  // DDP's no_sync on the first GA-1 micro-batches (FSDP's too, in the Python executors;
  // tokbench's own FSDP reduce-scatters every micro-batch and refuses it).
  bool skip_sync_until_last_micro = true;
  double timeout_seconds = 1800;  // every collective and the rendezvous
  CommBackend backend = CommBackend::gloo;

  bool multi_rank() const { return env.world_size > 1; }
  bool hybrid() const { return shard_group_size && *shard_group_size < env.world_size; }
};

// The reference's --shard_mode word for what runs: "zero2", "zero3", "hybrid_zero2", ...
std::string shard_mode_label(const DistributedSettings& settings);

// The reference's label for the JSON `Distributed Mode` key and its matrix tables:
// "none", "ddp", or "<fsdp|fsdp2>_[hybrid_]<zero2|zero3>_<none|block|layer|size>_bucketing"
// (parallel::distributed_mode_label over these settings).
std::string distributed_mode_label(const DistributedSettings& settings);

}  // namespace tokbench::distributed
