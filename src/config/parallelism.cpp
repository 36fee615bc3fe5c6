// The parallelism section's option table (parallelism.hpp).
#include "config/parallelism.hpp"

#include <fmt/format.h>

#include "config/numbers.hpp"
#include "config/resolved_keys.hpp"
#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::config {

const std::vector<Field>& parallelism_fields() {
  static const std::vector<Field> fields{
      {.names = "--distributed-mode,--distributed_mode",
       .member = &ParallelismSection::distributed_mode,
       .help = "none | ddp | fsdp | fsdp2 (more than one rank; fsdp2: PyTorch's fully_shard, Python executors "
               "only)",
       .group = "Distributed",
       .predict_help = "none, ddp or fsdp (default: the measured run's)",
       .choices = [] { return parallel::mode_words(); },
       .record = {config_key::distributed_mode, 13},
       .shapes = {.label = "mode", .record_key = record_key::distributed_mode, .place = 6}},
      {.names = "--shard-mode,--shard_mode",
       .member = &ParallelismSection::shard_mode,
       .help = "FSDP sharding: zero2 | zero3 | hybrid_zero2 | hybrid_zero3 (hybrid needs --sharding-size)",
       .group = "Distributed",
       .predict_help = "fsdp: zero2, zero3, hybrid_zero2, hybrid_zero3",
       .choices = [] { return parallel::shard_mode_words(); },
       .record = {config_key::shard_mode, 14},
       // Compare heads the resolved sharding mode with the option's own key.
       .shapes = {.label = config_key::shard_mode, .record_key = record_key::sharding_mode, .place = 20}},
      {.names = "--sharding-size,--sharding_size",
       .member = &ParallelismSection::sharding_size,
       .help = "FSDP hybrid sharding: shard within groups of this many ranks, replicate across them",
       .group = "Distributed",
       .predict_help = "fsdp: ranks per shard group (hybrid sharding)",
       .valid = "a positive divisor of the world size",
       .bounds = {.positive = true},  // the divisor: run/resolve.cpp, which knows the world size
       .record = {config_key::sharding_size, 18},
       .shapes = {.label = "sharding", .record_key = record_key::sharding_size, .place = 7}},
      {.names = "--bucketing-mode,--bucketing_mode",
       .member = &ParallelismSection::bucketing_mode,
       .help = "FSDP units: none (whole model) | block (one per transformer block + root) | layer | size "
               "(modules cut by parameter count, PyTorch's size_based_auto_wrap_policy; --fsdp-bucket-params)",
       .group = "Distributed",
       .predict_help = "fsdp units: none (the whole model), block, or size (modules cut by parameter count, ZeRO-2)",
       .choices = [] { return std::vector<std::string>{"none", "block", "layer", "size"}; },
       .record = {config_key::bucketing_mode, 15},
       .shapes = {.record_key = record_key::bucketing, .place = 21}},
      {.names = "--fsdp-bucket-params,--fsdp_bucket_params",
       .member = &ParallelismSection::fsdp_bucket_params,
       .help = "--bucketing-mode size: a module becomes an FSDP unit once the parameters of its subtree not yet "
               "in a unit reach this many (min_num_params; default 1e8, PyTorch's)",
       .group = "Distributed",
       .predict_help = "--bucketing-mode size: the parameter count that makes a module a unit (default: the measured "
                       "run's, else 1e8)",
       .valid = "a positive whole number of parameters, e.g. 1e8",
       // 2^53: every whole double below it is exact, and it is far above any model's parameters.
       .bounds = {.min = 1,
                  .max = 9007199254740992.0,
                  .whole = true,
                  .refusal = "is not valid; valid: a positive whole number of parameters (e.g. 1e8)"},
       .record = {config_key::fsdp_bucket_params, 16}},
      {.names = "--ddp-bucket-size,--ddp_bucket_size",
       .member = &ParallelismSection::ddp_bucket_size_mb,
       .help = "DDP gradient bucket size in MB (10^6 bytes)",
       .group = "Distributed",
       .predict_help = "ddp: bucket size in MB (default: the measured run's)",
       .valid = "a size in MB in (0, 1000000]",
       .bounds = {.min = 0, .max = 1e6, .min_open = true, .refusal = "is not valid; valid: a size in MB in (0, 1000000]"},
       .record = {config_key::ddp_bucket_size_mb, 19},
       .shapes = {.label = "ddp_bucket_mb", .record_key = config_key::ddp_bucket_size_mb, .in_config = true, .place = 22}},
      {.names = "--ddp-overlap,!--no-ddp-overlap",
       .member = &ParallelismSection::ddp_overlap,
       .help = "DDP: all-reduce buckets during backward (=True/False)",
       .group = "Distributed",
       .record = {config_key::ddp_overlap, 20},
       .shapes = {.record_key = config_key::ddp_overlap, .in_config = true, .place = 23}},
      {.names = "--skip-data-sync,--skip_data_sync,!--no-skip-data-sync",
       .member = &ParallelismSection::skip_data_sync,
       .help = "DDP (and the Python executors' FSDP): no gradient sync on the first GA-1 micro-batches "
               "(=True/False; default True, but False with tokbench's own FSDP, which refuses True)",
       .group = "Distributed",
       .record = {resolved_key::skip_data_sync, 21},
       .shapes = {.record_key = resolved_key::skip_data_sync, .in_config = true,
                  .place = 24},
       .given = &ParallelismSection::skip_data_sync_given},
      {.names = "--dist-backend,--dist_backend",
       .member = &ParallelismSection::dist_backend,
       .help = "collectives: auto (NCCL on CUDA, Gloo on the CPU) | gloo (also CUDA tensors: several ranks may "
               "share one GPU) | nccl (CUDA only, one GPU per rank)",
       .group = "Distributed",
       .choices = [] { return std::vector<std::string>{"auto", "gloo", "nccl"}; },
       .record = {resolved_key::dist_backend, 24},
       .shapes = {.label = "backend", .record_key = resolved_key::dist_backend, .in_config = true, .place = 25}},
      {.names = "--dist-timeout,--dist_timeout",
       .member = &ParallelismSection::dist_timeout_s,
       .help = "seconds any collective (and the rendezvous) may take before the run ends with 'timeout'",
       .group = "Distributed",
       .valid = "seconds from 1 to 604800",
       .bounds = {.min = 1, .max = 7 * 24 * 3600.0, .refusal = "is not valid; valid: seconds from 1 to 604800"},
       .record = {"dist_timeout_s", 22}},
  };
  return fields;
}

void check_parallelism(const ParallelismSection& o) {
  // The words were checked by their rows first.
  if (parallel::parse_shard_word(o.shard_mode).hybrid && !o.sharding_size)
    usage::refuse(fmt::format("--shard-mode '{}' needs --sharding-size (ranks per shard group)", o.shard_mode));
  if (o.sharding_size && !parallel::is_sharded(parallel::parse_dist_mode(o.distributed_mode)))
    usage::refuse(fmt::format("--sharding-size {} applies to --distributed-mode fsdp or fsdp2 only (mode is {})",
                              *o.sharding_size, o.distributed_mode));
}

const std::vector<DerivedValue>& parallelism_derived_values() {
  static const std::vector<DerivedValue> values{
      {.shapes = {.label = "ranks", .record_key = record_key::num_gpus, .place = 1}},
      // The record puts the threshold the units were cut by here.
      {.record = {resolved_key::fsdp_min_unit_params, 17}},
  };
  return values;
}

}  // namespace tokbench::config
