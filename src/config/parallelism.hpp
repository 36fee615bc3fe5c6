// Parallelism section: how ranks share the work — the distributed mode, FSDP's sharding and
// units, DDP's buckets, the collectives' backend and timeout. Read by run/resolve.cpp into the
// distributed layer's settings (distributed/dist_settings.hpp), whose words they are, and by the
// Python step from the record's `config` block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "parallel/strategy.hpp"

namespace tokbench::config {

struct ParallelismSection {
  std::string distributed_mode = "none";
  std::string shard_mode = parallel::default_shard_word();
  std::optional<int64_t> sharding_size;
  std::string bucketing_mode = "none";
  // --bucketing-mode size: PyTorch FSDP's size_based_auto_wrap_policy min_num_params, as the
  // reference takes it (a float, "1e6"); resolve.cpp requires a positive whole count.
  std::optional<double> fsdp_bucket_params;
  double ddp_bucket_size_mb = parallel::kDefaultDdpBucketMb;  // PyTorch DDP's bucket_cap_mb default
  bool ddp_overlap = true;
  bool skip_data_sync = true;        // as the reference's later versions ...
  bool skip_data_sync_given = false;  // ... unless not given with tokbench's FSDP (resolve.cpp)
  double dist_timeout_s = 1800;    // torch.distributed's default for Gloo/NCCL
  std::string dist_backend = "auto";  // auto (NCCL on CUDA, Gloo on the CPU) | gloo | nccl
};

const std::vector<Field>& parallelism_fields();
// The section's checks of its options together (hybrid sharding needs --sharding-size, which
// applies to the sharded modes only): one line, exit 2 (usage::refuse). Run after the rows'
// checks (config::check_fields); what needs the world size is resolve.cpp's.
void check_parallelism(const ParallelismSection& parallelism);
// The world size (the record's "Num GPUS", compare's first key) and the FSDP unit threshold the
// run cut its units by (a place in the `config` block the record fills).
const std::vector<DerivedValue>& parallelism_derived_values();

}  // namespace tokbench::config
