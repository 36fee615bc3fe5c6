// The keys of a run record (docs/run.md, "The JSON result"), each spelled once. Code that builds
// a record fills results::RunRecord (run_record.hpp); code that addresses a key of a record it
// read (a table's column, a store's row, a comparison's field) names it here, as key::seq_len.
// The column table (result_columns.cpp) describes each of them; a test holds the three lists
// (these names, the record's members, the table) to one key set in one order. Torch-free.
#pragma once

namespace tokbench::results::key {

inline constexpr char average_iter_time[] = "average_iter_time";
inline constexpr char model_flops[] = "model_flops";
inline constexpr char model_flop_per_sec[] = "model_flop_per_sec";
inline constexpr char tokens_per_sec[] = "tokens_per_sec";
inline constexpr char memory_used_gb[] = "memory_used_GB";
inline constexpr char model_name[] = "model_name";
inline constexpr char num_gpus[] = "Num GPUS";
inline constexpr char seq_len[] = "Seq Len";
inline constexpr char micro_bs[] = "Micro BS";
inline constexpr char global_bs[] = "Global BS";
inline constexpr char ga[] = "GA";
inline constexpr char distributed_mode[] = "Distributed Mode";
inline constexpr char sharding_size[] = "Sharding Size";
inline constexpr char compiler[] = "compiler";
inline constexpr char schema_version[] = "schema_version";
inline constexpr char status[] = "status";
inline constexpr char message[] = "message";
inline constexpr char executor[] = "executor";
inline constexpr char thunder_front_end[] = "thunder_front_end";
inline constexpr char thunder_executors[] = "thunder_executors";
inline constexpr char kernels[] = "kernels";
inline constexpr char attention_kernel[] = "attention_kernel";
inline constexpr char cuda_graphs[] = "cuda_graphs";
inline constexpr char cuda_graphs_note[] = "cuda_graphs_note";
inline constexpr char tokens_per_sec_per_device[] = "tokens_per_sec_per_device";
inline constexpr char positions_per_sec[] = "positions_per_sec";
inline constexpr char model_flops_per_iter_per_device[] = "model_flops_per_iter_per_device";
inline constexpr char model_flops_per_iter_total[] = "model_flops_per_iter_total";
inline constexpr char model_tflop_per_s_per_device[] = "model_TFLOP_per_s_per_device";
inline constexpr char model_tflop_per_s_total[] = "model_TFLOP_per_s_total";
inline constexpr char mfu[] = "mfu";
inline constexpr char checkpoint_activations[] = "checkpoint_activations";
inline constexpr char hardware_flops[] = "hardware_flops";
inline constexpr char hardware_tflop_per_s_per_device[] = "hardware_TFLOP_per_s_per_device";
inline constexpr char hfu[] = "hfu";
inline constexpr char mfu_peak_tflop_per_s[] = "mfu_peak_TFLOP_per_s";
inline constexpr char mfu_peak_chip[] = "mfu_peak_chip";
inline constexpr char mfu_peak_source[] = "mfu_peak_source";
inline constexpr char mfu_peak_is_estimate[] = "mfu_peak_is_estimate";
inline constexpr char mfu_precision[] = "mfu_precision";
inline constexpr char flops_convention[] = "flops_convention";
inline constexpr char warmup_iters[] = "warmup_iters";
inline constexpr char max_iters[] = "max_iters";
inline constexpr char measured_iters[] = "measured_iters";
inline constexpr char measured_window_s[] = "measured_window_s";
inline constexpr char iter_time_ms[] = "iter_time_ms";
inline constexpr char loss_first[] = "loss_first";
inline constexpr char loss_last[] = "loss_last";
inline constexpr char parameters[] = "parameters";
inline constexpr char n_layer[] = "n_layer";
inline constexpr char memory_allocated_peak_gb[] = "memory_allocated_peak_GB";
inline constexpr char memory_reserved_peak_gb[] = "memory_reserved_peak_GB";
inline constexpr char peak_rss_gb[] = "peak_rss_GB";
inline constexpr char memory_parameters_gb[] = "memory_parameters_GB";
inline constexpr char memory_gradients_gb[] = "memory_gradients_GB";
inline constexpr char memory_optimizer_state_gb[] = "memory_optimizer_state_GB";
inline constexpr char memory_activations_gb[] = "memory_activations_GB";
inline constexpr char memory_comm_buffers_gb[] = "memory_comm_buffers_GB";
inline constexpr char memory_allocator_reserve_gb[] = "memory_allocator_reserve_GB";
inline constexpr char memory_estimate_gb[] = "memory_estimate_GB";
inline constexpr char harness_overhead_percent[] = "harness_overhead_percent";
inline constexpr char world_size[] = "world_size";
inline constexpr char sharding_mode[] = "sharding_mode";
inline constexpr char bucketing[] = "bucketing";
inline constexpr char ranks[] = "ranks";
inline constexpr char device[] = "device";
inline constexpr char device_name[] = "device_name";
inline constexpr char dtype[] = "dtype";
inline constexpr char tf32[] = "tf32";
inline constexpr char zero_grad[] = "zero_grad";
inline constexpr char iterations[] = "iterations";
inline constexpr char config[] = "config";
inline constexpr char environment[] = "environment";
inline constexpr char unit_timings[] = "unit_timings";
inline constexpr char time_account[] = "time_account";
inline constexpr char prediction[] = "prediction";
inline constexpr char sweep_config_id[] = "sweep_config_id";
inline constexpr char sweep_options[] = "sweep_options";
inline constexpr char sweep_id[] = "sweep_id";
inline constexpr char slurm_job_id[] = "slurm_job_id";

}  // namespace tokbench::results::key
