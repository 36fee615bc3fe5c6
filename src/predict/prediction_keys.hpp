// The keys of a prediction (docs/predict.md, "Reading the output"): the `prediction` block of a
// predicted record, written by prediction.cpp and the parts' to_json (memory_rate, optimizer_model,
// input_spread, reference_level, predicted_account); read back by the print format's notes
// (prediction_notes.cpp) and --probes-from (machine_probes.cpp). A header of constants only.
#pragma once

namespace tokbench::predict::prediction_key {

// The block (a predicted record's `prediction`; cpu_contention, step_copies and optimizer are
// time_ms's keys too, and from and cluster the report context's that predict_command writes)
inline constexpr char source[] = "source";
inline constexpr char cluster[] = "cluster";
inline constexpr char time_ms[] = "time_ms";
inline constexpr char exposed_comm_ms_per_iter[] = "exposed_comm_ms_per_iter";
inline constexpr char communication[] = "communication";
inline constexpr char cpu_contention[] = "cpu_contention";
inline constexpr char step_copies[] = "step_copies";
inline constexpr char optimizer[] = "optimizer";
inline constexpr char memory[] = "memory";
inline constexpr char assumptions[] = "assumptions";
inline constexpr char time_account[] = "time_account";
inline constexpr char input_spread[] = "input_spread";
inline constexpr char unit_timings_level[] = "unit_timings_level";
inline constexpr char reference_level[] = "reference_level";
inline constexpr char interval_ms[] = "interval_ms";

// source: the measured record (beside its own keys, results::key's)
inline constexpr char record[] = "record";
inline constexpr char average_iter_time_ms[] = "average_iter_time_ms";
inline constexpr char unit_timings_clock[] = "unit_timings_clock";

// cluster: the cluster file's keys (cluster_key's), and
inline constexpr char nnodes[] = "nnodes";
inline constexpr char nproc_per_node[] = "nproc_per_node";
inline constexpr char collective_times[] = "collective_times";

// time_ms
inline constexpr char iteration[] = "iteration";
inline constexpr char compute[] = "compute";
inline constexpr char forward_backward[] = "forward_backward";
inline constexpr char comm_total[] = "comm_total";
inline constexpr char exposed_comm[] = "exposed_comm";
inline constexpr char hidden_comm[] = "hidden_comm";

// communication: the comm plan's keys (results::comm_plan_key's), and
inline constexpr char ms_each[] = "ms_each";

// cpu_contention
inline constexpr char measured[] = "measured";
inline constexpr char predicted[] = "predicted";
inline constexpr char cores[] = "cores";
inline constexpr char ranks[] = "ranks";
inline constexpr char threads[] = "threads";
inline constexpr char effective_cores_measured[] = "effective_cores_measured";
inline constexpr char effective_cores_predicted[] = "effective_cores_predicted";
inline constexpr char compute_time_factor[] = "compute_time_factor";
inline constexpr char measured_sharing_factor[] = "measured_sharing_factor";
inline constexpr char comm_compute_steal[] = "comm_compute_steal";
inline constexpr char comm_rate_beside_compute[] = "comm_rate_beside_compute";
inline constexpr char uneven_time_slicing[] = "uneven_time_slicing";
// Where ranks time-slice the cores: the iteration with every core kept busy (cpu_contention.hpp).
inline constexpr char cores_budget[] = "cores_budget";
inline constexpr char iteration_ms[] = "iteration_ms";
inline constexpr char compute_cpu_ms[] = "compute_cpu_ms";
inline constexpr char gloo_cpu_ms[] = "gloo_cpu_ms";
// Where ranks time-slice the cores: the point between the lockstep schedule and the cores' budget.
inline constexpr char ranks_out_of_step[] = "ranks_out_of_step";
inline constexpr char lockstep_iteration_ms[] = "lockstep_iteration_ms";
inline constexpr char weight[] = "weight";
inline constexpr char waits_scale[] = "waits_scale";
// A sweep's predicted row beside its measured run (sweep/sweep_predictions.cpp): the measured
// iteration time and the prediction's relative error against it.
inline constexpr char measured_average_iter_time[] = "measured_average_iter_time";
inline constexpr char error[] = "error";
inline constexpr char factors[] = "factors";
inline constexpr char thread_scaling_exponent[] = "thread_scaling_exponent";
inline constexpr char gloo_cores_per_collective[] = "gloo_cores_per_collective";
inline constexpr char gloo_busy_fraction[] = "gloo_busy_fraction";
inline constexpr char measured_inputs[] = "measured_inputs";
inline constexpr char assumed_inputs[] = "assumed_inputs";
inline constexpr char gloo_busy_measured[] = "gloo_busy_measured";
inline constexpr char steal_check[] = "steal_check";
inline constexpr char measured_steal[] = "measured_steal";
inline constexpr char measured_collective_rate[] = "measured_collective_rate";
inline constexpr char model_steal[] = "model_steal";
inline constexpr char model_collective_rate[] = "model_collective_rate";
inline constexpr char covered_repeats[] = "covered_repeats";
inline constexpr char repeats[] = "repeats";
inline constexpr char fraction[] = "fraction";
inline constexpr char from[] = "from";

// step_copies (read back by --probes-from: memory_rate)
inline constexpr char bytes_per_iteration[] = "bytes_per_iteration";
inline constexpr char copied_bytes[] = "copied_bytes";
inline constexpr char filled_bytes[] = "filled_bytes";
inline constexpr char added_bytes[] = "added_bytes";
inline constexpr char ms[] = "ms";
inline constexpr char why[] = "why";
inline constexpr char fill_cost_of_copy[] = "fill_cost_of_copy";
inline constexpr char add_cost_of_copy[] = "add_cost_of_copy";
inline constexpr char memory_rate[] = "memory_rate";
inline constexpr char assumed[] = "assumed";

// step_copies.memory_rate (memory_rate.cpp; read back by --probes-from)
inline constexpr char alone_GBps[] = "alone_GBps";
inline constexpr char together_GBps[] = "together_GBps";
inline constexpr char pair_slowdown[] = "pair_slowdown";
inline constexpr char block_pair_slowdowns[] = "block_pair_slowdowns";
inline constexpr char sharing_slowdown[] = "sharing_slowdown";
inline constexpr char method[] = "method";

// optimizer (read back by --probes-from: the per-tensor and per-element costs)
inline constexpr char rule[] = "rule";
inline constexpr char measured_work[] = "measured_work";
inline constexpr char predicted_work[] = "predicted_work";
inline constexpr char tensors[] = "tensors";
inline constexpr char elements[] = "elements";
inline constexpr char per_tensor_us[] = "per_tensor_us";
inline constexpr char per_element_ns[] = "per_element_ns";
inline constexpr char costs_from[] = "costs_from";
inline constexpr char per_tensor_factor[] = "per_tensor_factor";
inline constexpr char per_element_factor[] = "per_element_factor";
inline constexpr char per_element_factor_from[] = "per_element_factor_from";
inline constexpr char ratio[] = "ratio";

// memory
inline constexpr char measured_peak_GB[] = "measured_peak_GB";
inline constexpr char predicted_peak_GB[] = "predicted_peak_GB";
inline constexpr char measured_breakdown[] = "measured_breakdown";
inline constexpr char measured_parts_GB[] = "measured_parts_GB";
inline constexpr char predicted_parts_GB[] = "predicted_parts_GB";
inline constexpr char parameters[] = "parameters";
inline constexpr char gradients[] = "gradients";
inline constexpr char optimizer_state[] = "optimizer_state";
inline constexpr char activations[] = "activations";
inline constexpr char comm_buffers[] = "comm_buffers";
inline constexpr char device_memory_GB[] = "device_memory_GB";
inline constexpr char fits[] = "fits";

// interval_ms
inline constexpr char low[] = "low";
inline constexpr char high[] = "high";
inline constexpr char parts[] = "parts";
inline constexpr char below_ms[] = "below_ms";
inline constexpr char above_ms[] = "above_ms";

// time_account (predicted_account.cpp)
inline constexpr char made[] = "made";
inline constexpr char forward_backward_scale[] = "forward_backward_scale";
inline constexpr char optimizer_scale[] = "optimizer_scale";
inline constexpr char unit_timings_coverage[] = "unit_timings_coverage";
inline constexpr char measured_exposed_comm_ms[] = "measured_exposed_comm_ms";
inline constexpr char step_copies_ms[] = "step_copies_ms";
inline constexpr char step_copies_in[] = "step_copies_in";
inline constexpr char contention_ms[] = "contention_ms";
inline constexpr char contention_in[] = "contention_in";
inline constexpr char step_copies_contention_ms[] = "step_copies_contention_ms";

// input_spread
inline constexpr char measured_iterations[] = "measured_iterations";
inline constexpr char median_ms[] = "median_ms";
inline constexpr char q1_ms[] = "q1_ms";
inline constexpr char q3_ms[] = "q3_ms";
inline constexpr char iqr_ms[] = "iqr_ms";
inline constexpr char relative_iqr[] = "relative_iqr";
inline constexpr char mad_ms[] = "mad_ms";

// unit_timings_level
inline constexpr char rescaled[] = "rescaled";
inline constexpr char scale[] = "scale";
inline constexpr char window_median_ms[] = "window_median_ms";
inline constexpr char window_iterations[] = "window_iterations";
inline constexpr char pass_iteration_ms[] = "pass_iteration_ms";
inline constexpr char pass_iterations[] = "pass_iterations";

// reference_level
inline constexpr char applied[] = "applied";
inline constexpr char compute_level[] = "compute_level";
inline constexpr char comm_over_run[] = "comm_over_run";
inline constexpr char run_probe_median_ms[] = "run_probe_median_ms";
inline constexpr char run_probe_q1_ms[] = "run_probe_q1_ms";
inline constexpr char run_probe_q3_ms[] = "run_probe_q3_ms";
inline constexpr char run_probe_repeats[] = "run_probe_repeats";
inline constexpr char comm_alone_ms[] = "comm_alone_ms";
inline constexpr char comm_document[] = "comm_document";
inline constexpr char gemm_size[] = "gemm_size";

}  // namespace tokbench::predict::prediction_key
