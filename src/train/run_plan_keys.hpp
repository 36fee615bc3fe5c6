// The keys of the run plan, the JSON document run/run_plan_json.cpp writes (run/python_executor.cpp
// adds its `step` member) and python/tokbench_python_step.py reads with --config. In train because
// the `train` section's keys are TrainOptions' field names, which train's own refusals name
// (validate_options) and run's with_option_names turns into options. A header of constants only.
#pragma once

namespace tokbench::train::run_plan_key {

// The sections.
inline constexpr char model[] = "model";
inline constexpr char train[] = "train";
inline constexpr char dist[] = "dist";
inline constexpr char compiler[] = "compiler";
inline constexpr char device[] = "device";
inline constexpr char options[] = "options";  // every option by its record key, defaults filled
inline constexpr char profile[] = "profile";
inline constexpr char step[] = "step";

// model: the model resolved.
inline constexpr char name[] = "name";
inline constexpr char n_layer[] = "n_layer";
inline constexpr char config[] = "config";  // a --model-config file's litgpt fields; null for a catalog model

// train: TrainOptions' fields that resolution decided.
inline constexpr char micro_batch[] = "micro_batch";
inline constexpr char seq_len[] = "seq_len";
inline constexpr char grad_accum[] = "grad_accum";
inline constexpr char max_iters[] = "max_iters";
inline constexpr char warmup_iters[] = "warmup_iters";
inline constexpr char dtype[] = "dtype";

// dist: this rank's place and the layout resolved.
inline constexpr char world_size[] = "world_size";
inline constexpr char rank[] = "rank";
inline constexpr char local_rank[] = "local_rank";
inline constexpr char shard_mode[] = "shard_mode";
inline constexpr char units[] = "units";
inline constexpr char min_unit_params[] = "min_unit_params";
inline constexpr char shard_group_size[] = "shard_group_size";
inline constexpr char ddp_bucket_bytes[] = "ddp_bucket_bytes";
inline constexpr char skip_sync_until_last_micro[] = "skip_sync_until_last_micro";
inline constexpr char backend[] = "backend";

// compiler: the executor named by --compile, aliases resolved.
inline constexpr char executor[] = "executor";
inline constexpr char thunder_front_end[] = "thunder_front_end";
inline constexpr char thunder_executors[] = "thunder_executors";

// device.
inline constexpr char device_string[] = "string";
inline constexpr char tf32[] = "tf32";

// profile.
inline constexpr char profile_path[] = "path";
inline constexpr char profile_iters[] = "iters";

// The top level's own values.
inline constexpr char checkpoint_activations[] = "checkpoint_activations";
inline constexpr char time_account_iters[] = "time_account_iters";
inline constexpr char test_host_delay_seconds[] = "test_host_delay_seconds";
inline constexpr char test_same_start[] = "test_same_start";
inline constexpr char memory_snapshot[] = "memory_snapshot";

// step: what only the process that starts the Python step knows.
inline constexpr char memory_probe[] = "memory_probe";
inline constexpr char store[] = "store";
inline constexpr char store_host[] = "host";
inline constexpr char store_port[] = "port";
inline constexpr char store_prefixes[] = "prefixes";

}  // namespace tokbench::train::run_plan_key
