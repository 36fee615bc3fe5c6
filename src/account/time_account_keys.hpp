// The keys of the time account's JSON (the record's and each rank's `time_account`,
// docs/time-account.md): account::to_json writes them (time_account_json.cpp), its reader reads
// them back, and the HTML report's bars and predict's notes read them. The category names inside
// `categories` are category.cpp's table.
#pragma once

namespace tokbench::account::time_account_key {

inline constexpr char source[] = "source";
inline constexpr char rank[] = "rank";
inline constexpr char profiled_iters[] = "profiled_iters";
inline constexpr char iteration_s[] = "iteration_s";
inline constexpr char profiled_iteration_s[] = "profiled_iteration_s";
inline constexpr char profiled_range_s[] = "profiled_range_s";
inline constexpr char categories[] = "categories";
inline constexpr char gemm_flops_per_iter[] = "gemm_flops_per_iter";
inline constexpr char attention_flops_per_iter[] = "attention_flops_per_iter";
inline constexpr char uncounted_matmuls[] = "uncounted_matmuls";
inline constexpr char model_flops_per_iter[] = "model_flops_per_iter";
inline constexpr char peak_TFLOP_per_s[] = "peak_TFLOP_per_s";
inline constexpr char peak_source[] = "peak_source";
inline constexpr char matmul_s_at_ceiling[] = "matmul_s_at_ceiling";
inline constexpr char beyond_model_mfu_cost[] = "beyond_model_mfu_cost";
inline constexpr char mfu[] = "mfu";
inline constexpr char exposed_comm_source[] = "exposed_comm_source";
inline constexpr char exposed_comm_step_s[] = "exposed_comm_step_s";
inline constexpr char exposed_comm_seen_s[] = "exposed_comm_seen_s";
inline constexpr char exposed_comm_gaps_s[] = "exposed_comm_gaps_s";
inline constexpr char comm_in_flight_s[] = "comm_in_flight_s";
inline constexpr char device[] = "device";
inline constexpr char other_top[] = "other_top";
// categories.<name>
inline constexpr char s[] = "s";
inline constexpr char profiled_s[] = "profiled_s";  // also other_top[]'s
inline constexpr char share[] = "share";
inline constexpr char mfu_cost[] = "mfu_cost";
// other_top[]
inline constexpr char name[] = "name";
// device (the device timeline's figures; a rank's pass carries them too)
inline constexpr char busy_s[] = "busy_s";
inline constexpr char hidden_comm_s[] = "hidden_comm_s";
inline constexpr char activities[] = "activities";
inline constexpr char unlaunched_activities[] = "unlaunched_activities";
inline constexpr char unlaunched_s[] = "unlaunched_s";

}  // namespace tokbench::account::time_account_key
