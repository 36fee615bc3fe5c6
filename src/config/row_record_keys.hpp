// The run record's keys that the option rows name: the top-level keys compare pairs runs on (and
// the `config` block's keys that share the top-level word), and the `config` block's keys that a
// reader beside the rows names (predict reads and writes a record's config). Owned here because
// `config` is the lowest layer that spells them; results' key list (results/record_keys.hpp) takes
// each top-level key's text from here, so every key is spelled once. A config key that only its row
// spells stays a literal in its row. Torch-free.
#pragma once

namespace tokbench::config::record_key {

inline constexpr char num_gpus[] = "Num GPUS";
inline constexpr char seq_len[] = "Seq Len";
inline constexpr char micro_bs[] = "Micro BS";
inline constexpr char global_bs[] = "Global BS";
inline constexpr char ga[] = "GA";
inline constexpr char distributed_mode[] = "Distributed Mode";
inline constexpr char sharding_size[] = "Sharding Size";
inline constexpr char compiler[] = "compiler";
// The executor that ran (compiler is the reference's column for it): compare's heading for --compile.
inline constexpr char executor[] = "executor";
inline constexpr char cuda_graphs[] = "cuda_graphs";
inline constexpr char checkpoint_activations[] = "checkpoint_activations";
inline constexpr char flops_convention[] = "flops_convention";
inline constexpr char n_layer[] = "n_layer";
inline constexpr char sharding_mode[] = "sharding_mode";
inline constexpr char bucketing[] = "bucketing";
inline constexpr char device[] = "device";
inline constexpr char dtype[] = "dtype";
inline constexpr char tf32[] = "tf32";
inline constexpr char zero_grad[] = "zero_grad";

}  // namespace tokbench::config::record_key

// Keys of the record's `config` block (the options as given) that another layer reads or writes,
// or that a row names twice (its place in the block and compare's key).
namespace tokbench::config::config_key {

inline constexpr char distributed_mode[] = "distributed_mode";
inline constexpr char shard_mode[] = "shard_mode";
inline constexpr char bucketing_mode[] = "bucketing_mode";
inline constexpr char sharding_size[] = "sharding_size";
inline constexpr char fsdp_bucket_params[] = "fsdp_bucket_params";
inline constexpr char ddp_bucket_size_mb[] = "ddp_bucket_size_mb";
inline constexpr char ddp_overlap[] = "ddp_overlap";
inline constexpr char dynamic[] = "dynamic";
inline constexpr char num_threads[] = "num_threads";
inline constexpr char data[] = "data";
inline constexpr char data_dtype[] = "data_dtype";
inline constexpr char data_seed[] = "data_seed";
inline constexpr char cpu_memory_cap_mb[] = "cpu_memory_cap_mb";
inline constexpr char cpu_memory_cap_rank[] = "cpu_memory_cap_rank";
inline constexpr char model_config[] = "model_config";
inline constexpr char weight_decay[] = "weight_decay";
inline constexpr char grad_clip_norm[] = "grad_clip_norm";

}  // namespace tokbench::config::config_key
