// The keys of a run record (docs/run.md, "The JSON result"), each spelled once, in one list:
// TOKBENCH_RUN_RECORD_FIELDS names each key's member of results::RunRecord, its text and its
// type, in the column table's order. From it come the constants here (code that addresses a key
// of a record it read names it as key::seq_len), RunRecord's members and for_each_field
// (run_record.hpp). The column table (result_columns.cpp) describes each key; a test holds it
// to this list. Torch-free.
#pragma once

#include "config/row_record_keys.hpp"

// X(member, key text, value type): the type is read only where Number, Given and Block are known
// (run_record.hpp).
#define TOKBENCH_RUN_RECORD_FIELDS(X) \
  X(average_iter_time, "average_iter_time", double) \
  X(model_flops, "model_flops", Number) \
  X(model_flop_per_sec, "model_flop_per_sec", double) \
  X(tokens_per_sec, "tokens_per_sec", double) \
  X(memory_used_gb, "memory_used_GB", double) \
  X(model_name, "model_name", std::string) \
  X(num_gpus, config::record_key::num_gpus, std::int64_t) \
  X(seq_len, config::record_key::seq_len, Given) \
  X(micro_bs, config::record_key::micro_bs, Given) \
  X(global_bs, config::record_key::global_bs, Given) \
  X(ga, config::record_key::ga, std::int64_t) \
  X(distributed_mode, config::record_key::distributed_mode, std::string) \
  X(sharding_size, config::record_key::sharding_size, Given) \
  X(compiler, config::record_key::compiler, std::string) \
  X(schema_version, "schema_version", std::int64_t) \
  X(status, "status", std::string) \
  X(message, "message", std::string) \
  X(executor, config::record_key::executor, std::string) \
  X(thunder_front_end, "thunder_front_end", std::string) \
  X(thunder_executors, "thunder_executors", std::string) \
  X(kernels, "kernels", Block) \
  X(attention_kernel, "attention_kernel", std::string) \
  X(cuda_graphs, config::record_key::cuda_graphs, std::string) \
  X(cuda_graphs_note, "cuda_graphs_note", std::string) \
  X(tokens_per_sec_per_device, "tokens_per_sec_per_device", double) \
  X(positions_per_sec, "positions_per_sec", double) \
  X(model_flops_per_iter_per_device, "model_flops_per_iter_per_device", Number) \
  X(model_flops_per_iter_total, "model_flops_per_iter_total", Number) \
  X(model_tflop_per_s_per_device, "model_TFLOP_per_s_per_device", double) \
  X(model_tflop_per_s_total, "model_TFLOP_per_s_total", double) \
  X(mfu, "mfu", double) \
  X(checkpoint_activations, config::record_key::checkpoint_activations, bool) \
  X(hardware_flops, "hardware_flops", Number) \
  X(hardware_tflop_per_s_per_device, "hardware_TFLOP_per_s_per_device", double) \
  X(hfu, "hfu", double) \
  X(mfu_peak_tflop_per_s, "mfu_peak_TFLOP_per_s", double) \
  X(mfu_peak_chip, "mfu_peak_chip", std::string) \
  X(mfu_peak_source, "mfu_peak_source", std::string) \
  X(mfu_peak_is_estimate, "mfu_peak_is_estimate", bool) \
  X(mfu_precision, "mfu_precision", std::string) \
  X(flops_convention, config::record_key::flops_convention, std::string) \
  X(warmup_iters, "warmup_iters", std::int64_t) \
  X(max_iters, "max_iters", std::int64_t) \
  X(measured_iters, "measured_iters", std::int64_t) \
  X(measured_window_s, "measured_window_s", double) \
  X(iter_time_ms, "iter_time_ms", Block) \
  X(loss_first, "loss_first", double) \
  X(loss_last, "loss_last", double) \
  X(parameters, "parameters", std::int64_t) \
  X(n_layer, config::record_key::n_layer, std::int64_t) \
  X(memory_allocated_peak_gb, "memory_allocated_peak_GB", double) \
  X(memory_reserved_peak_gb, "memory_reserved_peak_GB", double) \
  X(peak_rss_gb, "peak_rss_GB", double) \
  X(memory_parameters_gb, "memory_parameters_GB", double) \
  X(memory_gradients_gb, "memory_gradients_GB", double) \
  X(memory_optimizer_state_gb, "memory_optimizer_state_GB", double) \
  X(memory_activations_gb, "memory_activations_GB", double) \
  X(memory_comm_buffers_gb, "memory_comm_buffers_GB", double) \
  X(memory_allocator_reserve_gb, "memory_allocator_reserve_GB", double) \
  X(memory_estimate_gb, "memory_estimate_GB", double) \
  X(harness_overhead_percent, "harness_overhead_percent", double) \
  X(world_size, "world_size", std::int64_t) \
  X(sharding_mode, config::record_key::sharding_mode, std::string) \
  X(bucketing, config::record_key::bucketing, std::string) \
  X(ranks, "ranks", Block) \
  X(device, config::record_key::device, std::string) \
  X(device_name, "device_name", std::string) \
  X(dtype, config::record_key::dtype, std::string) \
  X(tf32, config::record_key::tf32, bool) \
  X(zero_grad, config::record_key::zero_grad, std::string) \
  X(iterations, "iterations", Block) \
  X(config, "config", Block) \
  X(environment, "environment", Block) \
  X(unit_timings, "unit_timings", Block) \
  X(reference_probe, "reference_probe", Block) \
  X(time_account, "time_account", Block) \
  X(prediction, "prediction", Block) \
  X(sweep_config_id, "sweep_config_id", std::string) \
  X(sweep_options, "sweep_options", Block) \
  X(sweep_id, "sweep_id", std::int64_t) \
  X(slurm_job_id, "slurm_job_id", std::int64_t)

namespace tokbench::results::key {

// A reference to the text (a literal, or config's constant for the keys the option rows name).
#define TOKBENCH_RECORD_KEY(member, text, type) inline constexpr const auto& member = text;
TOKBENCH_RUN_RECORD_FIELDS(TOKBENCH_RECORD_KEY)
#undef TOKBENCH_RECORD_KEY

}  // namespace tokbench::results::key
